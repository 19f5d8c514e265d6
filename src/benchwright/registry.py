"""The one table of pluggable parts: tracks, runtimes, executors, graders, coding agents, web
agents, web trial runners, web suites and web sites. Every entry is a name ->
"module:attribute", imported only when asked for, and every kind is read the same way
(`Kind.get`); an unknown name is the user's error listing the choices.

The types a kind yields are the base interfaces (`benchwright.protocols`); where a kind belongs
to one track (coding agents, web agents, trial runners, graders), it yields a `FromSetup`: a class
built from the track's one settings object, so no caller branches on a name. This module
names the tracks' modules only as strings: importing it loads nothing of theirs.

Plugins: a kind with an entry-point group (`benchwright.agents`, `benchwright.web_agents`,
`benchwright.runtimes`, `benchwright.graders`, `benchwright.web_suites`,
`benchwright.web_sites`) also offers every entry point an installed
distribution declares in that group, read the same way as the built-ins (a built-in keeps its
name); and a name written "module:attribute" is imported as it is. A plugin that fails to import
is an error naming it and its distribution, never skipped (docs/write-an-agent.md).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from benchwright.errors import PluginError, UserInputError

if TYPE_CHECKING:  # types only: the CLI reads the tables at start-up (pydantic is not needed)
    import importlib.metadata

    from benchwright.protocols import AnyTrack, Executor, ExecutorSetup, FromSetup, Runtime

T = TypeVar("T")
BUILT_IN = "built-in"
# "package.module:Attribute": a part named by where it lives, not registered anywhere
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$", re.ASCII)


@dataclass(frozen=True)
class Entry:
    """One part a kind offers, and where it comes from."""

    name: str
    """The name it is asked for by."""
    target: str
    """Where it lives: "module:attribute"."""
    source: str
    """`built-in`, or the distribution that declares it ("NAME VERSION")."""
    shadowed: bool = False
    """A plugin whose name a built-in already has (the built-in is used)."""


@dataclass(frozen=True)
class Kind(Generic[T]):
    """One kind of part: its registered names and where each lives."""

    label: str
    """What the part is called in messages ("coding agent")."""
    table: Mapping[str, str]
    """Name -> "module:attribute"."""
    group: str | None = None
    """The entry-point group third-party distributions register this kind in (None: none)."""
    needs: tuple[str, ...] = ()
    """Attributes a part of this kind has (`from_setup` for an agent): a plugin or a
    "module:attribute" without them is refused by name, not an AttributeError later."""
    dotted: bool = True
    """A kind with a group also takes "module:attribute" names (not tracks: a track's name
    is read from a run folder's manifest, which must never choose what is imported)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.names() or self._dotted(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def names(self) -> list[str]:
        """The built-in names in the table's order (the CLI's order of choices), then the
        plugins'."""
        return list(dict.fromkeys(e.name for e in self.entries()))

    def entries(self) -> list[Entry]:
        """Every part on offer: the built-ins, then the installed plugins (by name)."""
        built_in = [Entry(name, target, BUILT_IN) for name, target in self.table.items()]
        plugins = [Entry(p.name, p.value, _source(p), shadowed=p.name in self.table)
                   for p in self._plugins()]
        return built_in + sorted(plugins, key=lambda e: (e.name, e.source))

    def check(self, name: str) -> None:
        """Refuse a name that is not registered, listing the choices."""
        if name not in self:
            spec = ", or give module:Class" if self._takes_dotted() else ""
            raise UserInputError(f"unknown {self.label} {name!r}",
                                 hint=f"choose one of: {', '.join(self.names())}{spec}")

    def get(self, name: str) -> T:
        """The part registered under `name` (or at "module:attribute"), imported now."""
        self.check(name)
        if name in self.table:
            return cast(T, _load(self.table[name]))
        plugins = [p for p in self._plugins() if p.name == name]
        if len(plugins) > 1:
            raise PluginError(f"{len(plugins)} installed distributions register the "
                              f"{self.label} {name!r}: {', '.join(_source(p) for p in plugins)}",
                              hint="uninstall all but one")
        found = (_load_plugin(self.label, plugins[0]) if plugins
                 else _load_dotted(self.label, name))
        lacking = [attribute for attribute in self.needs if not hasattr(found, attribute)]
        if lacking:
            raise PluginError(f"{name!r} is not a usable {self.label}: it has no "
                              f"{', '.join(lacking)}", hint=f"give a class with "
                              f"{', '.join(self.needs)} (docs/write-an-agent.md)")
        return cast(T, found)

    def _plugins(self) -> list[importlib.metadata.EntryPoint]:
        if self.group is None:
            return []
        import importlib.metadata  # not at start-up: a command names its plugins only in use

        return list(importlib.metadata.entry_points(group=self.group))

    def _takes_dotted(self) -> bool:
        return self.group is not None and self.dotted

    def _dotted(self, name: str) -> bool:
        return self._takes_dotted() and DOTTED.match(name) is not None


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _source(point: importlib.metadata.EntryPoint) -> str:
    dist = point.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unnamed distribution"


def _load_plugin(label: str, point: importlib.metadata.EntryPoint) -> Any:
    """An entry point's object; any failure names the plugin and its distribution."""
    try:
        return _load(point.value)
    except Exception as exc:  # a plugin's import may fail in any way: say which and why
        raise PluginError(
            f"the {label} plugin {point.name!r} ({point.value}, from {_source(point)}, entry "
            f"point group {point.group}) failed to load: {type(exc).__name__}: {exc}",
            hint=f"fix or reinstall {point.dist.name if point.dist else 'it'}, or uninstall "
            "it") from None


def _load_dotted(label: str, name: str) -> Any:
    """A part given as "module:attribute"; a failure says what could not be imported."""
    try:
        return _load(name)
    except Exception as exc:  # the user's own module: any failure is theirs to see
        raise PluginError(f"the {label} {name!r} failed to load: {type(exc).__name__}: {exc}",
                          hint="check the module is importable (installed, or on PYTHONPATH)"
                          ) from None


@dataclass(frozen=True)
class TrackEntry:
    """Where each part of one track lives, "module:attribute" each: adding a track is one
    entry in `TRACK_ENTRIES` (or, from another distribution, one entry point of the group
    `benchwright.tracks` naming such an object). Nothing else branches on a track's name: the
    CLI, the API and the viewer ask for a part here (docs/architecture.md, "Add a track")."""

    track: str
    """Its `protocols.Track` (the run kernel's steps, readers, report)."""
    run_command: str
    """`benchwright run NAME`: a Typer command function or app."""
    regrade_view: str | None = None
    """How `eval RUN_DIR` shows what its `regrade` returned: (run_dir, outcome, as_json); None:
    its runs cannot be graded again (`eval` says so)."""
    run_view: str | None = None
    """What `benchwright.load_run` returns for its runs: a class with `open(path, track)`; None:
    `load_run` says the track has none."""
    view_pages: str | None = None
    """The viewer's pages of its runs (`view.track_pages.TrackPages`); None: the viewer says it
    has no pages for the track."""


TRACK_ENTRIES: dict[str, TrackEntry] = {
    "coding": TrackEntry(
        track="benchwright.coding.track:TRACK",
        run_command="benchwright.cli.run_cmd:coding_cmd",
        regrade_view="benchwright.cli.regrade_views:show_coding",
        run_view="benchwright.api.runs:CodingRun",
        view_pages="benchwright.view.coding_pages:PAGES"),
    "web": TrackEntry(
        track="benchwright.web.track:TRACK",
        run_command="benchwright.cli.run_web_cmd:run_web_cmd",
        regrade_view="benchwright.cli.regrade_views:show_web",
        run_view="benchwright.api.runs:WebRun",
        view_pages="benchwright.view.web_pages:PAGES"),
    # no regrade, load_run or viewer pages yet (docs/harbor.md, "Not supported yet")
    "harbor": TrackEntry(
        track="benchwright.harbor.track:TRACK",
        run_command="benchwright.cli.run_harbor_cmd:run_harbor_cmd"),
}
TRACK_PARTS = ("track", "run_command", "regrade_view", "run_view", "view_pages")


class TrackKind(Kind["AnyTrack"]):
    """The tracks: `get(name)` is the track itself, `part(name, part)` any other part of its
    entry (a plugin's entry is the `TrackEntry` its entry point names)."""

    def entry(self, name: str) -> TrackEntry:
        """The track's entry, built in or a plugin's."""
        self.check(name)
        if name in TRACK_ENTRIES:
            return TRACK_ENTRIES[name]
        found = super().get(name)
        if not isinstance(found, TrackEntry):
            raise PluginError(f"{name!r} is not a usable track: its entry point names no "
                              "benchwright.registry.TrackEntry",
                              hint="name a TrackEntry (docs/architecture.md, \"Add a track\")")
        return found

    def get(self, name: str) -> AnyTrack:
        return cast("AnyTrack", _load(self.entry(name).track))

    def part(self, name: str, part: str) -> Any:
        """One part of the track's entry (`TRACK_PARTS`), imported now; a part the track does
        not have is the user's error, said in one line."""
        target = getattr(self.entry(name), part)
        if target is None:
            raise UserInputError(f"{name} runs have no {part.replace('_', ' ')} yet",
                                 hint=f"the {name} track does not provide it")
        return _load(target)


TRACKS = TrackKind("track", {name: e.track for name, e in TRACK_ENTRIES.items()},
                   group="benchwright.tracks", dotted=False)
# Manifests written before the `track` field: the track by the manifest's exact format (a new
# track writes `track` from its first run and needs no line here).
TRACK_FORMATS: dict[str, str] = {
    "benchwright.run/1": "coding",
    "benchwright.web-run/1": "web",
}
RUNTIMES: Kind[type[Runtime]] = Kind("runtime", {
    "bwrap": "benchwright.sandbox.bwrap:BwrapRuntime",
    "unsafe-local": "benchwright.sandbox.bwrap:UnsafeLocalRuntime",
    "podman": "benchwright.sandbox.container:PodmanRuntime",
    "docker": "benchwright.sandbox.container:DockerRuntime",
}, group="benchwright.runtimes")
EXECUTORS: Kind[FromSetup[ExecutorSetup, Executor]] = Kind("executor", {
    "local": "benchwright.executors.local:LocalExecutor",
    "ray": "benchwright.executors.ray_cluster:RayExecutor",
})
GRADERS: Kind[Callable[..., Any]] = Kind("grader", {
    "pytest": "benchwright.coding.grading.grader:grade_checkpoint",
}, group="benchwright.graders")
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
}, group="benchwright.agents", needs=("from_setup",))
WEB_AGENTS: Kind[FromSetup[Any, Any]] = Kind("web agent", {
    "scripted": "benchwright.web.browser.web_agents:ScriptedAgent",
    "browser-use": "benchwright.web.browser.web_agents:BrowserUseAgent",
}, group="benchwright.web_agents", needs=("from_setup",))
# Web benchmarks: a suite is a function (env config path or None) -> `web.runs.suites.Suite`;
# a site is a `web.config.Site` its tasks name (a second benchmark registers both).
WEB_SUITES: Kind[Callable[..., Any]] = Kind("web suite", {
    "local": "benchwright.web.trials.suites:open_local",
    "webarena-verified": "benchwright.web.trials.suites:open_webarena",
}, group="benchwright.web_suites")
WEB_SITES: Kind[Any] = Kind("web site", {
    name: f"benchwright.web.sites.config:Site.{name.upper()}" for name in (
        "shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage")
}, group="benchwright.web_sites")
# The entry-point groups of the kinds third-party distributions may add to.
PLUGIN_KINDS: dict[str, Kind[Any]] = {
    "coding agent": CODING_AGENTS, "web agent": WEB_AGENTS, "runtime": RUNTIMES,
    "grader": GRADERS, "web suite": WEB_SUITES, "web site": WEB_SITES}
TRIAL_RUNNERS: Kind[Callable[[], Any]] = Kind("trial runner", {
    "browser": "benchwright.web.trials.browser_runner:BrowserTrialRunner",
    "browser-process": "benchwright.web.trials.trial_process:ProcessTrialRunner",
    "fake": "benchwright.web.trials.fake_runner:FakeTrialRunner",
})
