"""The grading image's recipe: what decides its digest, and nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import PrerequisiteError
from benchwright.sandbox.images import engines
from benchwright.sandbox.images.recipe import IMAGE_NAME, PACKAGES, Recipe, default_recipe


def _recipe(**change: object) -> Recipe:
    base = Recipe(packages=list(PACKAGES), python_version="3.12.1",
                  python=Path("/opt/py/bin/python3.12"), python_prefix=Path("/opt/py"),
                  uv_version="uv 0.1")
    return base.model_copy(update=change)


def test_the_tag_carries_the_digest_and_the_name_does_not_change_it() -> None:
    recipe = _recipe()
    assert recipe.tag == f"{IMAGE_NAME}:{recipe.digest()[:12]}"
    assert _recipe(image_name="localhost/other").digest() == recipe.digest()


@pytest.mark.parametrize("change", [
    {"packages": [*PACKAGES, "git"]}, {"python_version": "3.12.2"}, {"suite": "trixie"},
    {"python_prefix": Path("/opt/other")}, {"uv_version": "uv 0.2"}, {"format": 99},
])
def test_whatever_goes_into_the_image_changes_the_digest(change: dict[str, object]) -> None:
    assert _recipe(**change).digest() != _recipe().digest()


def test_the_default_recipe_takes_the_interpreter_from_benchwrights_lookup() -> None:
    from benchwright.sandbox.interpreters import resolve_python

    recipe = default_recipe()
    found = resolve_python("3.12")
    assert (recipe.python, recipe.python_prefix) == (found.executable, found.prefix)
    assert recipe.python_version.startswith("3.12.")
    assert "bubblewrap" in recipe.packages  # the jail runs inside the container


def test_debians_own_interpreter_is_installed_not_copied() -> None:
    assert _recipe(python_prefix=Path("/usr")).from_debian
    assert not _recipe().from_debian


def test_an_unknown_or_missing_engine_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PrerequisiteError, match="unknown container engine"):
        engines.find_engine("lxc")
    monkeypatch.setattr(engines.shutil, "which", lambda _name: None)
    engines.find_engine.cache_clear()
    try:
        with pytest.raises(PrerequisiteError, match="podman is not installed") as caught:
            engines.find_engine("podman")
    finally:
        engines.find_engine.cache_clear()
    assert "apt-get install -y podman" in (caught.value.hint or "")
