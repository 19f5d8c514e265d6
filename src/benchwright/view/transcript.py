"""An agent's trajectory as people read it: one step per model turn, each tool call by kind.

A step is one model call: its text, its thinking, its tool calls with the results that answer
them, its tokens and its time. The same count as the agent's `usage.steps` (model calls), so the
page says one number everywhere. Messages before the first turn (system prompt, task) are the
preamble; messages after a turn that answer no call are the step's notes.

Tool calls are shown by kind, whatever the agent named its tools:
- `shell`: a command, highlighted as shell; a heredoc that writes a file (`cat > f <<'EOF'`) is
  shown as that file with its path, the command around it with the body left out;
- `write`: a whole file with its path, highlighted for its name;
- `edit`: a replacement in a file as side-by-side diff rows (`diffview`);
- `patch`: a patch text, highlighted as a diff;
- `other`: the arguments as JSON.
Everything here is text and `[css_class, text]` tokens: nothing an agent wrote becomes markup.
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult, Trajectory
from benchwright.view.diffview import highlight, side_by_side

FOLD_LINES = 12
"""A tool result longer than this many lines (or FOLD_CHARS) is folded, its head shown."""
FOLD_CHARS = 1500
SHELL_TOOLS = {"bash", "shell", "run_shell_command", "execute_command", "exec_command",
               "local_shell", "run_command", "terminal"}
COMMAND_KEYS = ("command", "cmd", "script")
PATH_KEYS = ("file_path", "path", "filename", "file", "absolute_path", "target_file")
CONTENT_KEYS = ("content", "file_text", "contents", "text")
EDIT_KEYS = (("old_string", "new_string"), ("old_str", "new_str"), ("old_text", "new_text"))
HEREDOC = re.compile(r"""(?P<head>\bcat\s*>{1,2}\s*(?P<path>[^\s<>;&|]+)\s*<<-?\s*(?P<q>['"]?)"""
                     r"""(?P<tag>\w+)(?P=q)[^\n]*\n)(?P<body>.*?)\n(?P=tag)[ \t]*(?=\n|$)""",
                     re.DOTALL)


def transcript(tr: Trajectory) -> dict[str, Any]:
    """What the checkpoint page's Agent section shows of a trajectory."""
    preamble: list[dict[str, str]] = []
    steps: list[dict[str, Any]] = []
    for step in tr.steps:
        if step.role == Role.ASSISTANT:
            steps.append(_turn(len(steps) + 1, step))
        elif steps:
            _answer(steps[-1], step)
        elif step.text:
            preamble.append({"role": str(step.role), "text": step.text})
    _times(steps, tr.steps)
    return {"agent": tr.agent, "model": tr.model, "preamble": preamble, "steps": steps,
            "turns": len(steps), "messages": len(tr.steps), "model_calls": tr.usage.steps}


def _turn(number: int, step: Step) -> dict[str, Any]:
    return {"number": number, "text": step.text, "thinking": step.thinking,
            "input_tokens": step.input_tokens, "output_tokens": step.output_tokens,
            "cache_read_tokens": step.cache_read_tokens, "timestamp": step.timestamp,
            "duration_s": step.duration_s, "calls": [tool_call(c) for c in step.tool_calls],
            "notes": [], "results": []}


def _answer(turn: dict[str, Any], step: Step) -> None:
    """Attach a later message to its turn: each result to the call it answers, else a note."""
    for result in step.tool_results:
        call = _call_for(turn["calls"], result)
        shown = tool_result(result)
        if call is None:
            turn["results"].append(shown)
        else:
            call["result"] = shown
    if step.text:
        turn["notes"].append({"role": str(step.role), "text": step.text})


def _call_for(calls: list[dict[str, Any]], result: ToolResult) -> dict[str, Any] | None:
    open_calls = [c for c in calls if c.get("result") is None]
    if result.call_id is not None:
        return next((c for c in open_calls if c["id"] == result.call_id), None)
    return open_calls[0] if open_calls else None


def _times(turns: list[dict[str, Any]], steps: list[Step]) -> None:
    """A turn without its own duration: the time to the next turn's (or last message's) stamp."""
    at = [i for i, s in enumerate(steps) if s.role == Role.ASSISTANT]
    for turn, index in zip(turns, at, strict=True):
        start, end = steps[index].timestamp, _next_stamp(steps, index)
        if turn["duration_s"] is None and start and end:
            turn["duration_s"] = _seconds(start, end)


def _next_stamp(steps: list[Step], index: int) -> str | None:
    """The timestamp of the next turn, else of the last message before it."""
    later = steps[index + 1:]
    end = next((i for i, s in enumerate(later) if s.role == Role.ASSISTANT), len(later) - 1)
    stamps = [s.timestamp for s in later[: end + 1] if s.timestamp]
    return stamps[-1] if stamps else None


def _seconds(start: str, end: str) -> float | None:
    from datetime import datetime

    try:
        delta = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    except (TypeError, ValueError):
        return None
    seconds = delta.total_seconds()
    return round(seconds, 3) if seconds >= 0 else None


def tool_result(result: ToolResult) -> dict[str, Any]:
    """A result's text, whether it failed, and whether the page folds it."""
    lines = result.output.count("\n") + 1 if result.output else 0
    return {"name": result.name, "output": result.output, "is_error": result.is_error,
            "lines": lines, "fold": lines > FOLD_LINES or len(result.output) > FOLD_CHARS}


def tool_call(call: ToolCall) -> dict[str, Any]:
    """One call, by kind (see the module's docstring)."""
    base: dict[str, Any] = {"id": call.id, "name": call.name, "result": None}
    args = call.arguments if isinstance(call.arguments, dict) else None
    command = _command(call, args)
    if command is not None:
        return base | _shell(command)
    path = _first(args, PATH_KEYS)
    if path is not None and args is not None:
        edit = next(((args[o], args[n]) for o, n in EDIT_KEYS
                     if isinstance(args.get(o), str) and isinstance(args.get(n), str)), None)
        if edit is not None:
            return base | {"kind": "edit", "path": path,
                           "rows": side_by_side(edit[0].splitlines(), edit[1].splitlines(), path)}
        content = _first(args, CONTENT_KEYS)
        if content is not None:
            return base | {"kind": "write", "path": path, "lines": _lines(content, path)}
    patch = _first(args, ("patch", "input")) if "patch" in call.name.lower() else None
    if patch is not None:
        return base | {"kind": "patch", "lines": _lines(patch, "change.diff")}
    shown = call.arguments if isinstance(call.arguments, str) else json.dumps(
        call.arguments, indent=2, ensure_ascii=False)
    return base | {"kind": "other", "text": shown}


def _command(call: ToolCall, args: dict[str, Any] | None) -> str | None:
    """The shell command of a call: a shell-named tool's, or any call's `command` argument."""
    if args is None:
        raw = call.arguments if isinstance(call.arguments, str) else None
        return raw if raw is not None and call.name.lower() in SHELL_TOOLS else None
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = _argv(value)
        if isinstance(value, str) and (key == "command" or call.name.lower() in SHELL_TOOLS):
            return value
    return None


def _argv(argv: list[str]) -> str:
    """An argv as one command line (`["bash", "-lc", "ls"]` reads as `ls`)."""
    import shlex

    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") \
            and argv[1] in ("-c", "-lc"):
        return argv[2]
    return shlex.join(argv)


def _shell(command: str) -> dict[str, Any]:
    """A command, each heredoc file write lifted out as the file with its path."""
    writes = []
    for match in HEREDOC.finditer(command):
        path = match.group("path").strip("'\"")
        writes.append({"path": path, "lines": _lines(match.group("body"), path)})
    shown = HEREDOC.sub(lambda m: f"{m.group('head')}  … {_count(m.group('body'))} shown below …"
                        f"\n{m.group('tag')}", command) if writes else command
    return {"kind": "shell", "command": command, "lines": _lines(shown, "command.sh"),
            "writes": writes}


def _count(body: str) -> str:
    n = body.count("\n") + 1
    return f"{n} line{'s' if n != 1 else ''}"


def _lines(text: str, filename: str) -> list[list[list[str]]]:
    return highlight(text.splitlines() or [""], filename)


def _first(args: dict[str, Any] | None, keys: tuple[str, ...]) -> str | None:
    if not args:
        return None
    return next((args[k] for k in keys if isinstance(args.get(k), str)), None)
