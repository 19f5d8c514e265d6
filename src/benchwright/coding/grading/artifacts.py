"""Where the files of a graded checkpoint go, and how they are written."""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOutput
from benchwright.files.atomic import write_json_atomic, write_text_atomic

EVALUATION_JSON = "evaluation.json"
GRADING_JSON = "grading.json"


def save_grade_output(output: GradeOutput, out_dir: Path) -> None:
    """Write evaluation.json (SCBench's shape), grading.json (ours) and the raw pytest output."""
    raw = out_dir / "evaluation"
    write_text_atomic(raw / "stdout.txt", output.stdout)
    write_text_atomic(raw / "stderr.txt", output.stderr)
    if output.report is not None:
        write_json_atomic(raw / "report.json", output.report)
    write_json_atomic(out_dir / GRADING_JSON, output.evaluation.model_dump(mode="json"))
    write_json_atomic(out_dir / EVALUATION_JSON, output.evaluation.to_scbench())


def load_grading(out_dir: Path) -> CheckpointEvaluation:
    """Read a saved grading.json back."""
    return CheckpointEvaluation.model_validate_json((out_dir / GRADING_JSON).read_text())
