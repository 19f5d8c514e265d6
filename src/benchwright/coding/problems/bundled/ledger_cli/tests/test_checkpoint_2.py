"""benchwright example problem ledger_cli, checkpoint 2: filters and `register`."""

from __future__ import annotations

import pytest

HOUSEHOLD_LINES_IN_DATE_ORDER = [2, 3, 4, 6, 5, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19]


# --- Core -----------------------------------------------------------------


def test_register_of_sample(ledger, check, samples_dir):
    result = ledger("register", samples_dir / "shuffled_columns.csv")
    assert check.ok_json(result) == [
        {"line": 2, "date": "2023-11-04", "account": "expenses:food", "amount": "12.50",
         "memo": "coffee beans", "balance": "12.50"},
        {"line": 3, "date": "2023-11-05", "account": "expenses:food", "amount": "-2.50",
         "memo": "deposit back", "balance": "10.00"},
        {"line": 4, "date": "2023-11-05", "account": "income:gifts", "amount": "40.00",
         "memo": "gift", "balance": "50.00"},
    ]


def test_register_date_range_is_sorted_by_date(ledger, check, samples_dir):
    result = ledger("register", samples_dir / "household.csv", "--from", "2024-01-10", "--to", "2024-01-20")
    assert check.ok_json(result) == [
        {"line": 6, "date": "2024-01-10", "account": "expenses:food:restaurant", "amount": "-42.50",
         "memo": "Dinner, with friends", "balance": "-42.50"},
        {"line": 5, "date": "2024-01-12", "account": "expenses:food:groceries", "amount": "-91.10",
         "memo": "Weekly shop", "balance": "-133.60"},
        {"line": 7, "date": "2024-01-20", "account": "expenses:transport", "amount": "-30.00",
         "memo": "Bus pass", "balance": "-163.60"},
    ]


def test_balance_with_filters(ledger, check, samples_dir):
    result = ledger("balance", samples_dir / "household.csv",
                    "--account", "expenses:food", "--from", "2024-01-05", "--to", "2024-02-28")
    assert check.ok_json(result) == {
        "transactions": 5,
        "total": "-313.85",
        "accounts": {"expenses:food:groceries": "-253.35", "expenses:food:restaurant": "-60.50"},
    }


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
def test_full_register_order_and_running_balance(ledger, check, samples_dir):
    entries = check.ok_json(ledger("register", samples_dir / "household.csv"))
    assert [entry["line"] for entry in entries] == HOUSEHOLD_LINES_IN_DATE_ORDER
    assert entries[-1]["balance"] == "3074.15"
    assert entries[0] == {"line": 2, "date": "2024-01-02", "account": "income:salary",
                          "amount": "2500.00", "memo": "January salary", "balance": "2500.00"}
    assert entries[9]["amount"] == "-77.90"


@pytest.mark.functionality
@pytest.mark.parametrize(
    ("names", "expected_accounts"),
    [
        (["food"], ["food", "food:fruit", "food:fruit:apples"]),
        (["foo"], []),
        (["foodtruck", "food:fruit:apples"], ["food:fruit:apples", "foodtruck"]),
    ],
)
def test_account_filter_follows_hierarchy(ledger, check, write_csv, names, expected_accounts):
    path = write_csv(
        "date,account,amount\n"
        "2024-01-01,food,1\n"
        "2024-01-01,food:fruit,2\n"
        "2024-01-01,food:fruit:apples,3\n"
        "2024-01-01,foodtruck,4\n"
    )
    args = []
    for name in names:
        args += ["--account", name]
    out = check.ok_json(ledger("balance", path, *args))
    assert sorted(out["accounts"]) == expected_accounts
    assert out["transactions"] == len(expected_accounts)


@pytest.mark.functionality
def test_date_bounds_are_inclusive_and_options_may_come_first(ledger, check, samples_dir):
    result = ledger("balance", "--from", "2024-02-10", "--to", "2024-03-01", samples_dir / "household.csv")
    assert check.ok_json(result) == {
        "transactions": 5,
        "total": "1267.25",
        "accounts": {
            "expenses:food:restaurant": "-18.00",
            "expenses:rent": "-1200.00",
            "expenses:transport": "-30.00",
            "income:refund": "15.25",
            "income:salary": "2500.00",
        },
    }


@pytest.mark.functionality
def test_register_without_memo_column_and_stable_ties(ledger, check, write_csv):
    path = write_csv(
        "amount,date,account\n"
        "3,2024-06-02,b\n"
        "1,2024-06-01,a\n"
        "2,2024-06-02,a\n"
    )
    entries = check.ok_json(ledger("register", path))
    assert [(entry["line"], entry["memo"], entry["balance"]) for entry in entries] == [
        (3, "", "1.00"), (2, "", "4.00"), (4, "", "6.00"),
    ]


@pytest.mark.functionality
def test_nothing_selected(ledger, check, samples_dir):
    household = samples_dir / "household.csv"
    assert check.ok_json(ledger("register", household, "--from", "2030-01-01")) == []
    assert check.ok_json(ledger("balance", household, "--account", "nothing")) == {
        "transactions": 0, "total": "0.00", "accounts": {},
    }


# --- Error ----------------------------------------------------------------


@pytest.mark.error
@pytest.mark.parametrize("value", ["2024-13-01", "yesterday"])
def test_invalid_filter_date(ledger, check, samples_dir, value):
    check.failed(ledger("register", samples_dir / "household.csv", "--to", value), 2)


@pytest.mark.error
@pytest.mark.parametrize(
    "args",
    [["--from", "2024-03-01", "--to", "2024-02-01"], ["--account"], ["--month", "1"]],
    ids=["from-after-to", "missing-value", "unknown-option"],
)
def test_bad_options(ledger, check, samples_dir, args):
    check.failed(ledger("balance", samples_dir / "household.csv", *args), 2)


@pytest.mark.error
def test_filters_do_not_hide_invalid_lines(ledger, check, samples_dir):
    result = ledger("register", samples_dir / "broken.csv", "--from", "2030-01-01")
    check.failed(result, 3)
    assert "line 5" in result.stderr


@pytest.mark.error
def test_register_missing_file(ledger, check, tmp_path):
    check.failed(ledger("register", tmp_path / "missing.csv"), 1)
