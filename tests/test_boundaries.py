"""Boundaries: routes, dependency manifests, Kubernetes, env vars, outbound HTTP and exec, the
`boundaries` verb, and the promise that a secret's value never reaches the store."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf


def _index(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return cf.index(str(tmp_path), progress=False)


def _edges(g, kind: str) -> set[tuple[str, str]]:
    e = g.edges.filter(pl.col("kind") == kind)
    return set(zip(e["src"].to_list(), e["dst"].to_list(), strict=True))


ROUTES = [
    (
        "fastapi",
        {
            "api.py": "from fastapi import FastAPI\napp = FastAPI()\n\n"
            '@app.get("/items/{item_id}")\ndef read_item(item_id: int):\n    return {}\n'
        },
        "route:GET /items/{item_id}",
        "api.py::read_item",
    ),
    (
        "flask",
        {
            "views.py": "from flask import Flask\napp = Flask(__name__)\n\n"
            '@app.route("/orders/<int:order_id>")\ndef show(order_id):\n    return ""\n'
        },
        "route:GET /orders/{order_id}",  # Flask: GET unless methods= says
        "views.py::show",
    ),
    (
        "flask-blueprint",
        {
            "bp.py": 'from flask import Blueprint\nbp = Blueprint("x", __name__)\n\n'
            '@bp.post("/carts/<cart_id>")\ndef add(cart_id):\n    return ""\n'
        },
        "route:POST /carts/{cart_id}",
        "bp.py::add",
    ),
    (
        "bottle-bare",
        {
            "web.py": "from bottle import route\n\n\n"
            '@route("/hello/<name>")\ndef hello(name):\n    return name\n'
        },
        "route:GET /hello/{name}",
        "web.py::hello",
    ),
    (
        "bottle-module",
        {"web.py": 'import bottle\n\n\n@bottle.post("/login")\ndef login():\n    return ""\n'},
        "route:POST /login",
        "web.py::login",
    ),
    (
        "express",
        {
            "server.js": "const express = require('express');\nconst { list } = require('./h');\n"
            "const app = express();\napp.get('/users/:id', list);\n",
            "h.js": "function list(req, res) { res.send([]); }\nmodule.exports = { list };\n",
        },
        "route:GET /users/{id}",
        "h.js::list",
    ),
    (
        "express-router",
        {
            "routes.ts": "import { Router } from 'express';\nconst router = Router();\n"
            "function remove(req: any, res: any) {}\nrouter.delete('/users/:id', remove);\n"
        },
        "route:DELETE /users/{id}",
        "routes.ts::remove",
    ),
    (
        "openapi",
        {
            "openapi.yaml": "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n"
            "  /refunds/{id}:\n    get:\n      operationId: getRefund\n",
            "svc.py": "def getRefund(id):\n    return id\n",
        },
        "route:GET /refunds/{id}",
        "svc.py::getRefund",
    ),
]


@pytest.mark.parametrize(("case", "files", "route", "handler"), ROUTES, ids=[r[0] for r in ROUTES])
def test_routes_link_to_handlers(tmp_path, case, files, route, handler) -> None:
    g = _index(tmp_path, files)
    assert route in set(g.nodes["id"])
    assert (route, handler) in _edges(g, "handles")


def test_ingress_routes_to_service(tmp_path) -> None:
    g = _index(tmp_path, {"k8s.yaml": K8S})
    assert ("route:ANY shop.test/api", "k8s:Service/api") in _edges(g, "routes")
    alone = _index(tmp_path / "alone", {"k8s.yaml": INGRESS})  # Service not in the repo
    routes = alone.edges.filter(pl.col("kind") == "routes")
    assert routes["dst"].to_list() == [None] and routes["name"].to_list() == ["api"]


MANIFESTS = [
    (
        "package.json",
        '{"dependencies": {"express": "^4.19.0"}, "devDependencies": {"jest": "29"}}',
        ["dep:npm:express", "dep:npm:jest"],
    ),
    (
        "go.mod",
        "module example.com/x\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n)\n"
        "require golang.org/x/sync v0.7.0\n",
        ["dep:go:github.com/google/uuid", "dep:go:golang.org/x/sync"],
    ),
    (
        "pom.xml",
        "<project xmlns='http://maven.apache.org/POM/4.0.0'><dependencies><dependency>"
        "<groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId>"
        "<version>2.0.13</version></dependency></dependencies></project>",
        ["dep:maven:org.slf4j:slf4j-api"],
    ),
    (
        "App.csproj",
        "<Project Sdk='Microsoft.NET.Sdk'><ItemGroup><PackageReference "
        "Include='Newtonsoft.Json' Version='13.0.3' /></ItemGroup></Project>",
        ["dep:nuget:Newtonsoft.Json"],
    ),
    (
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = ["requests>=2", "Flask_Login==0.6"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n',
        ["dep:pypi:requests", "dep:pypi:flask-login", "dep:pypi:pytest"],
    ),
    (
        "requirements-dev.txt",
        "# tools\nblack==24.1\n-r base.txt\nruff>=0.5 ; python_version>'3.8'\n",
        ["dep:pypi:black", "dep:pypi:ruff"],
    ),
    (
        "Cargo.toml",
        '[package]\nname = "x"\n[dependencies]\nserde = { version = "1", features = '
        '["derive"] }\nanyhow = "1.0"\n',
        ["dep:cargo:serde", "dep:cargo:anyhow"],
    ),
]


@pytest.mark.parametrize(("name", "text", "deps"), MANIFESTS, ids=[m[0] for m in MANIFESTS])
def test_manifests_declare_deps(tmp_path, name, text, deps) -> None:
    g = _index(tmp_path, {name: text})
    assert {(name, d) for d in deps} <= _edges(g, "declares")


def test_imports_use_declared_deps(tmp_path) -> None:
    g = _index(
        tmp_path,
        {"requirements.txt": "requests\n", "a.py": "import requests\n\ndef f():\n    pass\n"},
    )
    assert ("a.py", "dep:pypi:requests") in _edges(g, "uses")


SECRET_VALUE = "s3cr3t-Value-that-must-not-leak-9f2c"

INGRESS = """apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
    - host: shop.test
      http:
        paths:
          - path: /api
            pathType: Prefix
            backend:
              service:
                name: api
                port: {number: 80}
"""

K8S = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {{app: api}}
    spec:
      containers:
        - name: api
          image: registry.test/api:1.0
          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef: {{name: api-secrets, key: DB_PASSWORD}}
          envFrom:
            - configMapRef: {{name: api-config}}
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {{app: api}}
---
apiVersion: v1
kind: Secret
metadata:
  name: api-secrets
data:
  DB_PASSWORD: {SECRET_VALUE}
stringData:
  API_TOKEN: {SECRET_VALUE}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: api-config
data:
  LOG_LEVEL: info
---
{INGRESS}"""


def test_kubernetes_multi_document(tmp_path) -> None:
    g = _index(tmp_path, {"deploy/app.yaml": K8S})
    ids = set(g.nodes["id"])
    for oid in (
        "k8s:Deployment/api",
        "k8s:Service/api",
        "k8s:Secret/api-secrets",
        "k8s:ConfigMap/api-config",
        "k8s:Ingress/web",
        "image:registry.test/api:1.0",
    ):
        assert oid in ids
    assert ("k8s:Service/api", "k8s:Deployment/api") in _edges(g, "selects")
    assert ("k8s:Deployment/api", "k8s:Secret/api-secrets") in _edges(g, "reads")
    assert ("k8s:Deployment/api", "k8s:ConfigMap/api-config") in _edges(g, "reads")
    assert ("k8s:Deployment/api", "image:registry.test/api:1.0") in _edges(g, "runs")
    secret = g.nodes.filter(pl.col("id") == "k8s:Secret/api-secrets").row(0, named=True)
    assert secret["secret"] is True and secret["doc"] == "keys: API_TOKEN, DB_PASSWORD"
    env = g.nodes.filter(pl.col("id") == "env:DB_PASSWORD").row(0, named=True)
    assert env["secret"] is True and env["transport"] == "config.env"


ENV_READS = [
    (
        "python",
        "a.py",
        'import os\n\ndef f():\n    return os.environ["A_KEY"], os.getenv("B")\n',
        "a.py::f",
        ["A_KEY", "B"],
    ),
    (
        "javascript",
        "a.js",
        "function f() { return process.env.A_TOKEN + process.env['B']; }\n",
        "a.js::f",
        ["A_TOKEN", "B"],
    ),
    (
        "typescript",
        "a.ts",
        "export function f(): string { return process.env.A ?? ''; }\n",
        "a.ts::f",
        ["A"],
    ),
    (
        "javascript-destructuring",
        "a.js",
        "function f() { const { A_KEY, B: b, C = 'x' } = process.env; return b; }\n"
        "const { not_env } = other;\n",
        "a.js::f",
        ["A_KEY", "B", "C"],
    ),
    (
        "go",
        "a.go",
        'package a\n\nimport "os"\n\nfunc F() string { return os.Getenv("A_DSN") }\n',
        "a.go::F",
        ["A_DSN"],
    ),
    (
        "java",
        "A.java",
        'class A { String f() { return System.getenv("A"); } }\n',
        "A.java::A.f",
        ["A"],
    ),
    ("rust", "a.rs", 'fn f() { let _ = std::env::var("A"); }\n', "a.rs::f", ["A"]),
    (
        "csharp",
        "A.cs",
        'class A { string F() { return Environment.GetEnvironmentVariable("A"); } }\n',
        "A.cs::A.F",
        ["A"],
    ),
    ("c", "a.c", '#include <stdlib.h>\nchar *f(void) { return getenv("A"); }\n', "a.c::f", ["A"]),
]


@pytest.mark.parametrize(
    ("lang", "name", "src", "fn", "names"), ENV_READS, ids=[r[0] for r in ENV_READS]
)
def test_env_reads_per_language(tmp_path, lang, name, src, fn, names) -> None:
    g = _index(tmp_path, {name: src})
    assert {(fn, f"env:{n}") for n in names} <= _edges(g, "reads")
    assert "env:not_env" not in set(g.nodes["id"])


# Python's environment is a mapping read by subscript, `.get` or `in`: os.environ, an alias of
# os, `from os import environ`, or an `_environ` attribute (a copy a test can replace). A WSGI
# app's `environ` (a parameter, `request.environ`) holds a request's variables instead.
PY_ENVIRON = [
    ("subscript", 'import os\n\ndef f():\n    return os.environ["A"]\n', ["A"]),
    ("in", 'import os\n\ndef f():\n    return "A" in os.environ\n', ["A"]),
    ("not-in", 'import os\n\ndef f():\n    return "A" not in os.environ\n', ["A"]),
    ("from-os", 'from os import environ\n\ndef f():\n    return environ["A"], environ.get("B")\n',
     ["A", "B"]),
    ("alias", 'import os as _os\n\ndef f():\n    return _os.environ.get("A"), "B" in _os.environ\n',
     ["A", "B"]),
    ("os-path", 'import os.path\n\ndef f():\n    return os.environ["A"]\n', ["A"]),
    ("attribute-copy",
     'import os\n\nclass C:\n    _environ = os.environ\n\n    def f(self):\n'
     '        return "A" in self._environ, self._environ.get("B"), self._environ["C"]\n',
     ["A", "B", "C"]),
    ("wsgi-parameter",
     'def f(environ, start_response):\n    return environ["PATH_INFO"], environ.get("HTTP_HOST")\n',
     []),
    ("wsgi-request",
     'import os\n\ndef f(request):\n'
     '    return request.environ.get("REMOTE_ADDR"), "X" in request.environ\n',
     []),
    ("other-mapping", 'import os\n\ndef f(d):\n    return d["A"], "B" in d, d.get("C")\n', []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("src", "names"), [r[1:] for r in PY_ENVIRON], ids=[r[0] for r in PY_ENVIRON]
)
def test_python_environ_reads(tmp_path, src, names) -> None:
    g = _index(tmp_path, {"a.py": src})
    reads = {(s, d) for s, d in _edges(g, "reads") if d.startswith("env:")}
    fn = "a.py::C.f" if "class C" in src else "a.py::f"
    assert reads == {(fn, f"env:{n}") for n in names}


OUTBOUND = [
    (
        "python",
        "a.py",
        "import requests, subprocess\n\ndef f():\n"
        '    requests.post("https://api.test/v1")\n    subprocess.run(["psql", "-c", "x"])\n',
        "a.py::f",
        "http:api.test",
        "exec:psql",
    ),
    (
        "javascript",
        "a.js",
        "const cp = require('child_process');\n"
        "function f() { fetch('https://api.test/x'); cp.execSync('git status'); }\n",
        "a.js::f",
        "http:api.test",
        "exec:git",
    ),
    (
        "go",
        "a.go",
        'package a\n\nimport (\n\t"net/http"\n\t"os/exec"\n)\n\n'
        'func F() { http.Get("https://api.test/"); exec.Command("make", "all") }\n',
        "a.go::F",
        "http:api.test",
        "exec:make",
    ),
    (
        "java",
        "A.java",
        'class A { void f() throws Exception { java.net.URI.create("https://api.test");'
        ' new ProcessBuilder("ls").start(); } }\n',
        "A.java::A.f",
        "http:api.test",
        "exec:ls",
    ),
    (
        "rust",
        "a.rs",
        'fn f() { let _ = reqwest::get("https://api.test"); '
        'std::process::Command::new("cargo"); }\n',
        "a.rs::f",
        "http:api.test",
        "exec:cargo",
    ),
    (
        "csharp",
        "A.cs",
        'class A { void F() { client.GetAsync("https://api.test"); Process.Start("dotnet"); } }\n',
        "A.cs::A.F",
        "http:api.test",
        "exec:dotnet",
    ),
]


@pytest.mark.parametrize(
    ("lang", "name", "src", "fn", "http", "exe"), OUTBOUND, ids=[r[0] for r in OUTBOUND]
)
def test_http_and_exec_per_language(tmp_path, lang, name, src, fn, http, exe) -> None:
    g = _index(tmp_path, {name: src})
    assert (fn, http) in _edges(g, "http")
    assert (fn, exe) in _edges(g, "exec")


def test_env_files_names_only(tmp_path) -> None:
    g = _index(tmp_path, {".env.example": f"export STRIPE_KEY={SECRET_VALUE}\nPORT=8080\n"})
    env = g.nodes.filter(pl.col("kind") == "env")
    assert dict(zip(env["label"], env["secret"], strict=True)) == {
        "STRIPE_KEY": True,
        "PORT": False,
    }


def test_secret_values_never_reach_the_store(tmp_path) -> None:
    """Plant a secret value in .env, a k8s Secret and code next to a secret-named variable;
    byte-scan every file of the store."""
    g = _index(
        tmp_path,
        {
            ".env": f"PAYMENTS_API_KEY={SECRET_VALUE}\n",
            "deploy/secret.yaml": K8S,
            "app.py": f'import os\n\nAPI_KEY = "{SECRET_VALUE}"\n\n'
            'def key():\n    return os.environ.get("PAYMENTS_API_KEY", API_KEY)\n',
            # credentials written inside strings: masked before anything is stored
            "db.py": "import requests, subprocess\n\n"
            f'def get():\n    return requests.get("https://admin:{SECRET_VALUE}@db.test/x")\n\n'
            f'def dump():\n    subprocess.run("mysql -uroot -p{SECRET_VALUE} shop")\n\n'
            f'def conn(password="{SECRET_VALUE}"):\n    return password\n\n'
            f'def q():\n    return requests.get("https://db.test/x?password={SECRET_VALUE}")\n',
            "requirements.txt": f"git+https://user:{SECRET_VALUE}@git.test/o/r.git#egg=r\n",
            "openapi.yaml": "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
            f"servers:\n  - url: https://u:{SECRET_VALUE}@api.test\npaths: {{}}\n",
        },
    )
    g.warm()  # the derived caches are scanned too
    assert ("app.py::key", "env:PAYMENTS_API_KEY") in _edges(g, "reads")
    needle = SECRET_VALUE.encode()
    scanned = 0
    for f in Path(g.store).rglob("*"):
        if f.is_file():
            scanned += 1
            raw = f.read_bytes()
            if f.suffix == ".parquet":  # compressed pages: the decoded cells too
                raw += pl.read_parquet(f).write_csv().encode()
            assert needle not in raw, f"secret value found in {f.name}"
    assert scanned >= 5
    assert 'password="***"' in g.card("conn").to_dict()["node"]["signature"]
    # nor its pieces: bodies, comments and strings are tokenized (the body field)
    assert not set(g.tokens["token"]) & {"s3cr3t", "9f2c"}


def test_boundaries_verb_sample_golden(shop_graph, golden) -> None:
    res = shop_graph.boundaries()
    golden("boundaries.txt", str(res) + "\n")
    golden("boundaries.json", json.dumps(res.to_dict(), indent=2, sort_keys=True) + "\n")
    one = shop_graph.boundaries("CheckoutHandler.handle_refund_request")
    golden("boundaries-symbol.txt", str(one) + "\n")
    assert set(one.table["identifier"]) >= {"PAYMENTS_API_KEY", "PAYMENTS_TIMEOUT"}


def test_boundaries_cli(capsys, shop_graph) -> None:
    from ctxframe.cli import main

    assert main(["boundaries", "--repo", shop_graph.root, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    secret = {r["identifier"] for r in rows if r["secret"]}
    assert {"PAYMENTS_API_KEY", "STRIPE_SECRET_KEY"} <= secret


def test_console_scripts_are_entry_points(tmp_path) -> None:
    g = _index(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\n[project.scripts]\nmytool = "pkg.cli:run"\n',
            "pkg/cli.py": "def run():\n    return 0\n",
            "web/package.json": '{"name": "w", "bin": {"wtool": "bin/w.js"}}',
        },
    )
    assert ("command:mytool", "pkg/cli.py::run") in _edges(g, "handles")
    assert "command:wtool" in set(g.nodes["id"])
    entries = g.hubs().entry_points
    assert entries.filter(pl.col("id") == "pkg/cli.py::run")["why"].to_list() == ["cli command"]


def test_reads_boundaries_agrees_with_from_refs(_shop_index_template: Path) -> None:
    """The cheap test reads_boundaries makes first never misses what from_refs finds: file by
    file on the shop (routes, env reads, HTTP and exec calls in several languages)."""
    from ctxframe._ingest.boundaries.code import from_refs, reads_boundaries
    from ctxframe._ingest.boundaries.routes import STRUCTURE, split_facts
    from ctxframe._store import tables as store

    refs = store.read_table(str(_shop_index_template / ".ctxframe" / "graph"), "refs")
    found = 0
    for _, rows in refs.group_by("path"):
        want = not all(f.is_empty() for f in from_refs(rows))
        got = reads_boundaries(rows)
        # a file that makes or mounts a router says so too: other files' routes hang off it
        shapes = split_facts(rows.filter(pl.col("name").is_in(STRUCTURE))).select(
            pl.any_horizontal(pl.col("^f_(var|obj|include)$").is_not_null()).any()
        ).item()
        assert got == (want or shapes)
        found += want
    assert found >= 5
