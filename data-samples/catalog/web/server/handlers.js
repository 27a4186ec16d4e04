'use strict';

// Route handlers for the Express web server.

const { submitRefund } = require('./paymentsClient');

async function refundHandler(req, res) {
  const amount = Number(req.body && req.body.amount);
  if (!Number.isInteger(amount) || amount <= 0) {
    res.status(400).json({ ok: false, error: 'amount must be a positive integer' });
    return;
  }
  try {
    const result = await submitRefund(req.params.id, amount);
    res.status(result.ok ? 200 : 400).json({
      ok: result.ok,
      refundId: result.refund_id,
      error: result.error,
    });
  } catch (err) {
    res.status(502).json({ ok: false, error: err.message });
  }
}

function healthHandler(req, res) {
  res.json({ status: 'ok' });
}

module.exports = { refundHandler, healthHandler };
