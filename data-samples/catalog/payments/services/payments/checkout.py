"""Checkout business logic used by the HTTP API: totals and refunds."""

from services.payments.refund_processor import PaymentRefundProcessor, RefundError

# In-memory order store for the sample; a real shop would use a database.
DEFAULT_ORDERS = {
    "o-1001": {"charge_id": "ch_1001", "charged": 2500, "items": [("T-shirt", 2500)]},
}


class CheckoutHandler:
    """Entry point used by the HTTP API for checkout and refund requests."""

    def __init__(self, orders=None, gateway=None):
        self.orders = orders if orders is not None else DEFAULT_ORDERS
        self.gateway = gateway

    def order_total(self, order_id):
        """Return the amount charged for an order, in cents."""
        return self.orders[order_id]["charged"]

    def handle_refund_request(self, order_id, amount):
        """Handle a customer's refund request and return a JSON-able result."""
        try:
            refund_id = PaymentRefundProcessor(self.orders, gateway=self.gateway).ProcessRefund(
                order_id, amount
            )
        except KeyError:
            return {"ok": False, "error": f"unknown order {order_id}"}
        except RefundError as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True, "refund_id": refund_id}
