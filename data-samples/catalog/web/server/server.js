'use strict';

// Express web server: serves the storefront API and forwards refunds to Python.

const express = require('express');
const { refundHandler, healthHandler } = require('./handlers');

const PORT = 3000;

function createApp() {
  const app = express();
  app.use(express.json());
  app.get('/healthz', healthHandler);
  app.post('/api/refunds/:id', refundHandler);
  return app;
}

if (require.main === module) {
  createApp().listen(PORT, () => {
    console.log(`shop web server listening on ${PORT}`);
  });
}

module.exports = { createApp };
