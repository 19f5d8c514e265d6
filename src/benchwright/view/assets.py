"""The viewer's own files (the page, its script and style) and the chart library's script,
which ships inside plotly's Python package (the `view` extra): no CDN, no npm build."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from benchwright.errors import missing_extra

STATIC = Path(__file__).parent / "static"
INDEX = "index.html"
PLOTLY_JS = "plotly.min.js"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8"}


def plotly_js() -> Path:
    """plotly.min.js from the installed plotly package (found without importing plotly)."""
    spec = importlib.util.find_spec("plotly")
    folders = spec.submodule_search_locations if spec is not None else None
    for folder in folders or []:
        path = Path(folder) / "package_data" / PLOTLY_JS
        if path.is_file():
            return path
    raise missing_extra("the viewer's charts need plotly", "view")


def static_files() -> dict[str, Path]:
    """Name -> file of everything under `static/` the page loads (the only files served that
    are not run data)."""
    return {"app.js": STATIC / "app.js", "app.css": STATIC / "app.css", PLOTLY_JS: plotly_js()}


def content_type(name: str) -> str:
    """The Content-Type of a static file."""
    return TYPES.get(Path(name).suffix, "application/octet-stream")
