"""The requirements escape: a requirement whose build backend is the attacker's own code.

`evilpkg @ file://WORKSPACE/evil` names an in-tree build backend, so installing the submission's
requirements runs it. It tries to read a host file, list /root, read the harness's API key from
/proc/*/environ, read checkpoint 2's hidden tests, and write its loot (and the hidden tests) into
the workspace, a folder outside it and the other environments of the cache. It must find nothing,
and nothing it wrote may reach a place the harness reads later.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.grader import GradeOptions, GradeOutput, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import get_runtime
from tests.helpers import CONFTEST, run_cli, write_problem
from tests.helpers.evil_package import write_evil_package

pytestmark = pytest.mark.sandbox

TOOLS = '''
import glob, os, shutil
found = []

def attempt(label, fn):
    try:
        found.append(f"LOOT-{label}={fn()}")
    except Exception as exc:
        found.append(f"LOOT-{label}!{type(exc).__name__}")

def environs():
    hits = []
    for path in glob.glob("/proc/*/environ") + [f"/proc/{os.getppid()}/environ"]:
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        hits += [v.decode(errors="replace") for v in data.split(b"\\0") if b"API_KEY=" in v]
    return "|".join(hits)

def spread(sinks, stolen):
    """Write the loot into every sink, the hidden test to `stolen`; returns the loot."""
    loot = "\\n".join(found)
    for sink in sinks:
        try:
            with open(os.path.join(sink, "loot.txt"), "w") as handle:
                handle.write(loot)
        except OSError:
            pass
    try:
        shutil.copy(HIDDEN, stolen)
    except OSError:
        pass
    return loot

'''

PAYLOAD = TOOLS + '''
attempt("secret", lambda: open(SECRET).read())
attempt("root", lambda: "|".join(sorted(os.listdir("/root"))))
attempt("environ", environs)
attempt("hidden", lambda: open(HIDDEN).read())
LOOT = spread([WORKSPACE, OUTSIDE, *glob.glob(CACHE + "/envs/*/")],
              os.path.join(WORKSPACE, "stolen_test_checkpoint_2.py"))
'''

# The attacker's own files name the canary file (to read it); they hold no loot.
OWN_FILES = {"backend.py", "evilpkg_hook.pth"}


class Scene:
    """The attack's setting: canaries, the problem, the workspace, the outside folder."""

    def __init__(self, root: Path) -> None:
        self.secret = f"HOST-SECRET-{secrets.token_hex(8)}"
        self.key = f"sk-canary-{secrets.token_hex(8)}"
        self.hidden = f"HIDDEN-ASSERTION-{secrets.token_hex(8)}"
        self.cache = root / "cache"
        self.outside = root / "outside"
        self.outside.mkdir()
        # In the harness's home: the backend reads it and looks for its name in /root.
        self.secret_file = Path.home() / f".benchwright-canary-{secrets.token_hex(8)}"
        self.secret_file.write_text(self.secret)
        self.problem_dir = write_problem(root / "problem", """
            name: escape
            entry_file: tool
            checkpoints:
              checkpoint_1: {version: 1, order: 1}
              checkpoint_2: {version: 1, order: 2}
        """, {"tests/conftest.py": CONFTEST,
              "tests/test_checkpoint_1.py": "def test_ok():\n    assert True\n",
              "tests/test_checkpoint_2.py": f"def test_hidden():\n    assert '{self.hidden}'\n"})
        self.workspace = root / "workspace"
        self.workspace.mkdir()
        (self.workspace / "tool.py").write_text("print('ok')\n")
        constants = (f"SECRET = {str(self.secret_file)!r}\n"
                     f"HIDDEN = {str(self.problem_dir / 'tests' / 'test_checkpoint_2.py')!r}\n"
                     f"WORKSPACE = {str(self.workspace)!r}\nOUTSIDE = {str(self.outside)!r}\n"
                     f"CACHE = {str(self.cache)!r}\n")
        # Run by every start of the built environment's python, wherever the harness starts it.
        pth = (f"import shutil; shutil.copy({str(self.secret_file)!r}, "
               f"{str(self.outside / 'pth-loot.txt')!r})")
        write_evil_package(self.workspace / "evil", constants + PAYLOAD, pth)
        (self.workspace / "requirements.txt").write_text(
            f"evilpkg @ file://{self.workspace / 'evil'}\n")
        self.before = sorted(p.name for p in self.workspace.iterdir())

    def environ(self) -> dict[str, str]:
        return {**os.environ, "OPENAI_API_KEY": self.key, "BENCHWRIGHT_CACHE_DIR": str(self.cache)}

    def assert_found_nothing(self, *also: Path) -> None:
        """No canary anywhere the attacker could write, and nothing written outside."""
        assert list(self.outside.iterdir()) == []
        assert sorted(p.name for p in self.workspace.iterdir()) == self.before
        canaries = (self.secret, self.key, self.hidden, self.secret_file.name)
        for folder in (self.cache, self.workspace, self.outside, *also):
            for path in (p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
                text = path.read_text(errors="replace")
                leaked = [c for c in canaries if c in text and path.name not in OWN_FILES]
                assert not leaked, f"{path} holds {leaked}"


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    made = Scene(tmp_path)
    try:
        yield made
    finally:
        made.secret_file.unlink(missing_ok=True)


def _ran_the_backend(packages: list[str]) -> bool:
    return any(p.startswith("evilpkg") for p in packages)


def _grade_in(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> GradeOutput:
    """Grade the scene's checkpoint with the canaries in the harness's own environment."""
    for name, value in scene.environ().items():
        monkeypatch.setenv(name, value)
    problem = load_problem(scene.problem_dir)
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], scene.workspace,
                            GradeOptions(runtime=get_runtime()))


def test_requirement_build_backend_finds_nothing_through_grade_checkpoint(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = _grade_in(scene, monkeypatch)
    # The backend did run (inside the sandbox), so the attack was really tried.
    assert _ran_the_backend(output.evaluation.grader.solution_env.packages)
    dumped = output.model_dump_json()
    assert scene.secret not in dumped and scene.key not in dumped and scene.hidden not in dumped
    scene.assert_found_nothing()
    # The backend may write into its own environment's folder, and nowhere else of the cache
    # (the tests' environment, built first, is not even there for it).
    own = scene.cache / "envs" / f"solution-{output.evaluation.grader.solution_env.key}"
    written = [p for p in scene.cache.rglob("loot.txt") if own not in p.parents]
    assert written == [] and list(own.glob("loot.txt"))


def test_requirement_build_backend_finds_nothing_through_eval_checkpoint(
    scene: Scene, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(scene.problem_dir.parent),
                   "--problem", scene.problem_dir.name, "--checkpoint", "checkpoint_1",
                   "--workspace", str(scene.workspace), "--out", str(out),
                   env=scene.environ())
    assert proc.returncode == 0, proc.stderr
    for leaked in (scene.secret, scene.key, scene.hidden):
        assert leaked not in proc.stdout + proc.stderr
    scene.assert_found_nothing(out)


def test_built_environment_is_the_harness_and_read_only_to_later_sandboxes(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = _grade_in(scene, monkeypatch)
    env = output.evaluation.grader.solution_env
    folder = next(scene.cache.glob(f"envs/solution-{env.key}"))
    owners = {p.lstat().st_uid for p in [folder, *folder.rglob("*")]}
    assert owners == {os.getuid()}
    writable = [p for p in folder.rglob("*") if not p.is_symlink() and p.stat().st_mode & 0o022]
    assert writable == []


# Through `run coding`: the agent itself writes the attack at checkpoint 1 (a relative path,
# which is what resolves in the grading build, whose working folder is the snapshot), then at
# checkpoint 2 looks for what the build left it: the loot, a copy of checkpoint 2's hidden test.
RUN_PAYLOAD = TOOLS + '''
def canaries():
    return "|".join(open(os.path.join(HOME, n)).read() for n in os.listdir(HOME)
                    if n.startswith(".benchwright-canary-"))

attempt("secret", canaries)
attempt("root", lambda: "|".join(sorted(os.listdir(HOME))))
attempt("environ", environs)
attempt("hidden", lambda: open(HIDDEN).read())
LOOT = spread([os.getcwd(), OUTSIDE, *glob.glob(RUN + "/**/", recursive=True)],
              "stolen_test_checkpoint_2.py")
'''


def test_requirement_build_backend_finds_nothing_through_run_coding(
    scene: Scene, tmp_path: Path
) -> None:
    from tests.helpers.probes import SOLVE_1, quick_problem, records

    problems = tmp_path / "problems"
    problem = quick_problem(problems, checkpoints=2)
    with (problem / "tests" / "test_checkpoint_2.py").open("a") as hidden:
        hidden.write(f"# {scene.hidden}\n")
    run = tmp_path / "run"
    constants = (f"HOME = {str(Path.home())!r}\nOUTSIDE = {str(scene.outside)!r}\n"
                 f"RUN = {str(run)!r}\n"
                 f"HIDDEN = {str(problem / 'tests' / 'test_checkpoint_2.py')!r}\n")
    attack = tmp_path / "attack"
    write_evil_package(attack / "evil", constants + RUN_PAYLOAD)
    # The script names no canary: the secret is found by listing $HOME, the key in /proc.
    (attack / "agent.sh").write_text(
        'if [ "$BENCHWRIGHT_CHECKPOINT" = checkpoint_1 ]; then\n'
        f"  {SOLVE_1}  cp -r {attack / 'evil'} evil\n"
        "  echo ./evil > requirements.txt\n"
        "else\n"
        "  cat loot.txt stolen_test_checkpoint_2.py 2>&1; grep -rs LOOT- . ; true\n"
        "fi\n")
    proc = run_cli("run", "coding", "--problems-dir", str(problems), "--out", str(run),
                   "--no-metrics", "--json", "--agent", "command", "--agent-command",
                   f"sh {attack / 'agent.sh'}", "--agent-mount", str(attack),
                   env=scene.environ())
    assert proc.returncode == 0, proc.stderr
    first = records(run)[0]
    assert first["passed"] is True, first
    grading = json.loads((run / "quick" / "trial_1" / "checkpoint_1" / "grading.json")
                         .read_text())
    # The backend did run (inside the build's sandbox), so the attack was really tried.
    assert _ran_the_backend(grading["grader"]["solution_env"]["packages"])
    for leaked in (scene.secret, scene.key, scene.hidden, scene.secret_file.name):
        assert leaked not in proc.stdout + proc.stderr
    scene.assert_found_nothing(run)
    assert not list(run.rglob("loot.txt")) and not list(run.rglob("stolen_*"))
