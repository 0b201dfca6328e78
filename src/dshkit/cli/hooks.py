"""`dshkit install-hooks` / `uninstall-hooks`: dshkit's hooks in a harness's settings."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import harnesses
from ..hookspec import extra_entries
from ..install import (
    PROJECT_PROGRAM,
    Plan,
    apply,
    mount_bridge,
    plan_install,
    plan_uninstall,
)
from ..paths import state_dir as resolve_state_dir
from .common import state_dir_option, stderr, stdout

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
def install_hooks(
    harness: str | None,
    scope: str,
    project: Path,
    dsh_profile: str,
    dry_run: bool,
    state_dir: str | None,
    create: bool,
) -> None:
    """Make dshkit's hooks in a harness's settings what its hook registry asks (others' hooks
    are left as they are; run it again after an upgrade that adds hooks).

    Without --harness: every harness found on this machine (its config directory is there,
    or its CLI is on PATH); the others are skipped, and named. A harness named that is not
    found is refused (exit 2) unless --create is given. Nothing of dshkit's bookkeeping is
    written beside your files: it is kept in the state directory."""
    if create and harness is None:
        raise click.UsageError("--create needs --harness: it installs into one harness named")
    state = resolve_state_dir(state_dir)
    try:  # extra handlers of one's own are installed with the built-in ones
        extra = extra_entries(os.environ.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    # A harness named that is not here is refused as bad input on the command line (exit 2),
    # a file dshkit cannot change as asked as not done (exit 1): the error tree says which.
    plan = plan_install(harness, scope, project.resolve(), state, dsh_profile, extra, create)
    _run(plan, state, dry_run, installing=True)
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
    if not dry_run:
        for name in plan.harnesses:
            _mount_bridge(name, dsh_profile, project)


@click.command("uninstall-hooks")
@_options
def uninstall_hooks(
    harness: str | None,
    scope: str,
    project: Path,
    dsh_profile: str,
    dry_run: bool,
    state_dir: str | None,
) -> None:
    """Take dshkit's hooks out again (a file dshkit alone changed gets its old bytes back, one
    it created goes, and so do the directories it made once they are empty).

    Without --harness: out of every harness."""
    state = resolve_state_dir(state_dir)
    plan = plan_uninstall(harness, scope, project.resolve(), state, dsh_profile)
    _run(plan, state, dry_run, installing=False)


def _run(plan: Plan, state: Path, dry_run: bool, installing: bool) -> None:
    for name, why in plan.skipped:
        stdout.print(f"skipped {harnesses.get(name).label}: {why}", markup=False)
    writes = plan.writes
    if not writes:
        stdout.print(
            "Nothing to change: " + ("already installed." if installing else "not installed.")
        )
    if dry_run:
        for change in writes:
            click.echo(change.diff(), nl=False)
        return
    if not plan.changes:
        return
    try:
        apply(plan.changes, installing, state)
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    for change in writes:
        stdout.print(("updated " if change.after is not None else "removed ") + str(change.path))


def _mount_bridge(harness: str, profile: str, project: Path) -> None:
    """Add the harness's hook bridge (DSH's), or say the one command that does."""
    mounted = mount_bridge(harness, profile, project)
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
