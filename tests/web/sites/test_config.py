"""The site config: YAML, environment variables, and the evaluator's mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.web.sites.config import DEFAULT_AUTO_LOGIN, Site, load_web_config

YAML = """
sites:
  shopping_admin:
    url: http://127.0.0.1:7780/admin/
    use_header_login: true
  __SHOPPING__:
    urls: [http://127.0.0.1:7770, http://shop.example:80]
    credentials: {username: emma.lopez@gmail.com, password: Password.123}
    auto_login_header: {name: X-Custom, value: "a:b"}
  reddit:
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "env.yaml"
    path.write_text(text)
    return path


def test_yaml_with_shorthands_placeholders_and_defaults(tmp_path: Path) -> None:
    config = load_web_config(_write(tmp_path, YAML), environ={})
    assert config.configured() == [Site.SHOPPING, Site.SHOPPING_ADMIN]
    admin = config.site(Site.SHOPPING_ADMIN)
    assert admin.urls == ["http://127.0.0.1:7780/admin"]
    assert admin.auto_login_header == DEFAULT_AUTO_LOGIN[Site.SHOPPING_ADMIN]
    assert admin.auto_login_header is not None
    assert admin.auto_login_header.value == "admin:admin1234"
    assert config.site(Site.SHOPPING).auto_login_header is not None
    assert config.site(Site.REDDIT).urls == []


def test_converts_to_the_evaluator_mapping(tmp_path: Path) -> None:
    envs = load_web_config(_write(tmp_path, YAML), environ={}).evaluator_environments()
    assert set(envs) == {"__SHOPPING__", "__SHOPPING_ADMIN__"}
    assert envs["__SHOPPING_ADMIN__"] == {
        "urls": ["http://127.0.0.1:7780/admin"], "active_url_idx": 0, "use_header_login": True,
        "credentials": None,
        "extra": {"auto_login_header": {"name": "X-M2-Admin-Auto-Login",
                                        "value": "admin:admin1234"}}}
    assert envs["__SHOPPING__"]["urls"] == ["http://127.0.0.1:7770", "http://shop.example:80"]
    assert envs["__SHOPPING__"]["credentials"]["username"] == "emma.lopez@gmail.com"
    assert envs["__SHOPPING__"]["extra"]["auto_login_header"]["name"] == "X-Custom"


def test_environment_variables_override_the_file(tmp_path: Path) -> None:
    environ = {"BENCHWRIGHT_WEB_SHOPPING_ADMIN_URL": "http://10.0.0.5:7780/admin",
               "BENCHWRIGHT_WEB_GITLAB_URL": "http://a:8023, http://b:8023",
               "BENCHWRIGHT_WEB_UNRELATED": "x", "OTHER_URL": "y"}
    config = load_web_config(_write(tmp_path, YAML), environ=environ)
    assert config.site(Site.SHOPPING_ADMIN).urls == ["http://10.0.0.5:7780/admin"]
    assert config.site(Site.SHOPPING_ADMIN).use_header_login is True
    assert config.site(Site.GITLAB).urls == ["http://a:8023", "http://b:8023"]
    assert load_web_config(None, environ=environ).configured() == [Site.SHOPPING_ADMIN,
                                                                   Site.GITLAB]


@pytest.mark.parametrize(("text", "needle"), [
    ("sites:\n  shoping: {url: 'http://x:1'}\n", "unknown site at key sites.shoping"),
    ("sites:\n  shopping: {url: 'http://x:1', colour: red}\n",
     "key sites.shopping.colour: unknown key"),
    ("sites:\n  shopping: {url: 'ftp://x'}\n", "key sites.shopping.urls: 'ftp://x'"),
    ("sites:\n  shopping_admin: {url: 'http://x:7780'}\n", "includes /admin"),
    ("sites: [1, 2\n", "not valid YAML at line"),
    ("- just a list\n", "must be a mapping"),
    ("hosts: {}\n", "key hosts: unknown key"),
])
def test_bad_config_is_one_line_naming_file_and_key(tmp_path: Path, text: str,
                                                    needle: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UserInputError) as info:
        load_web_config(path, environ={})
    line = info.value.one_line()
    assert needle in line and str(path) in line and "\n" not in line


def test_bad_environment_variables(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="BENCHWRIGHT_WEB_SHOP_URL names no known site"):
        load_web_config(None, environ={"BENCHWRIGHT_WEB_SHOP_URL": "http://x:1"})
    with pytest.raises(UserInputError, match="BENCHWRIGHT_WEB_REDDIT_URL"):
        load_web_config(None, environ={"BENCHWRIGHT_WEB_REDDIT_URL": "not a url"})
    with pytest.raises(UserInputError, match="cannot read"):
        load_web_config(tmp_path / "absent.yaml", environ={})


def test_an_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    assert load_web_config(_write(tmp_path, ""), environ={}).configured() == []
