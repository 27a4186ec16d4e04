"""DEPRECATED refund processing from the first shop release.

Kept for reference only; excluded from indexing by .ctxframeignore.
"""


class LegacyRefundProcessor:
    """Old refund processor that refunded orders without validation."""

    def process_refund(self, order_id, amount):
        """Process a refund for an order (legacy, unvalidated)."""
        print(f"refunding {amount} for order {order_id}")
        return {"order_id": order_id, "refunded": amount}


def process_refund_batch(refunds):
    """Process a batch of legacy refund requests."""
    processor = LegacyRefundProcessor()
    return [processor.process_refund(order_id, amount) for order_id, amount in refunds]
