"""The viewer's data files: JSON wrapped in one JavaScript call, `BW.receive(key, data)`.

A page loads its data with a <script> tag, which works from file:// (a bundle) where fetch()
does not, and the same files are what the server answers. The JSON is made safe to embed: no
NaN or infinity (null instead), and every non-ASCII character escaped. Nothing in it is
ever evaluated as markup by the page: the viewer puts every string into the page as text.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel


def plain(value: Any) -> Any:
    """`value` as JSON-ready data: models dumped, non-finite floats as None."""
    if isinstance(value, BaseModel):
        return plain(value.model_dump(mode="json"))
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def encode(key: str, data: Any) -> bytes:
    """The data file of `key`."""
    # ASCII only: a name that is not UTF-8 (kept as surrogates) cannot break the file, and the
    # line and paragraph separators are escaped with the rest
    text = json.dumps(plain(data), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return f"BW.receive({json.dumps(key)},{text});\n".encode()
