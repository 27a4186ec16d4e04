"""Formatting helpers for payment amounts (minor units to display strings)."""


def format_amount(cents, currency="USD"):
    """Format an amount in cents as a payment string, e.g. ``USD 12.50``."""
    return f"{currency} {cents / 100:.2f}"


class PaymentAmount:
    """An amount of money attached to a charge or refund."""

    def __init__(self, cents, currency="usd"):
        self.cents = cents
        self.currency = currency

    def normalize(self):
        """Upper-case the currency code and clamp negative amounts to zero."""
        self.currency = self.currency.upper()
        self.cents = max(0, int(self.cents))
        return self

    def label(self):
        return format_amount(self.cents, self.currency)
