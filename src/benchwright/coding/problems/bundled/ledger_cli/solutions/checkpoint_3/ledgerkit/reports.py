"""Filters and the three reports, each as JSON data or CSV rows."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from .model import Transaction, money

ZERO = Decimal(0)


def in_account(account: str, name: str) -> bool:
    return account == name or account.startswith(name + ":")


def roll_up(account: str, depth: int | None) -> str:
    if depth is None:
        return account
    return ":".join(account.split(":")[:depth])


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
        return not self.accounts or any(in_account(tx.account, name) for name in self.accounts)


def balance(transactions: list[Transaction], depth: int | None = None) -> dict:
    accounts: dict[str, Decimal] = defaultdict(Decimal)
    for tx in transactions:
        accounts[roll_up(tx.account, depth)] += tx.amount
    return {
        "transactions": len(transactions),
        "total": money(sum((tx.amount for tx in transactions), ZERO)),
        "accounts": {name: money(accounts[name]) for name in sorted(accounts)},
    }


def balance_rows(report: dict) -> list[list[object]]:
    rows: list[list[object]] = [["account", "balance"]]
    rows += [[name, value] for name, value in report["accounts"].items()]
    rows.append(["TOTAL", report["total"]])
    return rows


def register(transactions: list[Transaction]) -> list[dict]:
    entries = []
    running = ZERO
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


REGISTER_FIELDS = ["line", "date", "account", "amount", "memo", "balance"]


def register_rows(report: list[dict]) -> list[list[object]]:
    return [REGISTER_FIELDS] + [[entry[key] for key in REGISTER_FIELDS] for entry in report]


def monthly(transactions: list[Transaction]) -> dict:
    months: dict[str, list[Decimal]] = defaultdict(list)
    for tx in transactions:
        months[tx.date.strftime("%Y-%m")].append(tx.amount)
    summary = []
    for month in sorted(months):
        inflow = sum((amount for amount in months[month] if amount > 0), ZERO)
        outflow = -sum((amount for amount in months[month] if amount < 0), ZERO)
        summary.append({
            "month": month,
            "transactions": len(months[month]),
            "inflow": money(inflow),
            "outflow": money(outflow),
            "net": money(inflow - outflow),
        })
    return {"months": summary}


MONTHLY_FIELDS = ["month", "transactions", "inflow", "outflow", "net"]


def monthly_rows(report: dict) -> list[list[object]]:
    return [MONTHLY_FIELDS] + [[month[key] for key in MONTHLY_FIELDS] for month in report["months"]]
