"""The viewer's read model: data keys -> page data, over the runs found under some folders.

Keys name pages, one per data file (`data/<key>.js`), so the server and a bundle answer the
same ones:

    runs                                  the run list and overview (every run's row)
    run/<rid>                             a run's page
    run/<rid>/ci                          its headline rates with CIs
    run/<rid>/<track's own parts>         a page below it (a checkpoint, a web trial, ...)
    cmp/<rid_a>/<rid_b>                   a head-to-head of two runs of one track

Every part of a key must be a plain name (`names.NAME_PATTERN`); anything else, or a run that
was not found under the folders given, is no page (the server answers 404). Runs are read
lazily, page by page, through the kernel (`runs.open_run`) and their track's pages
(`registry.TRACKS`: its entry's `view_pages`). Pages of runs nobody is working on are cached,
keyed by when their result.json and manifest last changed.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, cast

from benchwright.files.names import NAME_PATTERN
from benchwright.registry import TRACKS
from benchwright.report_parts.frontier import RunPoint, frontier_of
from benchwright.runs.layout import MANIFEST, RESULT_JSON
from benchwright.view.catalog import RunRef, Unreadable, open_runs
from benchwright.view.jsdata import encode
from benchwright.view.run_state import LockTable, RunState
from benchwright.view.stamped import StampedCache
from benchwright.view.track_pages import TrackPages

PART = re.compile(NAME_PATTERN)
MAX_PARTS = 8
CACHE_BYTES = 96 * 2**20
"""Encoded pages kept in memory."""
RESCAN_S = 2.0
"""The folders are searched for new runs at most this often."""

Stamp = tuple[int, int]


def pages_of(ref: RunRef) -> TrackPages:
    """The pages of the run's track."""
    return cast(TrackPages, TRACKS.part(ref.track.name, "view_pages"))


def valid_key(key: str) -> list[str] | None:
    """The key's parts, or None when a part is not a plain name."""
    parts = key.split("/")
    if len(parts) > MAX_PARTS or not all(PART.fullmatch(p) for p in parts):
        return None
    return parts


def _stamp(path: Path) -> Stamp:
    """When the run's result and manifest last changed (0: no result)."""
    try:
        result = (path / RESULT_JSON).stat().st_mtime_ns
    except OSError:
        result = 0
    try:
        manifest = (path / MANIFEST).stat().st_mtime_ns
    except OSError:
        manifest = 0
    return result, manifest


class ReadModel:
    """Page data for the runs under `folders`."""

    def __init__(self, folders: list[Path], *, live: bool = True) -> None:
        self.folders = folders
        self.live = live
        self._refs: dict[str, RunRef] = {}
        self._bad: list[Unreadable] = []
        self._scanned = 0.0
        self._cache: OrderedDict[str, tuple[Stamp, bytes]] = OrderedDict()
        self._cached_bytes = 0
        self._rows: StampedCache[str, dict[str, Any]] = StampedCache()
        self._lock = threading.Lock()
        # a bundle (not live) shows one moment: /proc/locks read once, not once a page
        self._frozen_locks = None if live else LockTable()
        self.scan()

    def scan(self) -> list[RunRef]:
        """Search the folders again (at most every RESCAN_S seconds)."""
        now = time.monotonic()
        if now - self._scanned >= RESCAN_S or not self._scanned:
            refs, bad = open_runs(self.folders, {r.path: r for r in self._refs.values()})
            self._refs, self._bad, self._scanned = {r.rid: r for r in refs}, bad, now
        return list(self._refs.values())

    @property
    def unreadable(self) -> list[Unreadable]:
        """Folders that look like runs but could not be opened."""
        return self._bad

    def ref(self, rid: str) -> RunRef | None:
        """The run with this id (a run made since the last search is found too)."""
        if rid not in self._refs:
            self._scanned = 0.0
            self.scan()
        return self._refs.get(rid)

    def file(self, key: str) -> bytes | None:
        """The data file of `key` (`BW.receive(key, data)`), or None: no such page."""
        parts = valid_key(key)
        if parts is None:
            return None
        if parts == ["runs"]:
            return encode(key, self.run_list())
        refs = self._refs_of(parts)
        if refs is None:
            return None
        locks = self._locks()
        states = [locks.state(r.path) for r in refs]
        stamp = None if any(s.running for s in states) else self._joint_stamp(refs)
        cached = self._cached(key, stamp)
        if cached is not None:
            return cached
        data = self._page(parts, refs, states[0])
        if data is None:
            return None
        body = encode(key, {**data, "live": self.live and any(s.running for s in states)})
        self._keep(key, stamp, body)
        return body

    def _refs_of(self, parts: list[str]) -> list[RunRef] | None:
        match parts:
            case ["run", rid, *_rest]:
                ref = self.ref(rid)
                return [ref] if ref else None
            case ["cmp", a, b]:
                ra, rb = self.ref(a), self.ref(b)
                if ra is None or rb is None or ra.track is not rb.track:
                    return None
                return [ra, rb]
        return None

    def _page(self, parts: list[str], refs: list[RunRef],
              state: RunState) -> dict[str, Any] | None:
        pages = pages_of(refs[0])
        match parts:
            case ["run", _rid]:
                return pages.run_page(refs[0], state)
            case ["run", _rid, "ci"]:
                return pages.ci(refs[0])
            case ["run", _rid, *rest]:
                return pages.detail(refs[0], rest)
            case ["cmp", _a, _b]:
                return pages.compare(refs[0], refs[1])
        return None

    def run_list(self) -> dict[str, Any]:
        """Every run's row (cached for runs not being worked on), and the folders that could
        not be read as runs."""
        refs = self.scan()
        locks = self._locks()
        rows = [self._row(ref, locks.state(ref.path)) for ref in refs]
        points = [RunPoint.model_validate(r["frontier_point"]) for r in rows
                  if r.get("frontier_point")]
        return {"runs": rows, "frontier": frontier_of(points).model_dump(mode="json"),
                "unreadable": [{"path": str(b.path), "error": b.error}
                                             for b in self._bad],
                "folders": [str(f) for f in self.folders],
                "live": self.live and any(r.get("running") for r in rows)}

    def _locks(self) -> LockTable:
        """/proc/locks as it is now (as it was when a bundle began)."""
        return self._frozen_locks if self._frozen_locks is not None else LockTable()

    def _row(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        stamp = None if state.running else _stamp(ref.path)
        return self._rows.get(ref.rid, stamp, lambda: pages_of(ref).row(ref, state))

    def _joint_stamp(self, refs: list[RunRef]) -> Stamp:
        stamps = [_stamp(r.path) for r in refs]
        return max(s[0] for s in stamps), max(s[1] for s in stamps)

    def _cached(self, key: str, stamp: Stamp | None) -> bytes | None:
        if stamp is None:
            return None
        with self._lock:
            hit = self._cache.get(key)
            if hit is None or hit[0] != stamp:
                return None
            self._cache.move_to_end(key)
            return hit[1]

    def _keep(self, key: str, stamp: Stamp | None, body: bytes) -> None:
        if stamp is None or len(body) > CACHE_BYTES // 4:
            return
        with self._lock:
            old = self._cache.pop(key, None)
            self._cached_bytes -= len(old[1]) if old else 0
            self._cache[key] = (stamp, body)
            self._cached_bytes += len(body)
            while self._cached_bytes > CACHE_BYTES and self._cache:
                _key, (_stamp, dropped) = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped)
