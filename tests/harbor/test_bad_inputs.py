"""`benchwright run harbor` answers a bad task folder or option as a user meets it: one `error:`
line saying what and where, exit 2, no traceback, no run folder left (issue 39, point 3; the
same probes are in scripts/probe_bad_inputs.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers.bad_input_probes import run_probe
from tests.helpers.harbor_probes import harbor_probes

PROBES = harbor_probes("localhost/benchwright-probe/any:1")


@pytest.mark.e2e
def test_a_bad_task_folder_or_option_is_one_line_before_any_engine(tmp_path: Path) -> None:
    probes = [p for p in PROBES if not p.name.startswith("from-")]
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda p: run_probe(p, tmp_path, {}), probes))
    assert [v for v in verdicts if v is not None] == []


@pytest.mark.e2e
@pytest.mark.container
def test_a_from_image_not_built_here_is_one_line_and_leaves_no_run(tmp_path: Path) -> None:
    probes = [p for p in PROBES if p.name.startswith("from-")]
    verdicts = [run_probe(p, tmp_path, {}) for p in probes]
    assert [v for v in verdicts if v is not None] == []
