"""`dshkit guard classify` and `explain`: the command risk policy's verdict on command lines,
and how it came to it."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import orjson

from ..guard import MODES, SHELLS, explain, explain_line
from ..guard import classify as classify_line  # `classify` is the command below
from ..guard.service import ModeState, mode_state, set_mode
from ..guard.wire import CaseJson, ExplainJson
from .common import OpenedPath, json_option, print_json, state_dir_option, stdout
from .errors import printable

MAX_CASES = 100_000


@click.group()
def guard() -> None:
    """The command risk policy: what a shell command risks, and allow / ask / deny per mode."""


@guard.command()
@click.argument("command", nargs=-1)
@click.option("--shell", type=click.Choice(SHELLS), default="bash", show_default=True)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="The workspace the command runs in [default: the current directory].",
)
@click.option(
    "--mode", type=click.Choice(MODES), default=None, help="Also print this mode's decision."
)
@click.option(
    "--file",
    "cases",
    type=OpenedPath(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help='A JSONL file of cases {"command", "shell"?, "cwd"?}: one result line per case.',
)
@json_option
def classify(
    command: tuple[str, ...],
    shell: str,
    cwd: str | None,
    mode: str | None,
    cases: Path | None,
    as_json: bool,
) -> None:
    """Classify COMMAND (words after `--` are joined by spaces) as safe, unknown or destructive,
    say whether it is a global search, and print the decision of each mode."""
    if cases is not None:
        if command:
            raise click.UsageError("give either COMMAND or --file, not both")
        for number, case in enumerate(_cases(cases), start=1):
            result = explain(
                classify_line(case["command"], case.get("shell", shell), case.get("cwd", cwd)), mode
            )
            if "id" in case:
                result = CaseJson(id=case["id"], **result)
            _emit(result, as_json, f"line {number}: ")
        return
    if not command:
        raise click.UsageError("give a COMMAND (after --) or --file CASES.jsonl")
    _emit(explain(classify_line(" ".join(command), shell, cwd), mode), as_json, "")


@guard.command("explain")
@click.argument("command", nargs=-1)
@click.option("--shell", type=click.Choice(SHELLS), default="bash", show_default=True)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="The workspace the command runs in [default: the current directory].",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="The mode whose decision to name [default: [guard] mode in config.toml].",
)
@state_dir_option
@json_option
def explain_command(
    command: tuple[str, ...],
    shell: str,
    cwd: str | None,
    mode: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Show how COMMAND (words after `--` are joined by spaces) is judged: each simple command
    the guard saw (wrappers such as sudo, env or bash -c peeled), the rule that decided (a
    built-in rule, or your allow/deny pattern in config.toml and where it is) and why, and
    each mode's decision. Your [guard] allow and deny rules in config.toml apply."""
    if not command:
        raise click.UsageError("give a COMMAND (after --)")
    from ..config import load_config
    from ..paths import state_dir as resolve

    config = load_config(resolve(state_dir))
    record = explain_line(
        " ".join(command), shell, cwd, mode, settings=config["guard"], where=str(config.path)
    )
    if as_json:
        click.echo(orjson.dumps(record).decode())
        return
    search = " (global search)" if record["globalSearch"] else ""
    opaque = " (runs code it cannot see)" if record["opaque"] else ""
    table = ", ".join(f"{m} {d}" for m, d in record["decisions"].items())
    stdout.print(
        f"{record['risk']}{search}{opaque}: {record['mode']} {record['decision']} ({table})",
        markup=False,
    )
    stdout.print(f"why: {record['reason']}", markup=False)
    leak = record.get("leak")
    if leak is not None:
        to = leak["where"] or "another machine"
        stdout.print(f"leaves the machine: {leak['what']}, to {to}", markup=False)
    rule = record["rule"]
    if rule["kind"] == "builtin":
        where = f" on `{_line(rule['command'])}`" if "command" in rule else ""
        stdout.print(f"decided by: the built-in rule {rule['name']}{where}", markup=False)
    else:
        on = f" on `{_line(rule['command'])}`" if "command" in rule else ""
        said = f"your {rule['kind']} rule {rule['pattern']!r} ({rule['origin']}){on}"
        stdout.print(f"decided by: {said}", markup=False)
    for allowed in record["allowedBy"]:
        stdout.print(
            f"allowed by {allowed['pattern']!r} ({allowed['origin']}): "
            f"`{_line(allowed['command'])}`",
            markup=False,
        )
    if record.get("advice"):
        stdout.print(f"instead: {record['advice']}", markup=False)
    stdout.print(f"workspace: {record['workspace']}", markup=False)
    stdout.print("segments:", markup=False)
    for segment in record["segments"]:
        stdout.print(f"  {_line(segment)}", markup=False)
    for peeled in record["wrappers"]:
        how = "runs the line of" if peeled["nested"] else "wraps"
        stdout.print(f"unwrapped: {peeled['wrapper']} {how} {peeled['runs']}", markup=False)
    for expanded in record["expansions"]:
        value = expanded["value"] if expanded["value"] is not None else "(known only when it runs)"
        stdout.print(f"expands: {expanded['name']} = {value}", markup=False)
    for path in record["paths"]:
        where = path["path"] or "(known only when it runs)"
        stdout.print(
            f"path: {path['word']} ({path['command']}) -> {where}: {path['where']}", markup=False
        )
    stdout.print("commands seen:", markup=False)
    for seen in record["commands"]:
        shell_note = " (PowerShell)" if seen["shell"] == "pwsh" and shell != "pwsh" else ""
        indent = "  " * (seen["depth"] + 1)
        stdout.print(f"{indent}{_line(seen['words'])}{shell_note}", markup=False)


def _line(words: list[str]) -> str:
    """Words as one would type them: one holding a space or a shell character quoted."""
    plain = set("-_./=:@%+,~…")
    return " ".join(
        w
        if w and all(c.isalnum() or c in plain for c in w)
        else "'" + w.replace("'", "'\\''") + "'"
        for w in words
    )


def _emit(result: ExplainJson, as_json: bool, prefix: str) -> None:
    if as_json:
        click.echo(orjson.dumps(result).decode())
        return
    search = " (global search)" if result["globalSearch"] else ""
    table = ", ".join(f"{mode} {decision}" for mode, decision in result["decisions"].items())
    chosen = f"{result['decision']} ({table})" if "decision" in result else table
    stdout.print(f"{prefix}{result['risk']}{search}: {chosen} — {result['reason']}", markup=False)


def _cases(path: Path) -> list[dict[str, Any]]:
    """Every case of a JSONL file, checked before any is judged (a bad line names itself,
    as a usage error of --file)."""
    found: list[dict[str, Any]] = []
    name = printable(str(path))

    def bad(problem: str) -> click.BadParameter:
        return click.BadParameter(f"{name} {problem}", param_hint="--file")

    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise bad(f"cannot be read: {exc.strerror or exc}") from exc
    if len(lines) > MAX_CASES:
        raise bad(f"has {len(lines)} lines: at most {MAX_CASES} cases")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise bad(
                f"line {number} is not UTF-8: byte 0x{line[exc.start]:02x} at offset "
                f"{exc.start:,} of the line cannot be decoded"
            ) from None
        try:
            case = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise bad(f"line {number} is not JSON: {exc}") from exc
        if not isinstance(case, dict) or not isinstance(case.get("command"), str):
            raise bad(f'line {number}: expected an object with a string "command"')
        if case.get("shell", "bash") not in SHELLS:
            raise bad(f"line {number}: shell {case['shell']!r} is not bash or pwsh")
        if not isinstance(case.get("cwd", ""), str):
            raise bad(f'line {number}: "cwd" must be a string')
        found.append(case)
    return found


@guard.command("mode")
@click.argument("mode", required=False, type=click.Choice([*MODES, "config"]))
@state_dir_option
@json_option
def mode_command(mode: str | None, state_dir: str | None, as_json: bool) -> None:
    """The mode agents' shell commands are judged under and where it comes from; with MODE,
    choose it (it wins over config.toml's [guard] mode; `config` leaves it to config.toml)."""
    from ..paths import state_dir as resolve

    directory = resolve(state_dir)
    shown = mode_state(directory) if mode is None else set_mode(directory, mode)
    if as_json:
        print_json(shown.as_json())
        return
    stdout.print(f"guard mode: {shown.mode} ({_why(shown)})", markup=False)


def _why(shown: ModeState) -> str:
    """Where the mode comes from, config.toml's beside it, and a choice not in force."""
    if shown.source == "unreadable":
        said = f"the settings cannot be read, so the guard is strict: {shown.problem}"
    else:
        where = {
            "env": "DSHKIT_GUARD_MODE",
            "chosen": "chosen with dshkit guard mode or the console",
            "config": "config.toml [guard] mode",
            "default": "the default",
        }[shown.source]
        said = f"{where}; config.toml says {shown.config_mode}"
        if shown.problem:
            said += f"; strict because {shown.problem}"
    if shown.chosen is not None and shown.source != "chosen":
        said += f"; your choice, {shown.chosen}, is kept but not in force"
    return said


@guard.command("log")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Only the decisions in this workspace (and below it) [default: every workspace].",
)
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many.")
@click.option("--before", type=int, default=None, help="Only decisions older than this id.")
@state_dir_option
@json_option
def log_command(
    workspace: str | None, limit: int, before: int | None, state_dir: str | None, as_json: bool
) -> None:
    """What the guard stopped or asked about, newest first, and why: each decision that was
    not a plain allow, its command with secrets redacted, the rule that decided, and the
    allow rule that would let it through (`dshkit guard allow --from ID`)."""
    from ..guard.service import log_page
    from ..paths import state_dir as resolve

    shown = os.path.abspath(workspace) if workspace else None
    page = log_page(resolve(state_dir), shown, limit, before)
    if as_json:
        print_json(page)
        return
    if not page["entries"]:
        stdout.print("the guard has stopped nothing here", markup=False)
    for entry in page["entries"]:
        when = datetime.fromtimestamp(entry["at"] / 1000).strftime("%Y-%m-%d %H:%M")
        verdict = "asked (your words)" if entry["relaxed"] else entry["decision"]
        stdout.print(
            f"#{entry['id']} {when} {verdict} [{entry['mode']}] {entry['workspace'] or '-'}",
            markup=False,
        )
        stdout.print(f"  {entry['command']}", markup=False)
        rule = f" (rule {entry['rule']})" if entry["rule"] else ""
        stdout.print(f"  why: {entry['reason']}{rule}", markup=False)
        if entry["suggested"]:
            stdout.print(f"  to allow it: dshkit guard allow --from {entry['id']}", markup=False)
    if page["next"] is not None:
        stdout.print(f"older: dshkit guard log --before {page['next']}", markup=False)


@guard.command("allow")
@click.argument("pattern", required=False)
@click.option("--from", "from_id", type=int, default=None, help="The log entry to allow.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Only in this workspace and below [default with --from: the entry's workspace].",
)
@click.option(
    "--everywhere", is_flag=True, help="In every workspace ([guard] allow), not one project."
)
@click.option("--deny", is_flag=True, help="Write a deny rule instead.")
@state_dir_option
@json_option
def allow_command(
    pattern: str | None,
    from_id: int | None,
    project: str | None,
    everywhere: bool,
    deny: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Add PATTERN (e.g. 'git push:*', 'mcp__db__drop_table', 'Write /etc/hosts') to your
    rules in config.toml, or with --from ID the rule that lets one logged decision through:
    the false alarm becomes an allow rule for its workspace (--everywhere: every one)."""
    from ..guard.service import add_rule, log_entry
    from ..paths import state_dir as resolve

    if (pattern is None) == (from_id is None):
        raise click.UsageError("give a PATTERN or --from ID (one of them)")
    if project is not None and everywhere:
        raise click.UsageError("give --project or --everywhere, not both")
    directory = resolve(state_dir)
    if from_id is not None:
        entry = log_entry(directory, from_id)
        if entry["suggested"] is None:
            raise click.UsageError(
                f"decision {from_id} has no rule that can be written for it (a secret was "
                "redacted from it, or it names no command); give a PATTERN"
            )
        pattern = entry["suggested"]
        project = project or entry["workspace"]
    assert pattern is not None
    where = None if everywhere else (os.path.abspath(project) if project else None)
    added = add_rule(directory, pattern, "deny" if deny else "allow", where)
    if as_json:
        print_json(added)
        return
    said = "added" if added["added"] else "already there"
    stdout.print(
        f"{added['kind']} {added['pattern']!r}: {said} in {added['table']} of {added['path']}",
        markup=False,
    )
