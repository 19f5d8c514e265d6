"""The evaluator's worker process: one per batch, answers in order, never outlives its owner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchwright.errors import InfrastructureError
from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import (
    WORKER_SCRIPT,
    EvalRequest,
    EvalStatus,
    EvaluatorPool,
    EvaluatorProcess,
    dataset_dir,
    official_cli,
    workers_for,
)
from benchwright.web.evaluation.synthetic import expected_answer, har, start_entry, write_log
from benchwright.web.evaluation.tasks import WebDataset
from benchwright.web.sites.config import WebEnvConfig


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_worker_imports_only_the_stdlib_and_the_evaluator() -> None:
    imports = [line.strip() for line in WORKER_SCRIPT.read_text().splitlines()
               if line.strip().startswith(("import ", "from "))]
    assert imports and not any("benchwright" in line for line in imports)
    assert all(line.split()[1].split(".")[0] in {"__future__", "json", "os", "signal", "sys",
                                                 "collections", "pathlib", "typing",
                                                 "importlib", "orjson", "webarena_verified"}
               for line in imports)


def test_one_process_scores_a_batch_and_is_gone_after(
        tmp_path: Path, wv_env: BuiltEnv, dataset: WebDataset, local_cfg: WebEnvConfig) -> None:
    task = dataset.tasks[0]
    write_log(tmp_path / "0", expected_answer(task), [start_entry(task, local_cfg)])
    envs = local_cfg.evaluator_environments()
    requests = [
        EvalRequest(id="right", task_id=0, agent_response=expected_answer(task),
                    har_path=tmp_path / "0" / "network.har", config=envs),
        EvalRequest(id="text", task_id=0,
                    agent_response=(tmp_path / "0" / "agent_response.json").read_text(),
                    har_path=tmp_path / "0" / "network.har", config=envs),
        EvalRequest(id="none", task_id=0, agent_response=None,
                    har_path=tmp_path / "0" / "network.har", config=envs),
        EvalRequest(id="nohar", task_id=0, agent_response=expected_answer(task),
                    har_path=tmp_path / "absent.har", config=envs),
        EvalRequest(id="badcfg", task_id=0, agent_response=None,
                    har_path=tmp_path / "0" / "network.har", config={"__NOPE__": {"urls": []}}),
    ]
    with EvaluatorProcess.for_env(wv_env) as process:
        pid = process.pid
        assert pid is not None and process.identity.version == "1.2.3"
        verdicts = list(process.evaluate_all(requests))
        assert process.pid == pid  # the same process answered every request
    assert [v.id for v in verdicts] == ["right", "text", "none", "nohar", "badcfg"]
    assert [v.score for v in verdicts] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert verdicts[0].status is EvalStatus.SUCCESS and verdicts[2].status is EvalStatus.FAILURE
    assert verdicts[3].status is EvalStatus.ERROR and "not found" in str(verdicts[3].error_msg)
    assert "refused" in str(verdicts[4].error_msg)
    assert verdicts[0].evaluator.data_checksum == dataset.data_checksum
    assert verdicts[0].result["evaluators_results"][0]["score"] == 1.0
    assert _wait_gone(pid, 1.0)


def test_a_pool_forks_its_workers_from_the_first_and_survives_losing_one(
        tmp_path: Path, wv_env: BuiltEnv, dataset: WebDataset, local_cfg: WebEnvConfig) -> None:
    task = dataset.tasks[0]
    write_log(tmp_path / "0", expected_answer(task), [start_entry(task, local_cfg)])
    request = EvalRequest(id="", task_id=0, agent_response=expected_answer(task),
                          har_path=tmp_path / "0" / "network.har",
                          config=local_cfg.evaluator_environments())
    batch = [request.model_copy(update={"id": str(i)}) for i in range(6)]
    with EvaluatorPool.for_env(wv_env, workers=2) as pool:
        assert [v.score for v in pool.evaluate_all(batch)] == [1.0] * 6
        first, second = (process.pid for process in pool._processes)
        assert first is not None and second is not None and first != second
        assert _parent_of(second) == first  # forked: one start-up for both
        os.kill(second, 9)
        assert _wait_gone(second, 2.0)  # reaped by the first worker
        assert [v.score for v in pool.evaluate_all(batch)] == [1.0] * 6  # a fresh one took over
        assert pool._processes[1].pid not in (None, second)
    assert _wait_gone(first, 2.0) and _wait_gone(second, 2.0)


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_a_custom_dataset_is_scored_and_a_missing_one_refused(
        tmp_path: Path, wv_env: BuiltEnv, dataset: WebDataset, local_cfg: WebEnvConfig) -> None:
    raw = json.loads((dataset_dir(wv_env) / "webarena-verified.json").read_text())
    custom = next(t for t in raw if t["task_id"] == 0) | {"task_id": 9999}
    (tmp_path / "tasks.json").write_text(json.dumps([custom]))
    write_log(tmp_path / "9999", expected_answer(dataset.tasks[0]),
              [start_entry(dataset.tasks[0], local_cfg)])
    envs = local_cfg.evaluator_environments()
    base = {"task_id": 9999, "agent_response": expected_answer(dataset.tasks[0]),
            "har_path": tmp_path / "9999" / "network.har", "config": envs}
    with EvaluatorProcess.for_env(wv_env) as process:
        right = process.evaluate(EvalRequest(id="custom", dataset=tmp_path / "tasks.json", **base))
        gone = process.evaluate(EvalRequest(id="gone", dataset=tmp_path / "nope.json", **base))
        default = process.evaluate(EvalRequest(id="default", **base))
    assert right.score == 1.0
    assert gone.status is EvalStatus.ERROR and "does not exist" in str(gone.error_msg)
    assert default.status is EvalStatus.ERROR  # 9999 is not one of the package's tasks


def test_the_worker_dies_with_its_owner(wv_env: BuiltEnv, tmp_path: Path) -> None:
    owner = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        from benchwright.web.evaluation.evaluator import EvaluatorProcess
        process = EvaluatorProcess(Path({str(wv_env.python)!r}))
        process.start()
        print(process.pid, flush=True)
        os._exit(0)  # like kill -9: no cleanup at all
    """)
    out = subprocess.run([sys.executable, "-c", owner], capture_output=True, text=True,
                         timeout=120, check=True)
    pid = int(out.stdout.strip())
    assert _wait_gone(pid), f"worker {pid} outlived its owner"


def _fake_worker(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake_worker.py"
    script.write_text(textwrap.dedent("""
        import json, sys, time
        print(json.dumps({"ready": True, "version": "0", "evaluator_checksum": "e",
                          "data_checksum": "d"}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
    """) + textwrap.indent(textwrap.dedent(body), "    "))
    return script


def test_a_crashed_worker_becomes_an_error_verdict_and_is_restarted(tmp_path: Path) -> None:
    script = _fake_worker(tmp_path, """
        if request["task_id"] == 1:
            sys.stderr.write("boom\\n"); sys.exit(3)
        print(json.dumps({"id": request["id"], "result": {"score": 1.0, "status": "success"}}),
              flush=True)
    """)
    har_path = tmp_path / "x.har"
    with EvaluatorProcess(Path(sys.executable), worker=script) as process:
        first = process.pid
        crashed = process.evaluate(EvalRequest(id="a", task_id=1, har_path=har_path))
        fine = process.evaluate(EvalRequest(id="b", task_id=2, har_path=har_path))
        assert process.pid != first
    assert crashed.status is EvalStatus.ERROR and "died" in str(crashed.error_msg)
    assert "boom" in str(crashed.error_msg)
    assert (fine.status, fine.score, fine.evaluator.version) == (EvalStatus.SUCCESS, 1.0, "0")


def test_a_crash_in_a_pipelined_batch_fails_only_its_own_request(tmp_path: Path) -> None:
    script = _fake_worker(tmp_path, """
        if request["task_id"] == 3 and "crashed" not in sys.argv:
            sys.argv.append("crashed"); sys.exit(3)
        print(json.dumps({"id": request["id"], "result": {"score": request["task_id"],
                                                         "status": "success"}}), flush=True)
    """)
    requests = [EvalRequest(id=str(i), task_id=i, har_path=tmp_path / "x.har") for i in range(8)]
    with EvaluatorProcess(Path(sys.executable), worker=script) as process:
        verdicts = list(process.evaluate_all(requests, window=4))
    assert [v.id for v in verdicts] == [str(i) for i in range(8)]
    assert [v.status for v in verdicts].count(EvalStatus.ERROR) == 1
    assert verdicts[3].status is EvalStatus.ERROR
    assert [v.score for v in verdicts if v.status is EvalStatus.SUCCESS] == [0, 1, 2, 4, 5, 6, 7]


def test_a_pool_answers_in_request_order_from_several_workers(tmp_path: Path) -> None:
    script = _fake_worker(tmp_path, """
        time.sleep(0.01 * (request["task_id"] % 3))
        print(json.dumps({"id": request["id"], "result": {"score": 1.0, "status": "success",
                                                         "error_msg": str(os.getpid())}}),
              flush=True)
    """.replace("time.sleep", "import os; time.sleep"))
    requests = [EvalRequest(id=str(i), task_id=i, har_path=tmp_path / "x.har") for i in range(20)]
    pool = EvaluatorPool([EvaluatorProcess(Path(sys.executable), worker=script) for _ in range(2)])
    with pool:
        verdicts = list(pool.evaluate_all(requests))
        assert pool.identity.version == "0"
    assert [v.id for v in verdicts] == [str(i) for i in range(20)]
    assert len({v.error_msg for v in verdicts}) == 2  # both workers answered
    assert workers_for(1) == 1 and workers_for(10_000) == len(os.sched_getaffinity(0))


def test_a_hung_worker_times_out_and_is_killed(tmp_path: Path) -> None:
    script = _fake_worker(tmp_path, "time.sleep(60)")
    with EvaluatorProcess(Path(sys.executable), worker=script, task_timeout_s=0.5) as process:
        first = process.pid
        assert first is not None
        verdict = process.evaluate(EvalRequest(id="a", task_id=1, har_path=tmp_path / "x.har"))
        assert _wait_gone(first, 2.0)
    assert verdict.status is EvalStatus.ERROR and "did not answer" in str(verdict.error_msg)


def test_a_worker_that_cannot_start_is_an_infrastructure_error(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import sys; sys.stderr.write('no module named x\\n'); sys.exit(1)\n")
    with pytest.raises(InfrastructureError, match="no module named x"):
        EvaluatorProcess(Path(sys.executable), worker=script).start()


def test_the_environment_has_the_official_cli(wv_env: BuiltEnv) -> None:
    assert os.access(official_cli(wv_env), os.X_OK)
    assert har([])["log"]["entries"] == []
