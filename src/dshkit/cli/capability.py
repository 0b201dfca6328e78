"""`dshkit capability`: the capability facts of a mode, from the cache or probed now."""

from __future__ import annotations

import os
import time

import click

from ..capability import TTL_S, Lookup
from ..errors import DshkitError, Failed
from ..hooks.log import log
from .common import HARNESSES, json_option, open_app, print_json, state_dir_option, stdout

_MARKS = {True: "ok", False: "FAILED", None: "-"}


def _absolute(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A relative --cwd is refused, as the HTTP API refuses it: the facts are kept per
    working directory, and one taken from wherever this command runs would be another's."""
    if value is not None and not os.path.isabs(value):
        raise click.BadParameter(
            f"{value!r} is relative: give the session's working directory as an absolute path",
            ctx,
            param,
        )
    return value


@click.command()
@click.option("--mode", default=None, help="The sandbox mode [default: as the harness reports it].")
@click.option("--approval", default=None, help="The approval policy [default: as reported].")
@click.option("--permission-mode", default=None, help="The permission mode [default: as reported].")
@click.option(
    "--harness",
    type=click.Choice(HARNESSES),
    default=None,
    help="Whose configuration to read (modes, MCP servers) [default: none: unknown].",
)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    callback=_absolute,
    help="The session's working directory, absolute (project MCP servers) [default: this one].",
)
@click.option("--probe", "now", is_flag=True, help="Probe the three channels now and wait.")
@click.option("--quiet", is_flag=True, help="Print nothing (the hooks' background probe).")
@state_dir_option
@json_option
def capability(
    mode: str | None,
    approval: str | None,
    permission_mode: str | None,
    harness: str | None,
    cwd: str | None,
    now: bool,
    quiet: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """What a session in this mode can really do: subprocess, headless-browser screenshot and
    the configured MCP servers, each probed (cached per mode for 10 minutes). Without
    --probe, only reads the cache (it starts nothing). The modes not given are read as the
    hooks read them for a session in --cwd (the project's settings too)."""
    where = os.path.abspath(cwd or os.getcwd())  # normalised: one key per directory
    service = open_app(state_dir).capability  # a broken database is refused before anything runs
    modes = {"sandbox": mode, "approval": approval, "permission": permission_mode}
    try:
        found = service.lookup_given(harness, where, modes, now=now)
    except Exception as exc:  # the hooks' background probe has no stream: it logs
        log(state_dir, "capability", f"probe failed: {type(exc).__name__}: {exc}")
        if isinstance(exc, DshkitError):
            raise  # said by its class (a busy or broken store is not a failed probe)
        raise Failed(f"the probe failed: {exc}") from exc
    if quiet:
        return
    if as_json:
        print_json(found.as_json())
        return
    _show(found)


def _show(lookup: Lookup) -> None:
    found = lookup.report
    facts = found.facts
    stdout.print(f"{'harness:':17} {facts.harness}", markup=False)
    for label, fact, value in (
        ("sandbox mode:", "sandbox", facts.sandbox),
        ("approval policy:", "approval", facts.approval),
        ("permission mode:", "permission", facts.permission),
    ):
        source = facts.sources.get(fact)
        stdout.print(f"{label:17} {value}" + (f"  ({source})" if source else ""), markup=False)
    for error in found.errors:
        stdout.print(f"could not read: {error}", markup=False)
    if found.channels is None:
        what = (
            "a probe is running; ask again"
            if found.probing
            else "probe with `dshkit capability --probe`"
        )
        stdout.print(f"channels: not probed in this mode yet ({what})", markup=False)
        return
    for result in found.channels:
        mark = _MARKS[result["ok"]]
        stdout.print(f"{result['channel']:12} {mark:6} {result['reason']}", markup=False)
    age = time.time() - (found.probed_at or 0) / 1000
    stdout.print(f"probed {age:.0f} s ago (kept {TTL_S:.0f} s per mode)", markup=False)
