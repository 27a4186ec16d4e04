'use strict';

// Run with: node --test server/handlers.spec.js

const assert = require('node:assert');
const test = require('node:test');

const { refundHandler } = require('./handlers');

function fakeResponse() {
  const res = { statusCode: 200, body: null };
  res.status = (code) => {
    res.statusCode = code;
    return res;
  };
  res.json = (body) => {
    res.body = body;
    return res;
  };
  return res;
}

test('refundHandler forwards the refund to the payments API', async () => {
  const calls = [];
  const originalFetch = global.fetch;
  global.fetch = async (url, init) => {
    calls.push({ url, init });
    return { json: async () => ({ ok: true, refund_id: 're_1' }) };
  };
  try {
    const res = fakeResponse();
    await refundHandler({ params: { id: 'o-1' }, body: { amount: 500 } }, res);
    assert.strictEqual(res.statusCode, 200);
    assert.deepStrictEqual(res.body, { ok: true, refundId: 're_1', error: undefined });
    assert.strictEqual(calls[0].url, 'http://payments-api/refunds/o-1');
  } finally {
    global.fetch = originalFetch;
  }
});

test('refundHandler rejects a missing amount', async () => {
  const res = fakeResponse();
  await refundHandler({ params: { id: 'o-1' }, body: {} }, res);
  assert.strictEqual(res.statusCode, 400);
});
