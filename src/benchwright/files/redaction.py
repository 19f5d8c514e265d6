"""Keep credentials out of run directories: collect the values of secret environment variables and
replace them, wherever they appear, in every file a run writes.

A variable is secret when its name is a known credential or ends like one (`*_API_KEY`,
`*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_ACCESS_KEY`, ...). Values shorter than 8 characters are
ignored: replacing `1` or `true` everywhere would wreck files and protect nothing. A value becomes
`<redacted:NAME>`; one that several variables hold names them all, sorted
(`<redacted:GEMINI_API_KEY,GOOGLE_API_KEY>`), so the mark does not depend on the environment's
order.

Secrets that are not variables join them: the credentials inside a URL (`url_secrets`: the
user-info's name and password, and query parameters named like a key, `?key=`, `&api_key=`,
`&token=`...) and the site passwords of the web track's configuration. Each value is also
replaced in the forms files hold it in: URL-encoded (`%2F`, `+`) and JSON-escaped. A URL that is
itself recorded (a problem set's git origin) goes through `redact_url`, which marks its
credentials whatever their length.

Use: `Redactor.from_environ()` (or `Redactor({"NAME": value})`, `.with_secrets({...})`), then
`.text(s)`, `.file(path)` or `.tree(folder)`. The coding run loop already sweeps every checkpoint
folder (prompt, agent logs and trajectory, snapshot, diff, grading output) before its journal
record is written, cleans the agent's error text and sweeps the manifest, so agent adapters need
not call it themselves; the web runs do the same per trial (`benchwright.web.trials.sweep`).
A redacted URL that must be used again (a resumed run's `--base-url`) gets its values back from
the environment with `restore`. (Not `secrets.py`: no module is named like a standard-library
one.)
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from benchwright.files.atomic import write_bytes_atomic, write_stream_atomic, write_text_atomic
from benchwright.files.nofollow import deep_entries

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
# Query parameters that carry credentials (`key`, `api_key`, `access_token`, `sig`, `X-Amz-...`).
SECRET_PARAM = re.compile(r"key|token|secret|pass|auth|sig|credential|session|code|amz", re.I)
MARK = re.compile(r"<redacted:([A-Za-z0-9_,.-]+)>")


_CHUNK = 4 * 1024 * 1024


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a credential."""
    upper = name.upper()
    return upper in KNOWN_SECRETS or bool(SECRET_NAME.search(upper))


class Redactor:
    """Replaces known secret values in text and files."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.secrets = {name: value for name, value in secrets.items() if len(value) >= MIN_LENGTH}
        holders: dict[str, list[str]] = {}
        for name, value in self.secrets.items():
            holders.setdefault(value, []).append(name)
        found = {form: _mark(names) for value, names in holders.items()
                 for form in _forms(value)}
        # Longest first, so a secret that contains another is replaced whole.
        self.pairs = sorted(found.items(), key=lambda pair: -len(pair[0]))

    def with_secrets(self, extra: Mapping[str, str]) -> Redactor:
        """A redactor for these secrets as well."""
        return Redactor({**self.secrets, **extra})

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *,
                     urls: Mapping[str, str | None] | None = None) -> Redactor:
        """A redactor for every secret variable in `environ` (default: this process's) and the
        credentials inside `urls` (by name: `{"BASE_URL": url}` marks `<redacted:BASE_URL_KEY>`)."""
        source = os.environ if environ is None else environ
        found = {k: v for k, v in source.items() if is_secret_name(k)}
        for name, url in (urls or {}).items():
            found |= url_secrets(url or "", name)
        return cls(found)

    def text(self, text: str) -> str:
        """`text` with every secret value replaced."""
        for value, mark in self.pairs:
            text = text.replace(value, mark)
        return text

    def write_json(self, path: Path, data: Any) -> None:
        """Write `data` as JSON (as `write_json_atomic` does), secrets redacted before the write."""
        write_text_atomic(path, self.text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")

    def file(self, path: Path) -> bool:
        """Redact one file in place (atomically, keeping its mode); True if it changed. A file
        bigger than a chunk (an agent's log may be a GiB) is read in chunks: it costs a few MiB
        of memory, and is rewritten only when it holds a secret."""
        if path.stat().st_size > _CHUNK:
            return self._large_file(path)
        data = path.read_bytes()
        cleaned = self._bytes(data)
        if cleaned == data:
            return False
        write_bytes_atomic(path, cleaned)
        return True

    def _bytes(self, data: bytes) -> bytes:
        for value, mark in self.pairs:
            data = data.replace(value.encode(), mark.encode())
        return data

    def _chunks(self, path: Path) -> Iterator[tuple[bool, bytes]]:
        """The file's redacted pieces, in order, each with whether it held a secret; a secret
        split across two reads is still found (the last `longest - 1` bytes wait for the next)."""
        keep = max(len(value.encode()) for value, _mark in self.pairs) - 1
        carry = b""
        with path.open("rb") as source:
            while chunk := source.read(_CHUNK):
                data = carry + chunk
                cleaned = self._bytes(data)
                cut = max(len(cleaned) - keep, 0)
                yield cleaned != data, cleaned[:cut]
                carry = cleaned[cut:]
        yield False, carry

    def _large_file(self, path: Path) -> bool:
        if not any(changed for changed, _kept in self._chunks(path)):
            return False  # nothing to redact: not rewritten
        def fill(target: BinaryIO) -> None:
            for _data, kept in self._chunks(path):
                target.write(kept)

        write_stream_atomic(path, fill)
        return True

    def tree(self, root: Path) -> int:
        """Redact every regular file under `root` (symlinks are not followed); files changed."""
        if not self.pairs or not root.exists():
            return 0
        if root.is_file():
            return int(self.file(root))
        changed = 0
        # by descriptor and without recursion: an agent's home may be any depth; a file is
        # named through its open folder, so no path grows past PATH_MAX
        for fd, name, info in deep_entries(root):
            if stat.S_ISREG(info.st_mode):
                changed += self.file(Path(f"/proc/self/fd/{fd}") / name)
        return changed


def url_secrets(url: str, name: str = "URL") -> dict[str, str]:
    """The credentials inside a URL, by a made-up variable name: `NAME_USER` and `NAME_PASSWORD`
    for `scheme://user:password@host`, `NAME_<PARAM>` for a query parameter named like a key."""
    try:
        parts = urlsplit(url.strip())
        username, password = parts.username, parts.password
    except ValueError:
        return {}
    found = {f"{name}_USER": unquote(username or ""), f"{name}_PASSWORD": unquote(password or "")}
    for key, value in parse_qsl(parts.query, keep_blank_values=False):
        if SECRET_PARAM.search(key):
            found[f"{name}_{_variable(key)}"] = value
    return {k: v for k, v in found.items() if len(v) >= MIN_LENGTH}


def redact_url(url: str, name: str = "URL") -> str:
    """A URL as it may be recorded: the user-info's password, and key-like query values
    (`?token=`), replaced by marks whatever their length; the user name too when there is a
    password or the URL is HTTP(S), where a token is often passed as the user name
    (`https://TOKEN@host/`). An ssh user (`ssh://git@host/`, `git@host:path`) is kept."""
    try:
        parts = urlsplit(url) if "://" in url else None
    except ValueError:  # not a URL urllib can take apart: nothing of it is kept
        return _mark([name])
    if parts is None:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        user_info, host = netloc.rsplit("@", 1)
        user, has_password, _password = user_info.partition(":")
        if has_password or parts.scheme.lower() in ("http", "https"):
            user = _mark([f"{name}_USER"])
        netloc = user + (":" + _mark([f"{name}_PASSWORD"]) if has_password else "") + "@" + host
    query = "&".join(_redacted_param(item, name) for item in parts.query.split("&")) \
        if parts.query else ""
    return parts._replace(netloc=netloc, query=query).geturl()


def _redacted_param(item: str, name: str) -> str:
    key, sep, _value = item.partition("=")
    if sep and SECRET_PARAM.search(unquote(key)):
        return f"{key}={_mark([f'{name}_{_variable(unquote(key))}'])}"
    return item


def restore(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with each mark whose variable is set replaced by its value again."""
    source = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        names = [n for n in match.group(1).split(",") if source.get(n)]
        return source[names[0]] if names else match.group(0)

    return MARK.sub(value, text)


def is_redacted(text: str) -> bool:
    """Whether `text` holds a redaction mark."""
    return MARK.search(text) is not None


def _forms(value: str) -> set[str]:
    """The value as files hold it: as is, URL-encoded, JSON-escaped."""
    return {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}


def _variable(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "PARAM"


def _mark(names: list[str]) -> str:
    return f"<redacted:{','.join(sorted(names))}>"
