"""The catalog: many repositories indexed as one graph, their cross-repository links, the
Hive-partitioned view, incremental refresh, and the CLI (docs/catalog.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest

import ctxframe as cf
from ctxframe.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples" / "catalog"
REPOS = ("core", "deploy", "gateway", "payments", "web")


def _expected() -> set[tuple]:
    rows = [json.loads(x) for x in (SAMPLE / "expected-links.jsonl").read_text().splitlines()]
    return {(r["rule"], r["src"], r["dst"], r["kind"], r["confidence"]) for r in rows}


def _found(directory: Path) -> set[tuple]:
    links = pl.read_parquet(directory / "links.parquet")
    return {
        (r["rule"], f"{r['repo']}/{r['src']}", f"{r['dst_repo']}/{r['dst']}", r["kind"],
         r["confidence"])
        for r in links.iter_rows(named=True)
    }  # fmt: skip


def _make(tmp: Path) -> tuple[Path, Path]:
    """A copy of the sample repositories and a catalog of them (not indexed yet)."""
    repos = tmp / "repos"
    # without the stores a `catalog add data-samples/catalog/*/` in this checkout leaves there
    shutil.copytree(SAMPLE, repos, ignore=shutil.ignore_patterns(".ctxframe"))
    directory = tmp / "shop-catalog"
    cf.catalog(str(directory)).add(*(str(repos / r) for r in REPOS))
    return repos, directory


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The sample catalog indexed once (read-only for the tests that share it)."""
    repos, directory = _make(tmp_path_factory.mktemp("catalog"))
    report = cf.catalog(str(directory)).index()
    return repos, directory, report


@pytest.fixture(scope="module")
def g(indexed):
    return cf.open_catalog(str(indexed[1]))


# -- links ---------------------------------------------------------------------------------------
def test_every_planted_link_is_found_and_none_invented(indexed):
    found, expected = _found(indexed[1]), _expected()
    assert found - expected == set(), "invented links (precision < 100 %)"
    assert expected - found == set(), "missed links (recall < 100 %)"
    assert len(expected) == 22
    assert {r[0] for r in expected} == {"http-route", "http-service", "env", "k8s", "package"}


def test_report_says_what_each_repository_did(indexed):
    report = indexed[2]
    assert report.ok and report.rebuilt
    assert sorted(r["name"] for r in report.results) == list(REPOS)
    assert all(r["changed"] for r in report.results)
    assert report.built["links"] == 22
    assert report.built["links_by_rule"] == {
        "env": 5, "http-route": 5, "http-service": 4, "k8s": 5, "package": 3
    }  # fmt: skip
    text = str(report)
    assert "links: 22 across repositories" in text and "payments" in text
    assert report.to_dict()["status"] == "ok"
    assert "<table>" in report._repr_html_()


def test_boundaries_show_the_web_refund_call_landing_on_the_python_route(g, golden):
    b = g.boundaries("web/server/paymentsClient.js::submitRefund")
    rows = b.table.filter(pl.col("via") == "calls")
    assert rows.select("identifier", "used_by", "path").row(0) == (
        "payments: POST /refunds/{order_id}",
        "submitRefund",
        "web/server/paymentsClient.js",
    )
    golden("catalog_boundaries_submit_refund.txt", str(b) + "\n")


def test_affected_by_a_route_crosses_repositories(g, golden):
    a = g.affected("payments/route:POST /refunds/{order_id}")
    reached = set(a.nodes["id"])
    assert {
        "web/server/paymentsClient.js::submitRefund",
        "web/server/handlers.js::refundHandler",
        "web/server/handlers.spec.js",
    } <= reached
    assert a.tests == ["web/server/handlers.spec.js"]
    golden("catalog_affected_refund_route.txt", str(a) + "\n")
    # the route handled by the Python function, called from the web repository's code
    card = g.card("payments/route:POST /refunds/{order_id}")
    assert [r["other_id"] for r in card.callers.to_dicts()] == [
        "web/server/paymentsClient.js::submitRefund"
    ]


def test_every_verb_works_across_repositories(g):
    route = "payments/route:POST /refunds/{order_id}"
    path = g.path("web/server/handlers.js::refundHandler", route)
    assert [h["dst"] for h in path.paths[0]] == [
        "web/server/paymentsClient.js::submitRefund",
        "payments/route:POST /refunds/{order_id}",
    ]
    assert g.card("create_refund").node["id"] == "payments/services/api/routes.py::create_refund"
    assert g.card("healthz").ok  # one per repository is fine: names resolve like in one repo
    assert g.explain("web/server/paymentsClient.js").ok
    assert g.change_plan("web/server/paymentsClient.js::submitRefund").ok
    hubs = g.hubs(limit=5)
    assert hubs.directories["directory"].str.contains("/").all()
    n = g.neighbourhood("payments/route:POST /refunds/{order_id}")
    assert "web/server/paymentsClient.js::submitRefund" in set(n.nodes["id"])
    hits = g.query("where is refund processing implemented", limit=5).hits
    assert hits["id"][0].startswith("payments/services/payments/refund_processor.py")
    ctx = g.context("submit refund to the payments api", budget_tokens=800)
    assert "fetch(`${PAYMENTS_API_URL}/refunds/" in ctx.render()  # source read via DIR/src
    assert g.sql("select count(*) from nodes where id like 'core/%'").item() == 18 + 3


def test_ids_are_prefixed_sorted_and_keep_the_contract(g, indexed):
    assert g.nodes["id"].is_sorted() and g.edges["src"].is_sorted()
    assert g.nodes.schema == cf.Graph.__init__.__globals__["_store"].CONTRACT["nodes"]
    repo_of = g.nodes["id"].str.extract(r"^([^/]+)/", 1)
    assert set(repo_of.unique()) == set(REPOS)
    assert (g.nodes.filter(pl.col("path").is_not_null())["path"].str.extract(r"^([^/]+)/", 1)
            == g.nodes.filter(pl.col("path").is_not_null())["id"].str.extract(r"^([^/]+)/", 1)
            ).all()  # fmt: skip
    # the same tables as each repository's own store, renamed
    for name in REPOS:
        own = cf.open(str(indexed[0] / name))
        mine = g.nodes.filter(pl.col("id").str.starts_with(f"{name}/"))
        mine = mine.filter(pl.col("kind") != "package")
        assert mine.height == own.nodes.height
        assert g.files.filter(pl.col("path").str.starts_with(f"{name}/")).height == own.files.height
    assert g.repos == list(REPOS)
    assert g.links.height == 22 and set(g.links["producer"]) == {"ctxframe.catalog"}


def test_query_uses_catalog_wide_document_frequencies(g, indexed):
    """A word's weight comes from its frequency in the whole catalog, not one repository."""
    df = dict(g.token_weights.select("token", "df").iter_rows())
    per_repo = 0
    for name in REPOS:
        own = cf.open(str(indexed[0] / name)).token_weights
        per_repo += own.filter(pl.col("token") == "refund")["df"].sum()
    assert df["refund"] == per_repo > 0
    assert df["payments"] >= g.nodes.filter(pl.col("id").str.starts_with("payments/")).height


def test_package_nodes_say_what_each_repository_builds(g):
    built = g.nodes.filter(pl.col("kind") == "package").select("id", "label", "signature")
    assert built.rows() == [
        ("core/package:go:example.com/shop/core", "core: example.com/shop/core",
         "example.com/shop/core"),
        ("core/package:npm:@shop/core", "core: @shop/core", "@shop/core 0.1.0"),
        ("core/package:pypi:shop-core", "core: shop-core", "shop-core 0.1.3"),
        ("gateway/package:go:example.com/shop/gateway", "gateway: example.com/shop/gateway",
         "example.com/shop/gateway"),
        ("payments/package:pypi:shop-payments", "payments: shop-payments", "shop-payments 1.4.2"),
        ("web/package:npm:shop-web", "web: shop-web", "shop-web 0.1.0"),
    ]  # fmt: skip


# -- the Hive-partitioned view -------------------------------------------------------------------
def test_view_reads_as_one_table_with_a_repo_column(indexed, g):
    repos, directory, _ = indexed
    want = {n: cf.open(str(repos / n)).nodes.height for n in REPOS}
    by_polars = pl.scan_parquet(str(directory / "nodes"), hive_partitioning=True)
    assert dict(by_polars.group_by("repo").len().collect().iter_rows()) == want
    by_duckdb = duckdb.sql(
        f"select repo, count(*) from read_parquet('{directory}/nodes/*/*.parquet', "
        "hive_partitioning = true) group by repo"
    ).fetchall()
    assert dict(by_duckdb) == want
    by_arrow = ds.dataset(str(directory / "nodes"), format="parquet", partitioning="hive")
    assert by_arrow.to_table().num_rows == sum(want.values())
    assert "repo" in by_arrow.schema.names
    packages = g.view("packages").collect()
    assert dict(packages.group_by("repo").len().iter_rows()) == {
        "core": 3, "gateway": 1, "payments": 1, "web": 1
    }  # fmt: skip
    assert g.view("links").collect().height == 22
    calls = g.view("http_calls").collect()
    assert set(calls["repo"]) == {"gateway", "payments", "web"}
    submit = calls.filter(pl.col("src") == "server/paymentsClient.js::submitRefund")
    submit = submit.row(0, named=True)
    assert (submit["method"], submit["url"], submit["host"], submit["route"]) == (
        "POST", "http://payments-api/refunds/{}", "payments-api", "/refunds/{}"
    )  # fmt: skip


def test_view_is_hard_links_to_each_store(indexed):
    repos, directory, _ = indexed
    store = repos / "payments" / ".ctxframe" / "graph"
    part = directory / "nodes" / "repo=payments" / "part-000.parquet"
    assert os.path.samefile(part, store / "nodes" / "part-000.parquet")


# -- incremental refresh -------------------------------------------------------------------------
def test_second_index_changes_nothing_then_one_edit_refreshes_one_repository(tmp_path):
    repos, directory = _make(tmp_path)
    cat = cf.catalog(str(directory))
    cat.index()
    version = cf.open_catalog(str(directory)).version
    again = cat.index()
    assert not again.rebuilt and not any(r["changed"] for r in again.results)
    assert cf.open_catalog(str(directory)).version == version
    # payments learns to cancel refunds: the web client's DELETE now lands on a route
    routes = repos / "payments" / "services" / "api" / "routes.py"
    routes.write_text(
        routes.read_text()
        + '\n\n@app.delete("/refunds/<order_id>")\ndef cancel_refund(order_id):\n'
        + '    return jsonify(ok=True)\n'
    )
    third = cat.index(only=["payments"])
    assert third.rebuilt
    assert [(r["name"], r["changed"]) for r in third.results] == [("payments", True)]
    new = _found(directory) - _expected()
    assert new == {("http-route", "web/server/paymentsClient.js::cancelRefund",
                    "payments/route:DELETE /refunds/{order_id}", "calls", "EXTRACTED")}  # fmt: skip
    g = cf.open_catalog(str(directory))
    assert g.version != version
    assert "payments/services/api/routes.py::cancel_refund" in set(g.nodes["id"])


def test_lost_facts_are_read_again(tmp_path):
    """The interfaces of unchanged repositories live in DIR/http_calls.parquet and
    DIR/packages.parquet; without them the next index reads every repository's again."""
    _repos, directory = _make(tmp_path)
    cat = cf.catalog(str(directory))
    cat.index()
    (directory / "http_calls.parquet").unlink()
    report = cat.index()
    assert report.rebuilt and all(r["changed"] for r in report.results)
    assert _found(directory) == _expected()


def test_a_graph_keeps_its_version_until_refresh(tmp_path):
    repos, directory = _make(tmp_path)
    cf.catalog(str(directory)).index()
    g = cf.open_catalog(str(directory))
    before = g.nodes.height
    (repos / "core" / "python" / "shop_core" / "extra.py").write_text("def more():\n    pass\n")
    assert g.refresh(reindex=False).nodes.height == before  # not indexed yet: same version
    g2 = g.refresh()  # a writable catalog: `catalog index` first, then the new version
    assert g2 is g and g.nodes.height == before + 2  # the file and its function
    assert sorted(g.repos) == sorted(REPOS)
    with pytest.raises(cf.CtxframeError, match="catalog index"):
        g.watch()


def test_removing_a_repository_drops_it_and_its_links(tmp_path):
    _repos, directory = _make(tmp_path)
    cat = cf.catalog(str(directory))
    cat.index()
    cat.remove("deploy")
    report = cat.index()
    assert report.rebuilt
    assert not (directory / "nodes" / "repo=deploy").exists()
    assert not (directory / "src" / "deploy").exists()
    kept = {e for e in _expected() if "deploy/" not in e[1] + e[2]}
    # LOG_LEVEL is now declared in one other repository only: no longer ambiguous
    kept = {(*e[:4], "INFERRED") if e[1] == "gateway/env:LOG_LEVEL" else e for e in kept}
    assert _found(directory) == kept
    assert cf.open_catalog(str(directory)).repos == ["core", "gateway", "payments", "web"]


def test_a_failing_repository_is_reported_and_the_rest_built(tmp_path):
    repos, directory = _make(tmp_path)
    shutil.rmtree(repos / "core")
    report = cf.catalog(str(directory)).index()
    assert not report.ok and [r["name"] for r in report.failed] == ["core"]
    assert "is not a directory" in report.failed[0]["error"]
    assert report.to_dict()["status"] == "partial"
    g = cf.open_catalog(str(directory))
    assert g.repos == ["deploy", "gateway", "payments", "web"]
    assert not {e for e in _found(directory) if e[0] == "package"}


def test_a_store_kept_at_a_url(tmp_path):
    """A repository's store given as an fsspec URL: indexed into a working copy, uploaded,
    and equal to a local index when read back."""
    pytest.importorskip("fsspec")
    from ctxframe._store.catalog_repo import download

    repos, directory = _make(tmp_path)
    url = (tmp_path / "bucket" / "gateway").as_uri()
    cat = cf.catalog(str(directory))
    cat.add(str(repos / "gateway"), store=url)
    cat.index()
    assert _found(directory) == _expected()
    remote = cf.open(store=download(url, str(tmp_path / "copy")))
    local = cf.index(str(repos / "gateway"), store=str(tmp_path / "local"), progress=False)
    for table in ("nodes", "edges", "files", "tokens"):
        assert getattr(remote, table).equals(getattr(local, table)), table
    assert not (repos / "gateway" / ".ctxframe").exists()


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "no/such/dir"], "is not a directory"),
        (["add", "{repos}/web", "--name", "a b"], "cannot name a repository 'a b'"),
        (["add", "{repos}/web", "{repos}/core", "--name", "x"], "name one repository"),
        (["remove", "nope"], "no repository named 'nope'"),
        (["index", "--executor", "ray://x"], "unknown executor 'ray://x'"),
        (["index", "--jobs", "0"], "jobs must be a whole number"),
        (["index", "web", "nope"], "no repository named 'nope'"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, args, message):
    repos, directory = _make(tmp_path)
    args = [a.format(repos=repos) for a in args]
    assert main(["catalog", *args, "--catalog", str(directory)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ctxframe: error: ") and message in err and "\n" not in err


def test_same_name_twice_is_refused(tmp_path):
    repos, directory = _make(tmp_path)
    other = tmp_path / "elsewhere" / "web"
    shutil.copytree(repos / "web", other)
    with pytest.raises(cf.CtxframeError, match="already has a repository named 'web'"):
        cf.catalog(str(directory)).add(str(other))
    cf.catalog(str(directory)).add(str(other), name="web2")
    assert "web2" in set(cf.catalog(str(directory)).repos["name"])


@pytest.mark.parametrize("command", ["index", "watch"])
def test_a_catalog_is_not_indexed_as_one_repository(tmp_path, capsys, command):
    _repos, directory = _make(tmp_path)
    assert main([command, "--repo", str(directory)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a catalog: `ctxframe catalog index" in err and "\n" not in err
    assert not (directory / ".ctxframe").exists()


def test_no_catalog_yet(tmp_path, capsys):
    assert main(["catalog", "index", "--catalog", str(tmp_path)]) == 2
    assert "no catalog at" in capsys.readouterr().err
    with pytest.raises(cf.StoreNotFound):
        cf.open_catalog(str(tmp_path))


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_add_index_list_and_verbs(tmp_path, capsys):
    repos, _ = _make(tmp_path / "x")
    directory = tmp_path / "cli-catalog"
    assert main(["catalog", "add", *(str(repos / r) for r in REPOS),
                 "--catalog", str(directory), "--json"]) == 0  # fmt: skip
    added = json.loads(capsys.readouterr().out)
    assert added["verb"] == "catalog-add" and len(added["repos"]) == 5
    assert main(["catalog", "index", "--catalog", str(directory), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verb"] == "catalog-index" and out["status"] == "ok"
    assert out["built"]["links"] == 22
    assert main(["catalog", "list", "--repo", str(directory)]) == 0  # --repo as the verbs
    assert "payments" in capsys.readouterr().out
    # every verb takes the catalog as --repo
    assert main(["boundaries", "web/server/paymentsClient.js::submitRefund",
                 "--repo", str(directory)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "payments: POST /refunds/{order_id}  ← calls submitRefund" in out
    assert main(["query", "receipt", "--repo", str(directory), "--json", "--limit", "3"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert all("/" in h["id"] for h in hits)


def test_a_process_pool_gives_the_same_catalog(tmp_path):
    _repos, directory = _make(tmp_path)
    report = cf.catalog(str(directory)).index(jobs=2)
    assert report.ok and report.executor == "local"
    assert _found(directory) == _expected()
    assert len({r["pid"] for r in report.results} - {os.getpid()}) >= 1


def test_the_dask_executor_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    import sys

    _repos, directory = _make(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)
    args = ["catalog", "index", "--executor", "dask://local", "--catalog", str(directory)]
    assert main(args) == 2
    assert "pip install dask distributed" in capsys.readouterr().err


@pytest.mark.slow
def test_spark_reads_the_view_as_one_table(indexed):
    """Spark (not a dependency: `pip install pyspark`, a Java runtime) opens each view table
    as one directory, partition column included."""
    pyspark = pytest.importorskip("pyspark.sql")
    repos, directory, _ = indexed
    spark = (
        pyspark.SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        nodes = spark.read.parquet(str(directory / "nodes"))
        counts = dict(nodes.groupBy("repo").count().collect())
    finally:
        spark.stop()
    assert counts == {n: cf.open(str(repos / n)).nodes.height for n in REPOS}
