"""The cassette folder on disk: its header, and one gzip JSON-lines file per conversation.

Files are written whole, atomically, when a conversation ends (a run killed mid-conversation
leaves none for it: the resumed run records it again). Every line passes the one redaction
module first, so no key value reaches a cassette. Reading treats the folder as untrusted: a
missing, oversized, corrupt or newer file is one error naming it.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_bytes_atomic, write_text_atomic
from benchwright.files.nofollow import TreeWalk, read_regular
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import parse_untrusted_json
from benchwright.llm.models import (
    CassetteHeader,
    ConversationHeader,
    Exchange,
    LlmTraffic,
    TrafficMode,
)
from benchwright.version import __version__

HEADER = "cassette.json"
CONVERSATIONS = "conversations"
SUFFIX = ".jsonl.gz"
MAX_COMPRESSED = 256 * 2**20
MAX_EXPANDED = 1024 * 2**20
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def utc_stamp() -> str:
    """Now, as the cassette's files write it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def conversation_rel(key: str) -> str:
    """Where conversation `key` (segments joined by `/`) is kept, inside the cassette."""
    if not all(_SEGMENT.fullmatch(p) for p in key.split("/")):
        raise UserInputError(f"not a conversation name: {key!r}")
    return f"{CONVERSATIONS}/{key}{SUFFIX}"


def conversation_path(cassette: Path, key: str) -> Path:
    """The file of conversation `key`."""
    return cassette / conversation_rel(key)


def start_cassette(cassette: Path) -> None:
    """Create the folder and its header (an existing cassette's header is kept: recording
    again into it replaces the conversations recorded again)."""
    cassette.mkdir(parents=True, exist_ok=True)
    if not (cassette / HEADER).is_file():
        header = CassetteHeader(created=utc_stamp(), benchwright=__version__)
        write_text_atomic(cassette / HEADER, header.model_dump_json(indent=2) + "\n")


def write_conversation(cassette: Path, header: ConversationHeader,
                       exchanges: list[Exchange], redactor: Redactor) -> Path:
    """The conversation's file, written whole and atomically; keys redacted from every line."""
    path = conversation_path(cassette, header.key)
    header = header.model_copy(update={"exchanges": len(exchanges)})
    lines = [header.model_dump_json(), *(e.model_dump_json() for e in exchanges)]
    text = "".join(redactor.text(line) + "\n" for line in lines)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed:
        packed.write(text.encode("utf-8"))
    write_bytes_atomic(path, buffer.getvalue())
    return path


def read_header(cassette: Path) -> CassetteHeader:
    """`cassette.json`, or an error saying the folder is no cassette (or a newer one)."""
    path = cassette / HEADER
    data = read_regular(cassette, HEADER, 2**20 + 1)
    if data is None or len(data) > 2**20:
        raise UserInputError("no cassette here: cassette.json is missing, a link, a special "
                             "file or over 1 MiB", path=cassette,
                             hint="give the folder --llm-record wrote")
    raw = parse_untrusted_json(data, path, what="the cassette's header")
    try:
        return CassetteHeader.model_validate(raw)
    except ValidationError as exc:
        raise UserInputError(f"not a {_format_name()} cassette header ({_first(exc)})",
                             path=path, hint="a newer benchwright may have written it") from None


def read_conversation(cassette: Path, rel: str
                      ) -> tuple[ConversationHeader, list[Exchange]] | None:
    """One conversation file (`rel` inside the cassette, never through a link): its header
    and exchanges; None when it is missing (or a link, or not a regular file)."""
    data = read_regular(cassette, rel, MAX_COMPRESSED + 1)
    if data is None:
        return None
    path = cassette / rel
    if len(data) > MAX_COMPRESSED:
        raise UserInputError("a cassette conversation is larger than 256 MiB", path=path)
    lines = _lines(data, path)
    if not lines:
        raise UserInputError("an empty cassette conversation", path=path)
    try:
        header = ConversationHeader.model_validate(
            parse_untrusted_json(lines[0], path, what="a cassette conversation"))
        exchanges = [Exchange.model_validate(parse_untrusted_json(
            line, path, what="a cassette conversation")) for line in lines[1:]]
    except ValidationError as exc:
        raise UserInputError(f"a cassette conversation does not hold ({_first(exc)})",
                             path=path, hint="a newer benchwright may have written it") from None
    return header, exchanges


def conversation_files(cassette: Path) -> Iterator[str]:
    """Every conversation file of the cassette (relative), in name order; links and special
    files are not followed."""
    root = cassette / CONVERSATIONS
    if root.is_symlink() or not root.is_dir():
        return
    for entry in TreeWalk(root):
        if entry.kind == "file" and entry.name.endswith(SUFFIX):
            yield f"{CONVERSATIONS}/{entry.rel}"


def _lines(data: bytes, path: Path) -> list[str]:
    try:
        unpacker = zlib.decompressobj(wbits=31)
        text = unpacker.decompress(data, MAX_EXPANDED)
        if unpacker.unconsumed_tail:
            raise UserInputError("a cassette conversation expands past 1 GiB", path=path)
        return text.decode("utf-8").splitlines()
    except (zlib.error, UnicodeDecodeError) as exc:
        raise UserInputError(f"a cassette conversation is not gzip'd UTF-8 ({exc})",
                             path=path) from None


def _format_name() -> str:
    return json.dumps(CassetteHeader.model_fields["format"].default)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"


def traffic_setting(record: Path | str | None, replay: Path | str | None) -> LlmTraffic | None:
    """The `LlmTraffic` of `--llm-record DIR` / `--llm-replay DIR` (None when neither); a
    cassette to replay must exist."""
    if record is not None and replay is not None:
        raise UserInputError("--llm-record and --llm-replay exclude each other",
                             hint="record once, then replay that cassette")
    if replay is not None:
        folder = Path(replay).expanduser().resolve()
        read_header(folder)
        return LlmTraffic(mode=TrafficMode.REPLAY, cassette=folder)
    if record is not None:
        return LlmTraffic(mode=TrafficMode.RECORD, cassette=Path(record).expanduser().resolve())
    return None


def require_local(traffic: LlmTraffic | None, executor: str | None) -> None:
    """The proxy and the cassette live on this machine: a run whose jobs go elsewhere
    (`--executor ray`) cannot record or replay."""
    if traffic is not None and (executor or "local") != "local":
        raise UserInputError(f"--llm-{traffic.mode.value} needs --executor local: the "
                             "recording proxy and the cassette are on this machine",
                             hint="drop --executor, or run without a cassette")
