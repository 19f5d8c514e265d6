"""Session cookies that survive resets and restarts: the user name plus an HMAC; `SiteLogin`,
one site's sign-in (form post, logout, auto-login header, pages behind the login) built on them.

The sites keep no session table, so a cookie captured once (`web auth capture`) stays valid for
every later trial, whichever process serves the suite. The key is fixed: these are loopback
test sites, and stable cookies are the point.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote

from benchwright.web.local_suite.routing import Handler, Request, Response, redirect

_KEY = b"benchwright-local-suite"


def session_token(user: str) -> str:
    """`user|signature`, URL-quoted for a cookie value."""
    signature = hmac.new(_KEY, user.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
    return quote(f"{user}|{signature}", safe="")


def session_user(token: str | None) -> str | None:
    """The user a token was made for, or None when absent or forged."""
    if not token:
        return None
    user, _, _ = unquote(token).rpartition("|")
    return user if user and hmac.compare_digest(session_token(user), token) else None


def set_cookie(name: str, user: str, path: str = "/") -> tuple[str, str]:
    """The Set-Cookie header that logs `user` in."""
    return ("Set-Cookie", f"{name}={session_token(user)}; Path={path}; HttpOnly; SameSite=Lax")


def clear_cookie(name: str, path: str = "/") -> tuple[str, str]:
    """The Set-Cookie header that logs out."""
    return ("Set-Cookie", f"{name}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Lax")


def header_login(value: str | None, accounts: Mapping[str, str]) -> str | None:
    """The user named by an auto-login header `user:password`, when the password is right."""
    if not value:
        return None
    user, _, password = value.partition(":")
    return user if accounts.get(user) == password else None


SignedInHandler = Callable[[Request, "re.Match[str]", str], Response]
"""A handler for pages behind a login; its third argument is the user."""


@dataclass(frozen=True)
class SiteLogin:
    """How one site signs users in and out and tells who is logged in."""

    accounts: Mapping[str, str]
    """User name -> password."""
    cookie: str
    """The session cookie's name."""
    auto_login_header: str
    """The request header (lower case) that logs in as `user:password`."""
    scope: str
    """The cookie's path; a `next` page outside it is ignored after login."""
    form_url: str
    """The login form: failed logins and pages that need a login go there."""
    home: str
    """Where a login without a usable `next` lands."""
    after_logout: str
    """Where logging out lands."""
    fold_case: bool = False
    """User names are case-insensitive (the storefront's e-mail addresses)."""

    def user(self, request: Request) -> str | None:
        """The logged-in user: the auto-login header's, else the session cookie's."""
        return (header_login(request.headers.get(self.auto_login_header), self.accounts)
                or session_user(request.cookies.get(self.cookie)))

    def to_form(self, request: Request) -> Response:
        """A redirect to the login form, which comes back to this page."""
        return redirect(f"{self.form_url}?next=" + quote(request.path, safe="/"))

    def required(self, handler: SignedInHandler) -> Handler:
        """`handler` behind the login: it gets the user; a visitor is sent to the form."""
        def guarded(request: Request, match: re.Match[str]) -> Response:
            user = self.user(request)
            return handler(request, match, user) if user else self.to_form(request)

        return guarded

    def log_in(self, request: Request, match: re.Match[str]) -> Response:
        """The form post (`login[username]`, `login[password]`, `next`): set the cookie."""
        user = request.form.get("login[username]", "").strip()
        user = user.lower() if self.fold_case else user
        if self.accounts.get(user) != request.form.get("login[password]"):
            return redirect(f"{self.form_url}?error=1")
        target = request.form.get("next", "")
        response = redirect(target if target.startswith(self.scope) else self.home)
        response.headers.append(set_cookie(self.cookie, user, self.scope))
        return response

    def log_out(self, request: Request, match: re.Match[str]) -> Response:
        """Clear the cookie."""
        response = redirect(self.after_logout)
        response.headers.append(clear_cookie(self.cookie, self.scope))
        return response
