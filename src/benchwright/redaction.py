"""Keep credentials out of run directories: collect the values of secret environment variables and
replace them, wherever they appear, in every file a run writes.

A variable is secret when its name is a known credential or ends like one (`*_API_KEY`,
`*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_ACCESS_KEY`, ...). Values shorter than 8 characters are
ignored: replacing `1` or `true` everywhere would wreck files and protect nothing. A value becomes
`<redacted:NAME>`; one that several variables hold names them all, sorted
(`<redacted:GEMINI_API_KEY,GOOGLE_API_KEY>`), so the mark does not depend on the environment's
order.

Use: `Redactor.from_environ()` (or `Redactor({"NAME": value})`), then `.text(s)`, `.file(path)` or
`.tree(folder)`. The run loop already sweeps every checkpoint folder (prompt, agent logs and
trajectory, snapshot, diff, grading output) before its journal record is written, cleans the
agent's error text and sweeps the manifest, so agent adapters need not call it themselves.
(Not `secrets.py`: no module is named like a standard-library one.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from benchwright.fileio import write_bytes_atomic

SECRET_NAME = re.compile(
    r"(_API_KEY|_APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_PASSWORD|_ACCESS_KEY|_ACCESS_KEY_ID)$")
KNOWN_SECRETS = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY",
    "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "AZURE_OPENAI_API_KEY", "DEEPSEEK_API_KEY",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN",
    "GH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
    "BENCHWRIGHT_LLM_API_KEY", "DAYTONA_API_KEY", "MODAL_TOKEN_SECRET",
})
MIN_LENGTH = 8


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a credential."""
    upper = name.upper()
    return upper in KNOWN_SECRETS or bool(SECRET_NAME.search(upper))


class Redactor:
    """Replaces known secret values in text and files."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        holders: dict[str, list[str]] = {}
        for name, value in secrets.items():
            if len(value) >= MIN_LENGTH:
                holders.setdefault(value, []).append(name)
        # Longest first, so a secret that contains another is replaced whole.
        self.pairs = sorted(((value, _mark(names)) for value, names in holders.items()),
                            key=lambda pair: -len(pair[0]))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        """A redactor for every secret variable in `environ` (default: this process's)."""
        source = os.environ if environ is None else environ
        return cls({k: v for k, v in source.items() if is_secret_name(k)})

    def text(self, text: str) -> str:
        """`text` with every secret value replaced."""
        for value, mark in self.pairs:
            text = text.replace(value, mark)
        return text

    def file(self, path: Path) -> bool:
        """Redact one file in place (atomically, keeping its mode); True if it changed."""
        data = path.read_bytes()
        cleaned = data
        for value, mark in self.pairs:
            cleaned = cleaned.replace(value.encode(), mark.encode())
        if cleaned == data:
            return False
        write_bytes_atomic(path, cleaned)
        return True

    def tree(self, root: Path) -> int:
        """Redact every regular file under `root` (symlinks are not followed); files changed."""
        if not self.pairs or not root.exists():
            return 0
        if root.is_file():
            return int(self.file(root))
        changed = 0
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                if path.is_file() and not path.is_symlink():
                    changed += self.file(path)
        return changed


def _mark(names: list[str]) -> str:
    return f"<redacted:{','.join(sorted(names))}>"
