"""What a sandbox writes, read back bounded: a pipe drained by a thread that keeps the first and
the last part and streams past the middle, counting it. However much a command prints, the
harness holds at most `limit` bytes of it, writes no more, and records what it cut."""

from __future__ import annotations

import collections
import os
import threading

_CHUNK = 1 << 16


class CappedPipe:
    """A pipe whose write end goes to the command (as its stdout or stderr, or an fd it keeps)."""

    def __init__(self, limit: int) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self.total = 0
        """Bytes the command wrote."""
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with os.fdopen(self.read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(_CHUNK):
                self.total += len(chunk)
                room = self._head_limit - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._keep_tail(chunk)

    def _keep_tail(self, chunk: bytes) -> None:
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail and self._tail_size - len(self._tail[0]) >= self._tail_limit:
            self._tail_size -= len(self._tail.popleft())

    def close_write_end(self) -> None:
        """Our copy of the write end: closed once the command is over."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def finish(self) -> bytes:
        """Everything kept (head, a line saying what was cut, tail); after the command ended."""
        self.close_write_end()
        self._thread.join()
        tail = b"".join(self._tail)[-self._tail_limit:] if self._tail_limit else b""
        if self.cut == 0:
            return bytes(self._head) + tail
        note = f"\n[... {self.cut:,} bytes cut by benchwright ...]\n"
        return bytes(self._head) + note.encode() + tail

    @property
    def cut(self) -> int:
        """Bytes streamed past and not kept."""
        return max(0, self.total - len(self._head) - min(self._tail_size, self._tail_limit))
