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
    Change,
    InstallError,
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
            click.option("--harness", type=click.Choice(harnesses.NAMES), required=True),
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
def install_hooks(
    harness: str, scope: str, project: Path, dsh_profile: str, dry_run: bool, state_dir: str | None
) -> None:
    """Make dshkit's hooks in a harness's settings what its hook registry asks (others' hooks
    are left as they are; run it again after an upgrade that adds hooks)."""
    state = resolve_state_dir(state_dir)
    try:  # extra handlers of one's own are installed with the built-in ones
        extra = extra_entries(os.environ.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc

    def plan(harness: str, scope: str, project: Path, state: Path, profile: str) -> list[Change]:
        return plan_install(harness, scope, project, state, profile, extra)

    _run(plan, harness, scope, project, state, dsh_profile, dry_run, installing=True)
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
        _mount_bridge(harness, dsh_profile, project)


@click.command("uninstall-hooks")
@_options
def uninstall_hooks(
    harness: str, scope: str, project: Path, dsh_profile: str, dry_run: bool, state_dir: str | None
) -> None:
    """Take dshkit's hooks out again (a file dshkit alone changed gets its old bytes back)."""
    state = resolve_state_dir(state_dir)
    _run(plan_uninstall, harness, scope, project, state, dsh_profile, dry_run, installing=False)


def _run(
    plan: Callable[[str, str, Path, Path, str], list[Change]],
    harness: str,
    scope: str,
    project: Path,
    state: Path,
    profile: str,
    dry_run: bool,
    installing: bool,
) -> None:
    try:
        changes = plan(harness, scope, project.resolve(), state, profile)
    except InstallError as exc:
        raise click.ClickException(str(exc)) from exc
    if not changes:
        stdout.print(
            "Nothing to change: " + ("already installed." if installing else "not installed.")
        )
        return
    if dry_run:
        for change in changes:
            click.echo(change.diff(), nl=False)
        return
    apply(changes, installing)
    for change in changes:
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
