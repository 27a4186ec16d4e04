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
ROUTE_NAMES = [*VERBS, "route", "api_route", "all"]

# Every call name a rule, child_process or a route can match: only these keep their arguments.
CALL_NAMES = frozenset({n for *_, ns, _w in RULES for n in ns} | {*CHILD_PROCESS, *ROUTE_NAMES})
