"""Issue 26, point 4: what the harness lacks is checked before the run. Each dependency a run
will need (per track, agent, runtime, executor) missing: one line with its install command
(errors.missing_extra), exit 2, and no run folder made. A module is made missing by a stand-in
that fails to import as an absent one does (`BLOCK=module`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.helpers.bad_input_probes import Probe, run_probe
from tests.helpers.bad_input_probes import problem as _problem

DEAD = "http://127.0.0.1:9/v1"
"""The discard port: nothing listens on it here."""


def _needs_probes() -> list[Probe]:
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--out", "{tmp}/o"]
    quiet = [*run, "--no-metrics"]
    prob = _problem({})
    key = "OPENAI_API_KEY=sk-probe"
    return [
        Probe("web-without-browser-use", ["BLOCK=browser_use", "run", "web", "--out", "{tmp}/o"],
              {}, "pip install 'benchwright[web]' && pip install --no-deps browser-use"),
        Probe("mini-without-openai", ["BLOCK=openai", key, *quiet, "--agent", "mini",
                                      "--model", "openai/gpt-4.1"], prob,
              "pip install 'benchwright[mini]'"),
        Probe("metrics-without-radon", ["BLOCK=radon", *run], prob,
              "pip install 'benchwright[metrics]'"),
        Probe("ray-without-ray", ["BLOCK=ray", *quiet, "--executor", "ray"], prob,
              "pip install 'benchwright[ray]'"),
        Probe("judge-without-openai", ["BLOCK=openai", key, *quiet, "--judge-model",
                                       "openai/gpt-4.1"], prob, "pip install 'benchwright[judge]'"),
        Probe("web-ray-without-ray", ["BLOCK=ray", "run", "web", "--out", "{tmp}/o",
                                      "--executor", "ray"], {}, "pip install 'benchwright[ray]'"),
        # an endpoint nothing listens on (a typo'd port, a server not started): one line at once,
        # exit 3, not minutes of retries per checkpoint or trial (issue 26, options)
        Probe("mini-endpoint-down", [key, *quiet, "--agent", "mini", "--model", "openai/gpt-4.1",
                                     "--base-url", DEAD], prob, "cannot be reached", 3),
        Probe("web-agent-endpoint-down", [key, "run", "web", "--out", "{tmp}/o", "--agent",
                                          "browser-use", "--model", "gpt-4.1", "--base-url",
                                          DEAD], {}, "cannot be reached", 3),
        Probe("judge-endpoint-down", [key, *quiet, "--judge-model", "openai/gpt-4.1", "-J",
                                      f"base_url={DEAD}"], prob, "cannot be reached", 3),
    ]


def test_a_missing_dependency_stops_the_run_before_its_folder(tmp_path: Path) -> None:
    probes = _needs_probes()
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda p: run_probe(p, tmp_path, {}), probes))
    failures = [v for v in verdicts if v is not None]
    assert not failures, f"{len(failures)} of {len(probes)} probes failed:\n" + "\n".join(
        failures)
