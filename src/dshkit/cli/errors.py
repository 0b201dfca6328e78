"""The command line's one mapping of the error tree: exit codes, messages, JSON errors.

Every command lets the core's errors (`dshkit.errors`) rise; `run` catches them once and says
them the same way everywhere, so a new error or a new command needs nothing here.

Exit codes (documented in `dshkit --help` and the README):

    0  done
    1  not done: the operation ran and did not succeed (a failing page, a handoff rolled back,
       a failed generation), one of dshkit's rules refused it (its code is printed, e.g.
       SOURCE_ALREADY_MIGRATED), or the configuration is wrong (the file and key are named)
    2  bad input on the command line: a usage error, a value out of range, a name that
       matches nothing or several
    4  busy: another dshkit process holds what this needs; try again
    5  unavailable: something dshkit needs cannot be used (the state database, Chromium, the
       disk)

Under `--json` an error is also printed on stdout as one JSON object, `{"error": message,
"kind": …, "exitCode": …}` with `code`, `field` and `detail` where the error has them, so a
script never has to parse text.
"""

from __future__ import annotations

import sys
from typing import Any

import click
import orjson

from ..errors import Ambiguous, Busy, DshkitError, Failed, Invalid, NotFound, Refused, Unavailable

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BUSY = 4
EXIT_UNAVAILABLE = 5

# The error tree's classes: (class, kind, exit code). Bad input is a usage error (2) when it
# names an input of the command line (its `field` is one of FIELD_OPTIONS); bad input from
# elsewhere (config.toml, a settings file) is not the command's use, so it is 1.
_KINDS: tuple[tuple[type[DshkitError], str, int], ...] = (
    (Invalid, "invalid", EXIT_USAGE),
    (NotFound, "not-found", EXIT_USAGE),
    (Ambiguous, "ambiguous", EXIT_USAGE),
    (Refused, "refused", EXIT_FAILED),
    (Busy, "busy", EXIT_BUSY),
    (Unavailable, "unavailable", EXIT_UNAVAILABLE),
    (Failed, "failed", EXIT_FAILED),
)

# The core names an input in its own words (`field`); this is how the command line spells it.
FIELD_OPTIONS = {
    "session": "--session",
    "harness": "--harness",
    "cwd": "--cwd",
    "raw": "RAW",
    "path": "FILE",
    "budget": "--budget",
    "cases": "--cases",
    "transcript": "--transcript",
    "forced_mark": "--forced-mark",
    "txn": "--txn",
    "run": "RUN_ID",
    "state_dir": "--state-dir",
}


def kind_of(error: DshkitError) -> tuple[str, int]:
    """The error's kind (as scripts read it) and the exit code it gives."""
    for cls, kind, code in _KINDS:
        if isinstance(error, cls):
            if code == EXIT_USAGE and (error.field or "") not in FIELD_OPTIONS:
                code = EXIT_FAILED
            return kind, code
    return "error", EXIT_FAILED


def as_json(error: DshkitError) -> dict[str, Any]:
    kind, code = kind_of(error)
    shown: dict[str, Any] = {"error": error.message, "kind": kind, "exitCode": code}
    if error.field:
        shown["field"] = error.field
    for name in ("code", "detail"):
        value = getattr(error, name, None)
        if value:
            shown[name] = value
    return shown


def run(command: click.Command, args: list[str] | None = None) -> int:
    """Run the click `command` and return its exit code, every error said once."""
    argv = sys.argv[1:] if args is None else args
    wants_json = "--json" in argv
    try:
        result = command.main(args=argv, prog_name="dshkit", standalone_mode=False)
    except DshkitError as exc:
        return _report(exc, wants_json)
    except OSError as exc:
        # What the system refused a command (a read-only state directory, a full disk): the
        # disk is unavailable, said in one line, not as a traceback.
        return _report(Unavailable(_os_reason(exc)), wants_json)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return EXIT_FAILED
    except click.ClickException as exc:
        if wants_json:
            _print({"error": exc.format_message(), "kind": "usage", "exitCode": exc.exit_code})
        exc.show()
        return exc.exit_code
    return result if isinstance(result, int) else EXIT_OK


def _report(error: DshkitError, wants_json: bool) -> int:
    _, code = kind_of(error)
    if wants_json:
        _print(as_json(error))
    code_name = error.code if isinstance(error, Refused) else ""
    prefix = f"{code_name}: " if code_name and not error.message.startswith(code_name) else ""
    option = FIELD_OPTIONS.get(error.field or "")
    where = f"Invalid value for {option}: " if option and code == EXIT_USAGE else ""
    click.echo(f"Error: {where}{prefix}{error.message}", err=True)
    return code


def _os_reason(error: OSError) -> str:
    if error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def _print(value: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()
