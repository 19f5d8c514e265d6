"""Transactions, money formatting and CSV input."""

from __future__ import annotations

import csv
import datetime as dt
import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, TextIO

REQUIRED_COLUMNS = ("date", "account", "amount")
AMOUNT_RE = re.compile(r"[+-]?\d+(\.\d{1,2})?")
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
CENT = Decimal("0.01")

EXIT_IO = 1
EXIT_USAGE = 2
EXIT_DATA = 3


class LedgerError(Exception):
    """An error with the exit code the program should end with."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Transaction:
    line: int
    date: dt.date
    account: str
    amount: Decimal
    memo: str


def money(value: Decimal) -> str:
    value = value.quantize(CENT)
    if value == 0:
        value = Decimal("0.00")
    return f"{value:.2f}"


def parse_date(text: str) -> dt.date | None:
    if not DATE_RE.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def read_transactions(path: str) -> list[Transaction]:
    """Read and validate a whole ledger; `-` reads standard input."""
    if path == "-":
        return parse_rows(_numbered_rows(sys.stdin))
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(_numbered_rows(handle))
    except OSError as exc:
        raise LedgerError(f"cannot read {path}: {exc.strerror or exc}", EXIT_IO) from exc
    except UnicodeDecodeError as exc:
        raise LedgerError(f"cannot read {path}: not UTF-8 text", EXIT_IO) from exc
    return parse_rows(rows)


def parse_rows(rows: Iterable[tuple[int, list[str]]]) -> list[Transaction]:
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        raise LedgerError("missing header line", EXIT_DATA)
    header = first[1]
    columns = {name.strip().lower(): index for index, name in reversed(list(enumerate(header)))}
    for required in REQUIRED_COLUMNS:
        if required not in columns:
            raise LedgerError(f"missing column: {required}", EXIT_DATA)
    transactions = []
    for line, fields in rows:
        if all(not field.strip() for field in fields):
            continue
        transactions.append(_to_transaction(line, fields, columns))
    return transactions


def _numbered_rows(handle: TextIO):
    reader = csv.reader(handle)
    for fields in reader:
        yield reader.line_num, fields


def _to_transaction(line: int, fields: list[str], columns: dict[str, int]) -> Transaction:
    def field(name: str) -> str:
        index = columns.get(name)
        if index is None or index >= len(fields):
            return ""
        return fields[index].strip()

    date = parse_date(field("date"))
    if date is None:
        raise LedgerError(f"line {line}: invalid date {field('date')!r}", EXIT_DATA)
    account = field("account")
    if not account:
        raise LedgerError(f"line {line}: empty account", EXIT_DATA)
    amount_text = field("amount")
    if not AMOUNT_RE.fullmatch(amount_text):
        raise LedgerError(f"line {line}: invalid amount {amount_text!r}", EXIT_DATA)
    return Transaction(line, date, account, Decimal(amount_text), field("memo"))
