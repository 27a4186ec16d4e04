"""`ctxframe serve`: a local, read-only explore page over one indexed repository.

Standard library only (`http.server`). One reader thread holds every connection until its
request head is complete (non-blocking sockets and a selector), and only then hands it to a
bounded pool of workers: idle or slow clients never hold a worker. A connection that sends
no complete request within CONNECTION_TIMEOUT seconds is dropped with one log line, and
beyond MAX_PENDING waiting connections the longest waiting goes first, so a new request is
always read. Each connection answers one request (`Connection: close`).
It binds 127.0.0.1 unless told otherwise, answers GET and HEAD only, and serves every asset
itself: the page and its small JS from `ctxframe/static/`, vis-network from the pyvis package.
The JSON under `/api/` is the verbs' own `to_dict()` (the CLI's `--json`):

    /api/summary                     Graph.summary() + the rule names
    /api/style                       the kind palette and edge styles the pictures use
    /api/query?q=TEXT&rule=R&limit=N QueryResult.to_dict()
    /api/card?name=ID                Card.to_dict()
    /api/neighbourhood?name=ID&depth=D  Neighbourhood.to_dict() (with draw-ready vis data)
    /api/hubs?top=N                  Hubs.to_dict()
    /api/boundaries                  Graph.boundaries().to_dict(), or {"status": "not-indexed"}

When bound to a loopback address, requests whose Host header is not a loopback name are refused
(a DNS-rebinding page cannot read the repository through the browser); a request with more
than one Host header is refused whatever the address.

A new index (`ctxframe index`, `ctxframe watch`) is picked up without a restart: each API request
reads the store's `current` pointer (one readlink) and, when it names another version, the graph
moves to it first.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
CONNECTION_TIMEOUT = 10.0  # seconds a connection may take to send its whole request head
WORKERS = 16  # requests answered at once
QUEUE = 64  # complete requests waiting for a worker; more are dropped
MAX_PENDING = 768  # connections still sending their request head; past it the oldest goes
MAX_HEAD = 64 * 1024  # bytes of a request head (a longer one is answered 431)
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)
_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
_VIS = {
    "/static/vis-network.min.js": ("vis-network.min.js", "text/javascript; charset=utf-8"),
    "/static/vis-network.css": ("vis-network.css", "text/css; charset=utf-8"),
}


def _int(params: dict, key: str, default: int, lo: int, hi: int) -> int:
    try:
        return max(lo, min(hi, int(params.get(key, [default])[0])))
    except (TypeError, ValueError):
        return default


class App:
    """The routes as plain functions of (path, query parameters) -> (status, JSON dict)."""

    def __init__(self, graph: Any):
        self.graph = graph
        self._lock = threading.Lock()  # Graph caches and its DuckDB connection are not shared
        self.moves = 0  # how many times the graph moved to a newer index

    def warm(self) -> None:
        """Build the ranking and traversal indexes before the first request."""
        with self._lock:
            self.graph.warm()

    def _follow(self) -> None:
        """Move the graph to the store's current version when an index wrote a new one
        (under the lock: the request waits while the graph rebuilds its lookups)."""
        from ctxframe._core.errors import CtxframeError
        from ctxframe._store.tables import current_version

        g = self.graph
        try:
            now = current_version(g.store)
            if now is not None and now != g.version:
                g.refresh(reindex=False)
                self.moves += 1
        except (OSError, CtxframeError) as exc:  # keep answering from the version we have
            _log(f"cannot read the new index: {exc}")

    def api(self, path: str, params: dict[str, list[str]]) -> tuple[int, dict]:
        from ctxframe._apps.fallback import boundaries_of
        from ctxframe._core.errors import CtxframeError
        from ctxframe._rank import rules
        from ctxframe._render.palette import style

        def arg(key: str) -> str:
            return (params.get(key) or [""])[0]

        g = self.graph
        try:
            with self._lock:
                self._follow()
                if path == "/api/summary":
                    return 200, {
                        **g.summary(),
                        "rules": list(rules.RULES),
                        "nodes_total": g.nodes.height,
                        "edges_total": g.edges.height,
                    }
                if path == "/api/style":
                    return 200, style()
                if path == "/api/query":
                    q = arg("q")
                    res = g.query(
                        q, limit=_int(params, "limit", 20, 1, 100), rule=arg("rule") or None
                    )
                    return 200, res.to_dict()
                if path == "/api/card":
                    return 200, g.card(arg("name")).to_dict()
                if path == "/api/neighbourhood":
                    depth = _int(params, "depth", 1, 1, 3)
                    return 200, g.neighbourhood(arg("name"), depth=depth).to_dict()
                if path == "/api/hubs":
                    return 200, g.hubs(top=_int(params, "top", 10, 1, 100)).to_dict()
                if path == "/api/boundaries":
                    return 200, boundaries_of(g).to_dict()
        except CtxframeError as exc:
            return 400, {"error": str(exc)}
        except Exception as exc:  # a bug must not take the connection down without an answer
            _log(f"error answering {path}: {type(exc).__name__}: {exc}")
            return 500, {"error": f"{type(exc).__name__}: {exc}"}
        return 404, {"error": f"no such endpoint: {path}"}


def _handler(app: App, loopback_only: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "ctxframe"
        sys_version = ""
        timeout = CONNECTION_TIMEOUT  # an idle or slow client is dropped after this

        def log_message(self, format: str, *args: Any) -> None:  # quiet unless asked
            if getattr(self.server, "verbose", False):
                super().log_message(format, *args)

        def setup(self) -> None:
            super().setup()
            # the request head the reader thread collected (see PooledHTTPServer)
            self.rfile = io.BytesIO(getattr(_HEAD, "data", b""))

        def parse_request(self) -> bool:
            self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
            words = self.requestline.split()
            if len(words) == 2 and words[0] == "GET":  # HTTP/0.9: no headers follow, so
                # answer now instead of waiting for a header block that never comes
                self.command, self.path, self.request_version = "GET", words[1], "HTTP/0.9"
                self.close_connection = True
                self.headers = http.client.HTTPMessage()
                return True
            return super().parse_request()

        def log_error(self, format: str, *args: Any) -> None:
            text = format % args
            if text.startswith("Request timed out"):  # one line per dropped client, always
                _log(f"dropped {self.client_address[0]}: no complete request within "
                     f"{self.timeout:g}s")  # fmt: skip
            elif getattr(self.server, "verbose", False):
                super().log_error(format, *args)

        def _send(self, status: int, body: bytes, ctype: str, head_only: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def _json(self, status: int, data: dict, head_only: bool = False) -> None:
            from ctxframe._ingest.redact import redact_obj

            data = redact_obj(json.loads(json.dumps(data, default=str)))
            body = json.dumps(data).encode("utf-8")
            self._send(status, body, "application/json; charset=utf-8", head_only)

        def _host_ok(self) -> bool:
            if not loopback_only:
                return True
            host = (self.headers.get("Host") or "").strip().lower()
            if host.startswith("["):
                name = host.split("]")[0] + "]"
            else:
                name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
            return name in LOOPBACK_NAMES

        def do_GET(self, head_only: bool = False) -> None:
            if len(self.headers.get_all("Host") or []) > 1:
                self._json(400, {"error": "more than one Host header"}, head_only)
                return
            if not self._host_ok():
                self._json(403, {"error": "this server answers loopback hosts only"}, head_only)
                return
            url = urlsplit(self.path)
            if url.path in _STATIC:
                name, ctype = _STATIC[url.path]
                body = resources.files("ctxframe._apps").joinpath("static", name).read_bytes()
                self._send(200, body, ctype, head_only)
            elif url.path in _VIS:
                from ctxframe._render.picture import vis_asset

                name, ctype = _VIS[url.path]
                self._send(200, vis_asset(name).encode("utf-8"), ctype, head_only)
            elif url.path.startswith("/api/"):
                status, data = app.api(url.path, parse_qs(url.query))
                self._json(status, data, head_only)
            else:
                self._json(404, {"error": f"not found: {url.path}"}, head_only)

        def do_HEAD(self) -> None:
            self.do_GET(head_only=True)

        def _read_only(self) -> None:
            self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
            self.send_header("Allow", "GET, HEAD")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _read_only

    return Handler


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _log(line: str) -> None:
    print(f"ctxframe serve: {line}", file=sys.stderr, flush=True)


_HEAD = threading.local()  # the request head a worker answers (read by Handler.setup)


def _head_done(buf: bytes) -> bool:
    """A whole request head: the blank line after the headers, an HTTP/0.9 `GET /path`
    line, or more than MAX_HEAD bytes (answered 431)."""
    if b"\r\n\r\n" in buf or b"\n\n" in buf or len(buf) > MAX_HEAD:
        return True
    line, nl, _ = buf.partition(b"\n")
    return bool(nl) and len(line.split()) == 2 and line.startswith(b"GET ")


class _Reader(threading.Thread):
    """Holds connections until their request head is complete (a selector over non-blocking
    sockets), then hands each to `ready`; drops those past their deadline and, beyond
    MAX_PENDING, the longest waiting."""

    def __init__(self, ready, drop):
        super().__init__(name="serve-reader", daemon=True)
        self._ready, self._drop = ready, drop
        self._sel = selectors.DefaultSelector()
        self._new: list = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._pending: dict = {}  # socket -> [address, deadline, bytearray]
        self._halt = threading.Event()

    def add(self, sock, address) -> None:
        with self._lock:
            self._new.append((sock, address))
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def stop(self) -> None:
        self._halt.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def run(self) -> None:
        while not self._halt.is_set():
            with self._lock:
                new, self._new = self._new, []
            now = time.monotonic()
            for sock, address in new:
                sock.setblocking(False)
                self._pending[sock] = [address, now + CONNECTION_TIMEOUT, bytearray()]
                self._sel.register(sock, selectors.EVENT_READ, None)
            while len(self._pending) > MAX_PENDING:  # the longest waiting goes first
                sock = next(iter(self._pending))
                self._close(sock, f"dropped {self._pending[sock][0][0]}: too many idle "
                                  "connections")  # fmt: skip
            for key, _ in self._sel.select(timeout=0.25):
                sock = key.fileobj
                if sock is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                self._read(sock)
            now = time.monotonic()
            for sock in [s for s, p in self._pending.items() if p[1] < now]:
                self._close(sock, f"dropped {self._pending[sock][0][0]}: no complete request "
                                  f"within {CONNECTION_TIMEOUT:g}s")  # fmt: skip
        for sock in list(self._pending):
            self._close(sock, None)

    def _read(self, sock) -> None:
        address, _, buf = self._pending[sock]
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._close(sock, None)
            return
        buf += chunk
        if _head_done(bytes(buf)):
            self._sel.unregister(sock)
            del self._pending[sock]
            sock.setblocking(True)
            sock.settimeout(CONNECTION_TIMEOUT)  # writing the answer to a slow reader
            self._ready(sock, address, bytes(buf))

    def _close(self, sock, why: str | None) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(sock)
        self._pending.pop(sock, None)
        if why:
            _log(why)
        self._drop(sock)


class PooledHTTPServer(HTTPServer):
    """An HTTP server answering from a bounded pool of threads: at most WORKERS requests run
    and QUEUE more wait; a client beyond that, or one that goes away, costs one log line.
    Connections wait for their request head in one reader thread, not in a worker."""

    request_queue_size = 1024  # the listen backlog: a burst of connections is not refused

    def __init__(self, address, handler, workers: int = WORKERS, queue: int = QUEUE):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="serve")
        self._slots = threading.BoundedSemaphore(workers + queue)
        self._reader = _Reader(self._dispatch, self.shutdown_request)
        super().__init__(address, handler)
        self._reader.start()

    def process_request(self, request, client_address) -> None:
        self._reader.add(request, client_address)

    def _dispatch(self, request, client_address, head: bytes) -> None:
        if not self._slots.acquire(blocking=False):
            _log(f"dropped {client_address[0]}: busy ({WORKERS} requests running)")
            self.shutdown_request(request)
            return
        try:
            self._pool.submit(self._work, request, client_address, head)
        except RuntimeError:  # shutting down
            self._slots.release()
            self.shutdown_request(request)

    def _work(self, request, client_address, head: bytes) -> None:
        _HEAD.data = head
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            _HEAD.data = b""
            self.shutdown_request(request)
            self._slots.release()

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        _log(f"dropped {client_address[0]}: {type(exc).__name__}: {exc}")

    def server_close(self) -> None:
        super().server_close()
        self._reader.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)


class _PooledHTTPServer6(PooledHTTPServer):
    address_family = socket.AF_INET6


def make_server(
    graph: Any, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT
) -> PooledHTTPServer:
    """A ready (not yet serving) server; port 0 picks a free port (see `server.server_port`)."""
    app = App(graph)
    app.warm()
    cls = _PooledHTTPServer6 if ":" in host else PooledHTTPServer  # an IPv6 literal: ::1
    server = cls((host.strip("[]"), port), _handler(app, _is_loopback(host)))
    server.app = app  # type: ignore[attr-defined]
    return server


def serve(
    path: str = ".",
    *,
    store: str | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    verbose: bool = False,
) -> None:
    """Open the index of `path` and serve the explore page until interrupted."""
    from ctxframe._graph.graph import open_graph

    graph = open_graph(path, store=store)
    graph.nodes  # noqa: B018 -- fail now (StoreNotFound) rather than on the first request
    server = make_server(graph, host=host, port=port)
    server.verbose = verbose  # type: ignore[attr-defined]
    shown = f"[{host}]" if ":" in host else host
    print(f"ctxframe: serving {graph.root} at http://{shown}:{server.server_port}/ (read-only)")
    if not _is_loopback(host):
        print(f"ctxframe: warning: bound to {host}, reachable from other machines", file=sys.stderr)
    print("ctxframe: press Ctrl-C to stop", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
