"""Build the grading image a recipe describes, once per machine: the engine's store keeps it
under a tag carrying the recipe's digest, and a build happens only when no image has that tag.

A build: `debootstrap --variant=minbase` of the recipe's Debian suite into a scratch root (the
.deb files cached beside it for the next build), the interpreter's prefix copied in at its own
path, uv at /usr/local/bin, then `tar | ENGINE import` with the recipe's labels. No registry is
contacted. A file lock keeps two processes from building one recipe at once; a scratch root a
killed build left behind is removed by the next build of that recipe.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import InfrastructureError, PrerequisiteError
from benchwright.sandbox.caches import cache_base
from benchwright.sandbox.environments import file_lock, uv_binary
from benchwright.sandbox.images import recipe as rc
from benchwright.sandbox.images.engines import Engine

Note = Callable[[str], None]


class BuiltImage(BaseModel):
    """A grading image in the engine's store."""

    tag: str
    """Its name and tag (`localhost/benchwright-grader:<digest[:12]>`)."""
    id: str
    """The engine's image id (`sha256:...`): what a run records and runs."""
    recipe_digest: str
    """The recipe's digest (the image's label `benchwright.recipe`)."""
    reused: bool
    """True when the store already held it and nothing was built."""


def images_root() -> Path:
    """Where builds keep their scratch roots and Debian's downloaded packages."""
    return cache_base() / "images"


def ensure_image(engine: Engine, recipe: rc.Recipe, *, mirror: str = rc.MIRROR,
                 note: Note = lambda _line: None) -> BuiltImage:
    """The recipe's image: from the engine's store, else built now (about a minute)."""
    digest = recipe.digest()
    found = engine.image_id(recipe.tag)
    if found is None:
        root = images_root()
        root.mkdir(parents=True, exist_ok=True)
        with file_lock(root / f"{digest[:12]}.lock"):
            found = engine.image_id(recipe.tag)  # built by another process meanwhile
            if found is None:
                _build(engine, recipe, mirror, root, note)
                return BuiltImage(tag=recipe.tag, id=_stored(engine, recipe.tag),
                                  recipe_digest=digest, reused=False)
    return BuiltImage(tag=recipe.tag, id=found, recipe_digest=digest, reused=True)


def _stored(engine: Engine, tag: str) -> str:
    found = engine.image_id(tag)
    if found is None:
        raise InfrastructureError(f"{engine.name} imported the image but does not list {tag}")
    return found


def _build(engine: Engine, recipe: rc.Recipe, mirror: str, root: Path, note: Note) -> None:
    _require_builder()
    prefix = f"rootfs-{recipe.digest()[:12]}-"
    for stale in root.glob(f"{prefix}*"):  # left by a build that was killed
        shutil.rmtree(stale, ignore_errors=True)
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    try:
        rootfs = scratch / "rootfs"
        note(f"debootstrap {recipe.suite} ({len(recipe.packages)} packages, about a minute)")
        _debootstrap(recipe, rootfs, mirror, root / "debs")
        if not recipe.from_debian:
            note(f"adding Python {recipe.python_version} from {recipe.python_prefix}")
            _copy_prefix(recipe.python_prefix, rootfs)
        _copy_uv(rootfs)
        _link_python(recipe, rootfs)
        note(f"importing into {engine.name} as {recipe.tag}")
        _import(engine, recipe, rootfs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _require_builder() -> None:
    if shutil.which("debootstrap") is None:
        raise PrerequisiteError("building the grading image needs debootstrap",
                                hint="install it with `sudo apt-get install -y debootstrap`")
    if os.geteuid() != 0:
        raise PrerequisiteError("building the grading image needs root (debootstrap chroots)",
                                hint="run `sudo benchwright images build` once; later runs "
                                "reuse the image")


def _debootstrap(recipe: rc.Recipe, rootfs: Path, mirror: str, debs: Path) -> None:
    debs.mkdir(parents=True, exist_ok=True)
    argv = ["debootstrap", "--variant=minbase", f"--cache-dir={debs}",
            f"--include={','.join(recipe.packages)}", recipe.suite, str(rootfs), mirror]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log = rootfs / "debootstrap" / "debootstrap.log"
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InfrastructureError(f"debootstrap failed: {detail}",
                                  hint=f"is {mirror} reachable? (see {log} if it exists)")


def _copy_prefix(prefix: Path, rootfs: Path) -> None:
    """The interpreter's prefix at the same path inside, its parents traversable by anyone (the
    sandbox's uid is not root's), without its test suite and static library."""
    target = rootfs / prefix.relative_to("/")
    lib = prefix / "lib"

    def skipped(folder: str, names: list[str]) -> set[str]:
        if Path(folder).parent != lib:
            return set()
        return {n for n in names if n == "test" or n.startswith("config-")}

    shutil.copytree(prefix, target, symlinks=True, ignore=skipped)
    for parent in target.relative_to(rootfs).parents:
        (rootfs / parent).chmod(0o755)


def _copy_uv(rootfs: Path) -> None:
    uv = Path(uv_binary())
    for binary in (uv, uv.with_name("uvx")):
        if binary.is_file():
            shutil.copy2(binary, rootfs / "usr" / "local" / "bin" / binary.name)


def _link_python(recipe: rc.Recipe, rootfs: Path) -> None:
    """`python`, `python3` and `python3.X` on every PATH (/usr/local/bin), as in SCBench's
    image: tests and programs that start `python3` by name with a PATH of their own get it."""
    minor = ".".join(recipe.python_version.split(".")[:2])
    for name in ("python", "python3", f"python{minor}"):
        link = rootfs / "usr" / "local" / "bin" / name
        if not link.exists():
            link.symlink_to(recipe.python)


def _import(engine: Engine, recipe: rc.Recipe, rootfs: Path) -> None:
    labels = {rc.LABEL_RECIPE: recipe.digest(), rc.LABEL_PYTHON: str(recipe.python),
              rc.LABEL_PREFIX: str(recipe.python_prefix)}
    changes = [arg for key, value in labels.items() for arg in ("--change", f"LABEL {key}={value}")]
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."],
                           stdout=subprocess.PIPE)
    try:
        done = subprocess.run(engine.command("import", *changes, "-", recipe.tag),
                              stdin=tar.stdout, capture_output=True, check=False)
    finally:
        if tar.stdout is not None:
            tar.stdout.close()
        tar.wait()
    if done.returncode != 0 or tar.returncode != 0:
        detail = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise InfrastructureError(f"{engine.name} import failed: {detail}")


def default_image(engine: str = "podman", python: str | None = None,
                  note: Note = lambda _line: None) -> BuiltImage:
    """The default grading image for `engine`, built on first use (what `benchwright images
    build` does; a site image or a test builds on top of its tag)."""
    from benchwright.sandbox.images.engines import find_engine

    return ensure_image(find_engine(engine), rc.default_recipe(python), note=note)
