"""The checkpoint's own collection and the grade's comparison with what ran (`expected`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.grading import expected as ex
from benchwright.coding.grading import verdict_channel as vc
from benchwright.coding.grading.evaluation import GradingRule
from benchwright.coding.problems.config import Group

ROOT = Path("/grade/workspace")
TESTS = ROOT / ".evaluation_tests"
FILE = ".evaluation_tests/test_checkpoint_1.py"


def _entry(name: str, outcome: str = "passed", keywords: tuple[str, ...] = (),
           skip_at: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"nodeid": f"{FILE}::{name}", "outcome": outcome,
                             "keywords": [name, *keywords]}
    if skip_at is not None:
        entry["setup"] = {"outcome": "skipped", "longrepr": repr((skip_at, 3, "Skipped: why"))}
    return entry


def _expected(*names: str, keywords: tuple[str, ...] = ()) -> ex.Expected:
    return ex.Expected(items=[ex.ExpectedItem(nodeid=f"{FILE}::{n}", keywords=[n, *keywords])
                              for n in names])


def _reconcile(expected: ex.Expected, *entries: dict[str, Any]) -> ex.Reconciled:
    return ex.reconcile(expected, {"tests": list(entries)}, "checkpoint_1",
                        {"slow": Group.FUNCTIONALITY}, TESTS, ROOT)


def test_a_run_with_every_test_changes_nothing() -> None:
    done = _reconcile(_expected("test_a", "test_b"), _entry("test_a"), _entry("test_b", "failed"))
    assert [(c.id, c.outcome) for c in done.cases] == [("test_a", "passed"), ("test_b", "failed")]
    assert done.rules == []


def test_a_test_that_did_not_run_counts_as_failed_in_its_group() -> None:
    done = _reconcile(_expected("test_a", "test_b", keywords=("slow",)), _entry("test_a"))
    missing = done.cases[-1]
    assert (missing.id, missing.outcome, missing.group) == ("test_b", "failed",
                                                            Group.FUNCTIONALITY)
    assert missing.file == FILE and missing.message == ex.NOT_RUN_MESSAGE
    [rule] = done.rules
    assert rule.rule is GradingRule.NOT_RUN and rule.items == [f"{FILE}::test_b"]
    assert "1 of the checkpoint's tests did not run" in rule.detail


def test_a_skip_in_the_problems_tests_stays_a_skip() -> None:
    done = _reconcile(_expected("test_a"),
                      _entry("test_a", "skipped", skip_at=str(TESTS / "test_checkpoint_1.py")))
    assert [c.outcome for c in done.cases] == ["skipped"] and done.rules == []


def test_a_relative_skip_location_is_read_from_the_working_folder() -> None:
    done = _reconcile(_expected("test_a"), _entry("test_a", "skipped", skip_at=FILE))
    assert [c.outcome for c in done.cases] == ["skipped"] and done.rules == []


@pytest.mark.parametrize("where", [str(ROOT / "helper.py"), ".evaluation_tests/../main.py",
                                   "/usr/lib/python3/x.py"])
def test_a_skip_from_outside_the_problems_tests_counts_as_failed(where: str) -> None:
    done = _reconcile(_expected("test_a"), _entry("test_a", "skipped", skip_at=where))
    assert [c.outcome for c in done.cases] == ["failed"]
    assert "skipped from outside" in (done.cases[0].message or "")
    assert done.rules[0].items == [f"{FILE}::test_a"]


def test_a_skip_whose_location_cannot_be_read_counts_as_failed() -> None:
    entry = _entry("test_a", "skipped")
    entry["setup"] = {"outcome": "skipped", "longrepr": "__import__('os')"}
    assert [c.outcome for c in _reconcile(_expected("test_a"), entry).cases] == ["failed"]


def test_a_test_the_checkpoint_does_not_have_is_left_out_and_named() -> None:
    done = _reconcile(_expected("test_a"), _entry("test_a"), _entry("test_planted"))
    assert [c.id for c in done.cases] == ["test_a"]
    assert done.rules[0].items == [f"{FILE}::test_planted"]
    assert "not the checkpoint's" in done.rules[0].detail


def test_a_test_run_twice_counts_once() -> None:
    done = _reconcile(_expected("test_a", "test_b"), _entry("test_a"), _entry("test_a"),
                      _entry("test_b", "failed"))
    assert [(c.id, c.outcome) for c in done.cases] == [("test_a", "passed"), ("test_b", "failed")]
    assert done.rules == []


def test_a_failed_collection_grades_what_ran_and_says_so() -> None:
    done = _reconcile(ex.Expected(error="tests failed to collect: x"), _entry("test_a"))
    assert [c.id for c in done.cases] == ["test_a"]
    assert "collection failed" in done.rules[0].detail and done.rules[0].items == []


def test_the_pipe_gives_the_items_or_why_not() -> None:
    pipe = vc.parse(b'{"kind":"collected","items":[{"nodeid":"a::t","keywords":["t","error"]}]}\n')
    assert ex.from_pipe(pipe, 0).items == [ex.ExpectedItem(nodeid="a::t",
                                                            keywords=["t", "error"])]
    assert ex.from_pipe(pipe, 2).error is not None
    assert ex.from_pipe(vc.parse(b""), 0).error is not None
    failed = vc.parse(b'{"kind":"collect","nodeid":"a.py","outcome":"failed"}\n')
    assert "a.py" in (ex.from_pipe(failed, 2).error or "")


def test_the_collect_pass_drops_only_the_jails_plugin() -> None:
    graded = ["-p", vc.PLUGIN, "-p", vc.JAIL_PLUGIN, "-p", "no:anyio", "-vv", "tests"]
    assert ex.collect_args(graded) == ["-p", vc.PLUGIN, "-p", "no:anyio", "-vv", "tests",
                                       "--collect-only", "-q"]


def test_the_key_follows_the_tests_content_and_never_a_link(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text("def test_a(): pass\n")
    first = ex.cache_key(tests, ["env"])
    assert ex.cache_key(tests, ["env"]) == first
    assert ex.cache_key(tests, ["other env"]) != first
    outside = tmp_path / "outside.txt"
    outside.write_text("one")
    (tests / "data").symlink_to(outside)
    linked = ex.cache_key(tests, ["env"])
    outside.write_text("two")  # the link's target is not the tests' content
    assert ex.cache_key(tests, ["env"]) == linked != first
    (tests / "test_a.py").write_text("def test_b(): pass\n")
    assert ex.cache_key(tests, ["env"]) != linked


def test_the_cache_keeps_a_collection_in_a_private_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    assert ex.load("k") is None
    ex.store("k", _expected("test_a"))
    assert ex.load("k") == _expected("test_a")
    assert ex.cache_folder().stat().st_mode & 0o777 == 0o700
    (ex.cache_folder() / "k.json").unlink()
    (ex.cache_folder() / "k.json").symlink_to(tmp_path / "elsewhere.json")
    assert ex.load("k") is None  # a link is never followed
