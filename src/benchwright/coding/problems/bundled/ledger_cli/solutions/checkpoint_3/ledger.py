"""Reference solution for ledger_cli, checkpoint 3: the command-line interface."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys

from ledgerkit import reports
from ledgerkit.model import EXIT_USAGE, LedgerError, parse_date, read_transactions

COMMANDS = {
    "balance": "balance of every account",
    "register": "transactions in date order with a running balance",
    "monthly": "money in and out per calendar month",
}
CSV_ROWS = {
    "balance": reports.balance_rows,
    "register": reports.register_rows,
    "monthly": reports.monthly_rows,
}


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one `error:` line and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        raise LedgerError(message, EXIT_USAGE)


def cli_date(text: str):
    date = parse_date(text.strip())
    if date is None:
        raise argparse.ArgumentTypeError(f"invalid date {text!r}, expected YYYY-MM-DD")
    return date


def cli_depth(text: str) -> int:
    try:
        depth = int(text)
    except ValueError:
        depth = 0
    if depth < 1:
        raise argparse.ArgumentTypeError(f"invalid depth {text!r}, expected a whole number >= 1")
    return depth


def build_parser() -> Parser:
    parser = Parser(prog="ledger", description="Ledger reports from CSV transactions.")
    commands = parser.add_subparsers(dest="command", parser_class=Parser)
    for name, text in COMMANDS.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("file", help="CSV file, or - for standard input")
        command.add_argument("--from", dest="start", type=cli_date, metavar="YYYY-MM-DD")
        command.add_argument("--to", dest="end", type=cli_date, metavar="YYYY-MM-DD")
        command.add_argument("--account", dest="accounts", action="append", metavar="NAME")
        command.add_argument("--format", choices=("json", "csv"), default="json")
        if name == "balance":
            command.add_argument("--depth", type=cli_depth)
    return parser


def run(args: argparse.Namespace) -> str:
    if args.command not in COMMANDS:
        raise LedgerError("a subcommand is required: " + ", ".join(COMMANDS), EXIT_USAGE)
    filters = reports.Filters(args.start, args.end, tuple(args.accounts or ()))
    if filters.start and filters.end and filters.start > filters.end:
        raise LedgerError("--from is later than --to", EXIT_USAGE)
    selected = [tx for tx in read_transactions(args.file) if filters.matches(tx)]
    if args.command == "balance":
        report = reports.balance(selected, args.depth)
    elif args.command == "register":
        report = reports.register(selected)
    else:
        report = reports.monthly(selected)
    if args.format == "json":
        return json.dumps(report, indent=2) + "\n"
    return _csv_text(CSV_ROWS[args.command](report))


def _csv_text(rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    try:
        output = run(build_parser().parse_args(argv))
    except LedgerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
