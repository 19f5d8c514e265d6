"""The one table of pluggable parts: tracks, runtimes, executors, graders, coding agents, web
agents and web trial runners. Every entry is a name -> "module:attribute", imported only when
asked for, and every kind is read the same way (`Kind.get`); an unknown name is the user's
error listing the choices.

The types a kind yields are the base interfaces (`benchwright.protocols`); where a kind belongs
to one track (coding agents, web agents, trial runners, graders), it yields a `FromSetup`: a class
built from the track's one settings object, so no caller branches on a name. This module
names the tracks' modules only as strings: importing it loads nothing of theirs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from benchwright.errors import UserInputError
from benchwright.protocols import Executor, ExecutorSetup, FromSetup, Runtime, Track

T = TypeVar("T")


@dataclass(frozen=True)
class Kind(Generic[T]):
    """One kind of part: its registered names and where each lives."""

    label: str
    """What the part is called in messages ("coding agent")."""
    table: Mapping[str, str]
    """Name -> "module:attribute"."""

    def __contains__(self, name: object) -> bool:
        return name in self.table

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def names(self) -> list[str]:
        """The registered names, in the table's order (the CLI's order of choices)."""
        return list(self.table)

    def check(self, name: str) -> None:
        """Refuse a name that is not registered, listing the choices."""
        if name not in self.table:
            raise UserInputError(f"unknown {self.label} {name!r}",
                                 hint=f"choose one of: {', '.join(self.table)}")

    def get(self, name: str) -> T:
        """The part registered under `name`, imported now."""
        self.check(name)
        module, _, attribute = self.table[name].partition(":")
        return cast(T, getattr(importlib.import_module(module), attribute))


TRACKS: Kind[Track] = Kind("track", {
    "coding": "benchwright.coding.track:TRACK",
    "web": "benchwright.web.track:TRACK",
})
# Manifests written before the `track` field: the track by the manifest's exact format.
TRACK_FORMATS: dict[str, str] = {
    "benchwright.run/1": "coding",
    "benchwright.web-run/1": "web",
}
# How the CLI shows what a track's `regrade` returned (`eval RUN_DIR`).
REGRADE_VIEWS: Kind[Callable[..., None]] = Kind("track", {
    "coding": "benchwright.cli.regrade_views:show_coding",
    "web": "benchwright.cli.regrade_views:show_web",
})
# The viewer's pages of each track's runs (`benchwright view`), by the track's name.
VIEW_PAGES: Kind[Any] = Kind("track", {
    "coding": "benchwright.view.coding_pages:PAGES",
    "web": "benchwright.view.web_pages:PAGES",
})
RUNTIMES: Kind[type[Runtime]] = Kind("runtime", {
    "bwrap": "benchwright.sandbox:BwrapRuntime",
    "unsafe-local": "benchwright.sandbox:UnsafeLocalRuntime",
})
EXECUTORS: Kind[FromSetup[ExecutorSetup, Executor]] = Kind("executor", {
    "local": "benchwright.executors.local:LocalExecutor",
    "ray": "benchwright.executors.ray_cluster:RayExecutor",
})
GRADERS: Kind[Callable[..., Any]] = Kind("grader", {
    "pytest": "benchwright.coding.grading:grade_checkpoint",
})
CODING_AGENTS: Kind[FromSetup[Any, Any]] = Kind("agent", {
    "oracle": "benchwright.coding.agents.oracle:OracleAgent",
    "replay": "benchwright.coding.agents.replay:ReplayAgent",
    "command": "benchwright.coding.agents.command:CommandAgent",
    "claude_code": "benchwright.coding.agents.claude_code:ClaudeCodeAgent",
    "codex": "benchwright.coding.agents.codex:CodexAgent",
    "gemini": "benchwright.coding.agents.gemini:GeminiAgent",
    "opencode": "benchwright.coding.agents.opencode:OpencodeAgent",
    "openhands": "benchwright.coding.agents.openhands:OpenhandsAgent",
    "mini": "benchwright.coding.agents.mini:MiniAgent",
})
WEB_AGENTS: Kind[FromSetup[Any, Any]] = Kind("web agent", {
    "scripted": "benchwright.web.browser.web_agents:ScriptedAgent",
    "browser-use": "benchwright.web.browser.web_agents:BrowserUseAgent",
})
TRIAL_RUNNERS: Kind[Callable[[], Any]] = Kind("trial runner", {
    "browser": "benchwright.web.runs.browser_runner:BrowserTrialRunner",
    "browser-process": "benchwright.web.runs.trial_process:ProcessTrialRunner",
    "fake": "benchwright.web.runs.fake_runner:FakeTrialRunner",
})
