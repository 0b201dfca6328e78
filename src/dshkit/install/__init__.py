"""dshkit inside a harness: its hooks, its MCP server's registration and DSH's hook bridge,
installed, taken out and checked (`service`), carefully written (`files`) with dshkit's
bookkeeping in its state directory, never beside a person's files (`ledger`), one module per
config format: `hook_settings` (Claude Code's settings.json, Codex's hooks.json, DSH's
bridge file), `mcp_json` (`~/.claude.json`, `.mcp.json`), `codex_config` (Codex's
config.toml), `dsh_patch` (DSH's cordis.patch.yml); `plugin` writes the plugin manifests this
checkout ships and reads where Claude Code and Codex record the plugin installed. Parsing
those formats is `harnesses.config_files`'s, which the capabilities read too.
"""

from __future__ import annotations

from .commands import PROJECT_PROGRAM, SERVER_NAME
from .files import Change, apply
from .model import (
    ABSENT,
    BROKEN,
    OK,
    UNKNOWN,
    WARN,
    HarnessAbsent,
    Inspection,
    InstallError,
    Problem,
)
from .service import (
    BridgeMount,
    HarnessCheck,
    Plan,
    absent,
    check_harness,
    inspect,
    inspect_mcp,
    mount_bridge,
    plan_install,
    plan_uninstall,
)

__all__ = [
    "ABSENT",
    "BROKEN",
    "OK",
    "PROJECT_PROGRAM",
    "SERVER_NAME",
    "UNKNOWN",
    "WARN",
    "BridgeMount",
    "Change",
    "HarnessAbsent",
    "HarnessCheck",
    "Inspection",
    "InstallError",
    "Plan",
    "Problem",
    "absent",
    "apply",
    "check_harness",
    "inspect",
    "inspect_mcp",
    "mount_bridge",
    "plan_install",
    "plan_uninstall",
]
