"""The calls boundary rules read, by language family, receiver and name (no Polars here:
extraction workers import it to know whose arguments to keep)."""

from __future__ import annotations

VERBS = ["get", "post", "put", "delete", "patch", "head", "options"]

# (family, receiver or None for a bare call, names, what)
RULES: list[tuple[str, str | None, list[str], str]] = [
    ("python", "os", ["getenv", "putenv"], "env"),
    ("python", "environ", ["get", "setdefault", "pop"], "env"),
    ("python", "_environ", ["get", "setdefault", "pop"], "env"),
    ("go", "os", ["Getenv", "LookupEnv"], "env"),
    ("java", "System", ["getenv"], "env"),
    ("csharp", "Environment", ["GetEnvironmentVariable"], "env"),
    ("rust", "env", ["var", "var_os"], "env"),
    ("c", None, ["getenv", "secure_getenv"], "env"),
    ("cpp", None, ["getenv", "secure_getenv"], "env"),
    ("cpp", "std", ["getenv"], "env"),
    ("python", "requests", [*VERBS, "request"], "http"),
    ("python", "httpx", [*VERBS, "request", "stream"], "http"),
    ("python", "request", ["urlopen", "Request"], "http"),
    ("python", "urllib3", ["request"], "http"),
    ("js", None, ["fetch"], "http"),
    ("js", "axios", [*VERBS, "request"], "http"),
    ("js", "http", ["request", "get"], "http"),
    ("js", "https", ["request", "get"], "http"),
    (
        "go",
        "http",
        ["Get", "Post", "Head", "PostForm", "NewRequest", "NewRequestWithContext"],
        "http",
    ),
    ("java", "HttpRequest", ["newBuilder"], "http"),
    ("java", "URI", ["create"], "http"),
    (
        "csharp",
        "client",
        ["GetAsync", "PostAsync", "PutAsync", "DeleteAsync", "SendAsync", "GetStringAsync"],
        "http",
    ),
    ("rust", "reqwest", ["get", "post"], "http"),
    ("python", "subprocess", ["run", "call", "check_call", "check_output", "Popen"], "exec"),
    ("python", "os", ["system", "popen", "execv", "execvp", "spawnv"], "exec"),
    (
        "js",
        "child_process",
        ["exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync"],
        "exec",
    ),
    ("js", None, ["execSync", "spawnSync", "execFileSync"], "exec"),
    ("go", "exec", ["Command", "CommandContext"], "exec"),
    ("java", None, ["ProcessBuilder"], "exec"),
    ("java", "Runtime", ["exec"], "exec"),
    ("c", None, ["system", "popen", "execl", "execlp", "execv", "execvp"], "exec"),
    ("cpp", None, ["system", "popen", "execl", "execlp", "execv", "execvp"], "exec"),
    ("rust", "Command", ["new"], "exec"),
    ("csharp", "Process", ["Start"], "exec"),
]
CHILD_PROCESS = ["exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork"]

# -- routes: what the web frameworks write, as tables (ctxframe._ingest.boundaries.routes) -------
# A route registration: (family, callee name, method when `methods=` does not say, how it is
# written). The path is the call's first string literal. `decorator`: `@app.get("/x")` over
# its handler, or `app.get("/x", handler)` naming one; `django`: `path("x/", view)` in a
# `urls` module (no leading "/", any method); `rule`: Flask's `add_url_rule("/x", ...)`, whose
# view may come later by endpoint name.
ROUTE_CALLS: list[tuple[str, str, str, str]] = [
    *[("python", verb, verb.upper(), "decorator") for verb in VERBS],
    ("python", "route", "GET", "decorator"),  # Flask, Quart, Bottle, Sanic: GET unless methods=
    ("python", "api_route", "GET", "decorator"),  # FastAPI
    ("python", "websocket", "WEBSOCKET", "decorator"),  # FastAPI, Quart, Sanic
    ("python", "add_url_rule", "GET", "rule"),  # Flask, Quart
    ("python", "Route", "GET", "decorator"),  # Starlette `Route("/x", endpoint)`
    ("python", "path", "ANY", "django"),
    ("python", "re_path", "ANY", "django"),
    *[("js", verb, verb.upper(), "decorator") for verb in VERBS],
    ("js", "all", "ANY", "decorator"),  # Express
    ("js", "route", "ANY", "decorator"),
]
ROUTE_NAMES = sorted({name for _f, name, _m, _how in ROUTE_CALLS})
# The keyword that lists a route's methods (Flask/Quart/FastAPI/Starlette `methods=`).
METHODS_KEYWORD = "methods"

# Objects routes are registered on, and the keyword of their constructor that gives every
# route on them a prefix: `bp = Blueprint("auth", __name__, url_prefix="/auth")`,
# `router = APIRouter(prefix="/items")`, `const router = express.Router()`.
ROUTERS: list[tuple[str, str, str | None]] = [
    ("python", "Flask", None),
    ("python", "Quart", None),
    ("python", "Blueprint", "url_prefix"),
    ("python", "APIBlueprint", "url_prefix"),  # APIFlask
    ("python", "FastAPI", None),
    ("python", "APIRouter", "prefix"),
    ("python", "Starlette", None),
    ("python", "Sanic", None),
    ("python", "Bottle", None),
    ("js", "express", None),
    ("js", "Router", None),
]
# Mounting a router on another under a prefix: (family, callee, the keyword giving the prefix
# (None: the call's first string literal), whether that prefix replaces the router's own
# (Flask's `register_blueprint(bp, url_prefix=...)`) or goes before it (FastAPI's
# `include_router(router, prefix=...)`, Express's `app.use("/api", router)`)). The router is the
# call's first argument that names something.
MOUNTS: list[tuple[str, str, str | None, bool]] = [
    ("python", "register_blueprint", "url_prefix", True),
    ("python", "include_router", "prefix", False),
    ("python", "mount", None, False),  # FastAPI/Starlette `app.mount("/v1", subapp)`
    ("js", "use", None, False),
]
# Django: `path("polls/", include("polls.urls"))` puts a module's routes under a prefix.
INCLUDES: list[tuple[str, str]] = [("python", "include")]
# The keywords extraction keeps from these calls (with a literal or a list of literals).
ROUTE_KEYWORDS = frozenset(
    {METHODS_KEYWORD, *(k for *_, k in ROUTERS if k), *(k for _f, _n, k, _r in MOUNTS if k)}
)
ROUTE_STRUCTURE = frozenset(
    {*ROUTE_NAMES, *(n for _f, n, _k in ROUTERS), *(n for _f, n, _k, _r in MOUNTS)}
)

# Every call name a rule, child_process or a route can match: only these keep their arguments.
CALL_NAMES = frozenset(
    {n for *_, ns, _w in RULES for n in ns} | {*CHILD_PROCESS, *ROUTE_STRUCTURE}
)
