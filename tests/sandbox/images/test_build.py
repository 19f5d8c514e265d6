"""The default grading image, built locally (debootstrap + import) once per recipe digest."""

from __future__ import annotations

import os
import subprocess

import pytest

from benchwright.sandbox.images.build import default_image
from benchwright.sandbox.images.engines import find_engine
from benchwright.sandbox.images.recipe import LABEL_PYTHON, LABEL_RECIPE, default_recipe
from tests.helpers import run_cli

pytestmark = pytest.mark.container


def test_the_image_is_built_once_and_reused_by_its_recipe_digest() -> None:
    first = default_image()  # built on a fresh machine, else already in podman's store
    again = default_image()
    assert again.reused and again.id == first.id
    engine, recipe = find_engine("podman"), default_recipe()
    assert engine.label(first.tag, LABEL_RECIPE) == recipe.digest()
    assert engine.label(first.tag, LABEL_PYTHON) == str(recipe.python)


def test_the_image_runs_its_python_with_the_standard_library_and_the_jails_bubblewrap() -> None:
    image, recipe = default_image(), default_recipe()
    probe = ("import ssl, sqlite3, lzma, bz2, ctypes, uuid, shutil, sys; "
             "print(sys.version.split()[0], bool(shutil.which('bwrap')), "
             "bool(shutil.which('uv')))")
    done = subprocess.run(
        ["podman", "run", "--rm", "--network", "none", "--ulimit", "nproc=64:64",
         "--ulimit", "nofile=1024:1024", image.id, str(recipe.python), "-c", probe],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [recipe.python_version, "True", "True"]


@pytest.mark.e2e
def test_images_build_prints_the_image_and_reuses_it() -> None:
    default_image()
    done = run_cli("images", "build", "--json")
    assert done.returncode == 0, done.stderr
    assert '"reused": true' in done.stdout


@pytest.mark.e2e
def test_a_missing_engine_is_one_line_and_exit_2() -> None:
    env = dict(os.environ, PATH="/nonexistent")
    done = run_cli("images", "build", "--engine", "docker", env=env)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") <= 1, done.stderr
    assert "docker is not installed" in done.stderr
