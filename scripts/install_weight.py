"""How heavy the README's main install is: packages and megabytes of `pip install '.[metrics,web]'`
into a fresh virtualenv, and whether pip backtracked on the way.

Each install runs the README's install steps into a new `python3 -m venv` with pip (not uv: what a
user types), from a copy of the tree at a git revision (`--before REV`, e.g. the commit before
issue 19) and from the working tree: `pip install SPEC`, then, where the tree pins browser-use in
`web/browser/imports.py` (`BROWSER_USE = "browser-use==X"`), `pip install --no-deps` of it.
Printed per install: the distributions installed, their size on disk (the venv's growth), pip's
seconds, and the packages pip looked at several versions of ("backtracking": pip says `pip is
looking at multiple versions of X`). Target: under 250 MB with no backtracking.

Usage: python scripts/install_weight.py [--before REV] [--spec '.[metrics,web]'] [--python python3]
(needs the network to PyPI, or a warm pip cache; one to three minutes per install on two cores)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MB = 250.0
BACKTRACK = re.compile(r"pip is looking at multiple versions of (\S+)")
PIN = re.compile(r'^BROWSER_USE = "(browser-use==[^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Weight:
    """One install, measured."""

    label: str
    packages: int
    megabytes: float
    seconds: float
    backtracked: list[str]

    def line(self) -> str:
        verdict = "ok" if self.megabytes < TARGET_MB and not self.backtracked else "OVER TARGET"
        tracked = ", ".join(self.backtracked) or "none"
        return (f"{self.label:<28} {self.packages:>4} packages  {self.megabytes:>7.1f} MB  "
                f"{self.seconds:>6.1f} s  backtracking: {tracked}  [{verdict}]")


def tree_size(folder: Path) -> int:
    """Bytes of the regular files under `folder` (links not followed, each counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in folder.rglob("*"):
        stat = path.lstat()
        if path.is_file() and not path.is_symlink() and (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_size
    return total


def installed(venv: Path) -> set[str]:
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    return {entry["name"].lower() for entry in json.loads(out)}


def steps(source: Path, spec: str) -> list[list[str]]:
    """The tree's install steps: the spec, then browser-use without its dependencies if the
    tree installs it that way."""
    pinned = PIN.search((source / "src/benchwright/web/browser/imports.py").read_text())
    return [[spec], *([["--no-deps", pinned.group(1)]] if pinned else [])]


def measure(label: str, source: Path, spec: str, python: str) -> Weight:
    """The tree's install steps run from `source` into a fresh venv."""
    with tempfile.TemporaryDirectory(prefix="bw-install-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        before, size_before = installed(venv), tree_size(venv)
        start, output = time.monotonic(), ""
        for step in steps(source, spec):
            done = subprocess.run([str(venv / "bin" / "pip"), "install", "--progress-bar", "off",
                                   "--disable-pip-version-check", *step], cwd=source,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{label}: pip install {' '.join(step)} failed:\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            output += done.stdout + done.stderr
        return Weight(label=label, packages=len(installed(venv) - before),
                      megabytes=(tree_size(venv) - size_before) / 1e6,
                      seconds=time.monotonic() - start,
                      backtracked=sorted(set(BACKTRACK.findall(output))))


def checkout(revision: str, into: Path) -> Path:
    """The tree at `revision`, as files (no .git)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a git revision to measure first (the reference)")
    parser.add_argument("--spec", default=".[metrics,web]", help="what pip installs")
    parser.add_argument("--python", default="python3", help="the interpreter of the venvs")
    args = parser.parse_args()
    weights = []
    if args.before:
        with tempfile.TemporaryDirectory(prefix="bw-before-") as tmp:
            source = checkout(args.before, Path(tmp))
            weights.append(measure(f"before ({args.before})", source, args.spec, args.python))
            print(weights[-1].line(), flush=True)
    weights.append(measure("this tree", ROOT, args.spec, args.python))
    print(weights[-1].line())
    if len(weights) == 2:
        first, last = weights
        print(f"change: {last.packages - first.packages:+d} packages, "
              f"{last.megabytes - first.megabytes:+.1f} MB "
              f"({last.megabytes / first.megabytes:.2f}x)")
    print(f"target: under {TARGET_MB:.0f} MB, no backtracking")


if __name__ == "__main__":
    main()
