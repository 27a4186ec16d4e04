"""What a catalog reads from a repository's files: outbound HTTP calls as method + URL
template (real parsing of real snippets), the packages manifests build, and the link rules
(ctxframe._ingest.interfaces, ctxframe._resolve.links)."""

from __future__ import annotations

import polars as pl
import pytest

from ctxframe._ingest.interfaces import built_packages, http_calls, split_url
from ctxframe._resolve.links import HTTP_CALLS, links

CASES = [
    # (language, file name, source, line of the call, method, url)
    ("javascript", "a.js", "const B = 'http://svc';\nfetch(`${B}/x/${id}`, {method: 'PUT'});\n",
     2, "PUT", "http://svc/x/{}"),
    ("javascript", "a.js", "fetch('/api/items');\n", 1, "GET", "/api/items"),
    ("javascript", "a.js", "fetch(url, opts);\n", 1, None, None),
    ("javascript", "a.js", "fetch('/a/' + id, {headers: {}});\n", 1, "GET", "/a/{}"),
    ("javascript", "a.js", "const u = `${base}/orders/${id}`;\nfetch(u, init);\n", 2, None,
     "{}/orders/{}"),
    ("javascript", "a.js", "axios.delete(`http://svc/items/${id}`);\n", 1, "DELETE",
     "http://svc/items/{}"),
    ("typescript", "a.ts", "export const API: string = \"http://svc\";\n"
     "await fetch(API + \"/r\", { method: \"POST\" });\n", 2, "POST", "http://svc/r"),
    ("python", "a.py", "BASE = 'http://svc:8000'\nrequests.get(f'{BASE}/items/{i}')\n", 2, "GET",
     "http://svc:8000/items/{}"),
    ("python", "a.py", "requests.request('PATCH', URL + '/x')\n", 1, "PATCH", "{}/x"),
    ("python", "a.py", "httpx.post(url=\"http://svc/y\")\n", 1, "POST", "http://svc/y"),
    ("python", "a.py", "X = 'a'\nX = 'b'\nrequests.get(X + '/z')\n", 3, "GET", "{}/z"),
    ("go", "a.go", "package m\nconst api = \"http://svc\"\nfunc f(id string) {\n"
     "\thttp.Get(api + \"/o/\" + id + \"/r\")\n}\n", 4, "GET", "http://svc/o/{}/r"),
    ("go", "a.go", "package m\nfunc f(id string) {\n"
     "\thttp.NewRequest(\"DELETE\", fmt.Sprintf(\"http://svc/items/%s\", id), nil)\n}\n", 3,
     "DELETE", "http://svc/items/{}"),
    ("go", "a.go", "package m\nfunc f() {\n\thttp.Post(`http://svc/raw`, \"\", nil)\n}\n", 3,
     "POST", "http://svc/raw"),
]  # fmt: skip


@pytest.mark.parametrize(("language", "name", "source", "line", "method", "url"), CASES)
def test_http_call_method_and_url(tmp_path, language, name, source, line, method, url):
    (tmp_path / name).write_text(source)
    site = {"src": name, "path": name, "line": line, "language": language, "name": "(dynamic)"}
    (row,) = http_calls(str(tmp_path), [site])
    assert (row["method"], row["url"]) == (method, url)


def test_another_language_keeps_the_indexed_literal(tmp_path):
    site = {"src": "A.java", "path": "A.java", "line": 3, "language": "java",
            "name": "https://svc/items"}  # fmt: skip
    (row,) = http_calls(str(tmp_path), [site])
    assert (row["method"], row["url"], row["host"], row["route"]) == (
        None, "https://svc/items", "svc", "/items"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("url", "base", "host", "route"),
    [
        ("http://payments-api/refunds/{}", "absolute", "payments-api", "/refunds/{}"),
        ("https://user:pw@Svc.Example.com:8443/a/?q=1", "absolute", "svc.example.com", "/a"),
        ("http://svc", "absolute", "svc", "/"),
        ("http://{}/x", "dynamic", None, "/x"),
        ("/api/refunds/{}#top", "relative", None, "/api/refunds/{}"),
        ("{}{}/orders//{}/", "dynamic", None, "/orders/{}"),
        ("{}", None, None, None),
        ("refunds", None, None, None),
        (None, None, None, None),
    ],
)
def test_split_url(url, base, host, route):
    assert split_url(url) == {"base": base, "host": host, "route": route}


def test_built_packages(tmp_path):
    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "pyproject.toml").write_text('[project]\nname = "My_Lib"\nversion = "2"\n')
    (tmp_path / "package.json").write_text('{"name": "@a/b", "version": "1.0.0"}')
    (tmp_path / "go.mod").write_text("// c\nmodule example.com/x // trailing\n\ngo 1.21\n")
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "crab"\nversion = "0.1.0"\n')
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "package.json").write_text("{not json")
    (tmp_path / "poetry").mkdir()
    (tmp_path / "poetry" / "pyproject.toml").write_text('[tool.poetry]\nname = "po"\n')
    paths = ["py/pyproject.toml", "package.json", "go.mod", "Cargo.toml", "broken/package.json",
             "poetry/pyproject.toml", "README.md"]  # fmt: skip
    got = {(p["ecosystem"], p["name"], p["version"], p["path"], p["line"])
           for p in built_packages(str(tmp_path), paths)}  # fmt: skip
    assert got == {
        ("pypi", "my-lib", "2", "py/pyproject.toml", 2),
        ("npm", "@a/b", "1.0.0", "package.json", 1),
        ("go", "example.com/x", None, "go.mod", 2),
        ("cargo", "crab", "0.1.0", "Cargo.toml", 2),
        ("pypi", "po", None, "poetry/pyproject.toml", 2),
    }


# -- link rules on small tables ------------------------------------------------------------------
def _nodes(rows):
    return pl.DataFrame(
        [(*r, r[1], "f", 1) for r in rows],
        schema={"repo": pl.String, "id": pl.String, "kind": pl.String, "label": pl.String,
                "path": pl.String, "line_start": pl.Int32},
        orient="row",
    )  # fmt: skip


def _edges(rows):
    schema = {c: pl.String for c in ("repo", "src", "dst", "kind", "name", "path")}
    return pl.DataFrame(rows, schema={**schema, "line": pl.Int32}, orient="row")


def _calls(rows):
    out = []
    for repo, src, method, url in rows:
        out.append({"repo": repo, "src": src, "path": "f", "line": 1, "method": method,
                    "url": url, **split_url(url)})  # fmt: skip
    return pl.DataFrame(out, schema={"repo": pl.String, **HTTP_CALLS})


ROUTES = [("api", "route:GET /items/{id}", "route"), ("api", "route:POST /items", "route"),
          ("api", "k8s:Service/api", "service"), ("gw", "route:ANY /proxy/{rest}", "route"),
          ("ing", "route:ANY shop.example.com/items", "route")]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "url", "want"),
    [
        ("GET", "http://api/items/{}", {("api", "route:GET /items/{id}", "EXTRACTED")}),
        ("GET", "http://api/items/7", {("api", "route:GET /items/{id}", "EXTRACTED")}),
        (None, "http://api/items/{}", {("api", "route:GET /items/{id}", "INFERRED")}),
        ("GET", "{}/items/{}", {("api", "route:GET /items/{id}", "INFERRED")}),
        ("DELETE", "http://api/items/{}", set()),  # no such method
        ("GET", "http://api/items/{}/more", set()),  # more segments
        ("GET", "http://api/{}/{}", set()),  # an unknown segment never matches a literal
        ("POST", "http://api/items/", {("api", "route:POST /items", "EXTRACTED")}),
        ("GET", "https://external.example.com/items/{}", set()),  # nobody here serves it
        ("GET", "http://localhost:8000/items/1", {("api", "route:GET /items/{id}", "EXTRACTED")}),
        ("PUT", "http://api/proxy/x", {("gw", "route:ANY /proxy/{rest}", "EXTRACTED")}),
        ("GET", "http://shop.example.com/items/1", {("api", "route:GET /items/{id}", "EXTRACTED")}),
        (None, "/proxy/{}", {("gw", "route:ANY /proxy/{rest}", "INFERRED")}),
    ],
)
def test_http_route_rule(method, url, want):
    found = links(_nodes(ROUTES), _edges([]), _calls([("web", "client", method, url)]))
    got = {(r["dst_repo"], r["dst"], r["confidence"])
           for r in found.filter(pl.col("rule") == "http-route").iter_rows(named=True)}  # fmt: skip
    assert got == want


def test_http_route_never_links_within_a_repository():
    found = links(_nodes(ROUTES), _edges([]), _calls([("api", "self", "GET", "/items/1")]))
    assert found.is_empty()


def test_http_route_ties_and_the_cap():
    many = [(f"r{i}", "route:GET /health", "route") for i in range(9)]
    found = links(_nodes(many[:3]), _edges([]), _calls([("web", "c", "GET", "{}/health")]))
    assert set(found["confidence"]) == {"AMBIGUOUS"} and found.height == 3
    assert links(_nodes(many), _edges([]), _calls([("web", "c", "GET", "{}/health")])).is_empty()
    # the repository that declares the Service the call names wins the tie
    home = [*many[:3], ("r1", "k8s:Service/r1", "service")]
    found = links(_nodes(home), _edges([]), _calls([("web", "c", "GET", "http://r1/health")]))
    routes = found.filter(pl.col("rule") == "http-route")
    assert routes.select("dst_repo", "confidence").rows() == [("r1", "INFERRED")]


def test_service_rule_reads_cluster_dns_names():
    nodes = _nodes([("api", "k8s:Service/api", "service"), ("x", "k8s:Service/api", "service")])
    dns = "http://api.shop.svc.cluster.local/z"
    found = links(nodes, _edges([]), _calls([("web", "c", "GET", dns)]))
    assert set(found["confidence"]) == {"AMBIGUOUS"} and set(found["dst_repo"]) == {"api", "x"}
    found = links(nodes, _edges([]), _calls([("web", "c", "GET", "http://api.example.com/z")]))
    assert found.is_empty()  # a public host named like a Service is not that Service


def test_env_rule():
    nodes = _nodes([("ops", "k8s:ConfigMap/cfg", "configmap"), ("ops", "env:X", "env"),
                    ("app", "env:X", "env"), ("app", "env:Y", "env"),
                    ("app", "k8s:Deployment/app", "workload")])  # fmt: skip
    edges = _edges([
        ("ops", "k8s:ConfigMap/cfg", "env:X", "declares", "X", "c.yaml", 3),
        ("ops", "k8s:ConfigMap/cfg", "env:Y", "declares", "Y", "c.yaml", 4),
        ("ops", ".env", "env:Z", "declares", "Z", ".env", 1),  # a file: not a declaration
        ("app", "main.py", "env:X", "reads", "X", "main.py", 5),
        ("app", "main.py", "env:Y", "reads", "Y", "main.py", 6),
        ("app", "main.py", "env:Z", "reads", "Z", "main.py", 7),
        ("app", "k8s:Deployment/app", "env:Y", "sets", "Y", "d.yaml", 9),  # set at home
    ])  # fmt: skip
    found = links(nodes, edges, _calls([]))
    assert found.select("repo", "src", "dst_repo", "dst", "kind", "confidence", "line").rows() == [
        ("app", "env:X", "ops", "k8s:ConfigMap/cfg", "reads", "INFERRED", 5)
    ]


def test_k8s_and_package_rules():
    nodes = _nodes([("ops", "k8s:ConfigMap/cfg", "configmap"),
                    ("svc", "k8s:Service/web", "service"),
                    ("lib", "package:npm:@a/b", "package"), ("lib2", "package:pypi:b", "package"),
                    ("app", "dep:npm:@a/b", "dep"), ("app", "dep:pypi:@a/b", "dep")])  # fmt: skip
    edges = _edges([
        ("app", "k8s:Deployment/app", None, "reads", "ConfigMap/cfg", "d.yaml", 3),
        ("app", "k8s:Deployment/app", None, "reads", "Secret/none", "d.yaml", 4),
        ("ing", "route:ANY h/x", None, "routes", "web", "i.yaml", 5),
    ])  # fmt: skip
    found = links(nodes, edges, _calls([]))
    got = {(r["rule"], r["src"], r["dst_repo"], r["dst"], r["kind"], r["confidence"])
           for r in found.iter_rows(named=True)}  # fmt: skip
    assert got == {
        ("k8s", "k8s:Deployment/app", "ops", "k8s:ConfigMap/cfg", "reads", "EXTRACTED"),
        ("k8s", "route:ANY h/x", "svc", "k8s:Service/web", "routes", "EXTRACTED"),
        ("package", "dep:npm:@a/b", "lib", "package:npm:@a/b", "uses", "EXTRACTED"),
    }
