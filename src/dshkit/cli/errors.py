"""The command line's one mapping of the error tree: exit codes, messages, JSON errors.

Every command lets the core's errors (`dshkit.errors`) rise; `run` catches them once and says
them the same way everywhere, so a new error or a new command needs nothing here. The rule
(`EXITS`, and the JSON error below) is the one docs/cli.md states: scripts/gen-docs.py writes
it from here.

Bad input is a usage error (2) when the error names an input of the command that ran (its
`field` is one of the command's parameters, in the core's words: `session` is `--session` or
SESSION_ID, `record` is RECORD); the same class about something else (a key of config.toml,
a harness's settings file) is not the command's use, so it is 1.

Under `--json` an error is also printed on stdout as one JSON object, `{"error": message,
"kind": …, "exitCode": …}` with `code`, `field` and `detail` where the error has them, so a
script never has to parse text.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import click
import orjson

from ..errors import Ambiguous, Busy, DshkitError, Failed, Invalid, NotFound, Refused, Unavailable

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BUSY = 4
EXIT_UNAVAILABLE = 5

# What each exit code means, for people (docs/cli.md is written from this).
EXITS: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "done"),
    (
        EXIT_FAILED,
        "not done: the operation ran and did not succeed (a failing page, a handoff rolled "
        "back, a failed generation: `failed`), a rule of dshkit's refused it (`refused`, its "
        "code printed, e.g. SOURCE_ALREADY_MIGRATED), or the configuration is wrong (the file "
        "and key named)",
    ),
    (
        EXIT_USAGE,
        "bad input on the command line: a usage error (`usage`), a value out of range or "
        "malformed (`invalid`), an id or name that matches nothing (`not-found`) or several "
        "(`ambiguous`), text that is not UTF-8",
    ),
    (EXIT_BUSY, "busy: another dshkit process holds what this needs (`busy`); try again"),
    (
        EXIT_UNAVAILABLE,
        "unavailable: something dshkit needs cannot be used (`unavailable`: the state "
        "database, Chromium, the disk, a running `dshkit serve`)",
    ),
)

# The error tree's classes: (class, kind, exit code).
_KINDS: tuple[tuple[type[DshkitError], str, int], ...] = (
    (Invalid, "invalid", EXIT_USAGE),
    (NotFound, "not-found", EXIT_USAGE),
    (Ambiguous, "ambiguous", EXIT_USAGE),
    (Refused, "refused", EXIT_FAILED),
    (Busy, "busy", EXIT_BUSY),
    (Unavailable, "unavailable", EXIT_UNAVAILABLE),
    (Failed, "failed", EXIT_FAILED),
)

# The core names an input in its own words (`field`); the parameters that take it, where the
# command line names them otherwise (any other field is a parameter of the same name).
FIELD_PARAMS: dict[str, tuple[str, ...]] = {
    "session": ("session_id", "session", "sessions"),
    "run": ("run_id",),
    "txn": ("txn_id",),
    "id": ("entry_id",),
    "path": ("file",),
}


@dataclass
class Invocation:
    """What `run` learns of the command that ran (the command's context carries it as its
    `obj`): the command itself, so that an error's field is looked up among its parameters,
    and whether --json was given (known once the options are parsed)."""

    command: click.Command | None = None
    json: bool | None = None


def parameter(error: DshkitError, command: click.Command | None) -> click.Parameter | None:
    """The parameter of `command` that the error's field names, if any."""
    if command is None or not error.field:
        return None
    names = FIELD_PARAMS.get(error.field, (error.field,))
    return next((p for p in command.params if p.name in names), None)


def hint(param: click.Parameter) -> str:
    """A parameter as the command line spells it, quoted as click quotes it in its own usage
    errors: `'--session'`, `'SESSION_ID'`."""
    if isinstance(param, click.Option):
        return " / ".join(f"'{opt}'" for opt in param.opts)
    return f"'{param.human_readable_name}'"


def kind_of(error: DshkitError, command: click.Command | None = None) -> tuple[str, int]:
    """The error's kind (as scripts read it) and the exit code it gives in `command`."""
    for cls, kind, code in _KINDS:
        if isinstance(error, cls):
            if code == EXIT_USAGE and parameter(error, command) is None:
                code = EXIT_FAILED
            return kind, code
    return "error", EXIT_FAILED


class ErrorJson(TypedDict):
    """An error under `--json`: the message, its kind and exit code, the input it concerns
    (`field`, in dshkit's words), the rule that refused (`code`) and its detail."""

    error: str
    kind: str
    exitCode: int
    field: NotRequired[str]
    code: NotRequired[str]
    detail: NotRequired[Any]


def as_json(error: DshkitError, command: click.Command | None = None) -> ErrorJson:
    kind, code = kind_of(error, command)
    shown: ErrorJson = {"error": error.message, "kind": kind, "exitCode": code}
    if error.field:
        shown["field"] = error.field
    rule, detail = getattr(error, "code", None), getattr(error, "detail", None)
    if rule:
        shown["code"] = rule
    if detail:
        shown["detail"] = detail
    return shown


def run(command: click.Command, args: list[str] | None = None) -> int:
    """Run the click `command` and return its exit code, every error said once."""
    argv = sys.argv[1:] if args is None else args
    ran = Invocation()
    try:
        result = command.main(args=argv, prog_name="dshkit", standalone_mode=False, obj=ran)
    except DshkitError as exc:
        return _report(exc, ran, argv)
    except OSError as exc:
        # What the system refused a command (a read-only state directory, a full disk): the
        # disk is unavailable, said in one line, not as a traceback.
        return _report(Unavailable(_os_reason(exc)), ran, argv)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return EXIT_FAILED
    except click.ClickException as exc:
        if _wants_json(ran, argv):
            # A usage error is the command's use (2); any other ClickException is a command
            # saying it could not do it (1).
            kind = "usage" if isinstance(exc, click.UsageError) else "failed"
            _print({"error": exc.format_message(), "kind": kind, "exitCode": exc.exit_code})
        exc.show()
        return exc.exit_code
    finally:
        if "dshkit.store" in sys.modules:  # `dshkit --help` does not load it for this
            from .. import store

            store.wait_notice = None  # set by the command that opened the store (common.py)
    return result if isinstance(result, int) else EXIT_OK


def _wants_json(ran: Invocation, argv: list[str]) -> bool:
    """Whether --json was given: as parsed, or (when parsing stopped before it) as written
    before any `--` (after it, words are the command's arguments)."""
    if ran.json is not None:
        return ran.json
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in options


def _report(error: DshkitError, ran: Invocation, argv: list[str]) -> int:
    _, code = kind_of(error, ran.command)
    if _wants_json(ran, argv):
        _print(as_json(error, ran.command))
    code_name = error.code if isinstance(error, Refused) else ""
    prefix = f"{code_name}: " if code_name and not error.message.startswith(code_name) else ""
    param = parameter(error, ran.command)
    where = f"Invalid value for {hint(param)}: " if param is not None and code == EXIT_USAGE else ""
    click.echo(f"Error: {where}{prefix}{error.message}", err=True)
    return code


def _os_reason(error: OSError) -> str:
    if error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def dumps(value: Any) -> bytes:
    """`value` as indented JSON. A string holding bytes that are not UTF-8 (a file name taken
    from the system, an argument passed through: Python keeps those as lone surrogates) is
    written with those bytes escaped (`\\xff`), not refused: JSON has no way to carry them."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        return orjson.dumps(_printable(value), option=orjson.OPT_INDENT_2)


def printable(text: str) -> str:
    """`text` with the bytes that are not UTF-8 in it (kept by Python as lone surrogates)
    written as escapes (`\xff`): what can be shown of a name that is not text."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate of another kind (a JSON escape)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable(key): _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value


def _print(value: ErrorJson) -> None:
    sys.stdout.buffer.write(dumps(value) + b"\n")
    sys.stdout.flush()
