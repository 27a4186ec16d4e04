"""Native sources against real servers: a throwaway PostgreSQL (Debian's `postgresql` package)
and moto's S3 server, both on loopback. `index --dial` turns the env vars that point at them into
table, view and bucket nodes; URL, password and host never reach the store."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._ingest.dial import _scrub, dial
from ctxframe.cli import main

PG_USER, PG_PASSWORD, PG_DB = "ledger_app", "Pw-9f3kQz7x", "ledgerdb"
BUCKET, KEY_ID, KEY_SECRET = "shop-receipts", "AKIDCTXFRAMETEST", "s3-secret-Zq81"
SCHEMA_SQL = """
CREATE SCHEMA ledger AUTHORIZATION ledger_app;
CREATE TABLE ledger.refunds (id serial PRIMARY KEY, order_id text NOT NULL,
                             amount numeric(10, 2), day date);
CREATE TABLE ledger.orders (order_id text PRIMARY KEY, total numeric(10, 2));
CREATE VIEW ledger.daily_refunds AS
    SELECT day, sum(amount) AS total FROM ledger.refunds GROUP BY day;
ALTER TABLE ledger.refunds OWNER TO ledger_app;
ALTER TABLE ledger.orders OWNER TO ledger_app;
ALTER VIEW ledger.daily_refunds OWNER TO ledger_app;
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server on 127.0.0.1 and a free port, data dir thrown away afterwards.
    Yields the DSN of a password role owning a small schema (two tables, one view)."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl) not installed: apt-get install postgresql"
        )
    import psycopg

    base = tempfile.mkdtemp(prefix="ctxframe-pg-")  # not under pytest's 0700 tmp: postgres reads it
    data, sock, log = f"{base}/data", f"{base}/sock", f"{base}/server.log"
    os.makedirs(sock)
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        pw = pwd.getpwnam("postgres")
        for p in (base, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([*as_user, *argv], check=True, capture_output=True, timeout=120)

    run(f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth-local=trust",
        "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")  # fmt: skip
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={sock} -c fsync=off"
    try:
        run(f"{bindir}/pg_ctl", "-D", data, "-l", log, "-o", opts, "-w", "-t", "60", "start")
    except subprocess.CalledProcessError:
        print(Path(log).read_text() if os.path.exists(log) else "no server log")
        raise
    try:
        admin = f"host={sock} port={port} user=postgres dbname=postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {PG_USER} LOGIN PASSWORD '{PG_PASSWORD}'")
            conn.execute(f"CREATE DATABASE {PG_DB} OWNER {PG_USER}")
        with psycopg.connect(f"host={sock} port={port} user=postgres dbname={PG_DB}") as conn:
            conn.execute(SCHEMA_SQL)
        yield {
            "dsn": f"postgresql://{PG_USER}:{PG_PASSWORD}@127.0.0.1:{port}/{PG_DB}",
            "port": port,
        }
    finally:
        with contextlib.suppress(Exception):
            run(f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 API on 127.0.0.1 and a free port, with one bucket of receipts."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        pytest.skip("moto's server mode is not installed: pip install 'moto[server]'")
    import boto3

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=KEY_ID,
            aws_secret_access_key=KEY_SECRET,
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        for key in ("receipts/2025/a.pdf", "receipts/2025/b.pdf", "receipts/2026/c.pdf",
                    "receipts/index.json", "exports/x.csv", "readme.txt"):  # fmt: skip
            client.put_object(Bucket=BUCKET, Key=key, Body=b"x")
        yield {"endpoint": endpoint, "url": f"s3://{BUCKET}/receipts"}
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch, s3_server):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server["endpoint"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEY_SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for var in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(var, raising=False)
    return s3_server


def _store_bytes_scan(store: str, needles: list[str]) -> list[tuple[str, str]]:
    """(file, needle) for every needle found in the store: raw bytes and decoded cells."""
    found = []
    for path in sorted(p for p in Path(store).rglob("*") if p.is_file()):  # cache/ too
        raw = path.read_bytes()
        text = raw.decode("latin-1")
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
            text += json.dumps(frame.to_dicts(), default=str)
        for needle in needles:
            if needle.encode() in raw or needle in text:
                found.append((path.name, needle))
    return found


def test_dial_postgres_and_s3_into_the_sample(shop, monkeypatch, postgres, aws_env) -> None:
    monkeypatch.setenv("LEDGER_DATABASE_URL", postgres["dsn"])
    monkeypatch.setenv("RECEIPTS_BUCKET_URL", aws_env["url"])
    g = cf.index(str(shop), progress=False, dial=True)
    assert g.report.dial["unreachable"] == []
    assert g.report.dial["dialled"] == [
        "env:LEDGER_DATABASE_URL (postgres): 2 tables, 1 views in 1 schemas",
        "env:RECEIPTS_BUCKET_URL (s3): 1 bucket, 3 top-level keys under the configured prefix",
    ]
    dialled = g.nodes.filter(pl.col("producer") == "ctxframe.dial").sort("id")
    assert dialled.select("id", "kind", "label", "transport").rows() == [
        ("bucket:RECEIPTS_BUCKET_URL/shop-receipts", "bucket", "shop-receipts", "storage.s3"),
        ("table:LEDGER_DATABASE_URL/ledger.orders", "table", "ledger.orders", "database"),
        ("table:LEDGER_DATABASE_URL/ledger.refunds", "table", "ledger.refunds", "database"),
        ("view:LEDGER_DATABASE_URL/ledger.daily_refunds", "view", "ledger.daily_refunds",
         "database"),
    ]  # fmt: skip
    docs = dict(dialled.select("label", "doc").iter_rows())
    assert docs["ledger.refunds"] == (
        "columns: id integer, order_id text, amount numeric(10,2), day date"
    )
    assert docs["shop-receipts"] == "3 top-level keys under the configured prefix"
    links = g.edges.filter(pl.col("producer") == "ctxframe.dial")
    assert set(links.select("src", "kind", "dst", "confidence").rows()) == {
        ("env:LEDGER_DATABASE_URL", "declares", "table:LEDGER_DATABASE_URL/ledger.orders",
         "EXTRACTED"),
        ("env:LEDGER_DATABASE_URL", "declares", "table:LEDGER_DATABASE_URL/ledger.refunds",
         "EXTRACTED"),
        ("env:LEDGER_DATABASE_URL", "declares", "view:LEDGER_DATABASE_URL/ledger.daily_refunds",
         "EXTRACTED"),
        ("env:RECEIPTS_BUCKET_URL", "declares", "bucket:RECEIPTS_BUCKET_URL/shop-receipts",
         "EXTRACTED"),
    }  # fmt: skip

    # query, card and boundaries see them
    hits = g.query("ledger refunds table", limit=5).to_dict()
    assert "table:LEDGER_DATABASE_URL/ledger.refunds" in json.dumps(hits)
    card = g.card("table:LEDGER_DATABASE_URL/ledger.refunds")
    assert card.status == "ok" and "amount numeric(10,2)" in str(card)
    text = str(g.boundaries())
    assert "consumes · database:" in text
    assert "ledger.refunds  ← declares LEDGER_DATABASE_URL" in text
    assert "consumes · storage.s3:" in text and "shop-receipts  ← declares" in text

    # the byte-scan: nothing of the URLs, credentials or hosts is in the store
    secrets = [postgres["dsn"], PG_PASSWORD, PG_USER, PG_DB, "127.0.0.1", aws_env["url"],
               aws_env["endpoint"], KEY_ID, KEY_SECRET]  # fmt: skip
    assert _store_bytes_scan(g.store, secrets) == []
    assert _store_bytes_scan(g.store, ["ledger.refunds", "shop-receipts"])  # the scan does see


def test_dial_is_off_by_default_and_rows_go_when_it_is(shop, monkeypatch, postgres) -> None:
    monkeypatch.setenv("LEDGER_DATABASE_URL", postgres["dsn"])
    g = cf.index(str(shop), progress=False)
    assert g.report.dial == {}
    assert g.nodes.filter(pl.col("producer") == "ctxframe.dial").is_empty()
    g = cf.index(str(shop), progress=False, dial=True)
    assert g.nodes.filter(pl.col("producer") == "ctxframe.dial").height == 3
    g = cf.index(str(shop), progress=False)  # not dialled this time: gone again
    assert g.nodes.filter(pl.col("producer") == "ctxframe.dial").is_empty()
    assert g.tokens.filter(pl.col("node_id").str.starts_with("table:")).is_empty()


def test_unreachable_sources_are_reported_and_indexing_goes_on(
    shop, monkeypatch, postgres, aws_env, capsys
) -> None:
    closed = _free_port()
    bad_pg = f"postgresql://{PG_USER}:{PG_PASSWORD}@127.0.0.1:{closed}/{PG_DB}"
    wrong_pw = postgres["dsn"].replace(PG_PASSWORD, "not-the-password")
    monkeypatch.setenv("LEDGER_DATABASE_URL", bad_pg)
    monkeypatch.setenv("PAYMENTS_TIMEOUT", wrong_pw)  # any env var of the graph is dialled
    monkeypatch.setenv("RECEIPTS_BUCKET_URL", "s3://no-such-bucket/receipts")
    monkeypatch.setenv("API_BASE_URL", "http://localhost:8000")  # not a native source: ignored
    assert main(["index", "--repo", str(shop), "--dial", "--no-progress"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("dial")]
    assert len(lines) == 3, out
    assert lines[0].startswith("dial unreachable: env:LEDGER_DATABASE_URL (postgres): ")
    assert lines[1].startswith("dial unreachable: env:PAYMENTS_TIMEOUT (postgres): ")
    assert "authentication failed" in lines[1]
    assert lines[2].startswith("dial unreachable: env:RECEIPTS_BUCKET_URL (s3): ")
    assert "NoSuchBucket" in lines[2]
    for needle in (PG_PASSWORD, "not-the-password", PG_USER, "127.0.0.1", str(closed),
                   "no-such-bucket", aws_env["endpoint"]):  # fmt: skip
        assert needle not in out, needle
    g = cf.open(str(shop))
    assert g.nodes.filter(pl.col("producer") == "ctxframe.dial").is_empty()
    assert "services/payments/reconcile.py::export_refunds" in set(g.nodes["id"])
    assert _store_bytes_scan(g.store, [PG_PASSWORD, "127.0.0.1", "no-such-bucket"]) == []


def test_dial_connects_read_only(postgres, monkeypatch) -> None:
    import psycopg

    seen = {}
    real = psycopg.connect

    def spy(*a, **kw):
        conn = real(*a, **kw)
        seen["conn"] = conn
        return conn

    monkeypatch.setattr(psycopg, "connect", spy)
    run = dial(
        [("LEDGER_DATABASE_URL", ".env.example", 6)], {"LEDGER_DATABASE_URL": postgres["dsn"]}
    )
    assert run.unreachable == [] and seen["conn"].read_only is True
    with real(postgres["dsn"]) as conn:  # and read-only really refuses writes
        conn.read_only = True
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("INSERT INTO ledger.orders VALUES ('x', 1)")


def test_scrub_removes_urls_and_connection_parts() -> None:
    url = "postgresql://alice:s3cr%40t@db.internal.example:6543/ledger?sslmode=require"
    msg = (
        'connection to server at "db.internal.example" (10.1.2.3), port 6543 failed: '
        'FATAL: password authentication failed for user "alice"\n'
        f"while dialling {url}"
    )
    out = _scrub(msg, url)
    for part in ("alice", "s3cr", "db.internal.example", "6543", "ledger", "postgresql://",
                 "10.1.2.3"):  # fmt: skip
        assert part not in out
    assert "\n" not in out and "password authentication failed" in out


def test_values_that_are_not_native_sources_are_left_alone() -> None:
    run = dial(
        [("A", None, None), ("B", None, None), ("C", None, None)],
        {"A": "http://example.test/x", "B": "plain value", "D": "postgresql://x/y"},
    )
    assert run.dialled == [] and run.unreachable == [] and run.nodes.is_empty()
