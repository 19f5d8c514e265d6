"""The wiki (site `wikipedia`): interlinked articles about a fictional region, with search.

Read-only, so reset does nothing. `[[Title]]` in article text becomes a link to `/wiki/Title`.
The region is invented so that an agent cannot answer from memory.
"""

from __future__ import annotations

import re
from html import escape
from urllib.parse import quote, unquote

from benchwright.web.local_suite import pages
from benchwright.web.local_suite.listing import matching
from benchwright.web.local_suite.routing import Request, Response, Router, html_response

ARTICLES: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "Tarnwick": ({"Country": "Brannland", "Province": "Ostmarch", "Population": "184,300",
                  "Founded": "1203"}, (
        "Tarnwick is the second-largest city of Brannland and the seat of the Ostmarch province.",
        "The [[Vell River]] flows through the city centre before reaching [[Ostra Lake]]. The "
        "old town lies on its north bank.",
        "The city is known for the [[Tarnwick Observatory]] on the slopes of the "
        "[[Marrow Hills]]."),
    ),
    "Vell River": ({"Length": "212 km", "Source": "Marrow Hills", "Mouth": "Ostra Lake"}, (
        "The Vell River rises in the [[Marrow Hills]] and flows west through [[Tarnwick]] into "
        "[[Ostra Lake]].",
        "Eleven bridges cross the river inside Tarnwick; the oldest dates from 1390."),
    ),
    "Tarnwick Observatory": ({"Founded": "1871", "First light": "1874",
                              "Founder": "Edda Brannock", "Altitude": "412 m"}, (
        "The Tarnwick Observatory is an astronomical observatory above [[Tarnwick]], founded in "
        "1871 by the astronomer [[Edda Brannock]]. Its great refractor saw first light in 1874.",
        "It has belonged to the University of Tarnwick since 1921."),
    ),
    "Edda Brannock": ({"Born": "1829", "Died": "1902", "Field": "Astronomy"}, (
        "Edda Brannock was an astronomer who founded the [[Tarnwick Observatory]].",
        "She catalogued 1,140 double stars."),
    ),
    "Marrow Hills": ({"Highest point": "Kell Top, 1,022 m"}, (
        "The Marrow Hills are a range east of [[Tarnwick]] and the source of the [[Vell River]].",),
    ),
    "Ostra Lake": ({"Area": "96 km2", "Inflow": "Vell River"}, (
        "Ostra Lake is a lake west of [[Tarnwick]], fed mainly by the [[Vell River]].",),
    ),
}


def article_path(title: str) -> str:
    """`/wiki/Vell_River` for "Vell River"."""
    return "/wiki/" + quote(title.replace(" ", "_"))


def _linked(text: str) -> str:
    def anchor(match: re.Match[str]) -> str:
        title = match.group(1)
        slug = title.replace(" ", "_")
        return pages.link(f"to-{slug}-page", article_path(title), title)

    return re.sub(r"\[\[([^\]]+)\]\]", anchor, escape(text))


class WikiSite:
    """The wiki app."""

    site = "wikipedia"
    base_path = ""

    def __init__(self) -> None:
        self.router = Router()
        self.router.add("GET", r"/", self._main)
        self.router.add("GET", r"/search/?", self._search)
        self.router.add("GET", r"/wiki/([^/]+)", self._article)

    def handle(self, request: Request) -> Response:
        """Route the request; unknown paths are a 404 page."""
        return self.router.dispatch(request) or self._missing()

    @property
    def state(self) -> WikiSite:
        """The wiki itself; it has nothing to reset."""
        return self

    def reset(self) -> None:
        """Nothing changes on the wiki."""

    def _missing(self) -> Response:
        return self._page("Not found", pages.notice("There is no such article."), 404)

    def _page(self, title: str, body: str, status: int = 200) -> Response:
        search = pages.form("/search", pages.text_input("search-input", "q", "Search the wiki",
                                                        placeholder="Search"),
                            "search-go", "Search", method="get")
        nav = [("nav-main", "/", "Main page")]
        return html_response(pages.page(title, search + body, nav, "Wikipedia (offline)"), status)

    def _main(self, request: Request, match: re.Match[str]) -> Response:
        items = "".join(f"<li>{_linked(f'[[{t}]]')}</li>" for t in sorted(ARTICLES))
        return self._page("Main page",
                          f"<p>Welcome to the offline encyclopedia.</p><ul>{items}</ul>")

    def _search(self, request: Request, match: re.Match[str]) -> Response:
        hits = matching(request.query.get("q", ""), ARTICLES,
                        lambda t: t + " " + " ".join(ARTICLES[t][1]))
        items = "".join(f"<li>{_linked(f'[[{t}]]')}: {escape(ARTICLES[t][1][0][:90])}...</li>"
                        for t in hits)
        return self._page("Search results", f"<p>{len(hits)} results</p><ul>{items}</ul>")

    def _article(self, request: Request, match: re.Match[str]) -> Response:
        title = unquote(match.group(1)).replace("_", " ")
        if title not in ARTICLES:
            return self._missing()
        box, paras = ARTICLES[title]
        infobox = pages.table(["Fact", "Value"], ((escape(k), escape(v)) for k, v in box.items()),
                              "infobox")
        return self._page(title, infobox + "".join(f"<p>{_linked(p)}</p>" for p in paras))
