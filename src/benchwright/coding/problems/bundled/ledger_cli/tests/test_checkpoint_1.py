"""benchwright example problem ledger_cli, checkpoint 1: `balance <FILE>`."""

from __future__ import annotations

import pytest

HOUSEHOLD_BALANCE = {
    "transactions": 17,
    "total": "3074.15",
    "accounts": {
        "expenses:food:groceries": "-355.80",
        "expenses:food:restaurant": "-60.50",
        "expenses:rent": "-3600.00",
        "expenses:transport": "-60.00",
        "expenses:utilities": "-64.80",
        "income:refund": "15.25",
        "income:salary": "7500.00",
        "transfers:savings": "-300.00",
    },
}


# --- Core -----------------------------------------------------------------


def test_balance_of_sample_household(ledger, check, samples_dir):
    result = ledger("balance", samples_dir / "household.csv")
    assert check.ok_json(result) == HOUSEHOLD_BALANCE


def test_balance_small_file(ledger, check, write_csv):
    path = write_csv(
        "date,account,amount\n"
        "2024-05-01,cash,100.00\n"
        "2024-05-02,food,-20.25\n"
        "2024-05-03,cash,-10\n"
    )
    assert check.ok_json(ledger("balance", path)) == {
        "transactions": 3,
        "total": "69.75",
        "accounts": {"cash": "90.00", "food": "-20.25"},
    }


def test_header_only_file(ledger, check, write_csv):
    path = write_csv("date,account,amount,memo\n")
    assert check.ok_json(ledger("balance", path)) == {
        "transactions": 0,
        "total": "0.00",
        "accounts": {},
    }


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
def test_shuffled_and_extra_columns(ledger, check, samples_dir):
    result = ledger("balance", samples_dir / "shuffled_columns.csv")
    assert check.ok_json(result) == {
        "transactions": 3,
        "total": "50.00",
        "accounts": {"expenses:food": "10.00", "income:gifts": "40.00"},
    }


@pytest.mark.functionality
@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        ("12", "12.00"),
        ("+14.99", "14.99"),
        ("-7.5", "-7.50"),
        ("-0.00", "0.00"),
    ],
)
def test_amount_formats(ledger, check, write_csv, amount, expected):
    path = write_csv(f"date,account,amount\n2024-01-01,a,{amount}\n")
    out = check.ok_json(ledger("balance", path))
    assert out["accounts"] == {"a": expected}
    assert out["total"] == expected


@pytest.mark.functionality
def test_sums_are_exact(ledger, check, write_csv):
    rows = "".join("2024-01-01,x,0.10\n2024-01-01,y,0.20\n" for _ in range(10))
    path = write_csv("date,account,amount\n" + rows + "2024-01-02,x,-3.00\n")
    out = check.ok_json(ledger("balance", path))
    assert out == {
        "transactions": 21,
        "total": "0.00",
        "accounts": {"x": "-2.00", "y": "2.00"},
    }


@pytest.mark.functionality
def test_blank_lines_whitespace_and_quoted_commas(ledger, check, write_csv):
    path = write_csv(
        "date , account , amount , memo\n"
        "\n"
        "  2024-02-29 ,  savings  , 5.5 ,\"rent, part 1\"\n"
        ",,,\n"
        "2024-03-01,savings,\" 4.50 \",\"a \"\"quoted\"\" memo\"\n"
        "\n"
    )
    out = check.ok_json(ledger("balance", path))
    assert out == {"transactions": 2, "total": "10.00", "accounts": {"savings": "10.00"}}


# --- Error ----------------------------------------------------------------


@pytest.mark.error
def test_missing_file(ledger, check, tmp_path):
    check.failed(ledger("balance", tmp_path / "nope.csv"), 1)


@pytest.mark.error
@pytest.mark.parametrize("args", [[], ["summary", "x.csv"], ["balance"]], ids=["none", "unknown", "no-file"])
def test_usage_errors(ledger, check, args):
    check.failed(ledger(*args), 2)


@pytest.mark.error
def test_missing_column_is_named(ledger, check, write_csv):
    result = ledger("balance", write_csv("date,account,memo\n2024-01-01,a,hi\n"))
    check.failed(result, 3)
    assert "amount" in result.stderr


@pytest.mark.error
def test_empty_file(ledger, check, write_csv):
    check.failed(ledger("balance", write_csv("")), 3)


@pytest.mark.error
def test_first_invalid_line_is_reported(ledger, check, samples_dir):
    result = ledger("balance", samples_dir / "broken.csv")
    check.failed(result, 3)
    assert "line 5" in result.stderr
    assert "line 6" not in result.stderr


@pytest.mark.error
@pytest.mark.parametrize(
    "bad_row",
    [
        "2023-02-29,a,1.00",
        "05/01/2024,a,1.00",
        "2024-01-05,,1.00",
        "2024-01-05,a,",
        '2024-01-05,a,"1,000"',
        "2024-01-05,a,.5",
    ],
)
def test_invalid_rows(ledger, check, write_csv, bad_row):
    path = write_csv("date,account,amount\n2024-01-01,a,1.00\n\n" + bad_row + "\n2024-01-09,a,2\n")
    result = ledger("balance", path)
    check.failed(result, 3)
    assert "line 4" in result.stderr
