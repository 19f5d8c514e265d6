"""Packages a folder of official-layout task logs with webarena-verified's own submission code,
for datasets of our own (the local suite): the official `create-submission-pkg` command loads
only the 812 official tasks and leaves every other task out as unknown.

Run inside the evaluator's environment by file path (standard library and webarena_verified only):
    python package_worker.py DATASET_JSON RUN_OUTPUT_DIR OUTPUT_ROOT NAME (tar|folder)
It calls the library's `SubmissionHandler` exactly as `WebArenaVerified.create_submission` does,
with the dataset's task ids as the valid ones, and prints the package's path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    dataset, run_output, output_root, name, kind = argv
    from webarena_verified.api.internal.submission_handler import (  # type: ignore[import-not-found, unused-ignore]
        SubmissionHandler,
    )
    from webarena_verified.types.config import (  # type: ignore[import-not-found, unused-ignore]
        WebArenaVerifiedConfig,
    )

    config = WebArenaVerifiedConfig.model_validate({"test_data_file": Path(dataset)})
    ids = {int(task["task_id"]) for task in json.loads(Path(dataset).read_text("utf-8"))}
    handler = SubmissionHandler([Path(run_output)], config, ids)
    result = handler.create_submission(Path(output_root), no_tar=kind == "folder",
                                       custom_name=name)
    print(json.dumps({"output_path": str(result.output_path),
                      "packaged": sorted(result.tasks_packaged)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
