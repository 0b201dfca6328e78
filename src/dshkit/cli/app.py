"""The click application: argument parsing only; each command lives in its own module.

Commands are imported when invoked, so a fast command never pays for a slow one's imports.
"""

from __future__ import annotations

import importlib

import click

from .. import plugins
from .errors import EXITS

# The CLI's own commands, those that run the other surfaces; every other command is named by
# a descriptor (`dshkit.plugins`): a capability's or the core's. Name → "module:attribute".
_SURFACES = {
    "hook": "dshkit.cli.hookinfo:hook",
    "mcp": "dshkit.cli.mcp:mcp",
    "open": "dshkit.cli.open:open_console",
    "serve": "dshkit.cli.serve:serve",
}
_COMMANDS = {**_SURFACES, **plugins.commands()}


# The commands that take no --json, and why (docs/cli.md lists them; a test checks that every
# other command takes it, and says its errors as JSON under it).
NO_JSON = {
    "hook": "stdout carries the harness's hook protocol, and it never fails: any problem is no "
    "opinion, exit 0, and a line in hooks.log",
    "mcp": "stdout carries the MCP protocol (stdio), or it serves HTTP until stopped; its "
    "messages go to stderr",
    "serve": "it serves until stopped and has no result to print; where it listens goes to stderr",
}

_BUT = sorted(NO_JSON)
_EPILOG = (
    "Exit codes: "
    + ", ".join(f"{code} {meaning.partition(':')[0]}" for code, meaning in EXITS)
    + f". Every command but {', '.join(_BUT[:-1])} and {_BUT[-1]} takes --json: its result, "
    "or its error as one JSON object, on stdout (docs/cli.md)."
)


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command


@click.group(
    cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG
)
@click.version_option(package_name="dshkit")
def cli() -> None:
    """dshkit: makes coding-agent harnesses (DSH, Claude Code, Codex) smarter about their
    own sessions."""
