"""A secret is found in the forms files hold it in, and inside URLs."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus, urlencode

import pytest

from benchwright.files.redaction import Redactor, redact_url, restore, url_secrets

SECRET = 'p@ss/w0rd+"x" y'


def test_url_encoded_and_json_escaped_forms_are_replaced() -> None:
    redactor = Redactor({"SITE_PASSWORD": SECRET})
    text = " ".join([SECRET, quote(SECRET, safe=""), quote_plus(SECRET),
                     json.dumps({"password": SECRET}), urlencode({"password": SECRET})])
    cleaned = redactor.text(text)
    assert "w0rd" not in cleaned
    assert cleaned.count("<redacted:SITE_PASSWORD>") == 5


def test_credentials_inside_a_url_are_secrets_and_come_back() -> None:
    url = "https://user:hunter2hunter2@llm.example/v1?api-version=2024-10-21&key=abcdefgh1234"
    assert url_secrets(url, "BASE_URL") == {"BASE_URL_PASSWORD": "hunter2hunter2",
                                            "BASE_URL_KEY": "abcdefgh1234"}
    redacted = Redactor.from_environ({}, urls={"BASE_URL": url}).text(url)
    assert redacted == ("https://user:<redacted:BASE_URL_PASSWORD>@llm.example/v1?"
                        "api-version=2024-10-21&key=<redacted:BASE_URL_KEY>")
    assert restore(redacted, {"BASE_URL_PASSWORD": "hunter2hunter2"}) == (
        "https://user:hunter2hunter2@llm.example/v1?api-version=2024-10-21"
        "&key=<redacted:BASE_URL_KEY>")


@pytest.mark.parametrize(("url", "kept"), [
    # a short password and a token as the user name: marked whatever their length
    ("https://bob:pw@example.org/set.git",
     "https://<redacted:ORIGIN_USER>:<redacted:ORIGIN_PASSWORD>@example.org/set.git"),
    ("https://ghp_tok@github.com/o/r.git", "https://<redacted:ORIGIN_USER>@github.com/o/r.git"),
    ("http://u:p@[::1]:8080/r?access_token=x&ref=main#f",
     "http://<redacted:ORIGIN_USER>:<redacted:ORIGIN_PASSWORD>@[::1]:8080/r?"
     "access_token=<redacted:ORIGIN_ACCESS_TOKEN>&ref=main#f"),
    ("ssh://git:secret@host/r", "ssh://<redacted:ORIGIN_USER>:<redacted:ORIGIN_PASSWORD>@host/r"),
    # an ssh user is no credential; a path has none
    ("ssh://git@github.com/o/r.git", "ssh://git@github.com/o/r.git"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("/srv/mirrors/set", "/srv/mirrors/set"),
    ("https://[broken@host/x", "<redacted:ORIGIN>"),
])
def test_a_recorded_url_keeps_no_credential(url: str, kept: str) -> None:
    assert redact_url(url, "ORIGIN") == kept
