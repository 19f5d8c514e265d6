"""Serve the local suite from its own process.

    python -m benchwright.web.local_suite --port-file F


Once every site listens, F receives `{"schema": "benchwright.local-suite/1", "pid", "site_urls"}`
(written atomically, so a reader never sees half a file); the process serves until SIGTERM or
Ctrl-C. `benchwright.web.local_suite.reset_sites(site_urls)` resets it from outside.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path

from benchwright.files.atomic import write_json_atomic
from benchwright.web.local_suite.server import DEFAULT_HOST, serve_suite

SCHEMA = "benchwright.local-suite/1"


def main(argv: list[str] | None = None) -> int:
    """Serve until told to stop."""
    parser = argparse.ArgumentParser(prog="python -m benchwright.web.local_suite",
                                     description="Serve benchwright's local web task suite.")
    parser.add_argument("--port-file", type=Path, help="write the site URLs here as JSON")
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default loopback)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with serve_suite(args.host) as suite:
        info = {"schema": SCHEMA, "pid": os.getpid(), "site_urls": suite.site_urls}
        if args.port_file is not None:
            write_json_atomic(args.port_file, info)
        else:
            print(info, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
