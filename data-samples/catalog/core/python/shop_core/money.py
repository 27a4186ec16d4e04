"""Money amounts: the shop keeps cents, people read units."""


def to_units(cents):
    """Cents as a decimal amount of currency units (``1250`` -> ``12.5``)."""
    return cents / 100


def to_cents(units):
    """A decimal amount of currency units as whole cents, rounded half to even."""
    return int(round(units * 100))
