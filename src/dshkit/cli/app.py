"""The click application: argument parsing only; each command lives in its own module.

Commands are imported when invoked, so a fast command never pays for a slow one's imports.
"""

from __future__ import annotations

import importlib

import click

# command name → "module:attribute" under dshkit.cli
_COMMANDS = {
    "capability": "capability:capability",
    "doctor": "doctor:doctor",
    "forget": "forget:forget",
    "gate": "gate:gate",
    "graft": "graft:graft",
    "guard": "guard:guard",
    "hook": "hookinfo:hook",
    "inject": "inject:inject",
    "install-hooks": "hooks:install_hooks",
    "mcp": "mcp:mcp",
    "memory": "memory:memory",
    "open": "open:open_console",
    "optimize": "optimize:optimize_command",
    "outcome": "optimize:outcome_command",
    "profile": "profile:profile",
    "refresh": "refresh:refresh",
    "runs": "optimize:runs_command",
    "scan": "scan:scan",
    "serve": "serve:serve",
    "sessions": "sessions:sessions",
    "signals": "signals:signals",
    "uninstall-hooks": "hooks:uninstall_hooks",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(f"dshkit.cli.{module}"), attribute)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dshkit")
def cli() -> None:
    """dshkit: makes coding-agent harnesses (DSH, Claude Code, Codex) smarter about their
    own sessions."""
