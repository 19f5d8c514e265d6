"""An attacker's local package: its in-tree build backend runs `payload` when uv builds it.

`payload` is Python source that sets a string `LOOT`; the backend prints LOOT (so it lands in
uv's error output) and ships it inside the wheel as `evilpkg.LOOT` (so it lands in the built
environment, which the submission can read while it is graded). `pth`, one line of Python, is
shipped as a .pth file: every start of the environment's python runs it. `extra` adds files to the
wheel (a module, `evilpkg-0.1.dist-info/entry_points.txt` naming console scripts).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "evilpkg"
version = "0.1"
"""

BACKEND = '''\
import base64, hashlib, os, sys, zipfile

{payload}

print(LOOT, file=sys.stderr)


def _wheel(wheel_directory):
    name = "evilpkg-0.1-py3-none-any.whl"
    files = {{
        "evilpkg.py": "LOOT = " + repr(LOOT) + "\\n",
        "evilpkg_hook.pth": PTH + "\\n",
        "evilpkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\\nName: evilpkg\\nVersion: 0.1\\n",
        "evilpkg-0.1.dist-info/WHEEL":
            "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
        **EXTRA,
    }}
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for path, text in files.items():
            data = text.encode()
            zf.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{{path}},sha256={{digest}},{{len(data)}}")
        record.append("evilpkg-0.1.dist-info/RECORD,,")
        zf.writestr("evilpkg-0.1.dist-info/RECORD", "\\n".join(record) + "\\n")
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory)
'''


def write_evil_package(folder: Path, payload: str, pth: str = "import os",
                       extra: Mapping[str, str] | None = None) -> Path:
    """The package's folder, ready to be named as `evilpkg @ file://FOLDER`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(PYPROJECT)
    source = f"PTH = {pth!r}\nEXTRA = {dict(extra or {})!r}\n" + textwrap.dedent(payload)
    (folder / "backend.py").write_text(BACKEND.format(payload=source))
    return folder
