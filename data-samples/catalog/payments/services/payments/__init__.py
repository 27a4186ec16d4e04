"""Payments package: refunds, provider gateways and nightly reconciliation.

The public entry points are re-exported here so callers can write
``from services.payments import PaymentRefundProcessor``.
"""

from services.payments.gateway import PaymentGateway
from services.payments.refund_processor import PaymentRefundProcessor

__all__ = [
    "PaymentGateway",
    "PaymentRefundProcessor",
]
