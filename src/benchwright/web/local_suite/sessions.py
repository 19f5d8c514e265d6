"""Session cookies that survive resets and restarts: the user name plus an HMAC.

The sites keep no session table, so a cookie captured once (`web auth capture`) stays valid for
every later trial, whichever process serves the suite. The key is fixed: these are loopback
test sites, and stable cookies are the point.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, unquote

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


def header_login(value: str | None, accounts: dict[str, str]) -> str | None:
    """The user named by an auto-login header `user:password`, when the password is right."""
    if not value:
        return None
    user, _, password = value.partition(":")
    return user if accounts.get(user) == password else None
