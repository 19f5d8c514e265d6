"""The readers of files benchwright did not write: every fault is one error naming the file,
and nothing hangs or recurses without bound. Agent logs with such faults are the agent's failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchwright.errors import ProblemConfigError, UserInputError
from benchwright.files.untrusted import (
    MAX_DEPTH,
    parse_untrusted_yaml,
    read_untrusted_json,
    read_untrusted_text,
    read_untrusted_yaml,
)
from benchwright.web.evaluation.scoring import check_har, read_agent_response


def _write(path: Path, content: bytes | str | None) -> Path:
    if content is None:
        os.mkfifo(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize(("content", "needle"), [
    (None, "a pipe, socket or device"),
    (b"ok \xff\xfe", r"not UTF-8 text \(byte 0xff at offset 3\)"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ("[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), f"nested deeper than {MAX_DEPTH}"),
    ('{"a": ', "not JSON"),
])
def test_json_faults_are_one_error_naming_the_file(tmp_path: Path, content: bytes | str | None,
                                                   needle: str) -> None:
    path = _write(tmp_path / "x.json", content)
    with pytest.raises(UserInputError, match=needle) as caught:
        read_untrusted_json(path, what="the thing")
    assert caught.value.path == path and "\n" not in caught.value.one_line()


def test_folders_missing_files_and_size_bounds(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="is a folder"):
        read_untrusted_text(tmp_path, what="the thing")
    with pytest.raises(UserInputError, match="no such file"):
        read_untrusted_text(tmp_path / "absent", what="the thing")
    big = _write(tmp_path / "big.txt", "x" * 2048)
    with pytest.raises(UserInputError, match="larger than 1 MB"):
        read_untrusted_text(big, what="the thing", max_bytes=1024)
    assert read_untrusted_text(big, what="the thing") == "x" * 2048


def test_yaml_alias_bombs_and_self_reference_are_refused_quickly() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
        for i in range(8))
    with pytest.raises(UserInputError, match="expands to more than"):
        parse_untrusted_yaml(bomb, None, what="the config")
    with pytest.raises(UserInputError, match="nested deeper"):
        parse_untrusted_yaml("a: &a [*a]\n", None, what="the config")
    shared = "a: &a [1, 2]\nb: [*a, *a, *a]\n"
    assert parse_untrusted_yaml(shared, None, what="the config")["b"][2] == [1, 2]


@pytest.mark.parametrize("text", [
    "[" * 200_000 + "]" * 200_000,  # past libyaml's own limit (1,000 levels) and Python's stack
    "".join(" " * i + "a:\n" for i in range(5000)) + " " * 5000 + "1\n",
    "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5),  # under libyaml's limit, over ours
])
def test_yaml_nested_past_any_limit_is_one_error_not_a_crash(text: str) -> None:
    # The config of a hostile problem folder: the harness must refuse it, never crash on it.
    with pytest.raises(UserInputError, match=f"nested deeper than {MAX_DEPTH}") as caught:
        parse_untrusted_yaml(text, None, what="the config")
    assert "\n" not in caught.value.one_line()


def test_the_error_class_is_the_callers(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.yaml", "a: [\n")
    with pytest.raises(ProblemConfigError, match="not valid YAML at line 2"):
        read_untrusted_yaml(path, what="config.yaml", error=ProblemConfigError)


@pytest.mark.parametrize("content", [None, b"\xff", "[" * 5000 + "]" * 5000])
def test_a_broken_agent_log_is_the_agents_failure_not_a_crash(tmp_path: Path,
                                                              content: bytes | str | None) -> None:
    response = _write(tmp_path / "agent_response.json", content)
    _text, parsed, problem = read_agent_response(response)
    assert parsed is None and problem is not None and problem.startswith(str(response))
    har = _write(tmp_path / "network.har", content)
    assert (check_har(har) or "").startswith(str(har))
