"""`dshkit install-hooks` / `uninstall-hooks`: dshkit's hooks in a harness's settings.

What each did, per harness and file (created, updated, removed, unchanged), is said as a line
per file written, or, under `--json`, as one object naming every file of every harness."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import harnesses
from ..errors import Failed, Invalid
from ..hookspec import extra_entries
from ..install import (
    PROJECT_PROGRAM,
    BridgeMount,
    Plan,
    apply,
    mount_bridge,
    plan_install,
    plan_uninstall,
)
from ..paths import state_dir as resolve_state_dir
from .common import json_option, print_json, state_dir_option, stderr, stdout

F = TypeVar("F", bound=Callable[..., Any])


def _options(func: F) -> F:
    for option in reversed(
        [
            click.option(
                "--harness",
                type=click.Choice(harnesses.NAMES),
                default=None,
                help="The harness [default: every harness; installing, those found here].",
            ),
            click.option(
                "--scope", type=click.Choice(["user", "project"]), default="user", show_default=True
            ),
            click.option(
                "--project",
                type=click.Path(file_okay=False, path_type=Path),
                default=".",
                show_default=True,
                help="The project, for --scope project.",
            ),
            click.option(
                "--dsh-profile",
                default="headless",
                show_default=True,
                help="The DSH profile whose patch layer mounts the hook bridge.",
            ),
            click.option(
                "--dry-run", is_flag=True, help="Show the changes as a diff; write nothing."
            ),
            state_dir_option,
            json_option,
        ]
    ):
        func = option(func)
    return func


@click.command("install-hooks")
@_options
@click.option(
    "--create",
    is_flag=True,
    help="Install into the --harness named even though it is not found on this machine "
    "(none of its config directories, its CLI not on PATH), making its directories.",
)
@click.option(
    "--resident",
    is_flag=True,
    help="Claude Code's prompt, after-tool and stop hooks post to the service installed by "
    "`dshkit service install` instead of starting a process (the guard stays a command); "
    "Claude Code must have DSHKIT_HOOK_TOKEN from <state dir>/hook-token in its environment.",
)
def install_hooks(
    harness: str | None,
    scope: str,
    project: Path,
    dsh_profile: str,
    dry_run: bool,
    state_dir: str | None,
    as_json: bool,
    create: bool,
    resident: bool,
) -> None:
    """Make dshkit's hooks in a harness's settings what its hook registry asks (others' hooks
    are left as they are; run it again after an upgrade that adds hooks).

    Without --harness: every harness found on this machine (its config directory is there,
    or its CLI is on PATH; DSH, whose hooks run through a bridge its CLI adds: `dsh` on
    PATH); the others are skipped, and named. A harness named that is not found is refused
    (exit 2) unless --create is given. One whose dshkit plugin is installed and enabled is
    refused too (exit 1; without --harness: skipped, and named): the plugin runs the same hooks,
    and both would run each twice. Nothing of dshkit's bookkeeping is written beside your
    files: it is kept in the state directory.

    With --json: {"harnesses": {NAME: {"files": [{"path", "action"}], "bridge"}}, "skipped"},
    each action created, updated, removed or unchanged (with --dry-run: what it would be, and
    each file's "diff")."""
    if create and harness is None:
        raise click.UsageError("--create needs --harness: it installs into one harness named")
    state = resolve_state_dir(state_dir)
    try:  # extra handlers of one's own are installed with the built-in ones
        extra = extra_entries(os.environ.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError as exc:
        raise Invalid(str(exc), field="DSHKIT_HOOK_HANDLERS") from exc
    # A harness named that is not here is refused as bad input on the command line (exit 2),
    # a file dshkit cannot change as asked as not done (exit 1): the error tree says which.
    port = _resident_port(state) if resident else None
    plan = plan_install(
        harness, scope, project.resolve(), state, dsh_profile, extra, create, resident=port
    )
    _apply(plan, state, dry_run, installing=True)
    bridges: dict[str, BridgeMount | None] = {}
    if not dry_run:  # a bridge (DSH's) is added by the harness's own CLI, the files written
        bridges = {name: mount_bridge(name, dsh_profile, project) for name in plan.harnesses}
    if as_json:
        print_json(_report(plan, state, dry_run, bridges))
        return
    _say(plan, dry_run, installing=True)
    if scope == "project":
        stdout.print(
            f"Project scope: the hooks run `{PROJECT_PROGRAM}` found on PATH, with its default "
            "state directory ($DSH_HOME/dshkit), so the file names nothing of this machine; "
            f"`{PROJECT_PROGRAM}` must be on the PATH the harness runs hooks with."
            + (f" (--state-dir {state} is not written there.)" if state_dir else ""),
            markup=False,
        )
        if shutil.which(PROJECT_PROGRAM) is None:
            stderr.print(f"warning: `{PROJECT_PROGRAM}` is not on PATH here", markup=False)
    for name, mounted in bridges.items():
        _say_bridge(name, dsh_profile, mounted)


def _resident_port(state: Path) -> int:
    """The installed service's port; Invalid while it is not installed, or has no credential."""
    from ..install import resident

    found = resident.status()
    if not found.installed or found.port is None:
        raise Invalid(
            "--resident needs the service: run `dshkit service install` first", field="resident"
        )
    if resident.hook_token(state) is None:
        raise Invalid(
            f"no {state / resident.HOOK_TOKEN_FILE}: run `dshkit service install` again",
            field="resident",
        )
    return found.port


@click.command("uninstall-hooks")
@_options
def uninstall_hooks(
    harness: str | None,
    scope: str,
    project: Path,
    dsh_profile: str,
    dry_run: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Take dshkit's hooks out again (a file dshkit alone changed gets its old bytes back, one
    it created goes, and so do the directories it made once they are empty).

    Without --harness: out of every harness. --json: as install-hooks says it."""
    state = resolve_state_dir(state_dir)
    plan = plan_uninstall(harness, scope, project.resolve(), state, dsh_profile)
    _apply(plan, state, dry_run, installing=False)
    if as_json:
        print_json(_report(plan, state, dry_run, {}))
    else:
        _say(plan, dry_run, installing=False)


def _apply(plan: Plan, state: Path, dry_run: bool, installing: bool) -> None:
    if dry_run or not plan.changes:
        return
    try:
        apply(plan.changes, installing, state)
    except OSError as exc:  # a file the system would not let dshkit write: not done
        raise Failed(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)) from exc


def _say(plan: Plan, dry_run: bool, installing: bool) -> None:
    for name, why in plan.skipped:
        stdout.print(f"skipped {harnesses.get(name).label}: {why}", markup=False)
    writes = plan.writes
    if not writes:
        stdout.print(
            "Nothing to change: " + ("already installed." if installing else "not installed.")
        )
    for change in writes:
        if dry_run:
            click.echo(change.diff(), nl=False)
        else:
            stdout.print(f"{change.action} {change.path}", markup=False)


def _report(
    plan: Plan, state: Path, dry_run: bool, bridges: dict[str, BridgeMount | None]
) -> dict[str, Any]:
    """The --json answer: every file of every harness with what was (or would be) done."""
    chosen: dict[str, Any] = {}
    for name in plan.harnesses:
        files = []
        for path in plan.files.get(name, []):
            change = plan.change(path)
            shown: dict[str, Any] = {
                "path": str(path),
                "action": change.action if change is not None else "unchanged",
            }
            if dry_run:
                shown["diff"] = change.diff() if change is not None and change.writes else ""
            files.append(shown)
        mounted = bridges.get(name)
        bridge = None
        if mounted is not None:
            bridge = {"command": mounted.command, "ran": mounted.ran, "error": mounted.error}
        chosen[name] = {"files": files, "bridge": bridge}
    return {
        "stateDir": str(state),
        "dryRun": dry_run,
        "changed": bool(plan.writes) and not dry_run,
        "harnesses": chosen,
        "skipped": [{"harness": name, "why": why} for name, why in plan.skipped],
    }


def _say_bridge(harness: str, profile: str, mounted: BridgeMount | None) -> None:
    """What adding the harness's hook bridge (DSH's) did, or the one command that does it."""
    if mounted is None:
        return
    label = harnesses.get(harness).label
    if not mounted.ran:
        stdout.print(f"{label} was not found on PATH. To finish, install its hook bridge:")
        stdout.print("  " + " ".join(mounted.command), markup=False)
    elif mounted.error is not None:
        stderr.print(f"[yellow]warning:[/] {' '.join(mounted.command)} failed:\n{mounted.error}")
    else:
        stdout.print(f"installed the hook bridge into {label} profile {profile!r}")
