"""HTTP API for the shop backend (Flask)."""

import logging
import os

from flask import Flask, jsonify, request

from services.api.receipts import render_receipt
from services.billing.format import InvoiceLine
from services.payments.checkout import CheckoutHandler

app = Flask(__name__)
logging.basicConfig(level=os.getenv("LOG_LEVEL", "info").upper())


@app.post("/refunds/<order_id>")
def create_refund(order_id):
    """POST /refunds/<order_id> with a JSON body like ``{"amount": 500}``."""
    payload = request.get_json(silent=True) or {}
    amount = int(payload.get("amount", 0))
    result = CheckoutHandler().handle_refund_request(order_id, amount)
    return jsonify(result), (200 if result["ok"] else 400)


@app.get("/orders/<order_id>/receipt")
def order_receipt(order_id):
    """Return a plain-text receipt for an order."""
    order = CheckoutHandler().orders.get(order_id, {})
    items = [InvoiceLine(name, cents) for name, cents in order.get("items", [])]
    return render_receipt(order_id, items), 200, {"Content-Type": "text/plain"}


@app.get("/healthz")
def healthz():
    return jsonify(status="ok")


if __name__ == "__main__":
    app.run(port=8000)
