"""Web trials on an executor that shares no filesystem with the run (`--executor ray`).

A `RemoteTrialRunner` is an ordinary `TrialRunner` on the driver: the site workers, the site
locks and resets, the response adapter, the credential sweep and the journal stay where they are
(`runner.py`). It sends each request to a `HostedRunner` kept where jobs run (one per runner the
pool makes, so still one per site worker), with the files the agent reads there: its action
script, a prompt template file and a price table. The hosted runner plays the trial with the
registered runner in a private scratch folder and sends back the outcome and the trial folder
(network.har, history.json, browser files when kept); the driver unpacks them into the trial's
folder before anything else is written there. Cookies travel in the request itself.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.files.owned_temp import OwnedTemp
from benchwright.protocols import Executor
from benchwright.registry import TRIAL_RUNNERS
from benchwright.runs.file_tree import FileTree, pack_tree, replace_tree
from benchwright.web.browser.prompts import PROMPT_KINDS
from benchwright.web.trials.models import TrialOutcome, TrialRequest
from benchwright.web.trials.trial import attempt, fresh_dir


class HostedRunner:
    """Where jobs run: a registered trial runner and a private scratch folder."""

    def __init__(self, runner: str) -> None:
        self.runner = TRIAL_RUNNERS.get(runner)()
        self._owned = OwnedTemp("benchwright-site-")  # a kill -9: the next start's sweep
        self.scratch = self._owned.path

    def run_trial(self, request: TrialRequest, files: dict[str, bytes]
                  ) -> tuple[TrialOutcome, FileTree]:
        """The trial in scratch; its outcome and folder."""
        folder = fresh_dir(self.scratch / "trial")
        inputs = fresh_dir(self.scratch / "inputs")
        agent = request.agent.model_copy(update={
            field: _placed(inputs, field, data) for field, data in files.items()})
        local = request.model_copy(update={"trial_dir": folder, "agent": agent})
        return attempt(self.runner, local), pack_tree(folder)

    def close(self) -> None:
        """The runner's browser, and the scratch folder."""
        try:
            self.runner.close()
        finally:
            self._owned.close()


def _placed(folder: Path, field: str, data: bytes) -> Path | str:
    path = folder / field
    path.write_bytes(data)
    return str(path) if field == "prompt" else path  # as AgentSpec types each


class RemoteTrialRunner:
    """`TrialRunner` whose trials run on the executor's machines; their files land here."""

    def __init__(self, executor: Executor, runner: str) -> None:
        self._hosted = executor.host(HostedRunner, runner)

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """Send the request and what the agent reads; unpack what comes back."""
        outcome, tree = self._hosted.call("run_trial", request, agent_files(request))
        replace_tree(tree, request.trial_dir)
        assert isinstance(outcome, TrialOutcome)
        return outcome

    def close(self) -> None:
        """The hosted runner closes its browser and goes."""
        self._hosted.close()


def agent_files(request: TrialRequest) -> dict[str, bytes]:
    """The files named in the agent's settings, by setting: they are read where the trial runs."""
    agent = request.agent
    paths = {"script": agent.script, "pricing_file": agent.pricing_file,
             "prompt": None if agent.prompt in PROMPT_KINDS else Path(agent.prompt)}
    return {field: path.read_bytes() for field, path in paths.items() if path is not None}
