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
from ..harnesses import Harness, PluginFormat
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
# The options a harness asks for when the plugin is enabled (`userConfig`, where its
# `PluginFormat.options` says so); a hook sees each as CLAUDE_PLUGIN_OPTION_<KEY>, which the
# launcher turns into dshkit's own variables.
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


def shipped() -> list[Harness]:
    """The harnesses that take plugins (their `plugin` format), in the registry's order."""
    return [h for h in harnesses.all_harnesses() if h.plugin is not None]


def hooks_file(harness: Harness) -> dict[str, Any]:
    """The plugin's hooks for `harness`: every event `install-hooks` installs there, with the
    same matcher and timeout, each running the launcher with `hook EVENT`."""
    form = _form(harness)
    from .hooks import wanted_conditions, wanted_events  # the installer's own list

    launcher = f"{form.root}/{LAUNCHER}"
    events: dict[str, Any] = {}
    conditions = wanted_conditions(harness, ())
    for name, (event, matcher) in wanted_events(harness, ()).items():
        if form.exec_form:  # no shell parses the plugin's path
            entry: dict[str, Any] = {
                "type": "command",
                "command": launcher,
                "args": ["hook", event],
            }
        else:
            entry = {"type": "command", "command": f'"{launcher}" hook {event}'}
        entry["timeout"] = HOOK_TIMEOUT_S
        handlers = [{**entry, "if": said} for said in conditions.get(name, ())] or [entry]
        events[name] = [{"matcher": matcher, "hooks": handlers}]
    return {"description": f"dshkit's hooks ({harness.label})", "hooks": events}


def _form(harness: Harness) -> PluginFormat:
    if harness.plugin is None:
        raise ValueError(f"{harness.label} takes no plugins")
    return harness.plugin


def _server(harness: Harness) -> dict[str, Any]:
    """The plugin's MCP server: `dshkit mcp` through the launcher."""
    form = _form(harness)
    args = ["mcp", "--harness", harness.name, "--no-profile"]
    if form.server_relative:  # resolved against the plugin's root, no variable substituted
        return {"command": "./" + LAUNCHER, "args": args, "cwd": "."}
    server: dict[str, Any] = {"command": f"{form.root}/{LAUNCHER}", "args": args}
    if form.options:
        server["env"] = {
            f"CLAUDE_PLUGIN_OPTION_{key.upper()}": "${user_config." + key + "}"
            for key in USER_CONFIG
        }
    return server


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
    made: dict[Path, str] = {}
    for harness in shipped():
        form = _form(harness)
        manifest = {
            **_common(),
            "hooks": f"./{form.hooks_file}",
            "mcpServers": {SERVER_NAME: _server(harness)},
        }
        if form.options:
            manifest["userConfig"] = USER_CONFIG
        else:
            manifest["interface"] = {"displayName": "dshkit", "shortDescription": DESCRIPTION[:120]}
        made[PLUGIN_DIR / form.manifest] = _json(manifest)
        made[PLUGIN_DIR / form.hooks_file] = _json(hooks_file(harness))
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
    return {Path(".claude-plugin/marketplace.json"): _json(marketplace), **made}


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
    found = harnesses.get(harness)
    form = found.plugin
    if form is None:
        return []
    if form.record == "enabled-plugins":
        return _enabled_plugins(found, form, project)
    if form.record == "config-plugins":
        return _config_plugins(found, form)
    raise ValueError(f"{found.label}: unknown plugin record {form.record!r}")


def _enabled_plugins(
    harness: Harness, form: PluginFormat, project: Path | None
) -> list[InstalledPlugin]:
    """`enabledPlugins` in the settings (`"dshkit@mkt": true`), the record of installs in
    `plugins/installed_plugins.json` beside the user settings (Claude Code)."""
    home = Path(harness.user_settings("")).parent
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
        command = form.remove.format(ident=name)
        found.append(
            InstalledPlugin(
                harness.name, name, on and name in names, where, command, versions.get(name)
            )
        )
    return found


def _config_plugins(harness: Harness, form: PluginFormat) -> list[InstalledPlugin]:
    """`[plugins."dshkit@mkt"]` in the config.toml beside the user settings (`enabled`,
    default true), versions in its plugin cache (Codex)."""
    config = Path(harness.user_settings("")).parent / "config.toml"
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
            remove = form.remove.format(ident=name)
            version = versions[-1] if versions else None
            found.append(InstalledPlugin(harness.name, name, on, str(config), remove, version))
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
