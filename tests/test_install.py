"""ctxframe installs beside what a data scientist already has: in a venv holding Polars, pandas
and pyarrow at other versions inside the declared ranges, `pip install .` changes none of them
and the demo runs (slow: it downloads those packages by name)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
# versions a notebook environment may well hold: inside the ranges, none of them CI's pin
ALREADY = {"polars": "1.42.1", "pandas": "2.3.3", "pyarrow": "20.0.0"}


def _ranges() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for r in project["optional-dependencies"]["test"]]
    return {r.name.lower(): r for r in reqs}


def _pins() -> dict[str, str]:
    text = (ROOT / ".ci" / "constraints.txt").read_text()
    return {m[0].lower(): m[1] for m in re.findall(r"^([\w.-]+)==(\S+)", text, flags=re.M)}


def test_the_versions_tried_are_in_range_and_not_the_pins() -> None:
    ranges, pins = _ranges(), _pins()
    for name, version in ALREADY.items():
        assert ranges[name].specifier.contains(version), (name, version)
        assert pins[name] != version


def test_every_runtime_dependency_is_a_range_with_a_lower_bound() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for text in project["dependencies"]:
        spec = Requirement(text).specifier
        assert not any(s.operator == "==" for s in spec), text
        assert any(s.operator == ">=" for s in spec), text
    pins = _pins()
    for text in project["dependencies"]:
        req = Requirement(text)
        assert req.specifier.contains(pins[req.name.lower()]), (text, "constraints.txt")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900, **kw)


@pytest.mark.slow
def test_pip_install_keeps_the_users_polars_pandas_and_pyarrow(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    py = str(venv / "bin" / "python")
    got = _run([py, "-m", "pip", "install", "-q", *(f"{k}=={v}" for k, v in ALREADY.items())])
    if got.returncode != 0:
        pytest.skip(f"no package index: {got.stderr.strip().splitlines()[-1:]}")

    def versions() -> dict[str, str]:
        out = _run([py, "-m", "pip", "freeze"]).stdout
        return {k: v for k, v in re.findall(r"^([\w.-]+)==(\S+)", out, flags=re.M)
                if k.lower() in ALREADY}  # fmt: skip

    before = versions()
    assert before == ALREADY
    got = _run([py, "-m", "pip", "install", "-q", str(ROOT)], cwd=tmp_path)
    assert got.returncode == 0, got.stderr[-2000:]
    assert versions() == before
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    demo = _run([str(venv / "bin" / "ctxframe"), "demo"], cwd=tmp_path, env=env)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "refund" in demo.stdout.lower() and "indexed" in demo.stdout
