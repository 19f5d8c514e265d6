"""The forum (site `reddit`): forums, posts with scores and comments, new posts and replies.

Modelled on Postmill, the software of the WebArena reddit site: `/f/<forum>`,
`/f/<forum>/<id>/<slug>`, `/submit`, `/user/<name>`. The visitor is always logged in as
MarvelsGrantMan136 (the WebArena account), so posting needs no login.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

from benchwright.web.local_suite import pages
from benchwright.web.local_suite.listing import newest_first
from benchwright.web.local_suite.routing import Request, Response, Router, html_response, redirect

USER = "MarvelsGrantMan136"
FORUMS = {"books": "Books", "gardening": "Gardening", "technology": "Technology"}


@dataclass
class Post:
    """A submission and its comments (author, text)."""

    id: int
    forum: str
    title: str
    author: str
    score: int
    body: str
    comments: list[tuple[str, str]] = field(default_factory=list)

    @property
    def slug(self) -> str:
        """The title in lower case with dashes."""
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")

    @property
    def url(self) -> str:
        """`/f/<forum>/<id>/<slug>`."""
        return f"/f/{self.forum}/{self.id}/{self.slug}"


def seed_posts() -> dict[int, Post]:
    """Fresh copies of the seed posts, by id."""
    posts = [
        Post(1, "books", "What are you reading this week?", "bookwyrm_77", 42,
             "Share your current read.", [("inkandquill", "Rereading Middlemarch."),
                                          ("clacky", "A history of typewriters.")]),
        Post(2, "books", "The Tarnwick Chronicles finished at last", "inkandquill", 118,
             "Book seven is out and it was worth the wait."),
        Post(3, "books", "Best translations of Russian classics?", USER, 57,
             "Looking for a readable Anna Karenina.", [("bookwyrm_77", "Pevear and Volokhonsky.")]),
        Post(4, "gardening", "Tomatoes splitting after rain", "fernwhisperer", 36,
             "Half my crop split overnight. Anything to do?"),
        Post(5, "gardening", "Aphids on my roses", "rosie_g", 21,
             "The new shoots are covered. Organic ideas welcome.",
             [("compost_king", "Ladybirds, if you can get them.")]),
        Post(6, "gardening", "My balcony herb garden, year two", "compost_king", 203,
             "Basil, thyme and three kinds of mint on a north-facing balcony."),
        Post(7, "gardening", "Is peat-free compost worth it?", "fernwhisperer", 88,
             "Trying it for seedlings this spring."),
        Post(8, "technology", "Mechanical keyboard recommendations", "clacky", 64,
             "Quiet switches for an open-plan office?"),
        Post(9, "technology", "Self-hosting a wiki on a Raspberry Pi", USER, 97,
             "Notes from a weekend project."),
    ]
    return {p.id: p for p in posts}


class ForumSite:
    """The forum app."""

    site = "reddit"
    base_path = ""

    def __init__(self) -> None:
        self.posts = seed_posts()
        self.router = Router()
        for method, pattern, handler in (
            ("GET", r"/", self._front), ("GET", r"/forums/?", self._forums),
            ("GET", r"/f/([a-z]+)/?", self._forum),
            ("GET", r"/f/([a-z]+)/(\d+)(?:/[a-z0-9-]*)?", self._post),
            ("POST", r"/f/([a-z]+)/(\d+)/comment", self._comment),
            ("GET", r"/submit/?", self._submit_form), ("POST", r"/submit/?", self._submit),
            ("GET", r"/user/([A-Za-z0-9_]+)/?", self._user),
        ):
            self.router.add(method, pattern, handler)

    def handle(self, request: Request) -> Response:
        """Route the request; unknown paths are a 404 page."""
        return self.router.dispatch(request) or self._not_found()

    @property
    def state(self) -> ForumSite:
        """The forum keeps its posts itself."""
        return self

    def reset(self) -> None:
        """The seed posts and comments."""
        self.posts = seed_posts()

    def _not_found(self) -> Response:
        return self._page("Page not found", pages.notice("The page you requested does not exist."),
                          404)

    def _page(self, title: str, body: str, status: int = 200) -> Response:
        nav = [("nav-home", "/", "Postmill"), ("nav-forums", "/forums", "Forums"),
               ("nav-submit", "/submit", "Submit"), ("nav-user", f"/user/{USER}", USER)]
        return html_response(pages.page(title, body, nav, "Postmill"), status)

    def _listing(self, posts: list[Post]) -> str:
        items = "".join(
            f"<li>{pages.link(f'post-{p.slug}', p.url, p.title)} <span>{p.score} points</span> "
            f"submitted by {pages.link(f'author-{p.slug}', f'/user/{p.author}', p.author)} to "
            f"{escape(p.forum)} | "
            f"{pages.link(f'comments-{p.slug}', p.url, f'{len(p.comments)} comments')}</li>"
            for p in posts)
        return f"<ol class=\"submissions\">{items}</ol>"

    def _newest(self, keep: Callable[[Post], bool]) -> list[Post]:
        return newest_first((p for p in self.posts.values() if keep(p)), lambda p: p.id)

    def _front(self, request: Request, match: re.Match[str]) -> Response:
        return self._page("Front page", self._listing(self._newest(lambda p: True)))

    def _forums(self, request: Request, match: re.Match[str]) -> Response:
        items = "".join(f"<li>{pages.link(f'forum-{k}', f'/f/{k}', v)}</li>"
                        for k, v in FORUMS.items())
        return self._page("List of forums", f"<ul>{items}</ul>")

    def _forum(self, request: Request, match: re.Match[str]) -> Response:
        forum = match.group(1)
        if forum not in FORUMS:
            return self._not_found()
        posts = self._newest(lambda p: p.forum == forum)
        submit = pages.link("submit-link", f"/submit?forum={forum}", "Submit a new post")
        return self._page(f"/f/{forum}", f"<p>{submit}</p>" + self._listing(posts))

    def _post(self, request: Request, match: re.Match[str]) -> Response:
        post = self.posts.get(int(match.group(2)))
        if post is None or post.forum != match.group(1):
            return self._not_found()
        comments = "".join(f"<li><strong>{escape(a)}</strong>: {escape(t)}</li>"
                           for a, t in post.comments)
        reply = pages.form(f"/f/{post.forum}/{post.id}/comment",
                           pages.text_area("comment-body", "comment[body]", "Write a comment"),
                           "submit-comment", "Post comment")
        return self._page(post.title, (
            f"<p>{post.score} points, submitted by {escape(post.author)} to /f/{post.forum}</p>"
            f"<div class=\"body\"><p>{escape(post.body)}</p></div>"
            f"<h2>{len(post.comments)} comments</h2><ul id=\"comments\">{comments}</ul>{reply}"))

    def _comment(self, request: Request, match: re.Match[str]) -> Response:
        post = self.posts.get(int(match.group(2)))
        text = request.form.get("comment[body]", "").strip()
        if post is None or post.forum != match.group(1):
            return self._not_found()
        if text:
            post.comments.append((USER, text))
        return redirect(post.url)

    def _submit_form(self, request: Request, match: re.Match[str]) -> Response:
        fields = (pages.select("submission-forum", "submission[forum]", "Forum", FORUMS.items(),
                               request.query.get("forum", ""))
                  + pages.text_input("submission-title", "submission[title]", "Title")
                  + pages.text_area("submission-body", "submission[body]", "Body"))
        error = pages.notice("A title is required.", error=True) if "error" in request.query else ""
        return self._page("Create submission", error + pages.form("/submit", fields, "submit-post",
                                                                  "Create submission"))

    def _submit(self, request: Request, match: re.Match[str]) -> Response:
        forum = request.form.get("submission[forum]", "")
        title = request.form.get("submission[title]", "").strip()
        if forum not in FORUMS or not title:
            return redirect("/submit?error=1")
        post = Post(max(self.posts) + 1, forum, title, USER, 1,
                    request.form.get("submission[body]", "").strip())
        self.posts[post.id] = post
        return redirect(post.url)

    def _user(self, request: Request, match: re.Match[str]) -> Response:
        name = match.group(1)
        posts = self._newest(lambda p: p.author == name)
        return self._page(name, "<h2>Submissions</h2>" + self._listing(posts))
