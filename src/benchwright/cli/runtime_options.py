"""`--runtime` and `--image`: where sandboxed steps run (docs/runtimes.md), for every command
that runs untrusted code (run coding, eval checkpoint, problems validate)."""

from __future__ import annotations

from typing import Annotated

import typer

RuntimeOption = Annotated[str, typer.Option(
    metavar="bwrap|podman|docker",
    help="Where agents, environment builds and tests run: bubblewrap (default), or a "
    "container per step with podman or the docker CLI (docs/runtimes.md).")]
ImageOption = Annotated[str | None, typer.Option(
    metavar="IMAGE|ENV.yaml",
    help="The container image (podman/docker): a reference already in the engine's store "
    "(never pulled), or an SCBench environment file (configs/environments/*.yaml, type "
    "docker); default: the grading image of `benchwright images build`, built if missing.")]
