"""Reading CSV ledgers and computing reports (reference solution for ledger_cli, checkpoint 3)."""
