"""Reference solution for ledger_cli, checkpoint 2: balances and a register, with filters."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

REQUIRED_COLUMNS = ("date", "account", "amount")
AMOUNT_RE = re.compile(r"[+-]?\d+(\.\d{1,2})?")
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


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one `error:` line and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        raise LedgerError(message, EXIT_USAGE)


def money(value: Decimal) -> str:
    value = value.quantize(CENT)
    if value == 0:
        value = Decimal("0.00")
    return f"{value:.2f}"


def parse_date(text: str) -> dt.date | None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def read_transactions(path: str) -> list[Transaction]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(_numbered_rows(handle))
    except OSError as exc:
        raise LedgerError(f"cannot read {path}: {exc.strerror or exc}", EXIT_IO) from exc
    except UnicodeDecodeError as exc:
        raise LedgerError(f"cannot read {path}: not UTF-8 text", EXIT_IO) from exc
    if not rows:
        raise LedgerError("missing header line", EXIT_DATA)
    header_line, header = rows[0]
    columns = {name.strip().lower(): index for index, name in reversed(list(enumerate(header)))}
    for required in REQUIRED_COLUMNS:
        if required not in columns:
            raise LedgerError(f"missing column: {required}", EXIT_DATA)
    transactions = []
    for line, fields in rows[1:]:
        if all(not field.strip() for field in fields):
            continue
        transactions.append(_to_transaction(line, fields, columns))
    return transactions


def _numbered_rows(handle):
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


@dataclass(frozen=True)
class Filters:
    start: dt.date | None = None
    end: dt.date | None = None
    accounts: tuple[str, ...] = ()

    def matches(self, tx: Transaction) -> bool:
        if self.start is not None and tx.date < self.start:
            return False
        if self.end is not None and tx.date > self.end:
            return False
        if self.accounts and not any(in_account(tx.account, name) for name in self.accounts):
            return False
        return True


def in_account(account: str, name: str) -> bool:
    return account == name or account.startswith(name + ":")


def filters_from_args(args: argparse.Namespace) -> Filters:
    filters = Filters(args.start, args.end, tuple(args.accounts or ()))
    if filters.start and filters.end and filters.start > filters.end:
        raise LedgerError("--from is later than --to", EXIT_USAGE)
    return filters


def cli_date(text: str) -> dt.date:
    date = parse_date(text.strip())
    if date is None:
        raise argparse.ArgumentTypeError(f"invalid date {text!r}, expected YYYY-MM-DD")
    return date


def register_report(transactions: list[Transaction]) -> list[dict]:
    entries = []
    running = Decimal(0)
    for tx in sorted(transactions, key=lambda tx: (tx.date, tx.line)):
        running += tx.amount
        entries.append({
            "line": tx.line,
            "date": tx.date.isoformat(),
            "account": tx.account,
            "amount": money(tx.amount),
            "memo": tx.memo,
            "balance": money(running),
        })
    return entries


def balance_report(transactions: list[Transaction]) -> dict:
    accounts: dict[str, Decimal] = defaultdict(Decimal)
    for tx in transactions:
        accounts[tx.account] += tx.amount
    return {
        "transactions": len(transactions),
        "total": money(sum((tx.amount for tx in transactions), Decimal(0))),
        "accounts": {name: money(accounts[name]) for name in sorted(accounts)},
    }


REPORTS = {
    "balance": "balance of every account",
    "register": "transactions in date order with a running balance",
}


def build_parser() -> Parser:
    parser = Parser(prog="ledger", description="Ledger reports from CSV transactions.")
    commands = parser.add_subparsers(dest="command", parser_class=Parser)
    for name, text in REPORTS.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("file")
        command.add_argument("--from", dest="start", type=cli_date, metavar="YYYY-MM-DD")
        command.add_argument("--to", dest="end", type=cli_date, metavar="YYYY-MM-DD")
        command.add_argument("--account", dest="accounts", action="append", metavar="NAME")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command not in REPORTS:
            raise LedgerError("a subcommand is required: " + ", ".join(REPORTS), EXIT_USAGE)
        filters = filters_from_args(args)
        selected = [tx for tx in read_transactions(args.file) if filters.matches(tx)]
        if args.command == "balance":
            report = balance_report(selected)
        else:
            report = register_report(selected)
    except LedgerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
