"""The image a run's containers use, resolved once when the run starts: a reference in the
engine's store, an SCBench environment file (`configs/environments/*.yaml` with `type: docker`,
read as it is: its `docker.image`), or the default grading image (built here if missing).
Never pulled: an image the store does not hold is a PrerequisiteError that says how to get it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import PrerequisiteError, UserInputError
from benchwright.files.untrusted import read_untrusted_yaml
from benchwright.sandbox.images.engines import find_engine

ENVIRONMENT_SUFFIXES = (".yaml", ".yml")


class ResolvedImage(BaseModel):
    """A run's image."""

    ref: str
    """The reference it was found by (a tag, or the id itself)."""
    id: str
    """The engine's image id (`sha256:...`): what every container of the run starts from."""


def resolve_image(engine_name: str, request: str | None) -> ResolvedImage:
    """The image `request` names (None: the default grading image) in `engine_name`'s store."""
    engine = find_engine(engine_name)
    if request is None:
        from benchwright.sandbox.images.build import default_image

        built = default_image(engine_name)
        return ResolvedImage(ref=built.tag, id=built.id)
    ref = environment_image(Path(request)) if request.endswith(ENVIRONMENT_SUFFIXES) \
        else request
    found = engine.image_id(ref)
    if found is None:
        raise PrerequisiteError(
            f"image {ref} is not in {engine.name}'s store (benchwright never pulls an image)",
            hint=f"get it yourself (`{engine.name} pull {ref}`), or leave --image out to use "
            "the default grading image (`benchwright images build`)")
    return ResolvedImage(ref=ref, id=found)


def environment_image(path: Path) -> str:
    """The image of an SCBench environment file (`type: docker`, `docker.image`)."""
    data = read_untrusted_yaml(path, what="environment file")
    kind = data.get("type") if isinstance(data, dict) else None
    docker = data.get("docker") if isinstance(data, dict) else None
    image = docker.get("image") if isinstance(docker, dict) else None
    if kind != "docker" or not isinstance(image, str) or not image.strip():
        raise UserInputError("the environment file names no docker image", path=path,
                             hint="give a file with `type: docker` and `docker: {image: ...}` "
                             "(SCBench's configs/environments/), or an image reference")
    return image.strip()


def image_for_runtime(runtime: str, request: str | None,
                      unsafe_no_sandbox: bool = False) -> str | None:
    """The image id a runtime runs on: resolved now for podman/docker, None for the others
    (an `--image` given to them is refused: it would be silently unused)."""
    from benchwright.sandbox.bwrap import CONTAINER_RUNTIMES

    if runtime in CONTAINER_RUNTIMES and not unsafe_no_sandbox:
        return resolve_image(runtime, request).id
    if request is not None:
        raise UserInputError(f"--image is for --runtime podman|docker, not {runtime}",
                             hint="add --runtime podman (or docker), or leave --image out")
    return None
