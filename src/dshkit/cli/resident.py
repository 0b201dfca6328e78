"""`dshkit service install|uninstall|status`: the resident service (`install.resident`), a
systemd user unit on Linux, a launchd agent on macOS; opt-in, reversible, no root."""

from __future__ import annotations

from typing import Any

import click

from ..errors import Failed
from ..install import resident
from ..install.model import InstallError
from ..paths import state_dir as resolve_state_dir
from .common import json_option, print_json, state_dir_option, stdout


@click.group("service")
def service() -> None:
    """Keep `dshkit serve` running for this user (systemd user unit, launchd agent)."""


def _json(found: resident.Status) -> dict[str, Any]:
    return {
        "system": found.system,
        "path": str(found.path),
        "installed": found.installed,
        "active": found.active,
        "port": found.port,
        "detail": found.detail,
    }


def _say(found: resident.Status, as_json: bool) -> None:
    if as_json:
        print_json(_json(found))
        return
    where = f"{found.system} unit {found.path}"
    if not found.installed:
        stdout.print(f"not installed ({where})")
        return
    running = {True: "running", False: "not running", None: "state unknown"}[found.active]
    extra = f": {found.detail}" if found.detail and found.active is not True else ""
    stdout.print(f"installed ({where}), port {found.port}, {running}{extra}")


@service.command("install")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=resident.DEFAULT_PORT, show_default=True
)
@state_dir_option
@json_option
def install(port: int, state_dir: str | None, as_json: bool) -> None:
    """Install and start the service for this user; the resident hooks' credential is drawn
    into <state dir>/hook-token."""
    state = resolve_state_dir(state_dir)
    try:
        found = resident.install(state, port)
    except InstallError as exc:
        raise Failed(str(exc)) from exc
    _say(found, as_json)
    if not as_json:
        token = state / resident.HOOK_TOKEN_FILE
        stdout.print(
            f'for `install-hooks --resident`: export {resident.HOOK_TOKEN_ENV}="$(cat {token})" '
            "where Claude Code starts"
        )


@service.command("uninstall")
@json_option
def uninstall(as_json: bool) -> None:
    """Stop the service and remove its unit (or agent)."""
    _say(resident.uninstall(), as_json)


@service.command("status")
@json_option
def status(as_json: bool) -> None:
    """Whether the service is installed, and whether it runs."""
    _say(resident.status(), as_json)
