"""The `link_refused` record (`coding/grading/links.py`): which links the submission left point
where it cannot read, and when the rule fires. End to end:
tests/security/test_links_outside_jail.py."""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.grading import links
from benchwright.coding.grading.evaluation import GradingRule
from benchwright.coding.grading.evaluation import TestCase as Case


def _case(test_id: str, message: str | None) -> Case:
    return Case(id=test_id, file="t.py", checkpoint="checkpoint_1", group="Core",
                    outcome="failed" if message else "passed", message=message)


def test_links_into_the_tests_or_out_of_reach_are_named(tmp_path: Path) -> None:
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    (ws / "sub").mkdir(parents=True)
    (tmp / "t0").mkdir(parents=True)
    (ws / "own").symlink_to("sub")  # its own: fine
    (ws / "py").symlink_to("/usr/bin/python3")  # readable in the jail: fine
    (ws / "sub" / "answers").symlink_to("../.evaluation_tests/data")
    (tmp / "t0" / "out.txt").symlink_to("/ws/.evaluation_tests/data/case/expected.txt")
    (tmp / "t0" / "up").symlink_to("../../../proc/1/root")
    found = links.outside_links([(ws, "/ws"), (tmp, "/tmp")], ["/ws", "/tmp", *links.SYSTEM],
                                "/ws/.evaluation_tests")
    assert found == ["/ws/sub/answers -> ../.evaluation_tests/data",
                     "/tmp/t0/out.txt -> /ws/.evaluation_tests/data/case/expected.txt",
                     "/tmp/t0/up -> ../../../proc/1/root"]


def test_the_rule_fires_on_a_link_or_on_eloop_and_only_then() -> None:
    passed = [_case("test_a", None), _case("test_b", "AssertionError: 1 != 2")]
    assert links.rule([], passed) is None
    looped = _case("test_c", "OSError: [Errno 40] Too many levels of symbolic links: 'out'")
    fired = links.rule([], [*passed, looped])
    assert fired is not None
    assert fired.rule is GradingRule.LINK_REFUSED
    assert fired.items == ["test_c"]
    fired = links.rule(["/tmp/x -> /etc"], passed)
    assert fired is not None
    assert fired.items == ["/tmp/x -> /etc"]
