"""grading/scbench_compat.py: pwd_manager's tests get the pseudo-terminal drain SCBench's v1.0
grading (its Harbor conversion) adds to their conftest; no other problem's tests change."""

from __future__ import annotations

import types
from pathlib import Path

from benchwright.coding.grading.scbench_compat import adapt_tests

# A stand-in for pwd_manager's helper: each read takes one chunk of what the program wrote.
HELPER = '''
class PtySession:
    def __init__(self, chunks):
        self.chunks, self.transcript = list(chunks), ""
        self.process = types.SimpleNamespace(poll=lambda: None)

    def _read_available(self, timeout):
        chunk = self.chunks.pop(0) if self.chunks else ""
        self.transcript += chunk
        return chunk

    def expect(self, pattern, timeout=5.0):
        while pattern not in self.transcript:
            self._read_available(0.1)
        return self.transcript
'''


def _tests(tmp_path: Path, problem: str, conftest: str) -> tuple[Path, Path]:
    folder = tmp_path / problem
    tests = tmp_path / "copied" / problem
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_text(conftest)
    return folder, tests


def test_pwd_managers_expect_reads_the_rest_of_the_prompt_after_a_match(tmp_path: Path) -> None:
    folder, tests = _tests(tmp_path, "pwd_manager", HELPER)
    assert adapt_tests(folder, tests) == ["conftest.py"]
    namespace: dict[str, object] = {"types": types}
    exec(compile((tests / "conftest.py").read_text(), "conftest.py", "exec"), namespace)
    session = namespace["PtySession"](["Menu (a)dd ", "(q)uit\n", "later"])  # type: ignore[operator]
    # Without the drain the match returns after the first chunk; with it the rest of the prompt
    # (what arrived within 50 ms) is read too.
    assert session.expect("(a)dd").startswith("Menu (a)dd (q)uit\n")


def test_other_problems_and_conftests_without_the_helper_are_left_alone(tmp_path: Path) -> None:
    for problem, text in (("cfgpipe", HELPER), ("pwd_manager", "import pytest\n")):
        folder, tests = _tests(tmp_path, problem, text)
        assert adapt_tests(folder, tests) == []
        assert (tests / "conftest.py").read_text() == text


def test_a_conftest_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    folder, tests = _tests(tmp_path, "pwd_manager", "")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text(HELPER)
    (tests / "conftest.py").unlink()
    (tests / "conftest.py").symlink_to(elsewhere)
    assert adapt_tests(folder, tests) == []
    assert elsewhere.read_text() == HELPER
