"""Formatting helpers for invoices and billing statements."""

from shop_core.money import to_units


def format_amount(cents, currency="USD"):
    """Format an invoice amount with a currency symbol, e.g. ``$12.50``."""
    symbol = "$" if currency == "USD" else f"{currency} "
    return f"{symbol}{to_units(cents):,.2f}"


class InvoiceLine:
    """One line on a customer invoice."""

    def __init__(self, description, cents):
        self.description = description
        self.cents = cents

    def normalize(self):
        """Trim the description and round the amount to whole cents."""
        self.description = " ".join(self.description.split())
        self.cents = int(round(self.cents))
        return self
