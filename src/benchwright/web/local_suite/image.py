"""A container image of one local-suite site, for running `web env start|stop|reset` without the
official WebArena images (tens of GB) or any registry: the forum (site `reddit`) with an env-ctrl
endpoint (`benchwright.web.local_suite.site_container`), on top of the default grading image.

    from benchwright.web.local_suite.image import site_image
    image = site_image("podman")       # SiteImage: tag, id, digest, reused
    # sites: {reddit: {url: http://127.0.0.1:9999, image: <image.tag>}} in the web config

Built with `ENGINE build` from a context of copied files only (no RUN step, so nothing runs while
building and no registry is asked: the base is `sandbox.images.build.default_image`, built from
Debian's packages). The tag carries a digest of the base image's id, the interpreter, the copied
files and the environment: the image is built once per machine and rebuilt only when one of them
changes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import InfrastructureError
from benchwright.sandbox.environments import file_lock
from benchwright.sandbox.images import recipe as rc
from benchwright.sandbox.images.build import Note, default_image, images_root
from benchwright.sandbox.images.engines import Engine, find_engine
from benchwright.web.local_suite import forum, listing, pages, routing, site_container

SITE_IMAGE_FORMAT = 1
IMAGE_NAME = "localhost/benchwright-site-reddit"
LABEL_SITE = "benchwright.site"
LABEL_DIGEST = "benchwright.site.digest"
# The forum and what it imports: the standard library and these modules only, each copied at its
# own dotted path under empty package files (a test runs them alone, so a new import is caught
# before an image is built; named as modules, so a module moved to another folder goes along).
SITE_MODULES = (routing, pages, listing, forum, site_container)
INSIDE = "/opt/benchwright-site"
ENTRY = site_container.__name__


class SiteImage(BaseModel):
    """A site image in the engine's store."""

    tag: str
    """Its name and tag (`localhost/benchwright-site-reddit:<digest[:12]>`)."""
    id: str
    """The engine's image id (`sha256:...`)."""
    digest: str
    """The digest of what went in (the label `benchwright.site.digest`)."""
    base: str
    """The image it was built on (the grading image's tag, or a site image's)."""
    reused: bool
    """True when the store already held it and nothing was built."""


def site_files() -> dict[str, bytes]:
    """The files the image holds, by path under its PYTHONPATH (`benchwright/__init__.py` ...)."""
    files: dict[str, bytes] = {}
    for module in SITE_MODULES:
        parts = module.__name__.split(".")
        for depth in range(1, len(parts)):
            files.setdefault("/".join([*parts[:depth], "__init__.py"]), b"")
        files["/".join(parts) + ".py"] = Path(str(module.__file__)).read_bytes()
    return files


def site_image(engine: str = "podman", env: Mapping[str, str] | None = None,
               note: Note = lambda _line: None) -> SiteImage:
    """The site image (built on first use, on top of the default grading image); `env` sets
    the container's environment (BENCHWRIGHT_SITE_READY_AFTER_S=never: a site that never
    gets healthy)."""
    base = default_image(engine, note=note)
    found = find_engine(engine)
    python = found.label(base.tag, rc.LABEL_PYTHON)
    if python is None:
        raise InfrastructureError(f"the grading image {base.tag} names no interpreter "
                                  f"(label {rc.LABEL_PYTHON})", hint="rebuild it with "
                                  "`benchwright images build`")
    files = site_files()
    digest = _digest(base.id, python, files, dict(env or {}))
    tag = f"{IMAGE_NAME}:{digest[:12]}"
    spec = _containerfile(base.id, python, digest, dict(env or {}))
    return _ensure(found, tag, digest, base.tag, spec, files)


def _digest(base_id: str, python: str, files: dict[str, bytes], env: dict[str, str]) -> str:
    payload = {"format": SITE_IMAGE_FORMAT, "base": base_id, "python": python, "env": env,
               "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _containerfile(base_id: str, python: str, digest: str, env: dict[str, str]) -> str:
    lines = [f"FROM {base_id}", f"COPY benchwright {INSIDE}/benchwright",
             f"ENV PYTHONPATH={INSIDE} PYTHONDONTWRITEBYTECODE=1",
             *(f"ENV {key}={json.dumps(value)}" for key, value in sorted(env.items())),
             "EXPOSE 80 8877", f"LABEL {LABEL_SITE}=reddit {LABEL_DIGEST}={digest}",
             f"CMD {json.dumps([python, '-S', '-m', ENTRY])}"]
    return "\n".join(lines) + "\n"


def _ensure(engine: Engine, tag: str, digest: str, base: str, spec: str,
            files: dict[str, bytes]) -> SiteImage:
    found = engine.image_id(tag)
    if found is not None:
        return SiteImage(tag=tag, id=found, digest=digest, base=base, reused=True)
    root = images_root()
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / f"site-{digest[:12]}.lock"):
        found = engine.image_id(tag)  # built by another process meanwhile
        if found is None:
            _build(engine, tag, spec, files, root)
            found = engine.image_id(tag)
        if found is None:
            raise InfrastructureError(f"{engine.name} built {tag} but does not list it")
    return SiteImage(tag=tag, id=found, digest=digest, base=base, reused=False)


def _build(engine: Engine, tag: str, spec: str, files: dict[str, bytes], root: Path) -> None:
    context = Path(tempfile.mkdtemp(prefix="site-context-", dir=root))
    try:
        for name, data in files.items():
            (context / name).parent.mkdir(parents=True, exist_ok=True)
            (context / name).write_bytes(data)
        (context / "Containerfile").write_text(spec)
        pull = ["--pull=never"] if engine.name == "podman" else []
        done = engine.call(["build", *pull, "--file", str(context / "Containerfile"),
                            "--tag", tag, str(context)])
    finally:
        shutil.rmtree(context, ignore_errors=True)
    if done.returncode != 0:
        detail = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise InfrastructureError(f"{engine.name} build of {tag} failed: {detail}")
