'use strict';

// Client for the Python payments API (k8s Service `payments-api`, payments repository).

const PAYMENTS_API_URL = 'http://payments-api';

async function submitRefund(orderId, amount) {
  const response = await fetch(`${PAYMENTS_API_URL}/refunds/${encodeURIComponent(orderId)}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ amount }),
  });
  return response.json();
}

// The payments API has no DELETE route for refunds (yet): nothing answers this call.
async function cancelRefund(orderId) {
  const response = await fetch(`${PAYMENTS_API_URL}/refunds/${encodeURIComponent(orderId)}`, {
    method: 'DELETE',
  });
  return response.ok;
}

// `init` is the caller's: the method is not written here.
async function fetchReceipt(orderId, init) {
  const response = await fetch(`${PAYMENTS_API_URL}/orders/${encodeURIComponent(orderId)}/receipt`, init);
  return response.text();
}

module.exports = { submitRefund, cancelRefund, fetchReceipt, PAYMENTS_API_URL };
