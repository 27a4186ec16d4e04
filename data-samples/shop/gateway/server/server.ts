// Minimal HTTP bootstrap for the desktop app's local gateway process.

import { createServer, IncomingMessage, Server, ServerResponse } from "http";

export interface ServerOptions {
  port: number;
  host?: string;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify({ ok: true, path: req.url }));
}

export function startServer(options: ServerOptions): Server {
  const server = createServer(handle);
  server.listen(options.port, options.host ?? "127.0.0.1");
  return server;
}
