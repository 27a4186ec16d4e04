'use strict';

// Client for the Python payments API (Service `payments-api` in deploy/k8s).

const PAYMENTS_API_URL = 'http://payments-api';

async function submitRefund(orderId, amount) {
  const response = await fetch(`${PAYMENTS_API_URL}/refunds/${encodeURIComponent(orderId)}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ amount }),
  });
  return response.json();
}

module.exports = { submitRefund, PAYMENTS_API_URL };
