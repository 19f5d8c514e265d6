"""The `--until-decided` section of a report: read from the run's `sequence.json` (every look,
and why the sequence stopped) and written as Markdown (docs/statistics.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from benchwright.errors import UserInputError
from benchwright.files.untrusted import decode_untrusted, read_untrusted_bytes
from benchwright.stats.sequential import Look, SequenceState

SEQUENCE_FILE = "sequence.json"


def read_sequence(run_dir: Path) -> SequenceState | None:
    """The run's sequence, or None when it was not run `--until-decided`. The file is read
    like anything in a run folder: without following links, size-capped, validated."""
    path = run_dir / SEQUENCE_FILE
    if not path.is_file() and not path.is_symlink():
        return None
    data = read_untrusted_bytes(path, what=SEQUENCE_FILE, max_bytes=16 * 2**20)
    try:
        return SequenceState.model_validate_json(decode_untrusted(data, path, what=SEQUENCE_FILE))
    except ValidationError as exc:
        raise UserInputError(f"not a benchwright sequence ({exc.error_count()} problems)",
                             path=path, hint="the run folder was changed by hand; restore "
                             "it or start a new run") from None


def sequence_lines(state: SequenceState) -> list[str]:
    """The section: what was asked, each look, and when and why it stopped."""
    s = state.settings
    budget = [f"{s.max_rounds} rounds"]
    if s.max_cost_usd is not None:
        budget.append(f"${s.max_cost_usd:g}")
    if s.max_seconds is not None:
        budget.append(f"{s.max_seconds / 60:g} minutes")
    margin = f"; no difference inside +-{100 * s.margin:g} points" if s.margin else ""
    per = "problem" if s.unit == "problems" else "task"
    clustered = "" if s.unit == "problems" else f", {s.unit} as clusters"
    lines = ["## Stopping when decided", "",
             f"`--until-decided` against {s.baseline} on {s.metric}{clustered}: one trial per "
             f"{per} a round, a look after each, alpha {s.alpha:g} spent evenly over the budget "
             f"({', '.join(budget)}){margin}. {_stopped(state)}", "",
             f"| round | {s.unit} | difference | interval | level | decision |",
             "|---|---|---|---|---|---|"]
    lines += [_row(look) for look in state.looks]
    return [*lines, ""]


def _stopped(state: SequenceState) -> str:
    if state.stopped is None:
        return "Not stopped yet: `--resume` continues the same sequence."
    last = state.looks[-1] if state.looks else None
    where = f" after round {last.round} ({last.elapsed_s / 60:.1f} minutes)" if last else ""
    return f"Stopped{where}: **{state.stopped}**."


def _row(look: Look) -> str:
    if look.difference is None or look.low is None or look.high is None:
        return (f"| {look.round} | {look.n_clusters} | - | too few to decide | "
                f"{1 - look.alpha_spent:.4f} | {look.decision} |")
    return (f"| {look.round} | {look.n_clusters} | {100 * look.difference:+.1f} | "
            f"[{100 * look.low:+.1f}, {100 * look.high:+.1f}] | {1 - look.alpha_spent:.4f} | "
            f"{look.decision} |")
