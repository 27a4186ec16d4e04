"""The git history in the store (ctxframe._history, ctxframe._store.history): small
repositories with known histories built in temp dirs, every table and measure checked."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._history import analyses as A
from ctxframe._history import gitlog
from ctxframe._history.functions import function_history
from ctxframe._store import history as stored_history

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data-samples" / "shop"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(autouse=True)
def _git_env(monkeypatch, tmp_path):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the anonymizing key
    monkeypatch.delenv("CTXFRAME_HISTORY_KEY", raising=False)


class Repo:
    """A git repository whose commits have fixed authors and times."""

    def __init__(self, path: Path):
        self.path = path
        self.t = 1_700_000_000
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")

    def git(self, *args: str, env: dict | None = None) -> str:
        stamp = f"@{self.t} +0000"
        who = {"GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@x.org",
               "GIT_COMMITTER_NAME": "Cy", "GIT_COMMITTER_EMAIL": "cy@x.org",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # fmt: skip
        out = subprocess.run(
            ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
             "-C", str(self.path), *args],
            capture_output=True, text=True,
            env={**os.environ, **GIT_ENV, **who, **(env or {})},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for name, text in files.items():
            p = self.path / name
            if text is None:
                p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text if isinstance(text, bytes) else text.encode())

    def commit(self, message: str, files: dict | None = None, author: str = "Ann",
               email: str | None = None, **kw) -> str:  # fmt: skip
        if files:
            self.write(files)
        self.t += 3600
        stamp = f"@{self.t} +0000"
        env = {"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email or f"{author.lower()}@x.org",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_NAME": "Cy",
               "GIT_COMMITTER_EMAIL": "cy@x.org", "GIT_COMMITTER_DATE": stamp}  # fmt: skip
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, env=env)
        return self.git("rev-parse", "HEAD")


def _lines(n: int, tag: str = "x") -> str:
    return "".join(f"{tag}{i}\n" for i in range(n))


@pytest.fixture
def known(tmp_path) -> tuple[Repo, dict]:
    """A history with a rename, a binary file, an odd file name, a merge and an empty commit."""
    r = Repo(tmp_path / "repo")
    s = {}
    s["c1"] = r.commit("first", {"a.py": _lines(3), "b.py": _lines(2)}, author="Ann")
    s["c2"] = r.commit("rename a, edit b", {"a.py": None, "pkg/a.py": _lines(3) + "y\n",
                                            "b.py": "x0\n"}, author="Bob")  # fmt: skip
    s["c3"] = r.commit("binary and odd name", {"img.bin": b"\x00\x01\x02",
                                               "we ird\tname.txt": "é\n"})  # fmt: skip
    r.git("checkout", "-q", "-b", "side")
    s["c4"] = r.commit("side work", {"b.py": "x0\nside\n"}, author="Bob")
    r.git("checkout", "-q", "main")
    s["c5"] = r.commit("main work", {"pkg/a.py": _lines(3) + "y\nz\n"})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "-m", "merge side", "side",
          env={"GIT_AUTHOR_DATE": f"@{r.t} +0000", "GIT_COMMITTER_DATE": f"@{r.t} +0000",
               "GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@x.org",
               "GIT_COMMITTER_NAME": "Cy", "GIT_COMMITTER_EMAIL": "cy@x.org"})  # fmt: skip
    s["merge"] = r.git("rev-parse", "HEAD")
    s["c6"] = r.commit("ünïcode subject, empty")
    return r, s


def test_the_tables_hold_every_commit_and_change(known):
    r, s = known
    g = cf.index(str(r.path), progress=False)
    commits, changes = g.commits, g.changes
    assert commits.schema == gitlog.COMMITS and changes.schema == gitlog.CHANGES
    # newest first, as git log lists them
    assert commits["sha"].to_list() == [s["c6"], s["merge"], s["c5"], s["c4"], s["c3"],
                                        s["c2"], s["c1"]]  # fmt: skip
    by = {row["sha"]: row for row in commits.to_dicts()}
    assert by[s["merge"]]["parents"] == [s["c5"], s["c4"]]
    assert by[s["c1"]]["parents"] == []
    assert by[s["c2"]]["author_name"] == "Bob" and by[s["c2"]]["author_email"] == "bob@x.org"
    assert by[s["c6"]]["subject"] == "ünïcode subject, empty"
    assert by[s["c1"]]["author_time"] == datetime.fromtimestamp(1_700_003_600, UTC)
    got = sorted(changes.rows())
    want = sorted([
        (s["c1"], "a.py", 3, 0, None), (s["c1"], "b.py", 2, 0, None),
        (s["c2"], "pkg/a.py", 1, 0, "a.py"), (s["c2"], "b.py", 0, 1, None),
        (s["c3"], "img.bin", None, None, None), (s["c3"], "we ird\tname.txt", 1, 0, None),
        (s["c4"], "b.py", 1, 0, None), (s["c5"], "pkg/a.py", 1, 0, None),
    ])  # fmt: skip  (the merge and the empty commit change nothing of their own)
    assert got == want
    assert g.report.history == {"action": "full", "reason": "first read", "commits": 7,
                                 "read": 7}  # fmt: skip
    # the tables are datasets beside the contract tables, where dashboards read them
    store = r.path / ".ctxframe" / "graph"
    assert pl.read_parquet(store / "commits" / "*.parquet").height == 7
    assert g.sql("select count(*) n from changes")["n"][0] == 8


def test_the_revisions_and_coupling_of_the_known_history(known):
    r, _ = known
    g = cf.index(str(r.path), progress=False)
    rows = A.entities(g.commits, g.changes)
    revs = dict(A.revisions(rows).select("entity", "revisions").iter_rows())
    # the rename is followed: a.py's first commit counts for pkg/a.py
    assert revs == {"pkg/a.py": 3, "b.py": 3, "img.bin": 1, "we ird\tname.txt": 1}
    plain = dict(A.revisions(A.entities(g.commits, g.changes, follow_renames=False))
                 .select("entity", "revisions").iter_rows())  # fmt: skip
    assert plain == {"a.py": 1, "pkg/a.py": 2, "b.py": 3, "img.bin": 1, "we ird\tname.txt": 1}
    pairs = A.coupling(rows, min_revs=1, min_shared=1, min_degree=0)
    assert pairs.select("a", "b", "shared", "degree").rows() == [
        ("img.bin", "we ird\tname.txt", 1, 100.0),
        ("b.py", "pkg/a.py", 2, pytest.approx(200 / 3)),
    ]


def _full_read(repo: Repo) -> tuple[pl.DataFrame, pl.DataFrame]:
    return gitlog.read_log(str(repo.path), ["HEAD"])


@pytest.mark.parametrize(
    "change, action",
    [
        ("commit", "append"),
        ("merge", "append"),
        ("amend", "full"),
        ("reset", "full"),
        ("nothing", "keep"),
    ],
)
def test_an_update_reads_only_new_commits_or_rereads_a_rewritten_history(tmp_path, change,
                                                                         action):  # fmt: skip
    r = Repo(tmp_path / "repo")
    for i in range(4):
        r.commit(f"c{i}", {f"f{i % 2}.py": _lines(i + 1)})
    cf.index(str(r.path), progress=False)
    if change == "commit":
        r.commit("new", {"f9.py": "new\n"})
    elif change == "merge":
        r.git("checkout", "-q", "-b", "side", "HEAD~2")
        r.commit("side", {"s.py": "s\n"})
        r.git("checkout", "-q", "main")
        r.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    elif change == "amend":
        r.write({"f0.py": "amended\n"})
        r.git("commit", "-q", "-a", "--amend", "-m", "amended")
    elif change == "reset":
        r.git("reset", "-q", "--hard", "HEAD~1")
    if change != "nothing":
        (r.path / "f1.py").write_text(_lines(7))  # a file change too, so the index writes
    g = cf.index(str(r.path), progress=False)
    assert g.report.history["action"] == action
    commits, changes = _full_read(r)
    assert g.commits.equals(commits)
    assert g.changes.sort("sha", "path").equals(changes.sort("sha", "path"))
    if action == "append":
        assert g.report.history["read"] == (1 if change == "commit" else 2)


def test_bounds_from_the_config(tmp_path):
    r = Repo(tmp_path / "repo")
    for i in range(5):
        r.commit(f"c{i}", {"a.py": _lines(i + 1)})
    (r.path / ".ctxframe").mkdir()
    (r.path / ".ctxframe" / "config.toml").write_text("[history]\nmax_commits = 2\n")
    g = cf.index(str(r.path), progress=False)
    assert g.commits["subject"].to_list() == ["c4", "c3"]
    r.commit("c5", {"a.py": _lines(9)})
    g = cf.index(str(r.path), progress=False)
    assert g.report.history["action"] == "append"
    assert g.commits["subject"].to_list() == ["c5", "c4"]
    assert set(g.changes["sha"]) == set(g.commits["sha"])
    since = datetime.fromtimestamp(r.t - 3 * 3600 + 1, UTC).isoformat()
    (r.path / ".ctxframe" / "config.toml").write_text(f'[history]\nsince = "{since}"\n')
    g = cf.index(str(r.path), progress=False)
    assert g.report.history["action"] == "full"
    assert g.commits["subject"].to_list() == ["c5", "c4", "c3"]


@pytest.mark.parametrize("bad, message", [
    ("max_commits = 0", "max_commits"),
    ('since = 5', "since"),
    ("colour = true", "unknown history setting"),
    ("enabled = 'yes'", "enabled"),
])  # fmt: skip
def test_bad_history_settings_are_one_line(tmp_path, bad, message):
    r = Repo(tmp_path / "repo")
    r.commit("c", {"a.py": "a\n"})
    (r.path / ".ctxframe").mkdir()
    (r.path / ".ctxframe" / "config.toml").write_text(f"[history]\n{bad}\n")
    with pytest.raises(cf.ConfigError, match=message):
        cf.index(str(r.path), progress=False)


def test_anonymized_history_stores_no_name_and_no_key(tmp_path, monkeypatch):
    r = Repo(tmp_path / "repo")
    r.commit("c1", {"a.py": "a\n"}, author="Zelda Quux", email="zelda@secret.example")
    r.commit("c2", {"b.py": "b\n"}, author="Yann Wobble", email="yann@secret.example")
    r.commit("c3", {"a.py": "a\nb\n"}, author="Zelda Quux", email="zelda@secret.example")
    monkeypatch.setenv("CTXFRAME_HISTORY_KEY", "k-one")
    g = cf.index(str(r.path), progress=False, anonymize=True)
    names = g.commits["author_name"].to_list()
    assert names[0] == names[2] != names[1] and all(n.startswith("author-") for n in names)
    assert all(e.endswith("@anonymous") for e in g.commits["author_email"])
    store = r.path / ".ctxframe" / "graph"
    for path in store.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (b"Zelda", b"Wobble", b"secret.example", b"k-one"):
                assert secret not in data, (path, secret)
    first = names[0]
    g = cf.index(str(r.path), progress=False, anonymize=True)  # same key: kept as it is
    assert g.commits["author_name"][0] == first
    monkeypatch.setenv("CTXFRAME_HISTORY_KEY", "k-two")  # another key: read again
    (r.path / "c.py").write_text("c\n")
    g = cf.index(str(r.path), progress=False, anonymize=True)
    assert g.report.history["action"] == "full"
    assert g.commits["author_name"][0] != first
    monkeypatch.delenv("CTXFRAME_HISTORY_KEY")
    (r.path / "d.py").write_text("d\n")
    g = cf.index(str(r.path), progress=False, anonymize=True)  # a key made and kept outside
    key = Path(os.environ["XDG_CONFIG_HOME"]) / "ctxframe" / "history.key"
    assert key.is_file() and oct(key.stat().st_mode & 0o777) == "0o600"
    assert key.read_bytes().strip() not in (store / "meta.json").read_bytes()


def test_history_off_and_outside_git(tmp_path):
    r = Repo(tmp_path / "repo")
    r.commit("c", {"a.py": "a\n"})
    g = cf.index(str(r.path), progress=False, history=False)
    assert g.report.history["action"] == "off"
    res = g.hotspots()
    assert res.status == "not-indexed" and "no history" in str(res)
    g = cf.index(str(r.path), progress=False)  # turned on: read
    assert g.commits.height == 1
    (r.path / "b.py").write_text("b\n")
    g = cf.index(str(r.path), progress=False, history=False)  # off again: the tables go
    assert not (r.path / ".ctxframe" / "graph" / "commits").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def f():\n    pass\n")
    g = cf.index(str(plain), progress=False)
    assert g.report.history["action"] == "none"
    assert g.history().to_dict()["status"] == "not-indexed"


def test_a_subdirectory_reads_its_own_history(tmp_path):
    r = Repo(tmp_path / "repo")
    r.commit("c1", {"app/a.py": "a\n", "other/b.py": "b\n"})
    r.commit("c2", {"other/b.py": "bb\n"})
    r.commit("c3", {"app/a.py": "aa\n", "app/sub/c.py": "c\n"})
    g = cf.index(str(r.path / "app"), progress=False)
    assert g.commits["subject"].to_list() == ["c3", "c1"]
    assert sorted(g.changes["path"].unique()) == ["a.py", "sub/c.py"]


def test_a_long_first_read_goes_to_the_background_and_is_waited_for(tmp_path, monkeypatch):
    r = Repo(tmp_path / "repo")
    for i in range(6):
        r.commit(f"c{i}", {"a.py": _lines(i + 1)})
    monkeypatch.setenv("CTXFRAME_HISTORY_INLINE_MAX", "3")
    g = cf.index(str(r.path), progress=False)
    assert g.report.history["pending"] == 6
    assert "background" in str(g.report)
    assert g.commits.height == 6  # waits for the job, reads the version it wrote
    assert stored_history.wait_history(g.store, timeout=30)
    again = cf.open(str(r.path))
    assert again.meta["history"]["commits"] == 6 and "pending" not in again.meta["history"]
    assert again.nodes.equals(g.nodes)


# -- the analyses against straightforward references ----------------------------------------------

_NAMES = st.sampled_from(["a", "b", "c", "d", "e", "f/g", "f/h"])


def _frame(sets: list[set[str]]) -> pl.DataFrame:
    rows = [(f"s{i}", name) for i, names in enumerate(sets) for name in sorted(names)]
    return pl.DataFrame(rows, schema={"sha": pl.String, "entity": pl.String}, orient="row")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sets(_NAMES, max_size=5), max_size=30), st.integers(1, 5),
       st.integers(1, 3), st.integers(1, 3), st.integers(0, 100))  # fmt: skip
def test_coupling_equals_code_maats_definition(sets, max_changeset, min_revs, min_shared,
                                               min_degree):  # fmt: skip
    got = A.coupling(_frame(sets), max_changeset=max_changeset, min_revs=min_revs,
                     min_shared=min_shared, min_degree=min_degree)  # fmt: skip
    kept = [s for s in sets if len(s) <= max_changeset]
    revs = Counter(n for s in kept for n in s)
    shared = Counter(p for s in kept for p in itertools.combinations(sorted(s), 2))
    want = {}
    for (a, b), n in shared.items():
        avg = (revs[a] + revs[b]) / 2
        degree = n / avg * 100
        if avg >= min_revs and n >= min_shared and degree >= min_degree:
            want[(a, b)] = (n, round(degree, 9))
    rows = got.select("a", "b", "shared", "degree").rows()
    assert {(a, b): (n, round(d, 9)) for a, b, n, d in rows} == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]),
                          st.sampled_from(["a", "b", "c", "d", None])), max_size=25))  # fmt: skip
def test_renames_are_followed_like_walking_the_log_backwards(events):
    """Each event is one commit (oldest first) changing a path, or renaming it."""
    rows = []
    n = len(events)
    for i, (path, to) in enumerate(events):
        sha = f"s{i:03d}"
        if to is not None and to != path:
            rows.append((sha, to, path))
        else:
            rows.append((sha, path, None))
    shas = [f"s{i:03d}" for i in reversed(range(n))]
    commits = pl.DataFrame({"sha": shas}, schema={"sha": pl.String}).with_columns(
        author_name=pl.lit("a"), author_time=pl.lit(datetime(2024, 1, 1, tzinfo=UTC))
    )
    changes = pl.DataFrame(rows, schema={"sha": pl.String, "path": pl.String,
                                         "old_path": pl.String}, orient="row")  # fmt: skip
    changes = changes.with_columns(added=pl.lit(1, pl.Int32), deleted=pl.lit(0, pl.Int32))
    got = dict(A.entities(commits, changes).select("sha", "entity").iter_rows())
    # the reference: newest first, each name mapped to its name at HEAD
    later: dict[str, str] = {}
    want = {}
    for sha, path, old in sorted(rows, reverse=True):
        want[sha] = later.get(path, path)
        if old is not None:
            later[old] = later.get(path, path)
    assert got == want


def test_hotspots_trend_age_and_ownership(tmp_path):
    r = Repo(tmp_path / "repo")
    r.t = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
    r.commit("big", {"big.py": _lines(100), "small.py": _lines(5)}, author="Ann")
    for i in range(4):
        r.commit(f"small {i}", {"small.py": _lines(6 + i)}, author="Bob")
    r.t += 400 * 86400
    r.commit("big again", {"big.py": _lines(120)}, author="Ann")
    r.commit("docs", {"README.md": "# r\n"})
    g = cf.index(str(r.path), progress=False)
    hot = g.hotspots().frame
    assert hot["entity"].to_list() == ["big.py", "small.py"]  # no hotspot for a document
    small = hot.row(1, named=True)
    assert (small["revisions"], small["complexity"]) == (5, 9)
    assert small["score"] == pytest.approx(1.0 * 9 / 120)
    big = hot.row(0, named=True)
    assert (big["revisions"], big["complexity"], big["score"]) == (2, 120, pytest.approx(0.4))
    assert (big["last_year"], big["trend"]) == (1, 1)  # one change in the last six months
    own = g.ownership().frame
    row = own.filter(pl.col("entity") == "small.py").row(0, named=True)
    assert (row["authors"], row["main_author"]) == (2, "Ann")
    assert row["main_share"] == pytest.approx(5 / 9)  # Ann added 5 of the 9 lines
    assert own.filter(pl.col("entity") == "big.py")["island"].item() is True
    age = g.age().frame
    assert dict(age.select("entity", "age_days").iter_rows()) == {"small.py": 400, "big.py": 0}


FUNCS = """def alpha():
    return 1


def beta(x):
    y = x + 1
    return y


def gamma():
    pass
"""


def test_function_history_equals_git_log_L(tmp_path):
    """Each function's revisions and authors equal `git log -L --first-parent` of its lines."""
    r = Repo(tmp_path / "repo")
    r.commit("start", {"m.py": FUNCS}, author="Ann")
    text = FUNCS.replace("return 1", "return 2")
    r.commit("alpha", {"m.py": text}, author="Bob")
    text = "import os\n\n\n" + text  # everything moves down: no function changes
    r.commit("import", {"m.py": text}, author="Ann")
    text = text.replace("    y = x + 1\n", "    y = x + 2\n    y *= 2\n")
    r.commit("beta", {"m.py": text}, author="Cid")
    text += "\n\ndef delta():\n    return beta(1)\n"
    r.commit("delta", {"m.py": text}, author="Bob")
    r.git("checkout", "-q", "-b", "side")
    r.commit("side gamma", {"m.py": text.replace("    pass\n", "    return None\n")})
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    r.commit("move", {"m.py": "x = 1\n" + (r.path / "m.py").read_text()})
    g = cf.index(str(r.path), progress=False)
    fns = g.nodes.filter(pl.col("kind") == "function").select("id", "line_start", "line_end")
    got = function_history(str(r.path), "m.py", fns)
    for fid, s, e in fns.rows():
        out = r.git("log", "-L", f"{s},{e}:m.py", "--first-parent", "--no-patch", "--format=%H %an")
        shas = {line.split()[0] for line in out.splitlines() if line}
        authors = {line.split()[1] for line in out.splitlines() if line}
        row = got.filter(pl.col("id") == fid).row(0, named=True)
        assert (row["revisions"], row["authors"]) == (len(shas), len(authors)), fid
    assert dict(got.select("id", "revisions").iter_rows()) == {
        "m.py::alpha": 2, "m.py::beta": 2, "m.py::gamma": 2, "m.py::delta": 1,
    }  # fmt: skip
    res = g.function_history("m.py")
    assert res.frame.height == 4 and "m.py::beta" in str(res)


# -- the sample, the result objects, the CLI ------------------------------------------------------


@pytest.fixture(scope="module")
def sample_history(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("sample") / "shop"
    old = {k: os.environ.get(k) for k in GIT_ENV}
    os.environ.update(GIT_ENV)
    try:
        cf.sample(str(dest), history=True)
        cf.index(str(dest), progress=False)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return dest


def test_the_sample_history_is_deterministic(tmp_path, sample_history):
    other = tmp_path / "shop"
    head = cf.sample(str(other), history=True)
    assert head == str(other)
    one = subprocess.run(["git", "-C", str(sample_history), "rev-parse", "HEAD"],
                         capture_output=True, text=True).stdout  # fmt: skip
    two = subprocess.run(["git", "-C", str(other), "rev-parse", "HEAD"], capture_output=True,
                         text=True).stdout  # fmt: skip
    assert one == two and len(one.strip()) == 40
    status = subprocess.run(["git", "-C", str(other), "status", "--porcelain"],
                            capture_output=True, text=True).stdout  # fmt: skip
    assert status == ""  # the work tree is the sample, committed
    plain = tmp_path / "plain"
    cf.sample(str(plain))
    assert not (plain / ".git").exists() and (plain / "services").is_dir()


def test_the_sample_shows_hotspots_coupling_and_hidden_coupling(sample_history):
    g = cf.open(str(sample_history))
    hot = g.hotspots()
    assert hot.frame["entity"].head(3).sort().to_list() == [
        "services/payments/gateway.py", "services/payments/refund_processor.py",
        "tests/test_refund_processor.py",
    ]  # fmt: skip
    pairs = g.coupling().frame.select("a", "b").rows()
    assert ("services/api/routes.py", "web/src/api/refunds.ts") in pairs
    assert ("services/payments/gateway.py", "services/payments/refund_processor.py") in pairs
    hidden = g.hidden_coupling().frame.select("a", "b").rows()
    assert hidden == [("services/api/routes.py", "web/src/api/refunds.ts")]
    islands = g.ownership(islands=True).frame
    assert islands.row(0, named=True)["entity"] == "gateway-go/refund/stripe.go"
    assert islands.row(0, named=True)["main_author"] == "Dana Okafor"
    fn = g.hotspots(level="function", files=3).frame
    assert fn["revisions"].min() >= 1 and fn["id"].str.contains("::").all()
    assert g.coupling(level="package").frame.height >= 1


@pytest.mark.parametrize("method", ["hotspots", "coupling", "hidden_coupling", "timeline"])
def test_results_render_as_text_html_json_and_a_picture(sample_history, method):
    g = cf.open(str(sample_history))
    res = getattr(g, method)()
    assert res.ok and res.frame.height > 0
    d = res.to_dict()
    assert d["verb"] == "history" and d["status"] == "ok" and d["total"] == res.frame.height
    json.dumps(d)
    assert res.title_text in str(res)
    html = res._repr_html_()
    assert "data:image/png;base64," in html and "<table" in html
    chart = res.plot()
    assert chart.png().startswith(b"\x89PNG") and len(chart.png()) < 200_000


def test_cli_history_golden_and_json(sample_history, capsys, tmp_path):
    from ctxframe.cli import main

    assert main(["history", "--repo", str(sample_history)]) == 0
    text = capsys.readouterr().out
    golden = ROOT / "tests" / "golden" / "history-summary.txt"
    if os.environ.get("CTXFRAME_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
    png = tmp_path / "coupling.png"
    assert main(["history", "coupling", "--repo", str(sample_history), "--json", "--plot",
                 str(png)]) == 0  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert d["section"] == "coupling" and d["rows"][0]["degree"] == 100.0
    assert png.read_bytes().startswith(b"\x89PNG")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    cf.index(str(plain), progress=False)
    assert main(["history", "hotspots", "--repo", str(plain), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "not-indexed" and d["error"]["code"] == "not-indexed"
    assert main(["history", "functions", "--repo", str(plain)]) == 2
    assert "--path" in capsys.readouterr().err
