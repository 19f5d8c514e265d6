"""`benchwright testing fake-llm`: serve a scripted conversation over the providers' protocols."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from benchwright.errors import Interrupted, UserInputError

app = typer.Typer(help="Test doubles for running agents offline.", no_args_is_help=True)


@app.command("fake-llm")
def fake_llm_cmd(
    script: Annotated[Path, typer.Option(help="The conversation to play (YAML).")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free).")
                    ] = 8765,
) -> None:
    """Serve OpenAI, Anthropic and Gemini endpoints on loopback, replying from SCRIPT."""
    from benchwright.testing import FakeLLMServer, Script

    try:
        server = FakeLLMServer(Script.from_yaml(script), port=port)
    except OSError as exc:
        raise UserInputError(f"cannot listen on port {port}: {exc.strerror}",
                             hint="pick another --port, or 0 for any free one") from None
    typer.echo(f"fake LLM at {server.base_url}  (OpenAI: {server.base_url}/v1, "
               f"Anthropic and Gemini: {server.base_url})")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        raise Interrupted("fake LLM stopped") from None
    finally:
        server.stop()
