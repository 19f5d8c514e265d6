"""The viewer and counterfactual starts and the LLM judge: each coding run's `--start-from` is
shown; a head-to-head of a chain run and a reference-start run of the same problems presents
`compare_starts`' figures (those of `report --counterfactual`, hand-computed on the sloppy
agent's fixture); a judged run's checkpoint and run pages show the judge's flags per rubric item
and its cost, and an unjudged run's show nothing of the judge. In a real browser (Debian's
Chromium through Playwright), served and as a bundle."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchwright.view.read_model import ReadModel
from tests.helpers import run_cli
from tests.helpers.view_runs import JUDGE_COST, TITLE, XSS, Page, Runs, rid, settled


def _data(body: bytes | None) -> dict[str, Any]:
    assert body is not None
    text = body.decode()
    found: dict[str, Any] = json.loads(text[text.index(",") + 1: text.rindex(")")])
    return found


def _counterfactual(runs: Runs) -> dict[str, Any]:
    done = run_cli("report", str(runs.cf_chain), "--counterfactual", str(runs.cf_ref),
                   "--json")
    assert done.returncode == 0, done.stderr
    section: dict[str, Any] = json.loads(done.stdout)["counterfactual"]
    return section


def _flags(run: Path, checkpoint: str | None = None) -> list[dict[str, Any]]:
    """The judge's flags in rubric.jsonl, of one ledger_cli checkpoint or of the whole run."""
    found = []
    for path in sorted(run.glob("*/trial_1/*/rubric.jsonl")):
        if checkpoint is None or (path.parent.name == checkpoint and "ledger" in str(path)):
            found += [json.loads(line) for line in path.read_text().splitlines()]
    return found


def _money(value: float) -> str:
    """As the page writes an amount under one dollar."""
    return f"${value:.4f}"


def test_the_head_to_head_page_holds_compare_starts_figures(runs: Runs) -> None:
    model = ReadModel([runs.root])
    a, b = rid(runs.cf_chain), rid(runs.cf_ref)
    page = _data(model.file(f"cmp/{b}/{a}"))
    assert (page["a"]["start_from"], page["b"]["start_from"]) == ("reference", "chain")
    assert page["counterfactual"]["chain"] == "b"
    shown, cli = page["counterfactual"]["report"], _counterfactual(runs)
    assert shown["per_checkpoint"] == cli["per_checkpoint"] and shown["overall"] == cli["overall"]
    # two runs of the same start: no counterfactual
    assert _data(model.file(f"cmp/{rid(runs.oracle)}/{rid(runs.evil)}"))["counterfactual"] is None


def test_judge_data_only_for_judged_runs(runs: Runs) -> None:
    model = ReadModel([runs.root])
    cp = "cp/ledger_cli/1/checkpoint_1"
    assert _data(model.file(f"run/{rid(runs.oracle)}/{cp}"))["judge"] is None
    assert _data(model.file(f"run/{rid(runs.oracle)}"))["judge_criteria"] is None
    judged = _data(model.file(f"run/{rid(runs.judged)}/{cp}"))["judge"]
    assert judged["verdict"]["status"] == "judged"
    assert {c["criterion"]: c["flags"] for c in judged["criteria"]} == dict(
        Counter(f["criteria"] for f in _flags(runs.judged, "checkpoint_1")))


def test_judge_files_are_read_as_an_attacker_would_leave_them(runs: Runs,
                                                             tmp_path: Path) -> None:
    """A run folder may come from anyone: a rubric.jsonl that is a link is not followed, and a
    judge.json that is a FIFO or past its bound reads as not judged on its checkpoint's page."""
    import os
    import shutil

    from benchwright.errors import UserInputError

    copy = tmp_path / "runs" / "judged"
    shutil.copytree(runs.judged, copy, symlinks=True)
    cps = copy / "ledger_cli" / "trial_1"
    (cps / "checkpoint_1" / "rubric.jsonl").unlink()
    (cps / "checkpoint_1" / "rubric.jsonl").symlink_to("/etc/passwd")
    (cps / "checkpoint_2" / "judge.json").unlink()
    os.mkfifo(cps / "checkpoint_2" / "judge.json")
    model = ReadModel([copy.parent], live=False)
    first = _data(model.file(f"run/{rid(copy)}/cp/ledger_cli/1/checkpoint_1"))
    assert first["judge"]["flags"] == [] and "root:" not in json.dumps(first)
    assert _data(model.file(f"run/{rid(copy)}/cp/ledger_cli/1/checkpoint_2"))["judge"] is None
    page = _data(model.file(f"run/{rid(copy)}"))
    assert page["report"]["judge"]["n_judged"] == 2  # checkpoints 1 and 3
    assert page["judge_criteria"]["n_judged"] == 2
    assert sum(c["flags"] for c in page["judge_criteria"]["criteria"]) == len(
        _flags(copy, "checkpoint_3"))  # checkpoint 1's link was not followed
    with (cps / "checkpoint_3" / "judge.json").open("r+b") as big:
        big.truncate(300 * 2**20)  # sparse: past the reader's 256 MiB bound
    third = ReadModel([copy.parent], live=False).file(f"run/{rid(copy)}/cp/ledger_cli/1/"
                                                      "checkpoint_3")
    assert _data(third)["judge"] is None
    # the run page is the report's, which refuses such a run as `benchwright report` does
    with pytest.raises(UserInputError, match=r"judge\.json is larger than"):
        ReadModel([copy.parent], live=False).file(f"run/{rid(copy)}")


def _table(tab: Any, table_id: str) -> list[list[str]]:
    rows = tab.locator(f"#{table_id} tbody tr")
    return [[c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
            for i in range(rows.count())]


def _start_rows(cf: dict[str, Any]) -> list[list[str]]:
    """The counterfactual table as the page writes it (ciText: value [low, high] †)."""
    def ci(e: dict[str, Any] | None, sign: bool = False) -> str:
        if e is None:
            return ""
        plus = "+" if sign and e["value"] > 0 else ""
        return (f"{plus}{100 * e['value']:.1f}% [{100 * e['low']:.1f}, {100 * e['high']:.1f}]"
                + (" †" if 0 < e["n_clusters"] < 6 else ""))
    rows = []
    for r in [*cf["per_checkpoint"], cf["overall"]]:
        c = r["counts"]
        rows.append([r["checkpoints"] if r["checkpoints"] != "2+" else "2+ (overall)",
                     str(r["n_problems"]), str(c["pairs"]), ci(r["chain"]), ci(r["reference"]),
                     ci(r["difference"], sign=True), r["verdict"],
                     ci(r["attributable"]) or ("same start" if r["checkpoints"] == "1"
                                              else "no chain failure"),
                     f"{c['both_solved']} · {c['chain_only']} · {c['reference_only']} · "
                     f"{c['neither']}"])
    return rows


@pytest.mark.parametrize("mode", ["served", "bundle"])
def test_counterfactual_head_to_head_in_the_browser(page: Page, viewer: str, bundle: Path,
                                                    runs: Runs, mode: str) -> None:
    base = viewer if mode == "served" else (bundle / "index.html").as_uri()
    chain, ref = rid(runs.cf_chain), rid(runs.cf_ref)
    tab = settled(page, f"{base}#/cmp/{chain}/{ref}")
    assert tab.is_visible("#s-chain-against-reference-starts")
    rows = _table(tab, "counterfactual")
    expected = _start_rows(_counterfactual(runs))
    # the verdict cell reads "too few problems to tell (n=1)" for one problem, as the reports say
    assert [r[:6] + r[7:] for r in rows] == [r[:6] + r[7:] for r in expected]
    assert all(r[6] == "too few problems to tell (n=1)" for r in rows)
    # by hand (sloppy_agent.sh on kv_server): chain S F -, reference start S S F; from
    # checkpoint 2 on, only checkpoint 2 is paired (the chain never reached 3): chain 0/1,
    # reference 1/1, its one chain failure inherited
    assert rows[-1][:6] == ["2+ (overall)", "1", "1", "0.0% [0.0, 0.0] †",
                            "100.0% [100.0, 100.0] †", "+100.0% [100.0, 100.0] †"]
    assert rows[-1][7:] == ["100.0% [100.0, 100.0] †", "0 · 0 · 1 · 0"]
    assert "1 checkpoint(s) one run never reached: not counted" in tab.inner_text("main")
    heads = tab.inner_text(".cmpcols")
    assert "start from chain" in heads and "start from reference" in heads
    assert "A (cf_chain) continued the agent's own code" in tab.inner_text("main")
    assert page.errors == []
    # the other way round, B is the chain
    tab = settled(page, f"{base}#/cmp/{ref}/{chain}")
    assert "B (cf_chain) continued the agent's own code" in tab.inner_text("main")
    assert _table(tab, "counterfactual") == rows
    # two runs of one start: no such section
    tab = settled(page, f"{base}#/cmp/{rid(runs.oracle)}/{rid(runs.evil)}")
    assert not tab.query_selector("#s-chain-against-reference-starts")
    assert page.errors == []


def test_every_run_shows_its_start(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, viewer + "#/")
    for run, start in ((runs.cf_ref, "reference"), (runs.cf_chain, "chain"),
                       (runs.oracle, "chain")):
        row = tab.locator("#runs tbody tr", has_text=f"/{run.name}").inner_text()
        assert f"start from {start}" in row
    tab = settled(page, f"{viewer}#/run/{rid(runs.cf_ref)}")
    assert "start from reference" in tab.inner_text(".ident")
    tab = settled(page, f"{viewer}#/run/{rid(runs.cf_ref)}/cp/kv_server/1/checkpoint_2")
    assert "started from the reference solution of checkpoint_1" in tab.inner_text(".ident")
    assert "Against the reference solution it started from" in tab.inner_text("main")
    # the change shown is the one diff.json measured: from the reference start
    diff = json.loads((runs.cf_ref / "kv_server" / "trial_1" / "checkpoint_2" / "diff.json")
                      .read_text())
    assert tab.locator(".filehead").count() == sum(len(diff[k]) for k in
                                                    ("added", "removed", "modified"))
    tab = settled(page, f"{viewer}#/run/{rid(runs.cf_chain)}/cp/kv_server/1/checkpoint_2")
    assert "started from" not in tab.inner_text(".ident")
    assert page.errors == []


@pytest.mark.parametrize("mode", ["served", "bundle"])
def test_judge_results_on_the_checkpoint_and_run_pages(page: Page, viewer: str, bundle: Path,
                                                       runs: Runs, mode: str) -> None:
    base = viewer if mode == "served" else (bundle / "index.html").as_uri()
    run = runs.judged
    folder = run / "ledger_cli" / "trial_1" / "checkpoint_2"
    verdict = json.loads((folder / "judge.json").read_text())
    tab = settled(page, f"{base}#/run/{rid(run)}/cp/ledger_cli/1/checkpoint_2")
    section = tab.inner_text("#s-llm-judge + dl")
    assert _money(verdict["cost_usd"]) in section and "fake-judge" in section
    assert verdict["cost_usd"] == pytest.approx(verdict["requests"] * JUDGE_COST)
    flags = _flags(run, "checkpoint_2")
    shown = {r[0]: (int(r[3]), int(r[4]), int(r[5])) for r in _table(tab, "cp-judge-criteria")}
    assert shown == {c: (sum(f["criteria"] == c for f in flags),
                         sum(f["criteria"] == c and "carried_over" not in f for f in flags),
                         sum(f["criteria"] == c and "carried_over" in f for f in flags))
                     for c in {f["criteria"] for f in flags}}
    # by hand (tests/helpers/view_runs.py): checkpoint 2 raised catch_all_handler again and
    # carried comment_restates_code 20-22 from checkpoint 1 (its lines unchanged)
    assert shown["catch_all_handler"] == (1, 1, 0)
    assert shown["comment_restates_code"] == (1, 0, 1)
    assert len(_table(tab, "judge-flags")) == len(flags)
    assert "LLM judge" in tab.inner_text(".cards")
    # the judge's explanations are text: a planted script shows literally
    tab = settled(page, f"{base}#/run/{rid(run)}/cp/ledger_cli/1/checkpoint_1")
    assert XSS in tab.inner_text("#judge-flags") and tab.title() == TITLE
    # the run page: flags per rubric item over every judged checkpoint, and the judge's cost
    report = json.loads(run_cli("report", str(run), "--json").stdout)["judge"]
    tab = settled(page, f"{base}#/run/{rid(run)}")
    cards = tab.inner_text("#s-llm-judge + .cards")
    assert _money(report["cost_usd"]) in cards and "3 of 6" in cards  # ledger_cli only
    every = Counter(f["criteria"] for f in _flags(run))
    assert {r[0]: int(r[3]) for r in _table(tab, "judge-criteria")} == dict(every)
    assert page.errors == []


def test_an_unjudged_checkpoint_shows_nothing_of_the_judge(page: Page, viewer: str,
                                                           runs: Runs) -> None:
    for route in (f"#/run/{rid(runs.oracle)}", f"#/run/{rid(runs.oracle)}/cp/ledger_cli/1/"
                  "checkpoint_2", f"#/run/{rid(runs.judged)}/cp/kv_server/1/checkpoint_2"):
        tab = settled(page, viewer + route)
        assert not tab.query_selector("#s-llm-judge")
        assert "LLM judge" not in tab.inner_text("main")
    assert page.errors == []
