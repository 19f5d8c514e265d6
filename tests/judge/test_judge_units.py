"""The LLM judge's parts on their own: rubrics (ours and SCBench's format), templates, batches,
reply validation, carry-forward, agreement, the cost limit, requests with retries and the cache,
and the rubric metrics in a checkpoint's quality."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import UserInputError
from benchwright.files.redaction import Redactor
from benchwright.judge.agreement import (
    agreement_table,
    alpha,
    consensus,
    group_flags,
    stability,
    support_counts,
)
from benchwright.judge.batching import (
    SizeLimits,
    SnapshotTooLarge,
    SourceFile,
    batch_files,
    judged_files,
)
from benchwright.judge.budget import Budget
from benchwright.judge.cache import VerdictCache
from benchwright.judge.carry import carry_forward, line_map, patch_between
from benchwright.judge.flags import RubricFlag, count_flags
from benchwright.judge.models import JudgeSettings, SupportCounts, TokenUsage
from benchwright.judge.prompt import load_templates, render_criteria, render_prefix
from benchwright.judge.providers import Exchange, Refused, Transient, make_client
from benchwright.judge.requests import Request, Requester
from benchwright.judge.rubric import load_rubric
from benchwright.judge.verdicts import Flag, InvalidReply, check_flags, parse_payload
from benchwright.metrics.erosion import QualitySummary, RubricCounts, with_rubric

# A rubric in SCBench's format (its fields and types; our words).
SCBENCH_RUBRIC = "\n".join(json.dumps(item) for item in [
    {"name": "loud_comment", "category": "noise", "type": "verbosity",
     "description": "A comment that repeats the code.",
     "positive_indicators": ["# add one above x += 1"], "negative_indicators": ["# why"]},
    {"name": "silent_except", "category": "errors", "type": "erosion",
     "description": "An exception dropped on the floor.",
     "positive_indicators": ["except: pass"], "negative_indicators": []},
    {"name": "wide_except", "category": "errors", "type": "erosion",
     "description": "Catching everything.", "examples": ["except Exception:"]},
]).replace("}\n{\"name\": \"wide", "}\n\n{\"name\": \"wide")  # a blank line is skipped
# Templates in SCBench's shape: the prefix gets `spec` and `files`, the criteria part `items`.
SCBENCH_PREFIX = """Grade these files.
<spec>
{{ spec.strip() }}
</spec>
{% for file in files %}
=== FILE: {{ file.file_path }} ===
```{{ file.language }}
{{ file.file_content.strip() }}
```
=== END FILE ===
{% endfor %}
Criteria follow:"""
SCBENCH_CRITERIA = """{% for item in items %}
[{{ item.name }}] {{ item.description }}
{% for indicator in item.positive_indicators -%}
+ {{ indicator }}
{% endfor -%}
{% for example in item.examples -%}
e.g. {{ example }}
{% endfor -%}
{% endfor %}"""


def test_our_rubric_has_verbosity_and_erosion_items_in_categories() -> None:
    rubric = load_rubric(None)
    assert rubric.source == "bundled:benchwright.jsonl" and len(rubric.items) >= 15
    assert {i.type for i in rubric.items} == {"verbosity", "erosion"}
    categories = rubric.categories()
    assert len(categories) >= 5 and all(len(items) >= 2 for items in categories.values())
    assert all(i.positive_indicators and i.negative_indicators for i in rubric.items)


def test_a_rubric_and_templates_in_scbench_format_load_and_render(tmp_path: Path) -> None:
    (tmp_path / "rubric.jsonl").write_text(SCBENCH_RUBRIC)
    (tmp_path / "prefix.j2").write_text(SCBENCH_PREFIX)
    (tmp_path / "criteria.j2").write_text(SCBENCH_CRITERIA)
    rubric = load_rubric(tmp_path / "rubric.jsonl")
    assert [i.name for i in rubric.items] == ["loud_comment", "silent_except", "wide_except"]
    assert list(rubric.categories()) == ["noise", "errors"]
    templates = load_templates(tmp_path / "prefix.j2", tmp_path / "criteria.j2")
    files = [SourceFile("app.py", "x = 1\nx += 1\n", 2), SourceFile("lib/u.py", "pass\n", 1)]
    prefix = render_prefix(templates, "  Build it.\n", files)
    assert "<spec>\nBuild it.\n</spec>" in prefix
    assert "=== FILE: app.py ===\n```python\n1: x = 1\n2: x += 1\n```" in prefix
    assert "=== FILE: lib/u.py ===" in prefix
    criteria = render_criteria(templates, rubric.categories()["errors"])
    assert "[silent_except] An exception dropped on the floor." in criteria
    assert "+ except: pass" in criteria and "e.g. except Exception:" in criteria


@pytest.mark.parametrize(("text", "message"), [
    ('{"name": "a"', "rubric line 1: not JSON"),
    ('{"name": "a", "category": "c", "type": "verbosity"}', "rubric line 1: description"),
    ('{"name": "a", "category": "c", "type": "style", "description": "d"}', "line 1: type"),
    ("\n\n", "no items"),
    ('{"name": "a", "category": "c", "type": "erosion", "description": "d"}\n' * 2,
     "more than once: a"),
])
def test_a_malformed_rubric_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "r.jsonl").write_text(text)
    with pytest.raises(UserInputError, match=message):
        load_rubric(tmp_path / "r.jsonl")


def test_templates_render_in_a_sandbox(tmp_path: Path) -> None:
    (tmp_path / "evil.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    templates = load_templates(tmp_path / "evil.j2", None)
    with pytest.raises(UserInputError, match="is refused: access to attribute"):
        render_prefix(templates, "spec", [])


def _files(*sizes: int) -> list[SourceFile]:
    return [SourceFile(f"f{i}.py", "x\n" * n, n) for i, n in enumerate(sizes)]


def test_batches_follow_scbench_sizes() -> None:
    names = [[f.path for f in b] for b in batch_files(_files(600, 10, 10, 10, 10, 10, 10, 501))]
    assert names == [["f0.py"], ["f7.py"], ["f1.py", "f2.py", "f3.py", "f4.py", "f5.py"],
                     ["f6.py"]]
    names = [[f.path for f in b] for b in batch_files(_files(400, 400, 300, 500))]
    assert names == [["f0.py", "f1.py"], ["f2.py", "f3.py"]]  # 1,000 lines at most


def test_judged_files_leave_out_links_caches_and_too_much(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print(1)\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "dep.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    outside = tmp_path.parent / "outside_secret.py"
    outside.write_text("SECRET = 1\n")
    (tmp_path / "link.py").symlink_to(outside)
    assert [f.path for f in judged_files(tmp_path, ".py")] == ["main.py"]
    with pytest.raises(SnapshotTooLarge, match="over the judge's limit of 0"):
        judged_files(tmp_path, ".py", SizeLimits(max_lines=0))


def test_a_reply_is_validated_and_bad_flags_dropped_and_counted() -> None:
    reply = parse_payload('```json\n{"flags": [\n'
                          '{"criteria": "a", "file_name": "x.py", "start": 1, "end": 2, '
                          '"confidence": 3, "explanation": null},\n'
                          '{"criteria": "zzz", "file_name": "x.py", "start": 1, "end": 1, '
                          '"confidence": 3, "explanation": null},\n'
                          '{"criteria": "a", "file_name": "y.py", "start": 1, "end": 1, '
                          '"confidence": 3, "explanation": null},\n'
                          '{"criteria": "a", "file_name": "x.py", "start": 3, "end": 2, '
                          '"confidence": 3, "explanation": null},\n'
                          '{"criteria": "a", "file_name": "x.py", "start": 5, "end": 11, '
                          '"confidence": 3, "explanation": null}]}\n```')
    checked = check_flags(reply, {"a"}, {"x.py": 10})
    assert [(f.start, f.end) for f in checked.flags] == [(1, 2)]
    assert checked.dropped == {"unknown_criterion": 1, "unknown_file": 1, "outside_lines": 2}


@pytest.mark.parametrize("payload", [
    "no flags here", '{"flag": []}', '{"flags": [{"criteria": "a"}]}', None,
    {"flags": [{"criteria": "a", "file_name": "x", "start": 1, "end": 1, "confidence": 9}]},
])
def test_a_reply_of_the_wrong_shape_is_invalid_not_empty(payload: Any) -> None:
    with pytest.raises(InvalidReply):
        parse_payload(payload)


def _rubric_flag(name: str, start: int, end: int, file: str = "a.py",
                 carried: str | None = None) -> RubricFlag:
    return RubricFlag(criteria=name, start=start, end=end, confidence=3, file_name=file,
                      category="c", type="erosion", carried_over=carried)


def test_line_map_follows_the_diff_line_by_line() -> None:
    before = "\n".join(f"l{i}" for i in range(1, 31))
    after = before.replace("l5\n", "l5\nnew\nnew\n").replace("l12\n", "").replace(
        "l20", "changed")
    lines = line_map(patch_between(before, after))
    assert [lines.new_line(n) for n in (1, 5, 6, 11, 12, 13, 19, 20, 21, 30)] == \
        [1, 5, 8, 13, None, 14, 20, None, 22, 31]
    assert lines.moved_span(6, 9) == (8, 11)  # shifted by the insertion
    assert lines.moved_span(4, 7) is None  # lines inserted inside it
    assert lines.moved_span(11, 13) is None  # a line removed inside it
    assert line_map(None).moved_span(3, 4) == (3, 4)


def test_carry_forward_keeps_unchanged_flags_not_raised_again() -> None:
    before = "\n".join(f"l{i}" for i in range(1, 21))
    after = "new\n" + before.replace("l10", "edited")
    previous = [_rubric_flag("a", 2, 3), _rubric_flag("b", 10, 10), _rubric_flag("c", 15, 16),
                _rubric_flag("d", 4, 4, carried="checkpoint_1"), _rubric_flag("e", 1, 1, "gone.py")]
    current = [_rubric_flag("c", 17, 17)]  # c moved to 16-17: raised again (start within 2)
    carried = carry_forward(previous, current, {"a.py": line_map(patch_between(before, after))},
                            "checkpoint_2")
    assert [(f.criteria, f.start, f.end, f.carried_over) for f in carried] == [
        ("a", 3, 4, "checkpoint_2"), ("d", 5, 5, "checkpoint_1")]


def _flag(name: str, start: int, end: int | None = None) -> Flag:
    return Flag(criteria=name, file_name="a.py", start=start, end=end or start, confidence=3)


def test_samples_agree_by_majority_and_krippendorffs_alpha() -> None:
    samples = [[_flag("a", 1, 2), _flag("b", 5)], [_flag("a", 2, 3)], [_flag("a", 1, 2)]]
    groups = group_flags(samples)
    assert [(g.first.criteria, sorted(g.samples)) for g in groups] == [("a", [0, 1, 2]),
                                                                      ("b", [0])]
    assert consensus(groups, 3) == [samples[0][0]]
    counts = support_counts(samples, groups, ["a", "b", "z"], {"a.py": 10}, 3)
    # a: line 1 by samples 0 and 2, line 2 by all three, line 3 by sample 1
    assert counts["a"] == SupportCounts(lines=[7, 1, 1, 1], flags=[0, 0, 0, 1])
    # by hand: n = 30, n1 = 6, o01 = (1*2 + 2*1 + 0)/2 = 2; alpha = 1 - 29 * 2 / (24 * 6)
    assert alpha(counts["a"]) == pytest.approx(1 - 29 * 2 / (24 * 6), abs=1e-4)
    assert stability(counts["a"]) == 1.0
    assert stability(counts["b"]) == pytest.approx(1 / 3, abs=1e-4)
    assert alpha(counts["z"]) is None and stability(counts["z"]) is None
    table = {row.criterion: row for row in agreement_table([counts, counts])}
    assert table["a"].lines == 20 and table["a"].flags == 2 and table["a"].flags_kept == 2


def test_the_budget_stops_before_the_limit() -> None:
    budget, made = Budget(0.035), 0
    while (reserved := budget.acquire()) is not None:
        budget.settle(reserved, 0.01)
        made += 1
    assert made == 3 and budget.spent == pytest.approx(0.03) and budget.stop_reason
    assert Budget(0).acquire() is None
    unknown = Budget(1.0)
    unknown.settle(unknown.acquire() or 0.0, None)
    assert unknown.acquire() is None and "unknown" in (unknown.stop_reason or "")
    priced = Budget(0.05)  # the prompt alone would cost more than the limit
    assert priced.acquire(floor=0.06) is None


class _Client:
    """Answers from a list: an Exchange, or an exception to raise."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers, self.calls = answers, 0

    def ask(self, prefix: str, criteria: str, schema: dict[str, Any]) -> Exchange:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, Exception):
            raise answer
        return Exchange(payload=answer, raw={"n": self.calls}, usage=TokenUsage(input_tokens=10),
                        cost_usd=0.5)


def _request(key: str = "k") -> Request:
    return Request(key=key, batch_key="a.py", category="c", sample=0, prefix="p",
                   criteria="c", schema={}, criteria_names=frozenset({"a"}),
                   file_lines={"a.py": 5})


def _requester(client: _Client, tmp_path: Path, budget: Budget | None = None) -> Requester:
    return Requester(client, VerdictCache(tmp_path), budget or Budget(None), "m", retries=2,
                     backoff_s=0.0, redactor=Redactor({}), sleep=lambda _s: None)


GOOD = '{"flags": [{"criteria": "a", "file_name": "a.py", "start": 1, "end": 1, ' \
       '"confidence": 2, "explanation": null}]}'


def test_a_request_retries_transients_asks_once_more_and_caches(tmp_path: Path) -> None:
    client = _Client([Transient("429"), "not json", GOOD])
    outcome = _requester(client, tmp_path).run(_request())
    assert outcome.status == "ok" and len(outcome.flags) == 1 and outcome.invalid_retries == 1
    assert outcome.cost_usd == 1.0 and client.calls == 3
    again = _requester(client, tmp_path).run(_request())
    assert again.cached and again.status == "ok" and client.calls == 3 and again.paid_now == 0


def test_a_request_that_keeps_failing_is_an_error_not_zero_flags(tmp_path: Path) -> None:
    infra = _requester(_Client([Transient("HTTP 503")]), tmp_path).run(_request("a"))
    assert infra.status == "infra" and "after 3 attempts" in (infra.error or "")
    invalid = _requester(_Client(["nope"]), tmp_path).run(_request("b"))
    assert invalid.status == "invalid" and invalid.made == 2 and invalid.flags == []
    budget = Budget(None)
    fatal = _requester(_Client([Refused("HTTP 401", fatal=True)]), tmp_path, budget).run(
        _request("c"))
    assert fatal.status == "halted" and budget.fatal
    assert not VerdictCache(tmp_path).path("b").exists()


def test_rubric_metrics_enter_the_quality_once() -> None:
    base = QualitySummary(values={"loc": 100.0, "bw_verbosity": 0.5, "verbosity": 0.3},
                          delta={"loc": 10.0})
    counts = RubricCounts(total_flags=5, carried_over=2, verbosity_flags=1, erosion_flags=4,
                          per_loc=0.05, new_violations_per_loc=0.03)
    previous = with_rubric(QualitySummary(values={"loc": 90.0, "bw_verbosity": 0.4}), count_flags(
        [_rubric_flag("a", 1, 1)], 90.0), None)
    judged = with_rubric(base, counts, previous)
    assert judged.values["bw_verbosity"] == pytest.approx(0.55)
    assert judged.values["verbosity"] == 0.3  # SCBench's (scb-check's) has no rubric part
    assert judged.values["bw_verbosity_static"] == 0.5 and judged.values["rubric_total_flags"] == 5
    assert judged.delta["rubric_total_flags"] == 4 and "new_violations_per_loc" not in judged.delta
    assert with_rubric(judged, counts, previous) == judged  # judging again replaces, never adds


@pytest.mark.parametrize(("protocol", "module"), [("openai", "openai.resources.chat"),
                                                   ("anthropic", "anthropic.resources.messages")])
def test_a_client_resolves_its_endpoint_before_any_request(protocol: str, module: str) -> None:
    """The SDKs import an endpoint's module on first use; made by the first requests, that import
    held every other thread on the import lock (half a second of a 4 s judging)."""
    settings = JudgeSettings(model="m", protocol=protocol, base_url="http://127.0.0.1:9/v1")
    client = make_client(settings, environ={})
    assert type(client.endpoint).__module__.startswith(module)  # type: ignore[attr-defined]


_BUILT = """
import sys
from pydantic._internal._mock_val_ser import MockCoreSchema
from benchwright.judge.models import JudgeSettings
from benchwright.judge.providers import _models_in, make_client
client = make_client(JudgeSettings(model="m", protocol=sys.argv[1],
                                   base_url="http://127.0.0.1:9/v1"), environ={})
module, name = client.reply_model
todo, seen = [getattr(__import__(module, fromlist=[name]), name)], set()
while todo:
    model = todo.pop()
    if model not in seen:
        seen.add(model)
        todo.extend(m for f in model.model_fields.values() for m in _models_in(f.annotation))
deferred = [m.__name__ for m in seen
            if isinstance(m.__dict__.get("__pydantic_core_schema__"), MockCoreSchema)]
print(len(seen), deferred)
"""


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_client_builds_its_reply_models_before_any_request(protocol: str) -> None:
    """The SDKs defer building their models to first use; built by two requests' threads at
    once, one of them read the model half-built (no schema of its own) and failed with
    "BaseModel cannot be instantiated directly". Checked in a new interpreter: this one may
    have built them already."""
    done = subprocess.run([sys.executable, "-c", _BUILT, protocol], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, deferred = done.stdout.split(" ", 1)
    assert int(count) > 3 and deferred.strip() == "[]", done.stdout


def test_a_rubric_nested_too_deeply_is_one_error(tmp_path: Path) -> None:
    """`[` x 5000 as a rubric line (issue 26): one error naming the file and line, not a
    RecursionError."""
    from benchwright.errors import UserInputError
    from benchwright.judge.rubric import load_rubric

    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(UserInputError, match="rubric line 1: nested too deeply"):
        load_rubric(path)


def test_an_endpoint_that_takes_no_connection_stops_the_judging_at_once(tmp_path: Path) -> None:
    """The server went away mid-judging (connection refused): one request spends its retries,
    then the judging stops with one reason; the others are not tried at all."""
    budget = Budget(None)
    client = _Client([Transient("APIConnectionError: Connection error.", unreachable=True)])
    requester = _requester(client, tmp_path, budget)
    first = requester.run(_request("a"))
    assert first.status == "halted" and "cannot be reached" in (budget.stop_reason or "")
    assert client.calls == 3
    rest = [requester.run(_request(k)) for k in "bcd"]
    assert {o.status for o in rest} == {"halted"} and client.calls == 3
    # a timeout or a dropped connection is not that: the others are still tried
    slow = _Client([Transient("APITimeoutError: Request timed out.")])
    other = _requester(slow, tmp_path / "t")
    assert [other.run(_request(k)).status for k in "ef"] == ["infra", "infra"]
    assert slow.calls == 6


def test_the_sdk_errors_that_mean_no_connection(tmp_path: Path) -> None:
    import httpx
    import openai

    from benchwright.judge.providers import _translated

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")

    def error(cause: BaseException) -> Exception:
        exc = openai.APIConnectionError(request=request)
        exc.__cause__ = cause
        return exc

    refused = httpx.ConnectError("[Errno 111] Connection refused")
    refused.__context__ = ConnectionRefusedError(111, "Connection refused")
    assert isinstance(t := _translated(openai, error(refused)), Transient) and t.unreachable
    reset = httpx.ReadError("[Errno 104] Connection reset by peer")
    assert not _translated(openai, error(reset)).unreachable  # type: ignore[attr-defined]
    timeout = openai.APITimeoutError(request=request)
    assert not _translated(openai, timeout).unreachable  # type: ignore[attr-defined]
