"""Never store or show a secret's value: one redaction pass for every row extraction makes
(before anything is stored or tokenised) and for every text ctxframe prints, serves or writes
(source quoted from the working tree, JSON, pages, exports).

What is masked (the value becomes `***`; the rest of the text stays, so the host, program or
parameter is still found, and a line keeps its place):

* the provider formats of detect-secrets' regex plugins (AWS, GitHub, GitLab, Slack, Stripe,
  SendGrid, Twilio, npm, PyPI, OpenAI, JWTs, basic-auth URLs, …) and its keyword detector
  (a secret-named variable assigned a quoted literal), run on the lines that could hold one;
* ctxframe's own rules: the userinfo of a URL, a credential query parameter, a password flag
  of a command (`mysql -pPW`, `--password=PW`, `--token PW`, and the same as exec argument
  lists `["tool", "--token", "PW"]`), the string value of a secret-named parameter, key or
  variable (`password="…"`, `"api_key": "…"`, `export API_TOKEN=…`), `Bearer`/`Basic`
  credentials, more provider prefixes, the body of a PEM private key, and a high-entropy
  quoted string on a line that names a key, token, secret or password;
* by file kind, when the path is known (source quoted from the tree): every value of a `.env`
  file, the `data`/`stringData` of a Kubernetes `Secret`, and the unquoted value of a
  secret-named key in YAML, TOML, INI and properties files.

Reading this module does not import Polars (the cold `card` prints through it).
Frames are redacted with one vectorised pass (Polars' Rust regex) that finds the rows that
could hold a secret; only those rows go through the Python rules. `NEEDLE` is a superset of
every rule (tests/test_redact.py checks it on the planted corpus and on texts drawn from the
rules).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

MASK = "***"
# stored in meta.json: a store whose rows older rules masked is rebuilt whole by the next index
REDACTION_VERSION = 3
_SW = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[-_]?key|apikey|access[-_]?key"
    r"|private[-_]?key|auth[-_]?key|credentials?|client[-_]?secret|signing[-_]?key"
    r"|session[-_]?key|encryption[-_]?key)"
)
_SW_UPPER = (
    r"(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET|TOKEN|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY"
    r"|AUTH_?KEY|CREDENTIALS?|CLIENT_?SECRET|SIGNING_?KEY|SESSION_?KEY|ENCRYPTION_?KEY)"
)
# a quoted literal of one line, the quote kept
_Q = r"(?:\"[^\"\n]+\"|'[^'\n]+'|`[^`\n]+`)"


def _masked_literal(lit: str) -> str:
    return lit[0] + MASK + lit[-1]


# -- line rules (Python `re`) ---------------------------------------------------------------
# Each rule runs only on a line holding one of its words (lower-cased) or matching its regex:
# the words and regexes of every rule together are what a row or line must hold to be looked at
# (`needs`), a superset of every rule's matches (tests/test_redact.py checks it).
_KEY_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")
# A rule's last argument is what it also needs: its pattern's core, without group references
# or look-arounds (a regex Polars' engine runs as well): every text the rule changes matches it.


def _rule(words: tuple[str, ...], pattern: str, repl: str | Callable[[re.Match], str],
          need: str | None = None) -> tuple:  # fmt: skip
    return (frozenset(words), re.compile(need) if need else None, re.compile(pattern), repl)


_LINE_RULES: tuple[tuple, ...] = (
    # scheme://userinfo@host: the whole userinfo (a lone token is a secret as well)
    _rule(("://",), r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@'\"`<>]+@", r"\1" + MASK + "@",
          r"://[^/\s@'\"`<>]+@"),
    # ?password=…, &access_token=…
    _rule(_KEY_WORDS, r"(?i)([?&;]\w*" + _SW + r"\w*=)[^&\s'\"`#;]+", r"\1" + MASK,
          r"(?i)[?&;]\w*" + _SW + r"\w*="),
    # --password=PW, --token PW, -password PW
    _rule(
        _KEY_WORDS,
        r"(?i)(\s|^|['\"`])(--?\w*" + _SW + r"\w*)(=|\s+)[^-\s'\"`*][^\s'\"`]*",
        r"\1\2\3" + MASK,
        r"(?i)-\w*" + _SW + r"\w*[=\s]",
    ),
    # ["tool", "--token", "PW"], ['psql', '--password', 'PW']: the element after the flag
    _rule(
        _KEY_WORDS,
        r"(?i)(([\"'])--?\w*" + _SW + r"\w*\2\s*,\s*)([\"'])[^\"'\n]+\3",
        lambda m: m.group(1) + m.group(3) + MASK + m.group(3),
        r"(?i)-\w*" + _SW + r"\w*[\"']\s*,\s*[\"']",
    ),
    # ["tool", "--token=PW"]
    _rule(_KEY_WORDS, r"(?i)([\"']--?\w*" + _SW + r"\w*=)[^\"'\s]+", r"\1" + MASK, r"[\"']-"),
    # mysql -pPW, ["mysql", "-pPW"], ["mysql", "-p", "PW"] (the MySQL clients glue it to -p)
    _rule(
        ("mysql", "mariadb"),
        r"(?i)\b((?:mysql\w*|mariadb\w*)\b[^\n]*?[\s'\"]-p)([\"']\s*,\s*[\"'])?[^\s'\"`]+",
        lambda m: m.group(1) + (m.group(2) or "") + MASK,
        r"(?i)(?:mysql|mariadb).*[\s'\"]-p",
    ),
    # password="…", api_key: str = '…', token := "…", SECRET_KEY = "…", password == "…"
    _rule(
        _KEY_WORDS,
        r"(?i)(\b\w*" + _SW + r"\w*['\"\]]*\s*(?::[^=,()\n]{0,60})?(?:=|:=|==|!=|=>)\s*@?)"
        "(" + _Q + ")",
        lambda m: m.group(1) + _masked_literal(m.group(2)),
        r"(?i)" + _SW + r"\w*['\"\]]*\s*(?::[^=,()\n]{0,60})?(?:=|:=|==|!=|=>)\s*@?[\"'`]",
    ),
    # "api_key": "…", password: '…' (JSON, dict and object literals, YAML)
    _rule(
        _KEY_WORDS,
        r"(?i)(\b\w*" + _SW + r"\w*['\"`]?\s*:\s*)(" + _Q + ")",
        lambda m: m.group(1) + _masked_literal(m.group(2)),
        r"(?i)" + _SW + r"\w*['\"`]?\s*:\s*[\"'`]",
    ),
    # "auth": "…" (docker's config.json), "Authorization": "…"
    _rule(
        ("auth", "key"),
        r"(?i)(['\"](?:auth|authorization|x-api-key)['\"]\s*[:=]\s*)(" + _Q + ")",
        lambda m: m.group(1) + _masked_literal(m.group(2)),
        r"(?i)['\"](?:auth|authorization|x-api-key)['\"]",
    ),
    # export api_token=…, API_TOKEN=… (shell and env style: no space around `=`; a name in
    # capitals, or after `export`/`set`)
    _rule(
        _KEY_WORDS,
        r"((?:^|[\s;])(?:(?:export|set)\s+(?i:[A-Za-z_]\w*" + _SW + r"\w*)"
        r"|[A-Z_][A-Z0-9_]*" + _SW_UPPER + r"[A-Z0-9_]*)=)"
        r"(?![\"'`$({\[]|\*\*\*)([^\s'\"`;,)]+)",
        lambda m: m.group(1) + (m.group(2) if _looks_like_code(m.group(2)) else MASK),
        r"(?i)" + _SW + r"\w*=",
    ),
    # #define API_TOKEN "…" (C and C++)
    _rule(
        _KEY_WORDS,
        r"(?i)(#\s*define\s+\w*" + _SW + r"\w*\s+)(" + _Q + ")",
        lambda m: m.group(1) + _masked_literal(m.group(2)),
        r"(?i)define\s+\w*" + _SW,
    ),
    # SQL: IDENTIFIED BY '…', WITH PASSWORD '…'
    _rule(
        ("identified", "pass"),
        r"(?i)(\b(?:identified\s+by|password)\s+)('[^'\n]+'|\"[^\"\n]+\")",
        lambda m: m.group(1) + _masked_literal(m.group(2)),
        r"(?i)(?:identified\s+by|password)\s+['\"]",
    ),
    # Authorization: Bearer …, Basic …
    _rule(
        ("bearer", "basic"),
        r"\b((?:[Bb]earer|BEARER|[Bb]asic|BASIC)\s+)(?=[A-Za-z0-9\-._~+/]*\d)"
        r"[A-Za-z0-9\-._~+/]{8,}=*",
        r"\1" + MASK,
    ),
    # provider prefixes beyond detect-secrets' plugins
    _rule(
        ("sk_", "rk_", "whsec_", "aiza", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
         "xox", "npm_", "sk-", "hf_", "glpat-", "age-secret-key-", "eyj"),
        r"\b(?:sk_(?:live|test)_[0-9A-Za-z]{10,}|rk_(?:live|test)_[0-9A-Za-z]{10,}"
        r"|whsec_[0-9A-Za-z]{16,}|AIza[0-9A-Za-z_\-]{35}|github_pat_\w{22,}"
        r"|gh[pousr]_[A-Za-z0-9]{20,}|xox[abposr]-[0-9A-Za-z\-]{10,}|npm_[A-Za-z0-9]{30,}"
        r"|sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{32,}|hf_[A-Za-z0-9]{30,}|glpat-[\w\-]{20,}"
        r"|AGE-SECRET-KEY-1[0-9A-Z]{50,}|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}"
        r"\.[A-Za-z0-9_\-]+)",
        MASK,
        r"(?i)sk_live_|sk_test_|rk_live_|rk_test_|whsec_|aiza|github_pat_|gh[pousr]_|xox[abposr]-"
        r"|npm_|sk-|hf_|glpat-|age-secret-key-1|eyj",
    ),
)  # fmt: skip


def _looks_like_code(value: str) -> bool:
    """An unquoted value that is an expression, not a literal secret (`x=os.environ`,
    `TOKEN=get()`, `KEY=None`)."""
    return (
        "(" in value
        or "[" in value
        or value in ("None", "null", "nil", "true", "false", "True", "False", "undefined")
        or bool(re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value))
    )


# Lines that could name a secret: the high-entropy rule looks at their quoted strings.
_NEAR = ("key", "secret", "token", "passw", "pwd", "auth", "credential", "signature", "salt",
         "cert", "dsn")  # fmt: skip
_QUOTED_LONG = re.compile(r"([\"'`])([A-Za-z0-9+/=_\-]{20,})\1")
_HEX_LONG = re.compile(r"([\"'`])([0-9a-fA-F]{32,})\1")
_LONG_NEED = re.compile(r"[\"'`][A-Za-z0-9+/=_\-]{20,}[\"'`]")  # what either needs


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in (s.count(ch) for ch in set(s)))


def _high_entropy(line: str) -> str:
    def b64(m: re.Match) -> str:
        v = m.group(2)
        mixed = any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
        return m.group(1) + MASK + m.group(1) if mixed and _entropy(v) > 3.5 else m.group(0)

    def hexa(m: re.Match) -> str:
        v = m.group(2)
        return m.group(1) + MASK + m.group(1) if _entropy(v) > 3.0 else m.group(0)

    return _QUOTED_LONG.sub(b64, _HEX_LONG.sub(hexa, line))


# -- detect-secrets ------------------------------------------------------------------------------
# The keyword detector's gate: one of its denylisted names followed by `:`, `=` or `!`
# (`password: "…"`, `secret = "…"`, `pwd => "…"`), by a quote and a `;` (`private_key "…";`),
# or after a quote and a comparison (`"…" == password`)
_DENYLIST = (r"(?:api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key"
             r"|private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd"
             r"|secret|contraseña|contrasena)")  # fmt: skip
_KEYWORD_NEED = (r"(?i)" + _DENYLIST + r"\w*[\]'\"]{0,2}\s*[:=!]|" + _DENYLIST
                 + r"[^\"'`]*[\"'`][^;]*;|[\"'`]\s*[!=]{2,3}\s*\w*" + _DENYLIST)  # fmt: skip

# Its line plugins, each run on the lines holding one of its words (lower-cased; when it has
# words) and matching its regex (when it has one): a plugin with two forms of secret needs a
# regex for both and no words. A plugin not in this table (a newer detect-secrets) does not
# run: tests/test_redact.py fails until it has its row.
_PLUGIN_NEEDS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "ArtifactoryDetector": ((), r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}"),
    "AWSKeyDetector": (("akia", "asia", "abia", "acca", "a3t", "aws"), None),
    "AzureStorageKeyDetector": (("accountkey",), None),
    "BasicAuthDetector": (("://",), r"://[^\s/:@]+:[^\s/:@]+@"),
    "CloudantDetector": (("key", "pw", "pass", "token", "cloudant"), r"(?i)cl|clou"),
    "DiscordBotTokenDetector": ((), r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\."),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), None),
    "GitLabTokenDetector": (("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941",
                             "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"), None),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), r"[a-zA-Z0-9_\-]{44}"),
    "IbmCosHmacDetector": (("secret",), r"[a-f0-9]{48}"),
    "JwtTokenDetector": (("eyj",), None),
    "KeywordDetector": (("key", "pass", "pwd", "secret", "contrase"), _KEYWORD_NEED),
    "MailchimpDetector": ((), r"[0-9a-z]{32}-us[0-9]"),
    "NpmDetector": (("_authtoken",), None),
    "OpenAIDetector": (("t3blbkfj",), None),
    "PypiTokenDetector": (("pypi-",), None),
    "SendGridDetector": (("sg.",), None),
    "SlackDetector": (("xox", "hooks.slack.com"), None),
    "SoftlayerDetector": (("softlayer", "key", "pwd", "pass", "token"), r"(?i)[a-z0-9]{64}"),
    "SquareOAuthDetector": (("sq0csp-",), None),
    "StripeDetector": (("k_live_",), None),
    "TelegramBotTokenDetector": ((), r"[0-9]{8,10}:[0-9A-Za-z_-]{35}"),
    "TwilioKeyDetector": ((), r"(?:AC|SK)[a-z0-9]{32}"),
}  # fmt: skip
# not run: public IPs are no secret; private keys, high-entropy strings: ctxframe's own rules
# (a key's body lines, strings next to a secret's name) instead of every long string
SKIPPED_PLUGINS = frozenset({"IPPublicDetector", "PrivateKeyDetector",
                             "Base64HighEntropyString", "HexHighEntropyString"})  # fmt: skip
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-./+=~]*")
# the name of an env var (`PAYMENTS_TIMEOUT` after "(secret), " in prose): what the keyword
# detector reports there is a name, not a value
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\Z")


_GATES = tuple(
    (name, frozenset(words), re.compile(rx) if rx else None)
    for name, (words, rx) in _PLUGIN_NEEDS.items()
)
# What the texts' first pass (`needs`) asks of a plugin without words whose regex is slow on
# long texts (no literal to look for first): a part of it every match holds.
_CHEAP_NEEDS = {"DiscordBotTokenDetector": r"\.[a-zA-Z\d_-]{6}\."}


@lru_cache(maxsize=1)
def _plugins() -> dict[str, Any]:
    """detect-secrets' line plugins by class name (the maintained provider formats and keyword
    detector), imported on first use (it brings `requests`: 0.1 s); empty when the package
    is missing (ctxframe's own rules still run). Only the plugins `_PLUGIN_NEEDS` knows run:
    tests/test_redact.py fails when a newer detect-secrets brings one it does not."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:  # pragma: no cover - a declared dependency
        return {}
    out = {}
    for cls in get_mapping_from_secret_type_to_class().values():
        if cls.__name__ in _PLUGIN_NEEDS:
            with contextlib.suppress(Exception):
                out[cls.__name__] = cls()
    return out


def _detect_secrets(line: str, present: frozenset[str], seen: dict) -> str:
    """`line` with every value a detect-secrets plugin reports masked, each widened to the
    whole token it starts (a provider key longer than the plugin's pattern); a plugin runs
    when the line holds one of its words (`present`) or matches its regex."""
    values: set[str] = set()
    for name, words, rx in _GATES:
        if not _gate(words, rx, line, present, seen):
            continue
        plugin = _plugins().get(name)
        if plugin is None:
            continue
        try:
            for v in plugin.analyze_string(line):
                if isinstance(v, str) and len(v) >= 4 and v != MASK and not _ENV_NAME.match(v):
                    values.add(v)
        except Exception:  # a plugin bug never stops a redaction
            continue
    if not values:
        return line
    for v in sorted(values, key=len, reverse=True):
        start = line.find(v)
        while start >= 0:
            end = start + len(v)
            end += _TOKEN_CHARS.match(line, end).end() - end
            line = line[:start] + MASK + line[end:]
            start = line.find(v, start + len(MASK))
    return line


@lru_cache(maxsize=1)
def _words() -> tuple[str, ...]:
    """Every word a rule or plugin runs on (lower-case)."""
    words = {w for r in _LINE_RULES for w in r[0]} | set(_NEAR) | {"private key"}
    for _, ws, _rx in _GATES:
        words.update(ws)
    return tuple(sorted(words))


@lru_cache(maxsize=1)
def needs() -> tuple[tuple[str, ...], str]:
    """(words, regex): a text none of whose lines holds one of the words (lower-cased) or
    matches the regex is left as it is by every rule."""
    words = _words()
    # a word inside another is enough: "pass" finds "password"
    kept = sorted(w for w in words if not any(o != w and o in w for o in words))
    return tuple(kept), "|".join(f"(?:{r})" for r in _need_parts())


@lru_cache(maxsize=1)
def _need_parts() -> tuple[str, ...]:
    """The regexes of `needs`, one per rule or plugin without words (each its own pass in
    Polars: one alternation of them all loses each one's literal search)."""
    rxs = [r[1].pattern for r in _LINE_RULES if r[1] is not None and not r[0]]
    rxs += [_CHEAP_NEEDS.get(name, rx.pattern) for name, ws, rx in _GATES
            if rx is not None and not ws]  # fmt: skip
    return tuple(rxs)


@lru_cache(maxsize=1)
def _need_rx() -> re.Pattern:
    return re.compile(needs()[1] or r"(?!)")


_NEAR_SET = frozenset(_NEAR)


@lru_cache(maxsize=1)
def _wordless() -> tuple[re.Pattern, ...]:
    """The regexes of the rules without words: a line the joint regex misses matches none."""
    return tuple(rx for _, ws, rx in _GATES if rx is not None and not ws)


# -- whole texts ---------------------------------------------------------------------------------
_PEM = re.compile(
    r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)(.*?)"
    r"(-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)


def _pem(text: str) -> str:
    """A private key's body masked line by line (its lines keep their places)."""
    if "PRIVATE KEY" not in text:
        return text
    return _PEM.sub(
        lambda m: m.group(1) + re.sub(r"[^\s\\\"',]+", MASK, m.group(2)) + m.group(3), text
    )


def _gate(words: frozenset[str], rx: re.Pattern | None, line: str, present: frozenset,
          seen: dict) -> bool:  # fmt: skip
    """Whether a rule runs on a line: it holds one of the rule's words (when it has words),
    and matches its regex (when it has one; `seen` keeps each regex's answer for the line)."""
    if words and words.isdisjoint(present):
        return False
    if rx is None:
        return True
    got = seen.get(rx)
    if got is None:
        got = seen[rx] = rx.search(line) is not None
    return got


def redact_line(line: str) -> str:
    """One line with every line rule applied; a rule runs only when the line holds one of its
    words or matches its regex (a line holding none is returned as it is)."""
    low = line.lower()
    present = frozenset(w for w in _words() if w in low)
    any_rx = _need_rx().search(line) is not None
    if not present and not any_rx:
        return line
    seen: dict = {} if any_rx else dict.fromkeys(_wordless(), False)
    for words, rx, pattern, repl in _LINE_RULES:
        if _gate(words, rx, line, present, seen):
            line = pattern.sub(repl, line)
    line = _detect_secrets(line, present, seen)
    if not _NEAR_SET.isdisjoint(present) and _LONG_NEED.search(line):
        line = _high_entropy(line)
    return line


# Rows repeat lines (a class's body holds its methods' bodies): each is redacted once a run.
_redact_line_kept = lru_cache(maxsize=1 << 16)(redact_line)


def forget_lines() -> None:
    """Drop the lines the frame pass kept (an index's end: a resident process keeps no
    source text between runs)."""
    _redact_line_kept.cache_clear()


def redact_text(text: str, path: str | None = None) -> str:
    """`text` with every secret masked; `path` (repository-relative) adds the rules of its
    file kind (`.env`, Kubernetes `Secret`, config files). Line breaks stay where they are."""
    if not text:
        return text
    text = _pem(text)
    if path is not None:
        text = _by_kind(text, path)
    return "\n".join(redact_line(line) for line in text.split("\n"))


def redact_rendered(text: str, fmt: str) -> str:
    """A rendered document redacted: JSON through its values (a mask never breaks its
    quoting), any other format as text."""
    if fmt != "json":
        return redact_text(text)
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return redact_text(text)
    out = redact_obj(data)
    if out == data:
        return text
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def redact_obj(obj: Any) -> Any:
    """Every string inside a JSON-like value (dicts, lists, tuples) redacted."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, dict):
        return {k: redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v) for v in obj]
    return obj


# -- file kinds (the path is known) --------------------------------------------------------------
_CONFIG_EXT = (".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".env",
               ".npmrc", ".pypirc", ".netrc", ".tfvars", ".hcl")  # fmt: skip
_ENV_LINE = re.compile(r"^(\s*(?:export\s+)?[A-Za-z_][\w.\-]*\s*=\s*)(\S.*?)\s*$")
_CONFIG_LINE = re.compile(
    r"(?i)^(\s*(?:-\s+)?[\"']?[\w.\-]*" + _SW + r"[\w.\-]*[\"']?\s*[:=]\s*)"
    r"(?![\"'`$&*{\[|>])(\S[^#\n]*?)\s*$"
)
_NETRC = re.compile(r"(?i)(\b(?:password|passwd|account)\s+)(\S+)")
_K8S_SECRET = re.compile(r"(?m)^kind:\s*[\"']?Secret[\"']?\s*$")


def is_env_file(path: str) -> bool:
    name = os.path.basename(path).lower()
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def _by_kind(text: str, path: str) -> str:
    low = path.lower()
    lines = text.split("\n")
    changed = False
    if is_env_file(path):
        for i, ln in enumerate(lines):
            m = _ENV_LINE.match(ln)
            if m and not ln.lstrip().startswith("#") and m.group(2) != MASK:
                lines[i] = m.group(1) + MASK
                changed = True
    elif low.endswith(_CONFIG_EXT) or os.path.basename(low) in (".netrc", ".npmrc", ".pypirc"):
        if low.endswith((".yaml", ".yml")) and _K8S_SECRET.search(text):
            changed |= _k8s_secret(lines)
        for i, ln in enumerate(lines):
            m = _CONFIG_LINE.match(ln)
            if m and m.group(2) != MASK:
                lines[i] = m.group(1) + MASK
                changed = True
            elif low.endswith(".netrc") and _NETRC.search(ln):
                lines[i] = _NETRC.sub(r"\1" + MASK, ln)
                changed = True
    return "\n".join(lines) if changed else text


def _k8s_secret(lines: list[str]) -> bool:
    """The values under `data:` and `stringData:` of each `kind: Secret` document, masked."""
    docs: list[tuple[int, int]] = []
    start = 0
    for i, ln in enumerate([*lines, "---"]):
        if ln.startswith("---") or i == len(lines):
            docs.append((start, i))
            start = i + 1
    changed = False
    for lo, hi in docs:
        if not any(_K8S_SECRET.match(ln) for ln in lines[lo:hi]):
            continue
        block = None  # the indentation of the data block's keys' parent
        for i in range(lo, hi):
            ln = lines[i]
            indent = len(ln) - len(ln.lstrip())
            key = re.match(r"^(\s*)(data|stringData):\s*(\{.*)?$", ln)
            if key:
                block = indent
                if key.group(3):  # data: {a: b}
                    lines[i] = ln[: ln.index(":") + 1] + " {" + MASK + "}"
                    changed = True
                    block = None
                continue
            if block is None or not ln.strip():
                continue
            if indent <= block:
                block = None
                continue
            m = re.match(r"^(\s*[\"']?[^:\"']+[\"']?:)(\s*)(.*)$", ln)
            if m and m.group(3) and m.group(3) not in ("|", ">", "|-", ">-"):
                lines[i] = m.group(1) + " " + MASK
            elif not m:
                lines[i] = ln[:indent] + MASK  # a block scalar's line
            changed = True
    return changed


# -- frames --------------------------------------------------------------------------------------
# The vectorised gates cost a few milliseconds a call (each builds its regexes): what the
# Python rules spend on a couple of hundred lines. Fewer lines go to the rules directly.
_GATED_FROM = 256


@lru_cache(maxsize=1)
def _gates() -> tuple[tuple[tuple[str, ...], str | None], ...]:
    """(words, regex) of each rule, plugin and the high-entropy pass, as `redact_line` gates
    them: a line none lets through is returned as it is."""
    out = [(ws, rx) for ws, rx, _, _ in _LINE_RULES] + [(ws, rx) for _, ws, rx in _GATES]
    out.append((_NEAR_SET, _LONG_NEED))
    return tuple(
        dict.fromkeys((tuple(sorted(ws)), rx.pattern if rx is not None else None) for ws, rx in out)
    )


def _gated(values: pl.Series) -> pl.Series:
    """Whether some rule's gate lets each line through (`_gate`, vectorised); lines beyond
    ASCII always go through (there Python's `\\w`, `\\s` and case folding are wider than
    Rust's). The separators \\x1c-\\x1f (in facts' keys) are whitespace to Python and not to
    Rust: the gates see a space in their place."""
    import polars as pl

    tests = [pl.col("raw").str.contains(r"[^\x00-\x7f]")]
    v = pl.col("v")  # the separators made spaces once, as a column (not in each test)
    for words, rx in _gates():
        test = v.str.contains_any(list(words), ascii_case_insensitive=True) if words else None
        if rx is not None:
            test = v.str.contains(rx) if test is None else test & v.str.contains(rx)
        tests.append(test if test is not None else pl.lit(True))
    spaced = pl.col("raw").str.replace_all(r"[\x1c-\x1f]", " ")
    frame = values.to_frame("raw").with_columns(v=spaced)
    return frame.select(pl.any_horizontal(tests)).to_series().fill_null(False)


# Below this many bytes the first pass's regexes run as one: compiling each costs more there
# than the literal search each alone saves.
_NEED_APART_FROM = 1 << 20


def _need_expr(values: pl.Series) -> pl.Series:
    words, rx = needs()
    got = values.str.contains_any(list(words), ascii_case_insensitive=True)
    apart = values.str.len_bytes().sum() >= _NEED_APART_FROM
    for one in _need_parts() if apart else [rx] if rx else []:
        got = got | values.str.contains(one)
    return got.fill_null(False)


def _redacted(values: pl.Series) -> pl.Series:
    """`values` with the rules run on the lines that could match one, in their places: the
    rows and then their lines are found by a vectorised test, and only those lines go through
    the Python rules (a row holding a private key goes through them whole)."""
    import polars as pl

    likely = _need_expr(values)
    if not likely.any():
        return values
    rows = likely.arg_true()
    before = values.gather(rows)
    pem = before.str.contains("PRIVATE KEY", literal=True).fill_null(False)
    lines = (
        pl.DataFrame({"row": pl.int_range(len(before), eager=True), "text": before})
        .filter(~pem)
        .with_columns(pl.col("text").str.split("\n"))
        .explode("text")
        .with_columns(line=pl.int_range(pl.len()).over("row"))
    )
    lines = lines.filter(_need_expr(lines["text"]))
    if len(lines) >= _GATED_FROM:
        lines = lines.filter(_gated(lines["text"]))
    new = [_redact_line_kept(t) for t in lines["text"].to_list()]
    edits: dict[int, list[tuple[int, str]]] = {}
    for (r, i, old), text in zip(lines.select("row", "line", "text").iter_rows(), new, strict=True):
        if text != old:
            edits.setdefault(r, []).append((i, text))
    out = before.to_list()
    for r in pem.arg_true().to_list():
        out[r] = redact_text(out[r])
    for r, changes in edits.items():
        split = out[r].split("\n")
        for i, text in changes:
            split[i] = text
        out[r] = "\n".join(split)
    fixed = pl.Series(values.name, out, dtype=pl.String)
    if fixed.equals(before):
        return values
    # Rebuilt through Arrow: string views would keep the old values' bytes in shared buffers,
    # and an Arrow IPC file writes whole buffers.
    return pl.Series(values.name, values.clone().scatter(rows, fixed).to_arrow())


def redact_frame(frame: pl.DataFrame, columns: Iterable[str] | None = None) -> pl.DataFrame:
    """`frame` with the given string columns (default: all) redacted."""
    import polars as pl

    cols = None if columns is None else set(columns)
    names = [
        c for c, t in frame.schema.items() if t == pl.String and (cols is None or c in cols)
    ]
    if not names or frame.is_empty():
        return frame
    return frame.with_columns([_redacted(frame[c]) for c in names])


def redact_rows(frame: pl.DataFrame, col: str) -> pl.DataFrame:
    """`frame` with one column of large text (definition bodies) redacted, in place."""
    return redact_frame(frame, (col,))
