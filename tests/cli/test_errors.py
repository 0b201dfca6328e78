"""The command line's one error mapping: exit codes by kind, a JSON error under --json,
options anywhere, and tables that keep whole ids when the output is not a terminal; then the
rule walked over every command of the command table (--json, a usage error, an id)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson
import pytest

from dshkit.cli.app import NO_JSON, cli

from ..support.cli import invoke
from ..support.logs import human, session_dir, write_log


def test_a_name_that_matches_nothing_is_bad_input_with_a_json_error(tmp_path: Path) -> None:
    out = invoke("sessions", "show", "nope", "--json", home=tmp_path, check=False)
    assert out.returncode == 2
    said = orjson.loads(out.stdout)  # JSON, not prose, for a script
    assert said["exitCode"] == 2 and "no session 'nope'" in said["error"]
    assert "Traceback" not in out.stderr and "no session 'nope'" in out.stderr


def test_a_usage_error_is_a_json_error_too(tmp_path: Path) -> None:
    out = invoke("scan", "--frame-budget", "many", "--json", home=tmp_path, check=False)
    assert out.returncode == 2
    said = orjson.loads(out.stdout)
    assert said["kind"] == "usage" and "--frame-budget" in said["error"]


def test_a_broken_config_is_not_done_naming_the_key(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    (state / "config.toml").write_text("[optimizer]\ntier = 'max'\n")
    out = invoke("optimize", "settings", "--json", home=tmp_path, check=False)
    assert out.returncode == 1
    said = orjson.loads(out.stdout)
    assert said["kind"] == "invalid" and "[optimizer] tier" in said["error"]


def test_optimize_takes_its_options_before_the_words(tmp_path: Path) -> None:
    # No LLM is configured: the run stops there, but only once the options were parsed.
    out = invoke("optimize", "--tier", "basic", "修复 greet", home=tmp_path, check=False)
    assert "No such option" not in out.stderr and "no LLM API key" in out.stderr
    assert out.returncode == 1


def test_tables_keep_whole_ids_off_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    long_id = "session-" + "0123456789abcdef" * 6  # far wider than 80 columns with the rest
    write_log(
        session_dir(root, long_id, cwd="/home/dev/" + "deep/" * 12 + "project")
        / "session.v4.jsonl.zstd",
        [[human(1, "整理一下 README 的安装说明，" * 4)]],
        session_id=long_id,
    )
    invoke("scan", "--root", str(root), "--harness", "dsh", home=tmp_path)
    listed = invoke("sessions", "list", home=tmp_path)  # stdout is a pipe here
    assert long_id in listed.stdout


# -- one rule for every command: --json, and bad input exits 2 with a JSON error -------------

# The parameters that name one thing by its id (a session, a run, a record, an entry, a
# handoff); each command taking one must say the same of an id that cannot be or is not there.
ID_PARAMS = {"session_id", "session", "sessions", "run_id", "record", "entry_id", "txn_id"}


def leaves(
    command: click.Command = cli, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command a person runs (a group's subcommands, not the group), by its words."""
    if not isinstance(command, click.Group):
        yield path, command
        return
    context = click.Context(command, info_name=path[-1] if path else "dshkit")
    for name in command.list_commands(context):
        sub = command.get_command(context, name)
        assert sub is not None, name
        yield from leaves(sub, (*path, name))


COMMANDS = dict(leaves())
WITH_JSON = [path for path in COMMANDS if path[0] not in NO_JSON]


def takes_json(command: click.Command) -> bool:
    return any("--json" in param.opts for param in command.params)


def test_every_command_takes_json_but_the_few_that_say_why() -> None:
    assert set(NO_JSON) <= {path[0] for path in COMMANDS}  # each exemption names a command
    assert all(why for why in NO_JSON.values())
    lacking = [" ".join(path) for path in WITH_JSON if not takes_json(COMMANDS[path])]
    assert lacking == []
    assert not any(takes_json(COMMANDS[path]) for path in COMMANDS if path[0] in NO_JSON)


@pytest.mark.parametrize("path", WITH_JSON, ids=" ".join)
def test_a_usage_error_is_a_json_error_in_every_command(
    path: tuple[str, ...], tmp_path: Path
) -> None:
    out = invoke(*path, "--json", "--no-such-option", home=tmp_path, check=False)
    assert out.returncode == 2, out.stderr
    said = orjson.loads(out.stdout)
    assert said["kind"] == "usage" and said["exitCode"] == 2 and "--no-such-option" in said["error"]
    assert "Traceback" not in out.stderr and "Error: No such option" in out.stderr


def _filled(param: click.Parameter, home: Path) -> str:
    """A value a required parameter accepts, for a call that is about another one."""
    kind = param.type
    if isinstance(kind, click.Choice):
        return "claude" if param.name == "harness" else str(kind.choices[0])
    if isinstance(kind, click.types.IntParamType):
        return "1"
    return str(home) if isinstance(kind, click.Path) else "x"


def _id_calls() -> list[Any]:
    """(command words, the id parameter's name): every command taking an id, each id."""
    calls = []
    for path in WITH_JSON:
        for param in COMMANDS[path].params:
            if param.name in ID_PARAMS:
                calls.append(pytest.param(path, param.name, id=" ".join(path)))
    return calls


def _call(path: tuple[str, ...], name: str, value: str, home: Path) -> list[str]:
    """The command line of `path` with `value` for its parameter `name`, the required others
    filled, under --json."""
    options: list[str] = []
    arguments: list[str] = []
    for param in COMMANDS[path].params:
        if param.name == name:
            given = value
        elif param.required:
            given = _filled(param, home)
        else:
            continue
        if isinstance(param, click.Option):
            options += [param.opts[0], given]
        else:
            arguments.append(given)
    return [*path, *options, "--json", *arguments]


def test_the_id_commands_are_all_found() -> None:
    found = {(" ".join(call.values[0]), call.values[1]) for call in _id_calls()}
    assert {
        ("sessions show", "session_id"),
        ("forget", "session_id"),
        ("runs show", "run_id"),
        ("outcome", "run_id"),
        ("memory show", "record"),
        ("memory harvest", "sessions"),
        ("profile entry pin", "entry_id"),
        ("graft drive", "txn_id"),
        ("graft cancel", "txn_id"),
        ("gate rework", "session_id"),
        ("inject show", "session"),
        ("optimize run", "session_id"),
    } <= found


@pytest.mark.parametrize(("path", "name"), _id_calls())
def test_an_id_that_cannot_be_or_is_not_there_is_bad_input(
    path: tuple[str, ...], name: str, tmp_path: Path
) -> None:
    param = next(p for p in COMMANDS[path].params if p.name == name)
    number = isinstance(param.type, click.types.IntParamType)
    huge = "9" * 30 if number else "x" * 5_000  # more than SQLite holds; longer than any id
    absent = "0" if number else "no-such-id"
    # graft audit's --session filters the trail (a forgotten session's records stay in it):
    # an id with no records is an empty answer, not an error.
    for value in (huge,) if path == ("graft", "audit") else (huge, absent):
        out = invoke(*_call(path, name, value, tmp_path), home=tmp_path, check=False)
        assert out.returncode == 2, out.stderr
        said = orjson.loads(out.stdout)
        assert said["exitCode"] == 2 and said["kind"] in ("usage", "invalid", "not-found")
        assert "Traceback" not in out.stderr and len(out.stderr) < 1_000  # not echoed whole
