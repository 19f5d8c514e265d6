"""`benchwright.registry`: one table, every kind read the same way (issue 14)."""

from __future__ import annotations

import inspect

import pytest

from benchwright import registry
from benchwright.errors import UserInputError

KINDS = [registry.TRACKS, registry.RUNTIMES, registry.EXECUTORS, registry.GRADERS,
         registry.CODING_AGENTS, registry.WEB_AGENTS, registry.TRIAL_RUNNERS]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.label)
def test_every_entry_resolves(kind: registry.Kind[object]) -> None:
    for name in kind.names():
        assert kind.get(name) is not None, name


def test_every_part_of_every_track_resolves() -> None:
    # a track's parts (its regrade view, run view, pages, run command) live in its one entry
    # (a part a track leaves out, None, is refused in one line: harbor has no viewer pages yet)
    for name in registry.TRACKS.names():
        for part in registry.TRACK_PARTS:
            if getattr(registry.TRACKS.entry(name), part) is None:
                with pytest.raises(UserInputError, match="no "):
                    registry.TRACKS.part(name, part)
                continue
            assert registry.TRACKS.part(name, part) is not None, (name, part)


def test_a_manifest_cannot_name_a_module_as_its_track() -> None:
    # the track's name comes from a hostile run folder: "module:attribute" is never imported
    with pytest.raises(UserInputError) as caught:
        registry.TRACKS.get("os:system")
    assert "module:Class" not in caught.value.one_line()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.label)
def test_an_unknown_name_lists_the_choices(kind: registry.Kind[object]) -> None:
    with pytest.raises(UserInputError) as caught:
        kind.get("no-such-part")
    line = caught.value.one_line()
    assert f"unknown {kind.label} 'no-such-part'" in line
    assert all(name in line for name in kind.names())


@pytest.mark.parametrize("kind", [registry.CODING_AGENTS, registry.WEB_AGENTS],
                         ids=lambda k: k.label)
def test_agents_are_built_the_same_way(kind: registry.Kind[object]) -> None:
    # one settings object in, the agent out: nobody branches on an agent's name
    for name in kind.names():
        builder = kind.get(name).from_setup
        assert list(inspect.signature(builder).parameters) == ["setup"], name


def test_the_cli_choices_are_the_registry_names() -> None:
    from benchwright.web.trials.models import AgentName

    assert [a.value for a in AgentName] == registry.WEB_AGENTS.names()
    assert "oracle" in registry.CODING_AGENTS and "mini" in registry.CODING_AGENTS


def test_importing_the_registry_loads_no_track() -> None:
    import subprocess
    import sys

    code = ("import sys, benchwright.registry; "
            "print(sorted(m for m in sys.modules if m.startswith(('benchwright.coding', "
            "'benchwright.web', 'benchwright.cli'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
