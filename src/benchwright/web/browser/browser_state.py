"""Reading browser-use's `<browser_state>` text: interactive elements and tabs, found by substring.

An element is listed as `[17]<a href=/orders id=go />` (possibly prefixed, e.g. `*[17]` for new
elements or `|SHADOW(open)|[17]`), followed by its text on more-indented lines. An element's
*entry* is its line plus those text lines; a match is the first entry containing the substring.
"""

from __future__ import annotations

import re

ELEMENT = re.compile(r"\[(\d+)\]<")
TAB = re.compile(r"^Tab ([0-9A-Za-z]{4}): (.*)$")


def state_section(message_text: str) -> str:
    """The text between `<browser_state>` and `</browser_state>` (the whole text if absent)."""
    start = message_text.rfind("<browser_state>")
    if start < 0:
        return message_text
    end = message_text.find("</browser_state>", start)
    return message_text[start + len("<browser_state>"):end if end >= 0 else None]


def element_entries(state: str) -> list[tuple[int, str]]:
    """(index, entry text) of every interactive element, in page order."""
    entries: list[tuple[int, list[str], int]] = []
    for line in state.splitlines():
        depth = len(line) - len(line.lstrip("\t"))
        found = ELEMENT.search(line)
        if found:
            entries.append((int(found.group(1)), [line.strip()], depth))
        elif entries and depth > entries[-1][2] and line.strip():
            entries[-1][1].append(line.strip())
    return [(index, "\n".join(lines)) for index, lines, _ in entries]


def find_element(state: str, match: str) -> int | None:
    """The index of the first element whose entry contains `match`."""
    return next((index for index, text in element_entries(state) if match in text), None)


def find_tab(state: str, match: str) -> str | None:
    """The 4-character id of the first tab whose `Tab XXXX: url - title` line contains `match`."""
    for line in state.splitlines():
        found = TAB.match(line.strip())
        if found and match in found.group(2):
            return found.group(1)
    return None
