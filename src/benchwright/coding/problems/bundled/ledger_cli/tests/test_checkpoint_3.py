"""benchwright example problem ledger_cli, checkpoint 3: `monthly`, `--depth`, CSV output, stdin."""

from __future__ import annotations

import csv
import io

import pytest

HOUSEHOLD_MONTHS = [
    {"month": "2024-01", "transactions": 7, "inflow": "2500.00", "outflow": "1747.95", "net": "752.05"},
    {"month": "2024-02", "transactions": 6, "inflow": "2515.25", "outflow": "1325.90", "net": "1189.35"},
    {"month": "2024-03", "transactions": 4, "inflow": "2500.00", "outflow": "1367.25", "net": "1132.75"},
]


def csv_rows(result) -> list[list[str]]:
    assert result.returncode == 0, f"exit {result.returncode}; stderr: {result.stderr}"
    return list(csv.reader(io.StringIO(result.stdout)))


# --- Core -----------------------------------------------------------------


def test_monthly_of_sample(ledger, check, samples_dir):
    result = ledger("monthly", samples_dir / "household.csv")
    assert check.ok_json(result) == {"months": HOUSEHOLD_MONTHS}


def test_balance_as_csv(ledger, samples_dir):
    result = ledger("balance", samples_dir / "household.csv", "--format", "csv")
    assert csv_rows(result) == [
        ["account", "balance"],
        ["expenses:food:groceries", "-355.80"],
        ["expenses:food:restaurant", "-60.50"],
        ["expenses:rent", "-3600.00"],
        ["expenses:transport", "-60.00"],
        ["expenses:utilities", "-64.80"],
        ["income:refund", "15.25"],
        ["income:salary", "7500.00"],
        ["transfers:savings", "-300.00"],
        ["TOTAL", "3074.15"],
    ]


def test_register_reads_stdin(ledger, check, samples_dir):
    text = (samples_dir / "shuffled_columns.csv").read_text(encoding="utf-8")
    entries = check.ok_json(ledger("register", "-", stdin=text))
    assert [(entry["line"], entry["amount"], entry["balance"]) for entry in entries] == [
        (2, "12.50", "12.50"), (3, "-2.50", "10.00"), (4, "40.00", "50.00"),
    ]


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        ("1", {"expenses": "-4141.10", "income": "7515.25", "transfers": "-300.00"}),
        ("2", {"expenses:food": "-416.30", "expenses:rent": "-3600.00", "expenses:transport": "-60.00",
               "expenses:utilities": "-64.80", "income:refund": "15.25", "income:salary": "7500.00",
               "transfers:savings": "-300.00"}),
    ],
)
def test_balance_depth(ledger, check, samples_dir, depth, expected):
    out = check.ok_json(ledger("balance", samples_dir / "household.csv", "--depth", depth))
    assert out == {"transactions": 17, "total": "3074.15", "accounts": expected}


@pytest.mark.functionality
def test_depth_applies_after_account_filter(ledger, check, samples_dir):
    result = ledger("balance", "--depth", "1", "--account", "expenses:food",
                    "--account", "transfers", samples_dir / "household.csv")
    assert check.ok_json(result) == {
        "transactions": 7,
        "total": "-716.30",
        "accounts": {"expenses": "-416.30", "transfers": "-300.00"},
    }


@pytest.mark.functionality
def test_monthly_with_filters_as_csv(ledger, samples_dir):
    result = ledger("monthly", samples_dir / "household.csv", "--account", "expenses:food",
                    "--account", "income:refund", "--to", "2024-02-29", "--format", "csv")
    assert csv_rows(result) == [
        ["month", "transactions", "inflow", "outflow", "net"],
        ["2024-01", "3", "0.00", "217.95", "-217.95"],
        ["2024-02", "3", "15.25", "95.90", "-80.65"],
    ]


@pytest.mark.functionality
def test_register_csv_quotes_memo(ledger, samples_dir):
    result = ledger("register", samples_dir / "household.csv", "--format", "csv",
                    "--from", "2024-01-10", "--to", "2024-01-12")
    assert csv_rows(result) == [
        ["line", "date", "account", "amount", "memo", "balance"],
        ["6", "2024-01-10", "expenses:food:restaurant", "-42.50", "Dinner, with friends", "-42.50"],
        ["5", "2024-01-12", "expenses:food:groceries", "-91.10", "Weekly shop", "-133.60"],
    ]
    assert '"Dinner, with friends"' in result.stdout


@pytest.mark.functionality
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("balance", [["account", "balance"], ["TOTAL", "0.00"]]),
        ("register", [["line", "date", "account", "amount", "memo", "balance"]]),
        ("monthly", [["month", "transactions", "inflow", "outflow", "net"]]),
    ],
)
def test_empty_selection_as_csv(ledger, samples_dir, command, expected):
    result = ledger(command, samples_dir / "household.csv", "--format", "csv", "--account", "none")
    assert csv_rows(result) == expected


# --- Error ----------------------------------------------------------------


@pytest.mark.error
@pytest.mark.parametrize(
    "args",
    [
        ["balance", "--format", "xml"],
        ["balance", "--depth", "0"],
        ["balance", "--depth", "two"],
        ["monthly", "--depth", "1"],
    ],
    ids=["format-xml", "depth-zero", "depth-word", "depth-on-monthly"],
)
def test_bad_options(ledger, check, samples_dir, args):
    check.failed(ledger(*args, samples_dir / "household.csv"), 2)


@pytest.mark.error
def test_invalid_stdin_data(ledger, check):
    result = ledger("monthly", "-", stdin="date,account,amount\n2024-01-01,a,1\n2024-02-30,a,2\n")
    check.failed(result, 3)
    assert "line 3" in result.stderr
