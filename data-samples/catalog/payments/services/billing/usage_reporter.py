"""Metered billing: count API calls per customer and report usage for invoicing."""

from collections import defaultdict

from services.billing.format import format_amount

PRICE_PER_CALL_CENTS = 2


class UsageReporter:
    """Collects API call counts per customer and produces usage reports."""

    def __init__(self, price_per_call=PRICE_PER_CALL_CENTS):
        self.price_per_call = price_per_call
        self.calls = defaultdict(int)

    def record_call(self, customer_id, count=1):
        """Add ``count`` metered API calls for a customer."""
        self.calls[customer_id] += count

    def report_usage(self, customer_id):
        """Return the usage report for one customer for the billing period."""
        count = self.calls.get(customer_id, 0)
        cost = count * self.price_per_call
        return {
            "customer": customer_id,
            "calls": count,
            "cost": format_amount(cost),
        }

    def report_all(self):
        """Return usage reports for every customer, sorted by customer id."""
        return [self.report_usage(customer_id) for customer_id in sorted(self.calls)]
