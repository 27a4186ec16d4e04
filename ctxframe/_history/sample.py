"""A small, deterministic git history for a copy of the bundled sample shop, so the history
analyses have something to show: four authors over a year, files growing to what the sample
holds, the payments code changing often and together, a route and its TypeScript client
changing together with no path between them in the graph (hidden coupling), and a Go file
one author wrote alone.

Every commit's content, author and date are fixed, so the same copy always gets the same
commits (the same shas with the same git)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta

AUTHORS = {
    "alice": ("Alice Martin", "alice@shop.example"),
    "bram": ("Bram de Vries", "bram@shop.example"),
    "chen": ("Chen Wei", "chen@shop.example"),
    "dana": ("Dana Okafor", "dana@shop.example"),
}
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

PAYMENTS = ("services/payments/refund_processor.py", "services/payments/gateway.py",
            "tests/test_refund_processor.py")  # fmt: skip
ROUTE_AND_CLIENT = ("services/api/routes.py", "web/src/api/refunds.ts")
HANDLERS = ("web/server/handlers.js", "web/server/handlers.spec.js")
GO = ("gateway-go/refund/stripe.go",)
GROWING = PAYMENTS + ROUTE_AND_CLIENT + HANDLERS + GO

# (days after START, author, subject, files touched: each grows by one step towards its
# final content; None: every file as the sample holds it)
STEPS: list[tuple[int, str, str, tuple[str, ...] | None]] = [
    (0, "alice", "Start the shop: services, web and the Go gateway", ()),
    (9, "alice", "Refunds: first processor and gateway", PAYMENTS),
    (16, "bram", "Refund route and its web client", ROUTE_AND_CLIENT),
    (23, "alice", "Refunds: partial amounts", PAYMENTS),
    (30, "dana", "Stripe refunds in the Go gateway", GO),
    (37, "chen", "Web handlers for refunds", HANDLERS),
    (51, "bram", "Route: refund reasons, in the client too", ROUTE_AND_CLIENT),
    (58, "alice", "Refunds: idempotency keys", PAYMENTS),
    (72, "chen", "Handlers: error codes", HANDLERS),
    (86, "bram", "Refund route: pagination", ROUTE_AND_CLIENT),
    (93, "bram", "Refunds: retry the gateway", PAYMENTS),
    (107, "dana", "Stripe: map decline codes", GO),
    (121, "chen", "Handlers: validate amounts", HANDLERS),
    (135, "alice", "Refunds: audit log", PAYMENTS),
    (149, "bram", "Refund route: currency field", ROUTE_AND_CLIENT),
    (170, "chen", "Handlers: pass the currency", HANDLERS),
    (191, "alice", "Refunds: reconcile totals", PAYMENTS),
    (212, "dana", "Stripe: timeouts", GO),
    (240, "bram", "Refund route: status endpoint", ROUTE_AND_CLIENT),
    (268, "chen", "Handlers: status polling", HANDLERS),
    (296, "alice", "Refunds: cancel a pending refund", PAYMENTS),
    (331, "bram", "Refund route and client: cancel", ROUTE_AND_CLIENT),
    (352, "dana", "Stripe: cancel", GO),
    (359, "alice", "The shop as it is today", None),
]


def _versions(lines: list[str], steps: int) -> list[str]:
    """The file's content after each of its `steps` changes: its first lines, growing to
    the whole file (the first version has a third of it)."""
    out = []
    for k in range(1, steps + 1):
        n = max(1, round(len(lines) * (1 + 2 * k / steps) / 3))
        out.append("".join(lines[:n]))
    return out


def _git(repo: str, *args: str, env: dict | None = None) -> str:
    full = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", **(env or {})}  # fmt: skip
    out = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", "-c",
         "init.defaultBranch=main", "-C", repo, *args],
        capture_output=True, text=True, env=full, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {out.stderr.strip()[:200]}")
    return out.stdout.strip()


def make_history(repo: str) -> str:
    """Turn the sample copy at `repo` (not yet a git repository) into one with the history
    above; the work tree ends as the sample was. Returns HEAD's sha."""
    if os.path.exists(os.path.join(repo, ".git")):
        raise FileExistsError(f"{repo} is a git repository already")
    final: dict[str, str] = {}
    for path in GROWING:
        with open(os.path.join(repo, path), encoding="utf-8") as fh:
            final[path] = fh.read()
    touches = {p: sum(1 for *_, files in STEPS if files and p in files) for p in GROWING}
    versions = {p: _versions(final[p].splitlines(keepends=True), touches[p] + (p not in GO))
                for p in GROWING}  # fmt: skip
    done = dict.fromkeys(GROWING, 0)
    _git(repo, "init", "-q")

    def write(path: str, text: str) -> None:
        with open(os.path.join(repo, path), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    for path in GROWING:  # the first commit holds every file, these at their first version
        write(path, versions[path][0])
    for path in GO:  # written by one author alone, from their first commit on
        os.unlink(os.path.join(repo, path))
        done[path] -= 1
    for days, who, subject, files in STEPS:
        if files is None:
            for path in GROWING:
                write(path, final[path])
        else:
            for path in files:
                done[path] += 1
                write(path, versions[path][done[path]])
        name, email = AUTHORS[who]
        when = (START + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when,
               "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
               "GIT_COMMITTER_DATE": when}  # fmt: skip
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", subject, env=env)
    return _git(repo, "rev-parse", "HEAD")
