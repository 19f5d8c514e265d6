"""`benchwright images build`: the default grading image, built locally from Debian's packages."""

from __future__ import annotations

from typing import Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.verbosity import notes_console

app = typer.Typer(help="Container images for `--runtime podman|docker` (docs/runtimes.md).",
                  no_args_is_help=True)


@app.command("build")
def build_cmd(
    engine: Annotated[str, typer.Option(help="The container engine that stores the image: "
                                        "podman or docker.")] = "podman",
    python: Annotated[str | None, typer.Option(
        help="The interpreter to put in the image: a version (found on this machine, never "
        "downloaded) or a path. Default: 3.12.")] = None,
    mirror: Annotated[str, typer.Option(help="The Debian mirror debootstrap fetches from.")]
    = "http://deb.debian.org/debian",
    as_json: Annotated[bool, typer.Option("--json", help="Print the image as JSON.")] = False,
) -> None:
    """Build the default grading image (Debian minbase + Python + uv + bubblewrap), once per
    recipe: an image whose recipe is unchanged is reused, not rebuilt."""
    from benchwright.sandbox.images.build import ensure_image
    from benchwright.sandbox.images.engines import find_engine
    from benchwright.sandbox.images.recipe import default_recipe

    found = find_engine(engine)
    recipe = default_recipe(python)
    console = notes_console()
    built = ensure_image(found, recipe, mirror=mirror,
                         note=lambda line: console.print(line, highlight=False))
    if as_json:
        echo_json(built.model_dump(mode="json"))
        return
    state = "reused" if built.reused else "built"
    typer.echo(f"{state} {built.tag} ({built.id[:19]}), Python {recipe.python_version}")
