"""What `problems validate` concludes from a checkpoint's runs and from the problem folder."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus, TestCase
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.coding.validation.models import Finding, FindingKind
from benchwright.files.nofollow import TreeWalk

_MISSING = re.compile(r"(?:FileNotFoundError|No such file or directory)[^'\"\n]*['\"]([^'\"\n]+)")
_NETWORK = re.compile(
    r"name resolution|Name or service not known|nodename nor servname|Could not resolve host|"
    r"Network is unreachable|failed to (?:download|fetch)|Updating crates\.io index|"
    r"No matching distribution found|HTTPSConnectionPool|Connection refused \(os error", re.I)
# Programs that fetch what a build needs from a registry: tests running one need the network
# (dynamic_buffer's Rust cases run `cargo build` on a crate with dependencies from crates.io).
_FETCHERS = {"cargo": "crates.io", "npm": "the npm registry", "npx": "the npm registry",
             "yarn": "the npm registry", "pnpm": "the npm registry", "pip": "PyPI",
             "pip3": "PyPI", "uv": "PyPI", "go": "the Go module proxy", "gem": "RubyGems",
             "bundle": "RubyGems", "mvn": "Maven Central", "gradle": "Maven Central",
             "composer": "Packagist", "dotnet": "NuGet"}
# The grading scratch folder a path lies in (`.../grade-<pid>-<start>-<random>/`, then
# `workspace/` or the tests' `.evaluation_tests/`): a different folder every run, so a missing
# file is named from the workspace (or the tests folder) on.
_SCRATCH = re.compile(r"^/(?:[^/]+/)*grade-[^/]+/(?:workspace/)?")
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.S)
_ENTRYPOINT = re.compile(r"%%%[A-Z_]+:[^%]*%%%")
# Markdown code (fenced blocks, inline spans): where a spec shows the program's own template
# syntax (layered_config_synthesizer's `{{fragment:name}}`), not a placeholder left unfilled.
_CODE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`", re.S)
_MESSAGE_CHARS = 240
_LARGEST_COMPARED = 4 << 20  # bytes: data files beyond this are not test files


def run_findings(problem: ProblemConfig, checkpoint: CheckpointConfig,
                 runs: Sequence[tuple[str, CheckpointEvaluation]]) -> list[Finding]:
    """Findings from the graded runs: (condition label, evaluation) pairs in order."""
    evaluations = [e for _, e in runs]
    return [*_infrastructure(runs), *_outcomes(runs), *_near_timeout(problem, checkpoint,
                                                                    evaluations),
            *_text_findings(evaluations), *_requirements(evaluations)]


def _infrastructure(runs: Sequence[tuple[str, CheckpointEvaluation]]) -> list[Finding]:
    return [Finding(kind=FindingKind.INFRASTRUCTURE,
                    detail=f"run {i} ({label}): {e.status}: {e.infrastructure_reason or ''}")
            for i, (label, e) in enumerate(runs, start=1)
            if e.status is not GradeStatus.COMPLETED]


def _outcomes(runs: Sequence[tuple[str, CheckpointEvaluation]]) -> list[Finding]:
    """Tests failing in every completed run, and tests whose outcome changed between runs."""
    completed = [(i, label, e) for i, (label, e) in enumerate(runs, start=1)
                 if e.status is GradeStatus.COMPLETED]
    by_test: dict[str, list[tuple[int, str, TestCase]]] = {}
    for i, label, evaluation in completed:
        for case in evaluation.tests:
            by_test.setdefault(_test_name(case), []).append((i, label, case))
    findings = []
    for name, seen in by_test.items():
        failed = [(i, label, c) for i, label, c in seen if c.failing]
        if not failed:
            continue
        if len(failed) == len(completed):
            findings.append(Finding(kind=FindingKind.REFERENCE_FAILS, test=name,
                                    detail=_short(failed[0][2].message or failed[0][2].outcome)))
        else:
            runs_text = "; ".join(f"run {i} ({label}): {_short(c.message or c.outcome)}"
                                  for i, label, c in failed)
            findings.append(Finding(kind=FindingKind.FLAKY, test=name,
                                    detail=f"failed {len(failed)} of {len(completed)} runs: "
                                           f"{runs_text}"))
    return findings


def _near_timeout(problem: ProblemConfig, checkpoint: CheckpointConfig,
                  evaluations: Sequence[CheckpointEvaluation]) -> list[Finding]:
    timeout = problem.timeout_for(checkpoint)
    if timeout is None:
        return []
    slowest: dict[str, float] = {}
    for evaluation in evaluations:
        for case in evaluation.tests:
            name = _test_name(case)
            slowest[name] = max(slowest.get(name, 0.0), case.duration_s)
    return [Finding(kind=FindingKind.NEAR_TIMEOUT, test=name,
                    detail=f"slowest run {seconds:.1f} s of a {timeout:g} s timeout")
            for name, seconds in slowest.items() if seconds * 2 >= timeout]


def _text_findings(evaluations: Sequence[CheckpointEvaluation]) -> list[Finding]:
    """Missing files and programs and network needs, from failure messages and infrastructure
    reasons."""
    missing: dict[str, str] = {}
    network: dict[str, str] = {}
    for who, text in _messages(evaluations):
        for path in _MISSING.findall(text):
            missing.setdefault(_SCRATCH.sub("", path), who)
        hit = _NETWORK.search(text)
        if hit:
            network.setdefault(who, _short(_around(text, hit.start())))
    programs = {name: who for name, who in missing.items() if _is_program(name)}
    network.update({who: (f"runs `{name}`, which fetches what a build needs from "
                          f"{_FETCHERS[name]} (the sandbox has no network)")
                    for name, who in programs.items() if name in _FETCHERS and who not in network})
    return [*(Finding(kind=FindingKind.MISSING_DATA, test=who, detail=f"{path} is missing")
              for path, who in missing.items() if path not in programs),
            *(Finding(kind=FindingKind.MISSING_PROGRAM, test=who,
                      detail=f"`{name}` is not installed in the sandbox")
              for name, who in programs.items()),
            *(Finding(kind=FindingKind.NETWORK, test=who, detail=text)
              for who, text in network.items())]


def _is_program(name: str) -> bool:
    """A bare command name (`cargo`, `g++`): what a failed exec names, unlike a data file,
    which has a folder or an extension."""
    return "/" not in name and "." not in name and " " not in name


def _messages(evaluations: Sequence[CheckpointEvaluation]) -> Iterable[tuple[str, str]]:
    for evaluation in evaluations:
        if evaluation.infrastructure_reason:
            yield "(collection)", evaluation.infrastructure_reason
        for case in evaluation.tests:
            if case.message and case.failing:
                yield _test_name(case), case.message


def _requirements(evaluations: Sequence[CheckpointEvaluation]) -> list[Finding]:
    errors = {e.grader.solution_env.error for e in evaluations if e.grader.solution_env.error}
    return [Finding(kind=FindingKind.REQUIREMENTS, detail=_short(error)) for error in errors]


def static_findings(problem: ProblemConfig, checkpoint: CheckpointConfig) -> list[Finding]:
    """Findings from the folder alone: placeholders, tests an earlier checkpoint can read."""
    found = []
    spec = problem.spec_path(checkpoint.name)
    if spec.is_file():
        for hit in _placeholders(problem.render_spec(checkpoint.name)):
            found.append(Finding(kind=FindingKind.PLACEHOLDER, detail=f"{spec.name}: {hit}"))
    return [*found, *_visible_early(problem, checkpoint), *_unjailed(problem, checkpoint)]


def _unjailed(problem: ProblemConfig, checkpoint: CheckpointConfig) -> list[Finding]:
    """Test files of the checkpoint (and helpers) that import a module of the submission: the
    entry file's, or a top-level module of the checkpoint's reference that the tests folder does
    not have itself."""
    tests = problem.tests_dir
    own = {p.stem for p in tests.rglob("*.py")} | {p.name for p in tests.rglob("*") if p.is_dir()}
    reference = problem.solution_dir(checkpoint.name)
    theirs = {problem.entry_file} | ({p.stem for p in reference.glob("*.py")} | {
        p.name for p in reference.iterdir() if p.is_dir() and any(p.glob("*.py"))}
        if reference.is_dir() else set())
    wanted = set(ws.test_files_for(problem, checkpoint))
    files = [p for p in sorted(tests.rglob("*.py"))
             if not p.name.startswith("test_") or p.name in wanted]
    return [Finding(kind=FindingKind.UNJAILED, detail=(
                f"{path.relative_to(problem.path).as_posix()} imports {name} into pytest's own "
                "process: the submission's code runs there, outside the jail, and can read the "
                "tests folder"))
            for path in files for name in sorted(_imported(path) & (theirs - own))]


def _imported(path: Path) -> set[str]:
    """The top-level modules a Python file imports (statements and `import_module("x")`)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
                node.func, "id", None)) == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value.split(".")[0])
    return names


def _placeholders(spec: str) -> list[str]:
    """`{{ ... }}` outside Markdown code, and any SCBench `%%%...%%%` left unreplaced."""
    prose = _CODE.sub(" ", spec)
    return sorted({*_PLACEHOLDER.findall(prose), *_ENTRYPOINT.findall(spec)})


def _visible_early(problem: ProblemConfig, checkpoint: CheckpointConfig) -> list[Finding]:
    """This checkpoint's test file, or its test functions, in what the agent gets before it:
    an earlier spec, an earlier reference snapshot, or a static asset."""
    test_file = problem.tests_dir / f"test_{checkpoint.name}.py"
    if not test_file.is_file():
        return []
    body = test_file.read_bytes()
    defs = set(re.findall(rb"^def (test_\w+)\(", body, re.M))
    earlier = problem.checkpoints_through(checkpoint.name)[:-1]
    places = [*(("spec", problem.spec_path(c.name)) for c in earlier),
              *(("solution", problem.solution_dir(c.name)) for c in earlier),
              *(("asset", problem.path / a.path) for a in problem.static_assets.values())]
    found = []
    for kind, place in places:
        for path in _files(place):
            if _holds_tests(path, test_file.name, body, defs, in_spec=kind == "spec"):
                rel = path.relative_to(problem.path).as_posix()
                found.append(Finding(kind=FindingKind.TESTS_VISIBLE_EARLY, detail=(
                    f"{rel} ({kind} given to the agent before {checkpoint.name}) holds "
                    f"{test_file.name}'s tests")))
    return found


def _files(place: Path) -> list[Path]:
    if place.is_file():
        return [place]
    if not place.is_dir():
        return []
    return [place / e.rel for e in TreeWalk(place) if e.kind == "file"]


def _holds_tests(path: Path, name: str, body: bytes, defs: set[bytes], in_spec: bool) -> bool:
    if path.name == name:
        return True
    if path.stat().st_size > _LARGEST_COMPARED:
        return False
    data = path.read_bytes()
    if data == body:
        return True
    # A spec may name a test in prose; a file defining most of them is a copy.
    defined = set(re.findall(rb"^def (test_\w+)\(", data, re.M))
    return not in_spec and bool(defs) and len(defs & defined) * 2 > len(defs)


def _test_name(case: TestCase) -> str:
    return f"{Path(case.file).name}::{case.id}"


def _around(text: str, at: int) -> str:
    start = max(0, text.rfind("\n", 0, at) + 1)
    end = text.find("\n", at)
    return text[start:end if end != -1 else None]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"
