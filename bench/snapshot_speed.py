"""Snapshot speed: `take_snapshot` + the diff's file hashes on many small files, against `cp -a`.

An agent that leaves 200,000 empty files must not stall a run. Times, in one run on one disk:
`cp -a` of the workspace (the reference), `take_snapshot` (the no-follow copy a run makes), and
`files_of` (what the diff reads). Prints each median and the ratio of the snapshot to `cp -a`.

Usage: python bench/snapshot_speed.py [--files N] [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from perf_row import print_row

from benchwright.coding.attempts import snapshots
from benchwright.coding.attempts.snapshots import files_of, take_snapshot


def _workspace(root: Path, n_files: int) -> Path:
    """`n_files` empty files, 1,000 per folder."""
    ws = root / "ws"
    for i in range(n_files):
        folder = ws / f"d{i // 1000}"
        if i % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{i}").touch()
    return ws


def _median(action: Callable[[Path], object], scratch: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        dest = scratch / "dest"
        shutil.rmtree(dest, ignore_errors=True)
        start = time.perf_counter()
        action(dest)
        times.append(time.perf_counter() - start)
    shutil.rmtree(scratch / "dest", ignore_errors=True)
    return statistics.median(times)


def _snapshot(ws: Path, dest: Path) -> object:
    """A snapshot without caps. Code from before the caps takes no limits: with PYTHONPATH at an
    older checkout's `src`, this script measures it too (before/after)."""
    limits_type = getattr(snapshots, "SnapshotLimits", None)
    if limits_type is None:
        return take_snapshot(ws, dest, set())
    return take_snapshot(ws, dest, set(), limits_type(max_mb=None, max_files=None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bw-snapshot-bench-") as tmp:
        root = Path(tmp)
        ws = _workspace(root, args.files)
        cp = _median(lambda d: subprocess.run(["cp", "-a", str(ws), str(d)], check=True),
                     root, args.repeat)
        snap = _median(lambda d: _snapshot(ws, d), root, args.repeat)
        _snapshot(ws, root / "kept")
        hashes = _median(lambda _d: files_of(root / "kept"), root, args.repeat)
    print(f"{args.files} empty files, median of {args.repeat}")
    print(f"cp -a          {cp:8.2f} s")
    print(f"take_snapshot  {snap:8.2f} s   ratio to cp -a: {snap / cp:.2f}")
    print(f"files_of       {hashes:8.2f} s   ratio to cp -a: {hashes / cp:.2f}")
    print_row("snapshot_speed.py", f"`take_snapshot` and the diff's hashes (`files_of`) on "
              f"{args.files:,} empty files, median of {args.repeat}", "`cp -a`",
              f"snapshot {snap / cp:.2f}x, hashes {hashes / cp:.2f}x ({snap:.2f} s and "
              f"{hashes:.2f} s against {cp:.2f} s)", "-")


if __name__ == "__main__":
    main()
