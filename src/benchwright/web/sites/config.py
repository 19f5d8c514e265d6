"""Where the sites live: per-site URLs, credentials and auto-login headers (WebArena's sites, and
any site a web benchmark plugin registers).

Loaded from a YAML file (`--config ENV.yaml`) and from environment variables
(`BENCHWRIGHT_WEB_<SITE>_URL`, which win over the file), then turned into the `environments`
mapping the official evaluator takes. Scheme, host and port must be exactly what the browser used:
the evaluator maps trace URLs back to placeholders (`__SHOPPING__` ...) by substring match.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_yaml

ENV_PREFIX = "BENCHWRIGHT_WEB_"
ENV_SUFFIX = "_URL"
# What the docker CLI accepts as a name, never an option (no leading dash) nor two arguments.
_CONTAINER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_IMAGE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")


class _Sites(type):
    """`for site in Site`: every known site, WebArena's first, then the plugins'."""

    def __iter__(cls) -> Iterator[Site]:
        return iter([Site(name) for name in known_sites()])


class Site(str, metaclass=_Sites):
    """A web site tasks touch, as the dataset names it: WebArena's seven (the constants below),
    or one a web benchmark plugin registers (`benchwright.registry.WEB_SITES`, entry-point group
    `benchwright.web_sites`). Any `Site("name")` may be made; parsing and validation (a dataset,
    a config) accept only the registered names."""

    __slots__ = ()
    SHOPPING: ClassVar[Site]
    SHOPPING_ADMIN: ClassVar[Site]
    REDDIT: ClassVar[Site]
    GITLAB: ClassVar[Site]
    WIKIPEDIA: ClassVar[Site]
    MAP: ClassVar[Site]
    HOMEPAGE: ClassVar[Site]

    @property
    def value(self) -> str:
        """The name, `shopping_admin`."""
        return str.__str__(self)

    @property
    def name(self) -> str:
        """The name in capitals, `SHOPPING_ADMIN` (as environment variables spell it)."""
        return self.value.upper()

    @property
    def placeholder(self) -> str:
        """`__SHOPPING_ADMIN__` for shopping_admin: how task URLs name the site."""
        return f"__{self.name}__"

    def __repr__(self) -> str:
        return f"Site({self.value!r})"

    @classmethod
    def parse(cls, name: str) -> Site | None:
        """The site named `shopping_admin`, `SHOPPING_ADMIN` or `__SHOPPING_ADMIN__`, else None."""
        key = name.strip().strip("_").lower()
        return cls(key) if key in known_sites() else None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(
            _known_site, core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str))


for _name in ("shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage"):
    setattr(Site, _name.upper(), Site(_name))


@functools.cache
def known_sites() -> tuple[str, ...]:
    """The names of every registered site (read once per process)."""
    from benchwright.registry import WEB_SITES

    return tuple(WEB_SITES.names())


def _known_site(name: str) -> Site:
    if name not in known_sites():
        raise ValueError(f"unknown site {name!r} (known: {', '.join(known_sites())})")
    return Site(name)


class AutoLoginHeader(BaseModel):
    """A request header the site's image accepts instead of a login form."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """The header's name, e.g. `X-M2-Admin-Auto-Login`."""
    value: str
    """Its value, `user:password`."""


class Credentials(BaseModel):
    """A site account."""

    model_config = ConfigDict(extra="forbid")

    username: str
    """The login name."""
    password: str
    """The password."""


DEFAULT_AUTO_LOGIN: dict[Site, AutoLoginHeader] = {
    Site.SHOPPING_ADMIN: AutoLoginHeader(name="X-M2-Admin-Auto-Login", value="admin:admin1234"),
    Site.SHOPPING: AutoLoginHeader(name="X-M2-Customer-Auto-Login",
                                   value="emma.lopez@gmail.com:Password.123"),
    Site.REDDIT: AutoLoginHeader(name="X-Postmill-Auto-Login", value="MarvelsGrantMan136:test1234"),
}


class SiteConfig(BaseModel):
    """One site's deployment."""

    model_config = ConfigDict(extra="forbid")

    urls: list[str] = Field(default_factory=list)
    """Every base URL the browser may have used for this site (the first is the active one);
    empty means the site is not configured. `url: X` in YAML is short for `urls: [X]`."""
    credentials: Credentials | None = None
    """The account the agent logs in with, when it logs in through the form."""
    use_header_login: bool = False
    """Log in with the auto-login header instead of the form."""
    auto_login_header: AutoLoginHeader | None = None
    """The auto-login header; the image's default when not given."""
    env_ctrl_url: str | None = None
    """The container's env-ctrl endpoint; default: the site's host on the env-ctrl port."""
    data_dir: Path | None = None
    """The site's data folder, bind-mounted into its container (wikipedia needs one)."""
    image: str | None = None
    """The image `web env start|reset` runs; default the official `am1n3e/webarena-verified-<site>`
    (a mirror's copy, or a locally built one: `benchwright.web.local_suite.image`)."""
    container: str | None = None
    """The container's name; default `webarena_verified_<site>`, as the official CLI names it."""

    @model_validator(mode="before")
    @classmethod
    def _url_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and "url" in data:
            data = dict(data)
            url = data.pop("url")
            if "urls" in data:
                raise ValueError("give url or urls, not both")
            data["urls"] = [url] if url else []
        return data

    @field_validator("urls")
    @classmethod
    def _check_urls(cls, urls: list[str]) -> list[str]:
        return [_checked_url(url) for url in urls]

    @field_validator("image")
    @classmethod
    def _check_image(cls, image: str | None) -> str | None:
        if image is not None and not _IMAGE_REF.fullmatch(image):
            raise ValueError(f"{image!r} is not an image reference such as "
                             "localhost/benchwright-site-reddit:1a2b3c4d5e6f")
        return image

    @field_validator("container")
    @classmethod
    def _check_container(cls, name: str | None) -> str | None:
        if name is not None and not _CONTAINER_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a container name (letters, digits, _ . -; "
                             "starting with a letter or digit)")
        return name

    @property
    def url(self) -> str | None:
        """The active base URL, or None when unconfigured."""
        return self.urls[0] if self.urls else None


def _checked_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc \
            or any(ch.isspace() or not ch.isprintable() for ch in url.strip()):
        raise ValueError(f"{url!r} is not an http(s) URL such as http://localhost:7770 (no "
                         "spaces or control characters)")
    try:
        parts.port  # noqa: B018 - a port out of range or not a number raises here
    except ValueError:
        raise ValueError(f"{url!r} has no valid port") from None
    return url.strip().rstrip("/")


class WebEnvConfig(BaseModel):
    """Every site's deployment: what `--config ENV.yaml` holds."""

    model_config = ConfigDict(extra="forbid")

    sites: dict[Site, SiteConfig] = Field(default_factory=dict)
    """Per site; sites left out are unconfigured."""

    @model_validator(mode="after")
    def _admin_url_has_admin_path(self) -> Self:
        admin = self.sites.get(Site.SHOPPING_ADMIN)
        for url in admin.urls if admin else []:
            if not urlsplit(url).path.rstrip("/").endswith("/admin"):
                raise ValueError(f"the shopping_admin URL includes /admin (got {url!r}, e.g. "
                                 "http://localhost:7780/admin)")
        return self

    def site(self, site: Site) -> SiteConfig:
        """This site's settings (empty when unconfigured), with the default auto-login header."""
        found = self.sites.get(site, SiteConfig())
        if found.auto_login_header is None and site in DEFAULT_AUTO_LOGIN:
            found = found.model_copy(update={"auto_login_header": DEFAULT_AUTO_LOGIN[site]})
        return found

    def configured(self) -> list[Site]:
        """Sites with at least one URL, in the enum's order."""
        return [site for site in Site if self.site(site).urls]

    def evaluator_environments(self) -> dict[str, dict[str, Any]]:
        """The official evaluator's `environments` mapping, keyed by placeholder."""
        return {site.placeholder: _evaluator_entry(self.site(site)) for site in self.configured()}


def _evaluator_entry(cfg: SiteConfig) -> dict[str, Any]:
    header = cfg.auto_login_header
    return {
        "urls": list(cfg.urls),
        "active_url_idx": 0,
        "use_header_login": cfg.use_header_login,
        "credentials": cfg.credentials.model_dump() if cfg.credentials else None,
        "extra": {"auto_login_header": header.model_dump()} if header else {},
    }


def load_web_config(path: Path | None = None,
                    environ: Mapping[str, str] | None = None) -> WebEnvConfig:
    """The YAML file's settings (if any), overridden by `BENCHWRIGHT_WEB_<SITE>_URL` variables."""
    raw = _read_yaml(path) if path is not None else {}
    raw = _with_env_urls(raw, os.environ if environ is None else environ)
    try:
        return WebEnvConfig.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(exc, path) from None


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_untrusted_yaml(path, what="the web config", max_bytes=2**20,
                               hint="pass a YAML file to --config; see docs/web.md")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserInputError("the web config must be a mapping with a `sites:` key", path=path,
                             hint="see docs/web.md for the format")
    return _normalise_site_keys(data, path)


def _normalise_site_keys(data: dict[str, Any], path: Path | None) -> dict[str, Any]:
    sites = data.get("sites")
    if sites is not None and not isinstance(sites, dict):
        raise UserInputError("sites: is a mapping of site name to its settings, not a "
                             f"{type(sites).__name__}", path=path,
                             hint="e.g. sites: {shopping: {url: http://localhost:7770}}; see "
                             "docs/web.md")
    if not isinstance(sites, dict):
        return data
    renamed: dict[str, Any] = {}
    for key, value in sites.items():
        site = Site.parse(str(key))
        if site is None:
            raise UserInputError(f"unknown site at key sites.{key}", path=path,
                                 hint=f"known sites: {', '.join(s.value for s in Site)}")
        renamed[site.value] = value if value is not None else {}
    return {**data, "sites": renamed}


def _with_env_urls(raw: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    sites = dict(raw.get("sites") or {})
    for name, value in sorted(environ.items()):
        if not (name.startswith(ENV_PREFIX) and name.endswith(ENV_SUFFIX)) or not value.strip():
            continue
        site = Site.parse(name[len(ENV_PREFIX):-len(ENV_SUFFIX)])
        if site is None:
            raise UserInputError(f"environment variable {name} names no known site",
                                 hint=f"use {ENV_PREFIX}<SITE>{ENV_SUFFIX} with SITE one of "
                                 f"{', '.join(s.name for s in Site)}")
        entry = dict(sites.get(site.value) or {})
        entry.pop("url", None)
        entry["urls"] = [u.strip() for u in value.split(",") if u.strip()]
        sites[site.value] = entry
    return {**raw, "sites": sites} if sites else raw


def _config_error(exc: ValidationError, path: Path | None) -> UserInputError:
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    key = ".".join(loc) or "(top level)"
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown key"
    site = Site.parse(loc[1]) if len(loc) > 2 and loc[0] == "sites" and loc[2] == "urls" else None
    source = f" (the file or {ENV_PREFIX}{site.name}{ENV_SUFFIX})" if site else ""
    return UserInputError(f"invalid web config at key {key}: {message}{source}", path=path,
                          hint="see docs/web.md for the format")
