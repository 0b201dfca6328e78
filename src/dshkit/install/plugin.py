"""dshkit as a harness plugin: the manifests this checkout ships (a Claude Code marketplace
holding the plugin `dshkit`, the same plugin for Codex), written from the hook registry
(`hookspec`) so that a plugin runs exactly the events and matchers `install-hooks` writes;
and where each harness records an installed plugin, for `doctor` and for `install-hooks`'s
refusal to run a hook twice.

The plugin's hooks run a launcher shipped beside them (`bin/dshkit-launch`, POSIX sh: it must
work where dshkit is not installed) that finds the `dshkit` command and hands it the call; when
there is none it says once how to install it, and a PreToolUse call is denied with that text.
`scripts/gen-plugins.py` writes the files; `--check` fails when one is stale.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__, harnesses
from ..hookspec import HOOK_TIMEOUT_S
from .commands import SERVER_NAME

MARKETPLACE = "dshkit"  # the marketplace's name: `claude plugin install dshkit@dshkit`
PLUGIN = "dshkit"
PLUGIN_DIR = Path("plugins") / PLUGIN  # in the checkout
LAUNCHER = "bin/dshkit-launch"  # in the plugin
DESCRIPTION = (
    "dshkit in the agent: the person's profile and memory at a session's start, the command "
    "guard before every shell command, handoffs and the delivery gate (needs the dshkit "
    "command installed)"
)
# The harnesses whose plugin this checkout ships. Claude Code substitutes
# ${CLAUDE_PLUGIN_ROOT} in exec-form hooks; Codex 0.171 ignores `args` and runs shell-form
# ones with the plugin's root in $PLUGIN_ROOT. (Each plugin format is this module's: the
# registry's harness modules know no plugins yet.)
CLAUDE, CODEX = "claude", "codex"
# The options Claude Code asks for when the plugin is enabled (`userConfig`); a hook sees
# each as CLAUDE_PLUGIN_OPTION_<KEY>, which the launcher turns into dshkit's own variables.
USER_CONFIG: dict[str, dict[str, Any]] = {
    "llm_api_key": {
        "type": "string",
        "title": "LLM API key",
        "description": "The key of the OpenAI-compatible API dshkit's own model calls use "
        "(profile, optimizer); kept in the keychain. Empty: dshkit's config.toml decides.",
        "sensitive": True,
        "required": False,
    },
    "guard_mode": {
        "type": "string",
        "title": "Command guard mode",
        "description": "strict, balanced or autonomous (dshkit guard explain); "
        "balanced asks about unknown commands.",
        "options": ["strict", "balanced", "autonomous"],
        "default": "balanced",
        "required": False,
    },
    "state_dir": {
        "type": "directory",
        "title": "dshkit state directory",
        "description": "Where dshkit keeps its store; empty: $DSH_HOME/dshkit (~/.dsh/dshkit).",
        "required": False,
    },
}


def hooks_file(harness: str) -> dict[str, Any]:
    """The plugin's hooks for `harness`: every event `install-hooks` installs there, with the
    same matcher and timeout, each running the launcher with `hook EVENT`."""
    found = harnesses.get(harness)
    from .hooks import wanted_events  # the installer's own list, not a copy of it

    events: dict[str, Any] = {}
    for name, (event, matcher) in wanted_events(found, ()).items():
        if harness == CLAUDE:  # exec form: no shell parses the plugin's path
            entry = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/" + LAUNCHER}
            entry["args"] = ["hook", event]  # type: ignore[assignment]
        else:
            entry = {"type": "command", "command": f'"$PLUGIN_ROOT/{LAUNCHER}" hook {event}'}
        events[name] = [{"matcher": matcher, "hooks": [{**entry, "timeout": HOOK_TIMEOUT_S}]}]
    return {"description": f"dshkit's hooks ({found.label})", "hooks": events}


def _server(harness: str) -> dict[str, Any]:
    """The plugin's MCP server: `dshkit mcp` through the launcher."""
    args = ["mcp", "--harness", harness, "--no-profile"]
    if harness == CLAUDE:
        return {
            "command": "${CLAUDE_PLUGIN_ROOT}/" + LAUNCHER,
            "args": args,
            "env": {
                "CLAUDE_PLUGIN_OPTION_LLM_API_KEY": "${user_config.llm_api_key}",
                "CLAUDE_PLUGIN_OPTION_GUARD_MODE": "${user_config.guard_mode}",
                "CLAUDE_PLUGIN_OPTION_STATE_DIR": "${user_config.state_dir}",
            },
        }
    # Codex 0.171 resolves a relative command and `cwd` against the plugin's root, and
    # substitutes no ${PLUGIN_ROOT} there (it joined the text to the root).
    return {"command": "./" + LAUNCHER, "args": args, "cwd": "."}


def _common() -> dict[str, Any]:
    return {
        "name": PLUGIN,
        "version": __version__,  # upgrades: the plugin is the dshkit it runs
        "description": DESCRIPTION,
        "author": {"name": "dshkit"},  # no repository URL or licence: the project names none
        "keywords": ["hooks", "memory", "guard", "mcp"],
    }


def files() -> dict[Path, str]:
    """Every generated file, by its path in the checkout, as its text."""
    claude = {
        **_common(),
        "hooks": "./hooks/hooks.json",
        "mcpServers": {SERVER_NAME: _server(CLAUDE)},
        "userConfig": USER_CONFIG,
    }
    codex = {
        **_common(),
        "hooks": "./hooks/codex-hooks.json",
        "mcpServers": {SERVER_NAME: _server(CODEX)},
        "interface": {"displayName": "dshkit", "shortDescription": DESCRIPTION[:120]},
    }
    marketplace = {
        "name": MARKETPLACE,
        "owner": {"name": "dshkit"},
        "metadata": {"description": "dshkit for coding agents", "version": __version__},
        "plugins": [
            {
                "name": PLUGIN,
                "source": f"./{PLUGIN_DIR.as_posix()}",
                "description": DESCRIPTION,
                "version": __version__,
            }
        ],
    }
    return {
        Path(".claude-plugin/marketplace.json"): _json(marketplace),
        PLUGIN_DIR / ".claude-plugin/plugin.json": _json(claude),
        PLUGIN_DIR / ".codex-plugin/plugin.json": _json(codex),
        PLUGIN_DIR / "hooks/hooks.json": _json(hooks_file(CLAUDE)),
        PLUGIN_DIR / "hooks/codex-hooks.json": _json(hooks_file(CODEX)),
    }


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# -- installed plugins, as each harness records them -----------------------------------------


@dataclass
class InstalledPlugin:
    """dshkit's plugin as a harness has it installed."""

    harness: str
    ident: str  # `dshkit@<marketplace>`
    enabled: bool  # False: installed but switched off (its hooks do not run)
    where: str  # the file that records it
    remove: str  # the command that takes it out
    version: str | None = None  # the version installed (None: not recorded)

    @property
    def label(self) -> str:
        return f"{harnesses.get(self.harness).label}'s plugin {self.ident}"

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.ident,
            "enabled": self.enabled,
            "where": self.where,
            "version": self.version,
            "remove": self.remove,
        }


def installed(harness: str, project: Path | None = None) -> list[InstalledPlugin]:
    """dshkit's plugin as `harness` records it installed (user scope, and `project`'s)."""
    if harness == CLAUDE:
        return _claude(project)
    if harness == CODEX:
        return _codex()
    return []


def _claude(project: Path | None) -> list[InstalledPlugin]:
    """Claude Code: `enabledPlugins` in the settings (`"dshkit@mkt": true`), its record of
    installs in `~/.claude/plugins/installed_plugins.json`."""
    home = Path(harnesses.get(CLAUDE).user_settings("")).parent
    record = _load_json(home / "plugins" / "installed_plugins.json")
    recorded = record.get("plugins")
    if not isinstance(recorded, dict):
        recorded = {}
    names = {n for n in recorded if isinstance(n, str) and _ours(n)}
    versions = {n: _version(recorded[n]) for n in names}
    settings = [home / "settings.json"]
    if project is not None:
        settings += [
            project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json",
        ]
    enabled: dict[str, tuple[bool, str]] = {}
    for path in settings:
        switches = _load_json(path).get("enabledPlugins")
        for name, on in (switches or {}).items() if isinstance(switches, dict) else ():
            if isinstance(name, str) and _ours(name):
                enabled[name] = (on is True, str(path))
    found = []
    for name in sorted(names | set(enabled)):
        on, where = enabled.get(name, (False, str(home / "plugins" / "installed_plugins.json")))
        command = f"claude plugin uninstall {name}"
        found.append(
            InstalledPlugin(CLAUDE, name, on and name in names, where, command, versions.get(name))
        )
    return found


def _codex() -> list[InstalledPlugin]:
    """Codex: `[plugins."dshkit@mkt"]` in `~/.codex/config.toml` (`enabled`, default true)."""
    config = Path(harnesses.get(CODEX).user_settings("")).parent / "config.toml"
    try:
        data = tomllib.loads(config.read_text())
    except (OSError, ValueError):
        return []
    plugins = data.get("plugins")
    found = []
    for name, table in plugins.items() if isinstance(plugins, dict) else ():
        if isinstance(name, str) and _ours(name):
            on = not isinstance(table, dict) or table.get("enabled", True) is not False
            plugin, _, market = name.partition("@")
            cache = config.parent / "plugins" / "cache" / market / plugin
            versions = sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []
            remove = f"codex plugin remove {name}"
            version = versions[-1] if versions else None
            found.append(InstalledPlugin(CODEX, name, on, str(config), remove, version))
    return found


def _version(installs: Any) -> str | None:
    """The version Claude Code's record gives an install (a list of installs, one per scope)."""
    for install in installs if isinstance(installs, list) else ():
        if isinstance(install, dict) and isinstance(install.get("version"), str):
            return str(install["version"])
    return None


def _ours(ident: str) -> bool:
    return ident.partition("@")[0] == PLUGIN


def _load_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
