"""Tests for the Python refund flow (pytest)."""

from unittest.mock import Mock

import pytest

from services.payments.checkout import CheckoutHandler
from services.payments.refund_processor import (
    PaymentRefundProcessor,
    RefundError,
    validate_refund_amount,
)


def make_orders():
    return {"o-1": {"charge_id": "ch_1", "charged": 2500}}


def test_process_refund_calls_gateway():
    gateway = Mock()
    gateway.Refund.return_value = "re_1"
    orders = make_orders()
    processor = PaymentRefundProcessor(orders, gateway=gateway)
    assert processor.ProcessRefund("o-1", 1000) == "re_1"
    gateway.Refund.assert_called_once_with("ch_1", 1000)
    assert orders["o-1"]["refunds"] == ["re_1"]


def test_process_refund_rejects_amount_above_charge():
    processor = PaymentRefundProcessor(make_orders(), gateway=Mock())
    with pytest.raises(RefundError):
        processor.ProcessRefund("o-1", 9999)


def test_validate_refund_amount_rejects_zero():
    with pytest.raises(RefundError):
        validate_refund_amount(0, 100)


def test_handle_refund_request_unknown_order():
    handler = CheckoutHandler(orders={}, gateway=Mock())
    result = handler.handle_refund_request("missing", 10)
    assert result == {"ok": False, "error": "unknown order missing"}
