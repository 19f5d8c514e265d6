"""HTML building blocks shared by the local sites: a page layout, links, forms and tables.

Every control an agent must reach carries a unique `id` (browser-use shows ids, names, types,
values and placeholders in its element list), inputs have labels, and links are plain anchors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

_STYLE = ("body{font-family:sans-serif;margin:0}header{background:#234;color:#fff;padding:8px 16px}"
          "header a{color:#fff;margin-right:14px}main{padding:16px}table{border-collapse:collapse}"
          "td,th{border:1px solid #bbb;padding:4px 8px}label{display:block;margin-top:8px}"
          ".notice{background:#efe;padding:6px}.error{background:#fee;padding:6px}")


def page(title: str, body: str, nav: Sequence[tuple[str, str, str]] = (), brand: str = "") -> str:
    """A full HTML document; `nav` holds (id, href, text) links for the header."""
    links = "".join(link(i, href, text) for i, href, text in nav)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><link rel=\"icon\" href=\"data:,\">"
            f"<style>{_STYLE}</style></head><body><header><strong>{escape(brand)}</strong> "
            f"<nav>{links}</nav></header><main><h1>{escape(title)}</h1>{body}</main></body></html>")


def link(id_: str, href: str, text: str, extra: str = "") -> str:
    """An anchor with an id."""
    return f"<a id=\"{escape(id_)}\" href=\"{escape(href)}\"{extra}>{escape(text)}</a>"


def text_input(id_: str, name: str, label: str, value: str = "", kind: str = "text",
               placeholder: str = "") -> str:
    """A labelled single-line input."""
    hint = f" placeholder=\"{escape(placeholder)}\"" if placeholder else ""
    return (f"<label for=\"{escape(id_)}\">{escape(label)}</label>"
            f"<input id=\"{escape(id_)}\" name=\"{escape(name)}\" type=\"{kind}\" "
            f"value=\"{escape(value)}\"{hint}>")


def text_area(id_: str, name: str, label: str) -> str:
    """A labelled multi-line input."""
    return (f"<label for=\"{escape(id_)}\">{escape(label)}</label>"
            f"<textarea id=\"{escape(id_)}\" name=\"{escape(name)}\" rows=\"4\" cols=\"60\">"
            f"</textarea>")


def select(id_: str, name: str, label: str, options: Iterable[tuple[str, str]],
           chosen: str = "") -> str:
    """A labelled dropdown of (value, text) options."""
    items = "".join(f"<option value=\"{escape(v)}\"{' selected' if v == chosen else ''}>"
                    f"{escape(t)}</option>" for v, t in options)
    return (f"<label for=\"{escape(id_)}\">{escape(label)}</label>"
            f"<select id=\"{escape(id_)}\" name=\"{escape(name)}\">{items}</select>")


def hidden(name: str, value: str) -> str:
    """A hidden form field."""
    return f"<input type=\"hidden\" name=\"{escape(name)}\" value=\"{escape(value)}\">"


def form(action: str, fields: str, button_id: str, button_text: str, method: str = "post") -> str:
    """A form with a submit button."""
    return (f"<form method=\"{method}\" action=\"{escape(action)}\">{fields}"
            f"<p><button id=\"{escape(button_id)}\" type=\"submit\">{escape(button_text)}</button>"
            f"</p></form>")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], id_: str = "") -> str:
    """A table; cells are HTML already (escape text with `escape`)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    ident = f" id=\"{escape(id_)}\"" if id_ else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def notice(message: str, error: bool = False) -> str:
    """A status line."""
    return f"<p class=\"{'error' if error else 'notice'}\">{escape(message)}</p>"


def money(amount: float) -> str:
    """$1,234.50."""
    return f"${amount:,.2f}"
