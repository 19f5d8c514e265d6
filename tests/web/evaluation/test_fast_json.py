"""The worker parses HAR files with orjson: every document a submission can write gives the
standard library's objects, or its error, never orjson's own reading of it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import WORKER_SCRIPT

# run by the evaluator environment's python: orjson is installed there, not here
_COMPARE = """
import importlib.util, json, math, sys
spec = importlib.util.spec_from_file_location("worker", sys.argv[1])
worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worker)
from webarena_verified.core.utils import network_event_utils
worker._fast_har_parsing()
fast = network_event_utils.json
assert isinstance(fast, worker._FastJson), type(fast)

def outcome(loads, text):
    try:
        return "ok", repr(loads(text))
    except Exception as exc:
        return "error", type(exc).__name__

for text in json.loads(open(sys.argv[2]).read()):
    if outcome(fast.loads, text) != outcome(json.loads, text):
        print("differs:", repr(text[:80]), outcome(fast.loads, text)[:1])
print("done")
"""

HOSTILE = [
    '{"a": 123456789012345678901234567890}',  # orjson: a float; json: the int
    '[-9223372036854775809, 18446744073709551616]',
    '{"log": {"entries": [{"time": 1e400}]}}',  # json: inf; orjson refuses
    '[NaN, Infinity, -Infinity]',
    '{"text": "\\ud800 lone surrogate"}',
    '{"a": 1, "a": 2}',
    '[' * 5000 + ']' * 5000,  # json: RecursionError
    '{"a": "\x01"}',
    '\ufeff{}',
    '{"x": [1.0, -0.0, 1e-400, 0.1000000000000000055511151231257827, 18446744073709551615]}',
    '{"a": 1} trailing',
    '',
]


def test_fast_parsing_gives_the_standard_librarys_result(wv_env: BuiltEnv,
                                                         tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(HOSTILE))
    done = subprocess.run([str(wv_env.python), "-I", "-c", _COMPARE, str(WORKER_SCRIPT),
                           str(cases)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "done", done.stdout
