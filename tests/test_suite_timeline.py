"""The suite's time summary (tests/helpers/timeline.py, printed by scripts/check): test files
by their summed time, workers by busy time and end."""

from __future__ import annotations

import pytest

from tests.helpers.timeline import Phase, busy_share, by_file, by_worker, cpu_ticks

PHASES = [Phase("tests/a.py::t1", "setup", "gw0", 100.0, 130.0),
          Phase("tests/a.py::t1", "call", "gw0", 130.0, 140.0),
          Phase("tests/a.py::t2", "call", "gw1", 100.0, 105.0),
          Phase("tests/b.py::t3", "call", "gw1", 105.0, 125.0),
          Phase("tests/b.py::t3", "teardown", "gw1", 125.0, 126.0)]


def test_files_are_ranked_by_the_time_of_all_their_phases() -> None:
    assert by_file(PHASES) == [(pytest.approx(45.0), "tests/a.py", 2),
                               (pytest.approx(21.0), "tests/b.py", 1)]


def test_each_worker_has_its_busy_time_and_its_end_since_the_start() -> None:
    assert by_worker(PHASES) == [("gw0", pytest.approx(40.0), pytest.approx(40.0)),
                                 ("gw1", pytest.approx(26.0), pytest.approx(26.0))]
    assert by_worker([]) == []


def test_the_cores_busy_share_is_read_from_proc_stat_and_unknown_without_time() -> None:
    ticks = cpu_ticks()
    assert ticks is not None and 0 <= ticks[0] <= ticks[1]
    assert busy_share((100, 400), (250, 600)) == pytest.approx(0.75)
    assert busy_share((100, 400), (100, 400)) is None
