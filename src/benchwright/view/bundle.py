"""`benchwright view RUN... --bundle OUT_DIR`: the same viewer as a static site.

OUT_DIR gets index.html, static/ (the page's script and style, plotly.min.js) and data/, one
`<key>.js` file per page, exactly what the server answers for that key. It opens from file://
and from any static host: no server, no network, no CDN. Data is split per page, so a run of
ten thousand checkpoints stays browsable (only the pages opened are loaded). Head-to-head pages
are written for every pair of runs of one track when there are at most MAX_COMPARED runs.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_bytes_atomic
from benchwright.view.assets import INDEX, STATIC, static_files
from benchwright.view.read_model import ReadModel, pages_of
from benchwright.view.server import one_blas_thread

MARKER = ".benchwright-bundle"
"""Marks a folder as a bundle, so writing a bundle again may replace it."""
MAX_COMPARED = 12
"""Runs up to which every pair of one track gets its head-to-head page."""


def bundle_keys(model: ReadModel) -> list[str]:
    """Every data key of the bundle: the run list, each run's pages, the head-to-heads."""
    refs = model.scan()
    keys = ["runs"]
    for ref in refs:
        keys += pages_of(ref).keys(ref)
    if len(refs) <= MAX_COMPARED:
        keys += [f"cmp/{a.rid}/{b.rid}" for a, b in itertools.permutations(refs, 2)
                 if a.track is b.track]
    return keys


def prepare(out: Path) -> None:
    """An empty folder for the bundle: a new one, an empty one, or an earlier bundle."""
    if out.exists() and not out.is_dir():
        raise UserInputError("--bundle is not a folder", path=out, hint="pass a new folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise UserInputError("--bundle folder is not empty", path=out,
                                 hint="pass a new or empty folder (an earlier bundle is "
                                 "replaced)")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def write_bundle(folders: list[Path], out: Path,
                 progress: Callable[[int, int], None] = lambda _done, _total: None) -> int:
    """Write the static site; returns the number of pages written."""
    one_blas_thread()
    model = ReadModel(folders, live=False)
    if not model.scan() and not model.unreadable:  # an empty bundle would look like success
        raise UserInputError("no run found", path=folders[0],
                             hint="pass a run folder, or a folder holding runs")
    files = static_files()  # a missing chart library is said before anything is written
    prepare(out)
    (out / "static").mkdir()
    for name, path in files.items():
        shutil.copyfile(path, out / "static" / name)
    shutil.copyfile(STATIC / INDEX, out / INDEX)
    keys = bundle_keys(model)
    written = 0
    for done, key in enumerate(keys, 1):
        body = model.file(key)
        if body is not None:
            write_bytes_atomic(out / "data" / f"{key}.js", body, durable=False)
            written += 1
        progress(done, len(keys))
    (out / MARKER).write_text("a static bundle written by `benchwright view --bundle`\n")
    return written
