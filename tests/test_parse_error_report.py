"""The index report names the files its parse errors are in (a reader can open them), the
most first, at most five, and says how many more."""

from __future__ import annotations

from pathlib import Path

import ctxframe as cf


def test_the_report_names_the_files_with_parse_errors(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("def ok():\n    return 1\n")
    (tmp_path / "worst.py").write_text("def broken(:\n    return (\n")
    for i in range(6):
        (tmp_path / f"bad{i}.py").write_text("x = [1, 2\ny = 3\n")
    report = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False).report
    assert report.files_with_parse_errors == 7
    paths = [path for path, _ in report.parse_error_files]
    assert paths == ["worst.py", "bad0.py", "bad1.py", "bad2.py", "bad3.py"]
    counts = [n for _, n in report.parse_error_files]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1] > 0
    text = str(report)
    assert "\nparse errors in: worst.py (" in text and text.count(" and 2 more files") == 1
    assert report.to_dict()["parse_error_files"] == report.parse_error_files


def test_no_parse_errors_no_line(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("def ok():\n    return 1\n")
    report = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False).report
    assert report.parse_error_files == [] and "parse errors in" not in str(report)
