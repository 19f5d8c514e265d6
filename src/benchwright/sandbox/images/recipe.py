"""The recipe of the default grading image, and the digest it is cached under.

The image is Debian (`debootstrap --variant=minbase`, from Debian's packages only, no registry)
plus the interpreter benchwright grades with, found by its own lookup (`interpreters`: Python
3.12 by default, never downloaded) and copied in at the same path, plus uv and `python`,
`python3` (links to that interpreter) at /usr/local/bin, as in SCBench's image.
Environments built for it (`environments`) therefore name the same interpreter path inside a
container and on the host. The digest covers everything that decides what goes in (suite,
packages, the interpreter's version and path, uv's version, the recipe's format); the mirror
it is fetched from does not. The tag carries the digest: a changed recipe is a new image, an
unchanged one is never rebuilt (`images.build`).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from pydantic import BaseModel

from benchwright.sandbox.environments import uv_binary
from benchwright.sandbox.interpreters import DEFAULT_PYTHON, resolve_python

RECIPE_FORMAT = 2  # 2: python, python3, python3.X in /usr/local/bin
IMAGE_NAME = "localhost/benchwright-grader"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# The jail's bubblewrap, certificates, and what an interpreter built outside Debian (pyenv's)
# links against: its standard library's extension modules (tkinter's Tk is left out).
PACKAGES = (
    "bubblewrap", "ca-certificates", "libbz2-1.0", "libexpat1", "libffi8", "libgdbm6",
    "liblzma5", "libncursesw6", "libnsl2", "libreadline8", "libsqlite3-0", "libssl3",
    "libuuid1", "zlib1g",
)
# Left out of the interpreter's copy: its own test suite and static library (~190 MB never run).
SKIPPED = ("test", "config-")
LABEL_RECIPE = "benchwright.recipe"
LABEL_PYTHON = "benchwright.python"
LABEL_PREFIX = "benchwright.python.prefix"


class Recipe(BaseModel):
    """What goes into a grading image."""

    format: int = RECIPE_FORMAT
    """The recipe's own version: a change to how images are made makes new digests."""
    suite: str = SUITE
    """The Debian release debootstrap installs."""
    packages: list[str]
    """Debian packages installed beside the minimal base."""
    python_version: str
    """The interpreter's full version."""
    python: Path
    """The interpreter's executable (the same path inside the image)."""
    python_prefix: Path
    """Its installation prefix, copied into the image at the same path (None of it when it is
    Debian's own interpreter under /usr: then Debian's python3 packages are installed)."""
    uv_version: str
    """`uv --version` of the uv copied to /usr/local/bin."""
    image_name: str = IMAGE_NAME
    """The image's name; its tag is the digest's first 12 characters."""

    def digest(self) -> str:
        """The sha256 of the recipe (the name aside): the image's cache key."""
        payload = self.model_dump_json(exclude={"image_name"})
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def tag(self) -> str:
        """`localhost/benchwright-grader:<digest[:12]>`."""
        return f"{self.image_name}:{self.digest()[:12]}"

    @property
    def from_debian(self) -> bool:
        """The interpreter is Debian's own (its prefix is /usr): installed, not copied."""
        return self.python_prefix == Path("/usr")


def default_recipe(python: str | None = None, image_name: str = IMAGE_NAME) -> Recipe:
    """The recipe for `python` (a version such as `3.12`, or a path; default 3.12)."""
    interpreter = resolve_python(python or DEFAULT_PYTHON)
    packages = list(PACKAGES)
    if interpreter.prefix == Path("/usr"):
        packages += [f"python{interpreter.minor}", f"python{interpreter.minor}-venv"]
    return Recipe(packages=sorted(packages), python_version=interpreter.version,
                  python=interpreter.executable, python_prefix=interpreter.prefix,
                  uv_version=_uv_version(), image_name=image_name)


def _uv_version() -> str:
    done = subprocess.run([uv_binary(), "--version"], capture_output=True, text=True,
                          check=False, timeout=60)
    return done.stdout.strip() or "unknown"
