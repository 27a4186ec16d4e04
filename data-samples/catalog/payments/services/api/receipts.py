"""Plain-text receipts for the API.

``format_amount`` is imported from whichever module is installed, so a static
reader cannot tell which definition a call binds to.
"""

try:
    from services.billing.format import format_amount
except ImportError:  # payments-only deployments ship without the billing package
    from services.payments.format import format_amount


def render_receipt(order_id, items):
    """Render a receipt; ``items`` may be invoice lines or payment amounts."""
    lines = [f"Receipt for order {order_id}"]
    total = 0
    for item in items:
        item.normalize()
        lines.append(f"  {format_amount(item.cents)}")
        total += item.cents
    lines.append(f"Total: {format_amount(total)}")
    return "\n".join(lines)
