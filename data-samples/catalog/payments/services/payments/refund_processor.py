"""Refund processing: validate a refund request and send it to the gateway."""

from services.payments.gateway import PaymentGateway

MAX_REFUND_CENTS = 10_000


class RefundError(ValueError):
    """Raised when a refund request is invalid."""


def validate_refund_amount(amount, charged):
    """Check that ``amount`` is positive and not more than what was charged."""
    if amount <= 0:
        raise RefundError("refund amount must be positive")
    if amount > charged or amount > MAX_REFUND_CENTS:
        raise RefundError("refund amount exceeds the original charge")
    return amount


class PaymentRefundProcessor:
    """Processes customer refunds for paid orders."""

    def __init__(self, orders, gateway=None):
        self.orders = orders
        self.gateway = gateway or PaymentGateway()

    def ProcessRefund(self, order_id, amount):
        """Refund ``amount`` cents for ``order_id`` through the payment gateway.

        Looks up the order's original charge, validates the amount with
        ``validate_refund_amount`` and records the provider's refund id on the
        order. Returns the refund id.
        """
        order = self.orders[order_id]
        validate_refund_amount(amount, order["charged"])
        refund_id = self.gateway.Refund(order["charge_id"], amount)
        order.setdefault("refunds", []).append(refund_id)
        return refund_id
