"""Cross-repository links of a catalog, derived from what each repository's graph declares and
reads at its boundary, as Polars joins over every repository at once.

Five rules, each linking a node of one repository to a node of another (never the same one):

* `http-route`: an HTTP call whose URL has a path (`POST http://payments-api/refunds/{}`) →
  the route another repository provides with the same method (or `ANY`, or a method the call
  does not say) and the same path template, segment by segment (a route parameter matches any
  segment; a literal matches only itself). A call to a literal host nobody in the catalog
  serves (not a k8s Service, an Ingress host or localhost) is external and never linked.
  Edge kind `calls`: the route is what the code calls, so `affected` on a route walks back to
  its callers in every repository. EXTRACTED when the method and host are literal and one route
  matches; INFERRED when one route matches but the method or host is not known; AMBIGUOUS for
  2–8 routes (one row each; a route in the repository that declares the called Service wins).
* `http-service`: a call to `http://NAME…` → the k8s Service `NAME` another repository declares
  (`http`; EXTRACTED for one repository, AMBIGUOUS for 2–8).
* `env`: an env var code reads (`reads` edge from code) → what declares it in another repository
  (a ConfigMap key, a workload's `env:`), unless the reader's own deployment objects set it
  (`reads`; INFERRED: a name match; AMBIGUOUS when 2–8 repositories declare it).
* `k8s`: a reference a manifest could not resolve in its own repository (a workload reading a
  ConfigMap or Secret, an Ingress routing to a Service) → that object in another repository
  (same edge kind; EXTRACTED, AMBIGUOUS for 2–8).
* `package`: a dependency (`dep:pypi:shop-core`) → the package another repository builds
  (`package:pypi:shop-core`; `uses`; EXTRACTED, AMBIGUOUS for 2–8).

Every frame here carries a `repo` column and the repository's own (unprefixed) ids.
"""

from __future__ import annotations

import polars as pl

from ctxframe._resolve.resolve import AMBIGUOUS_CAP

PRODUCER = "ctxframe.catalog"
LINK_SCHEMA = pl.Schema(
    {
        "repo": pl.String,
        "src": pl.String,
        "dst_repo": pl.String,
        "dst": pl.String,
        "kind": pl.String,
        "confidence": pl.String,
        "name": pl.String,
        "path": pl.String,
        "line": pl.Int32,
        "rule": pl.String,
    }
)
HTTP_CALLS = pl.Schema(
    {
        "src": pl.String,
        "path": pl.String,
        "line": pl.Int32,
        "method": pl.String,
        "url": pl.String,
        "base": pl.String,
        "host": pl.String,
        "route": pl.String,
    }
)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")
_HOLE = "{}"


def links(nodes: pl.DataFrame, edges: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """Every cross-repository link. `nodes`: boundary nodes (`repo`, `id`, `kind`, `label`,
    `path`, `line_start`), package nodes included; `edges`: boundary edges (`repo`, `src`,
    `dst`, `kind`, `name`, `path`, `line`); `calls`: the HTTP calls (`repo` + HTTP_CALLS)."""
    services = _services(nodes)
    parts = [
        _http_routes(nodes, calls, services),
        _http_services(calls, services),
        _env(nodes, edges),
        _k8s(nodes, edges),
        _packages(nodes),
    ]
    return (
        pl.concat([p.select(LINK_SCHEMA.names()).cast(LINK_SCHEMA) for p in parts])
        .unique(["repo", "src", "dst_repo", "dst", "kind"], keep="first", maintain_order=True)
        .sort("repo", "src", "kind", "dst_repo", "dst")
    )


def _confidence(n: pl.Expr, sure: pl.Expr | bool = True) -> pl.Expr:
    return (
        pl.when(n > 1)
        .then(pl.lit("AMBIGUOUS"))
        .when(pl.lit(sure) if isinstance(sure, bool) else sure)
        .then(pl.lit("EXTRACTED"))
        .otherwise(pl.lit("INFERRED"))
    )


def _services(nodes: pl.DataFrame) -> pl.DataFrame:
    """k8s Services by name: (dst_repo, dst, host)."""
    return nodes.filter(
        (pl.col("kind") == "service") & pl.col("id").str.starts_with("k8s:Service/")
    ).select(
        dst_repo="repo",
        dst="id",
        host=pl.col("id").str.strip_prefix("k8s:Service/").str.to_lowercase(),
    )


def _service_host(host: pl.Expr) -> pl.Expr:
    """The Service a host names: `payments-api`, `payments-api.shop.svc.cluster.local`."""
    first = host.str.extract(r"^([^.]+)", 1)
    return pl.when(
        ~host.str.contains(r"\.", literal=False) | host.str.contains(r"\.svc(\.|$)")
    ).then(first)


def _segments_match(cand: pl.DataFrame) -> pl.DataFrame:
    """The candidate rows whose call path (`route`) fits the route template (`rpath`) segment
    by segment: a `{}` of the route matches any segment, a literal only itself. (Both have as
    many segments: the join said so.) Exploded side by side, not a regex per row."""
    if cand.is_empty():
        return cand
    cand = cand.with_row_index("_cand")
    fits = (
        cand.select("_cand", c=pl.col("route").str.split("/"), r=pl.col("rpath").str.split("/"))
        .explode(["c", "r"])
        .group_by("_cand")
        .agg(((pl.col("r") == _HOLE) | (pl.col("r") == pl.col("c"))).all().alias("_fits"))
        .filter("_fits")
    )
    return cand.join(fits.select("_cand"), on="_cand", how="semi").drop("_cand")


def _http_routes(nodes: pl.DataFrame, calls: pl.DataFrame, services: pl.DataFrame) -> pl.DataFrame:
    routes = (
        nodes.filter((pl.col("kind") == "route") & pl.col("id").str.contains(r"^route:\S+ /"))
        .select(
            dst_repo="repo",
            dst="id",
            rmethod=pl.col("id").str.extract(r"^route:(\S+) ", 1),
            rpath=pl.col("id")
            .str.extract(r"^route:\S+ (/.*)$", 1)
            .str.replace_all(r"\{[^{}]*\}", _HOLE)
            .str.replace(r"(.)/$", "$1"),
        )
        .with_columns(
            nseg=pl.col("rpath").str.count_matches("/"),
            seg0=pl.col("rpath").str.extract(r"^/([^/]*)", 1),
        )
    )
    ingress_hosts = nodes.filter(
        (pl.col("kind") == "route") & pl.col("id").str.contains(r"^route:ANY [^/]")
    ).select(host=pl.col("id").str.extract(r"^route:ANY ([^/]+)", 1).str.to_lowercase())
    known = pl.concat(
        [services.select("host"), ingress_hosts, pl.DataFrame({"host": list(LOCAL_HOSTS)})]
    )["host"].unique()
    calls = calls.filter(
        pl.col("route").is_not_null()
        & (
            (pl.col("base") != "absolute")
            | _service_host(pl.col("host")).is_in(known.implode())
            | pl.col("host").is_in(known.implode())
        )
    ).with_columns(
        nseg=pl.col("route").str.count_matches("/"),
        seg0=pl.col("route").str.extract(r"^/([^/]*)", 1),
        shost=_service_host(pl.col("host")),
    )
    # candidates share the segment count and the first segment (or the route's is a parameter)
    by_first = calls.join(routes.filter(pl.col("seg0") != _HOLE), on=["nseg", "seg0"])
    by_param = calls.join(routes.filter(pl.col("seg0") == _HOLE).drop("seg0"), on="nseg")
    cand = pl.concat([by_first, by_param.select(by_first.columns)]).filter(
        (pl.col("repo") != pl.col("dst_repo"))
        & (
            (pl.col("rmethod") == "ANY")
            | pl.col("method").is_null()
            | (pl.col("rmethod") == pl.col("method"))
        )
    )
    cand = _segments_match(cand)
    # a route in the repository that declares the Service the call names wins a tie
    home = services.select(shost="host", home="dst_repo")
    cand = cand.join(home, on="shost", how="left").with_columns(
        at_home=(pl.col("home") == pl.col("dst_repo")).fill_null(False)
    )
    key = ["repo", "src", "path", "line"]
    cand = (
        cand.with_columns(n0=pl.len().over(key), n_home=pl.col("at_home").sum().over(key))
        .filter((pl.col("n0") == 1) | (pl.col("n_home") != 1) | pl.col("at_home"))
        .with_columns(n=pl.when(pl.col("n_home") == 1).then(1).otherwise(pl.col("n0")))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    sure = pl.col("method").is_not_null() & (pl.col("base") == "absolute") & (pl.col("n0") == 1)
    return cand.select(
        "repo",
        "src",
        "dst_repo",
        "dst",
        kind=pl.lit("calls"),
        confidence=_confidence(pl.col("n"), sure),
        name=pl.concat_str(pl.col("method").fill_null("?"), pl.lit(" "), "url"),
        path="path",
        line="line",
        rule=pl.lit("http-route"),
    )


def _http_services(calls: pl.DataFrame, services: pl.DataFrame) -> pl.DataFrame:
    hits = (
        calls.filter(pl.col("base") == "absolute")
        .with_columns(host=_service_host(pl.col("host")))
        .join(services, on="host")
        .filter(pl.col("repo") != pl.col("dst_repo"))
        .with_columns(n=pl.col("dst_repo").n_unique().over("repo", "src", "path", "line"))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    return hits.select(
        "repo",
        "src",
        "dst_repo",
        "dst",
        kind=pl.lit("http"),
        confidence=_confidence(pl.col("n")),
        name=pl.concat_str(pl.col("method").fill_null("?"), pl.lit(" "), "url"),
        path="path",
        line="line",
        rule=pl.lit("http-service"),
    )


def _env(nodes: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    env = pl.col("dst").str.starts_with("env:")
    boundary = nodes.select("repo", src="id")  # declarers are deployment objects, not files
    reads = (
        edges.filter((pl.col("kind") == "reads") & env & ~pl.col("src").str.starts_with("k8s:"))
        .sort("repo", "dst", "path", "line", nulls_last=True)
        .unique(["repo", "dst"], keep="first", maintain_order=True)
        .select("repo", var="dst", path="path", line="line")
    )
    declared = (
        edges.filter(pl.col("kind").is_in(["declares", "sets"]) & env)
        .join(boundary, on=["repo", "src"], how="semi")
        .select(dst_repo="repo", var="dst", dst="src")
        .unique()
    )
    local = declared.select(repo="dst_repo", var="var").unique()
    hits = (
        reads.join(local, on=["repo", "var"], how="anti")
        .join(declared, on="var")
        .filter(pl.col("repo") != pl.col("dst_repo"))
        .with_columns(n=pl.col("dst_repo").n_unique().over("repo", "var"))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    return hits.select(
        "repo",
        src="var",
        dst_repo="dst_repo",
        dst="dst",
        kind=pl.lit("reads"),
        confidence=_confidence(pl.col("n"), sure=False),
        name=pl.col("var").str.strip_prefix("env:"),
        path="path",
        line="line",
        rule=pl.lit("env"),
    )


def _k8s(nodes: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    open_refs = edges.filter(
        pl.col("dst").is_null()
        & pl.col("name").is_not_null()
        & (
            ((pl.col("kind") == "reads") & pl.col("src").str.starts_with("k8s:"))
            | ((pl.col("kind") == "routes") & pl.col("src").str.starts_with("route:"))
        )
    ).with_columns(
        want=pl.when(pl.col("kind") == "routes")
        .then(pl.concat_str(pl.lit("k8s:Service/"), "name"))
        .otherwise(pl.concat_str(pl.lit("k8s:"), "name"))
    )
    targets = nodes.filter(pl.col("id").str.starts_with("k8s:")).select(dst_repo="repo", want="id")
    hits = (
        open_refs.join(targets, on="want")
        .filter(pl.col("repo") != pl.col("dst_repo"))
        .with_columns(n=pl.col("dst_repo").n_unique().over("repo", "src", "want"))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    return hits.select(
        "repo",
        "src",
        "dst_repo",
        dst="want",
        kind="kind",
        confidence=_confidence(pl.col("n")),
        name="name",
        path="path",
        line="line",
        rule=pl.lit("k8s"),
    )


def _packages(nodes: pl.DataFrame) -> pl.DataFrame:
    deps = nodes.filter(pl.col("kind") == "dep").with_columns(
        key=pl.col("id").str.strip_prefix("dep:")
    )
    built = nodes.filter(pl.col("kind") == "package").select(
        dst_repo="repo", dst="id", key=pl.col("id").str.strip_prefix("package:")
    )
    hits = (
        deps.join(built, on="key")
        .filter(pl.col("repo") != pl.col("dst_repo"))
        .with_columns(n=pl.col("dst_repo").n_unique().over("repo", "id"))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    return hits.select(
        "repo",
        src="id",
        dst_repo="dst_repo",
        dst="dst",
        kind=pl.lit("uses"),
        confidence=_confidence(pl.col("n")),
        name="key",
        path="path",
        line="line_start",
        rule=pl.lit("package"),
    )
