"""The viewer's read model: the figures are the reports' (tallies shared with report.md), runs
are found through the kernel, keys are plain names, a new metric appears without a viewer
change, a running run is told by its lock, and a missing extra names its pip install."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchwright.coding.report.figures import build_report
from benchwright.errors import PrerequisiteError
from benchwright.runs.lock import lock_holder, run_lock
from benchwright.view.catalog import find_run_dirs, open_runs, run_id
from benchwright.view.coding_checkpoint import metric_rows
from benchwright.view.diffview import side_by_side
from benchwright.view.read_model import ReadModel, valid_key
from benchwright.view.run_state import LockTable
from tests.helpers import run_cli
from tests.helpers.coding_runs import write_run
from tests.helpers.view_runs import Runs


def _data(body: bytes) -> dict:
    text = body.decode()
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def test_overview_rates_and_cis_are_the_reports(runs: Runs) -> None:
    model = ReadModel([runs.root])
    rows = {r["name"]: r for r in _data(model.file("runs") or b"")["runs"]}
    for run in (runs.oracle, runs.evil):
        result = json.loads((run / "result.json").read_text())
        row = rows[run.name]
        assert row["rate"] == result["checkpoint_solve_rate"]
        assert sum(s for s, _p in row["heat"].values()) == result["n_checkpoints_solved"]
        assert row["cost"] == result["totals"]["cost_usd"]
        shown = _data(model.file(f"run/{run_id(run)}/ci") or b"")["metrics"]
        assert shown == [m.model_dump(mode="json") for m in build_report(run).solve_rates]
    web = json.loads((runs.web_a / "result.json").read_text())
    assert rows["web_a"]["rate_ci"] == web["pass_rate_ci"]


def test_the_run_page_is_the_report(runs: Runs) -> None:
    page = _data(ReadModel([runs.root]).file(f"run/{run_id(runs.evil)}") or b"")
    report = json.loads(run_cli("report", str(runs.evil), "--json").stdout)
    for key in ("solve_rates", "group_pass_rates", "problems", "failures"):
        assert json.dumps(page["report"][key]) == json.dumps(report[key]).replace("NaN", "null")


def test_a_new_metric_shows_without_a_viewer_change(tmp_path: Path) -> None:
    from benchwright.coding.attempts.journal import read_records
    from benchwright.metrics.erosion import QualitySummary

    write_run(tmp_path / "run", {"p": ["SS"]}, 2)
    first, second = read_records(tmp_path / "run" / "p" / "trial_1" / "journal.jsonl")
    first.quality = QualitySummary(values={"loc": 10.0, "rubric_clarity": 2.0})
    second.quality = QualitySummary(values={"loc": 12.0, "rubric_clarity": 4.5})
    rows = {(r["group"], r["name"]): r for r in metric_rows(second, first)}
    assert rows[("quality", "rubric_clarity")]["change"] == 2.5
    assert rows[("quality", "loc")]["previous"] == 10.0
    assert ("agent", "cost_usd") in rows and ("checkpoint", "grade_duration_s") in rows


def test_runs_are_found_under_folders_without_following_links(tmp_path: Path) -> None:
    write_run(tmp_path / "a" / "deep" / "run1", {"p": ["S"]}, 1)
    write_run(tmp_path / "run2", {"p": ["F"]}, 1)
    write_run(tmp_path / ".hidden" / "run3", {"p": ["S"]}, 1)
    elsewhere = tmp_path.parent / (tmp_path.name + "-elsewhere")
    write_run(elsewhere / "run4", {"p": ["S"]}, 1)
    (tmp_path / "link").symlink_to(elsewhere)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    found = find_run_dirs([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/deep/run1", "broken",
                                                                    "run2"]
    refs, bad = open_runs([tmp_path])
    assert {r.track.name for r in refs} == {"coding"} and len(refs) == 2
    assert [b.path.name for b in bad] == ["broken"]


@pytest.mark.parametrize("key", ["run/..", "run/a/../b", "run/%2e%2e", "", "run//x", "run/.x",
                                 "/runs", "run/a\\b", "run/" + "a/" * 9 + "b"])
def test_keys_are_plain_names(key: str) -> None:
    assert valid_key(key) is None


def test_a_run_being_worked_on_is_told_by_its_lock(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"p": ["S"]}, 1)
    assert lock_holder(run) is None
    with run_lock(run):
        assert lock_holder(run) == os.getpid()
        assert LockTable().state(run).fields(None) == {"status": "running", "running": True}
    assert LockTable().state(run).fields(True)["status"] == "complete"


def test_side_by_side_rows() -> None:
    old = ["a = 1", *[f"x{i} = {i}" for i in range(10)], "b = 2"]
    new = ["a = 1", *[f"x{i} = {i}" for i in range(10)], "b = 3", "c = 4"]
    rows = side_by_side(old, new, "m.py")
    kinds = [r[0] for r in rows]
    assert kinds == ["gap", "eq", "eq", "eq", "chg", "add"]
    assert rows[0][1] == 8  # unchanged lines folded
    assert "".join(text for _css, text in rows[-1][4]) == "c = 4"


def test_a_missing_chart_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from benchwright.view import assets

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "plotly" else real(name, *a))
    with pytest.raises(PrerequisiteError) as caught:
        assets.plotly_js()
    assert "pip install 'benchwright[view]'" in caught.value.one_line()


def test_every_run_says_where_to_look_next(runs: Runs) -> None:
    # a coding run and a web run made where they are (oracle is a copy of a shared run)
    for name, path in (("evil", runs.evil), ("web_a", runs.web_a)):
        assert f"see it: benchwright view {path}" in runs.stderr[name]


def test_a_bundle_never_overwrites_a_folder_it_did_not_write(tmp_path: Path,
                                                             runs: Runs) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    done = run_cli("view", str(runs.evil), "--bundle", str(out))
    assert done.returncode == 2 and "not empty" in done.stderr
    assert (out / "notes.txt").read_text() == "keep me"


def test_a_finished_runs_digest_is_its_journals(runs: Runs) -> None:
    """The run list reads one file per finished run; it must say what the journals say."""
    from benchwright.coding.attempts.runner import load_manifest
    from benchwright.coding.attempts.tallies import (
        _finished_records,
        _journal_records,
        _tallied,
        read_run_digest,
    )

    for run in (runs.oracle, runs.evil):
        manifest = load_manifest(run)
        assert _finished_records(run) is not None  # the one-file path is the one taken
        assert read_run_digest(run, manifest) == _tallied(manifest,
                                                          *_journal_records(run, manifest))


def test_a_page_checks_the_folders_it_reads_not_the_whole_runs(tmp_path: Path) -> None:
    """A trial's folder replaced by hand (a pipe for its journal) makes the pages that read it
    one clear error; another trial's checkpoint page is still shown, and costs no check of
    the whole run (a 10,000-checkpoint bundle did 3,000 checks a page)."""
    from benchwright.errors import UserInputError

    run = write_run(tmp_path / "run", {"p": ["SS", "SS"], "q": ["SS"]}, 2)
    journal = run / "p" / "trial_2" / "journal.jsonl"
    journal.unlink()
    os.mkfifo(journal)
    model, rid = ReadModel([tmp_path], live=False), run_id(run)
    page = _data(model.file(f"run/{rid}/cp/q/1/checkpoint_2") or b"")
    assert page["record"]["checkpoint"] == "checkpoint_2"
    assert page["reached"] == ["checkpoint_1", "checkpoint_2"]
    assert model.file(f"run/{rid}/cp/p/1/checkpoint_1") is not None
    for key in (f"run/{rid}/cp/p/2/checkpoint_1", f"run/{rid}/p/p", f"run/{rid}"):
        with pytest.raises(UserInputError, match="should be a regular file"):
            model.file(key)


def test_highlighting_is_kept_for_the_next_checkpoints_old_side() -> None:
    """Checkpoint N's new file is N+1's old one: highlighted once, the same tokens both times."""
    from benchwright.view.diffview import _highlighted, highlight

    _highlighted.cache_clear()
    first = highlight(["def f(x):", "    return x"], "main.py")
    again = highlight(["def f(x):", "    return x"], "main.py")
    assert again == first and _highlighted.cache_info().hits == 1
    assert "".join(t[1] for t in first[0]) == "def f(x):" and first[0][0] == ["k", "def"]


def test_a_web_runs_journal_is_read_once_until_it_changes(runs: Runs, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every trial page needs its record: the parsed journal is kept, and read again as soon as
    the file changes (a trial added changes its size, even if its time were the same)."""
    import shutil

    from benchwright.view import web_pages

    reads: list[Path] = []
    real = web_pages.read_trials
    monkeypatch.setattr(web_pages, "read_trials", lambda p, m: reads.append(p) or real(p, m))
    run = tmp_path / "web"
    shutil.copytree(runs.web_a, run, symlinks=True)
    [ref], _bad = open_runs([tmp_path], {})
    pages, journal = web_pages.WebPages(), run / "journal.jsonl"
    first = pages.journal(ref)
    assert first and pages.journal(ref) == first and len(reads) == 1
    stamp = journal.stat().st_mtime_ns
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    os.utime(journal, ns=(stamp, stamp))
    assert pages.journal(ref) == first[:1] and len(reads) == 2
