"""Minimal valid PDF 1.4 documents (one page of Helvetica text), written by hand.

Enough for an invoice a browser downloads and a PDF reader opens: catalog, pages, one page, a
content stream, the standard Helvetica font, a cross-reference table with exact byte offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

_LINE_HEIGHT = 18
_TOP = 800
_LEFT = 56


def _pdf_string(text: str) -> str:
    safe = text.encode("latin-1", "replace").decode("latin-1")
    return "(" + safe.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def _content(lines: Sequence[str]) -> bytes:
    ops = [f"BT /F1 12 Tf {_LEFT} {_TOP} Td {_LINE_HEIGHT} TL"]
    ops += [f"{_pdf_string(line)} Tj T*" for line in lines]
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def text_pdf(lines: Sequence[str], title: str = "") -> bytes:
    """A one-page A4 PDF showing the lines top to bottom."""
    stream = _content(lines)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        f"<< /Title {_pdf_string(title)} /Producer (benchwright local suite) >>".encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += (b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, len(objects), xref))
    return bytes(out)
