"""Nightly reconciliation of provider refunds against the ledger database."""

import os
import subprocess

LEDGER_DSN = os.environ.get("LEDGER_DATABASE_URL", "postgresql://localhost/shop")
REFUNDS_QUERY = "SELECT order_id, amount FROM refunds WHERE day = :'day';"


def export_refunds(day):
    """Dump one day's refunds from the ledger as CSV text using ``psql``."""
    result = subprocess.run(
        ["psql", LEDGER_DSN, "--csv", "-v", f"day={day}"],
        input=REFUNDS_QUERY,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def parse_rows(csv_text):
    """Parse ``order_id,amount`` CSV rows (header skipped) into tuples."""
    rows = []
    for line in csv_text.splitlines()[1:]:
        order_id, amount = line.split(",")
        rows.append((order_id, int(amount)))
    return rows


def find_mismatches(ledger_rows, orders):
    """Return sorted order ids whose ledger refunds differ from the order record."""
    totals = {}
    for order_id, amount in ledger_rows:
        totals[order_id] = totals.get(order_id, 0) + amount
    mismatched = []
    for order_id, total in totals.items():
        recorded = len(orders.get(order_id, {}).get("refunds", []))
        if total > 0 and recorded == 0:
            mismatched.append(order_id)
    return sorted(mismatched)
