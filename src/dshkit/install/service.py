"""Installing dshkit into a harness, taking it out, and checking it: what the surfaces call.

One install plans every file it changes (the hook settings, a bridge's patch layer, the MCP
server's registration), each file once even where two of them are one file (DSH's patch
layer mounts the bridge and runs the server), and writes nothing until `apply`: a dry run
shows the plan as diffs. Nobody else's hooks, servers or settings change.

A harness that is not installed on this machine (`absent`: the registry's `Harness.found`;
for one whose hooks run through a bridge, its CLI on PATH) is left alone in user scope:
installing into every harness skips it and says why, and naming it is refused unless its
directories are to be created. Project scope writes the project's files, meant for other
machines too, whichever harnesses this one has.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import harnesses, hookspec
from . import hooks, mcp, plugin
from .files import Change, edit, take_out
from .ledger import Ledger
from .model import OK, UNKNOWN, WARN, HarnessAbsent, Inspection, InstallError


@dataclass
class Plan:
    """What one install or uninstall does; nothing is written until `apply`."""

    changes: list[Change]  # the files it changes (uninstalling: or only forgets)
    harnesses: list[str] = field(default_factory=list)  # the harnesses it is for
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (harness, why left alone)
    files: dict[str, list[Path]] = field(default_factory=dict)  # harness → the files it has

    def change(self, path: Path) -> Change | None:
        """The change planned for `path` (None: it stays as it is)."""
        return next((change for change in self.changes if change.path == path), None)

    @property
    def writes(self) -> list[Change]:
        """The changes to files' content."""
        return [change for change in self.changes if change.writes]


def plan_install(
    harness: str | None,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    extra: Iterable[hookspec.Entry] = (),
    create: bool = False,
    resident: int | None = None,
) -> Plan:
    """The file changes that make dshkit's hooks what the registry asks, and register its MCP
    server, in `harness` (None: every harness that has `scope`, in user scope those installed
    here). A harness named that is not installed here is refused (HarnessAbsent) unless
    `create`. With `resident` (the service's port), the events a harness can send over HTTP
    go to the service there."""
    plan = Plan([])
    changes: list[Change] = []
    for found in _chosen(harness, scope, plan):
        doubled = _plugin_runs(found, project)
        if doubled is not None:
            if harness is not None:
                raise InstallError(doubled)
            plan.skipped.append((found.name, doubled))
            continue
        why = _absent(found) if scope == "user" and not create else None
        if why is not None:
            if harness is not None:
                raise HarnessAbsent(
                    f"{found.label} is {why}; `--create` installs dshkit into it anyway, "
                    "making its directories"
                )
            plan.skipped.append((found.name, why))
            continue
        files = hooks.plan_install(
            changes, found, scope, project, state_dir, profile, extra, resident
        )
        registration = mcp.target(found, scope, project, profile)
        if registration is not None:  # in the patch layer: after the bridge
            edit(changes, registration.path, registration.add(state_dir))
            files.append(registration.path)
        plan.harnesses.append(found.name)
        plan.files[found.name] = list(dict.fromkeys(files))
    plan.changes = [change for change in changes if change.writes]
    return plan


def plan_uninstall(
    harness: str | None, scope: str, project: Path, state_dir: Path, profile: str = "headless"
) -> Plan:
    """The file changes that take dshkit's hooks and MCP server out of `harness` (None: every
    harness that has `scope`) again: none where it has no entries, and where dshkit only has
    a record left to drop (the file is gone, or holds nothing of dshkit's any more), that."""
    plan = Plan([])
    changes: list[Change] = []
    ledger = Ledger(state_dir)
    for found in _chosen(harness, scope, plan):
        hooks.settings_path(found, scope, project, state_dir)  # refuses a scope it has not
        # The MCP server first: a bridge block taken out after it finds the patch layer's list
        # as it was before dshkit (and gives back the empty list `[]` it stood for).
        registration = mcp.target(found, scope, project, profile)
        files = [] if registration is None else [registration.path]
        if registration is not None:
            take_out(changes, registration.path, registration.remove, ledger)
        files += hooks.plan_uninstall(changes, found, scope, project, state_dir, profile)
        plan.harnesses.append(found.name)
        plan.files[found.name] = list(dict.fromkeys(files))
    plan.changes = [change for change in changes if change.writes or change.recorded]
    return plan


def _plugin_runs(harness: harnesses.Harness, project: Path) -> str | None:
    """Why installing dshkit's hooks into `harness`'s settings would run each hook twice: its
    plugin of dshkit is installed and enabled (None: it is not)."""
    running = [p for p in plugin.installed(harness.name, project) if p.enabled]
    if not running:
        return None
    found = running[0]
    return (
        f"{found.label} is installed and enabled ({found.where}): it already runs dshkit's "
        "hooks and MCP server, so installing them into the settings too would run each "
        f"twice; keep the plugin, or remove it first (`{found.remove}`)"
    )


def absent(harness: str) -> str | None:
    """Why `harness` counts as not installed on this machine (None: it is installed)."""
    return _absent(_harness(harness))


def _chosen(harness: str | None, scope: str, plan: Plan) -> list[harnesses.Harness]:
    """The harness named, or every harness that has `scope` (the others in `plan.skipped`)."""
    if harness is not None:
        return [_harness(harness)]
    chosen = []
    for found in harnesses.all_harnesses():
        if hooks.has_scope(found, scope):
            chosen.append(found)
        else:
            plan.skipped.append((found.name, f"it has no {scope} scope"))
    return chosen


def _absent(harness: harnesses.Harness) -> str | None:
    cli = harness.launcher.executable()
    if harness.bridge is not None:
        # Its hooks run only through the bridge its own CLI adds (`plugin add`) to sessions
        # its CLI starts: without the CLI, a home of sessions (copied, or left) runs nothing.
        if shutil.which(cli) is not None:
            return None
        override = harness.launcher.env_override
        return (
            f"not installed here (no `{cli}` on PATH to add its hook bridge; ${override} names one)"
        )
    if harness.found() is not None:
        return None
    places = " or ".join(harness.places())
    return f"not installed here (nothing of it at {places}, no `{cli}` on PATH)"


def inspect(
    harness: str,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    extra: Iterable[hookspec.Entry] = (),
) -> Inspection:
    """The hooks' install in one scope, against this dshkit, its registry and state dir."""
    found = _harness(harness)
    return _here(found, hooks.inspect(found, scope, project, state_dir, profile, extra))


def inspect_mcp(
    harness: str,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    hooks_installed: bool = False,
) -> Inspection | None:
    """The MCP server's registration in one scope (None: the harness has none there)."""
    found = _harness(harness)
    inspection = mcp.inspect(found, scope, project, state_dir, profile, hooks_installed)
    return None if inspection is None else _here(found, inspection)


@dataclass
class HarnessCheck:
    """Everything installed into one harness, per scope, as `doctor` checks it."""

    harness: str
    hooks: list[Inspection]  # user scope, and project scope where the harness has one
    mcp_servers: list[Inspection]  # the scopes where the harness registers MCP servers
    plugins: list[plugin.InstalledPlugin] = field(default_factory=list)  # dshkit's plugin
    # Two routes that run the same hooks: what runs twice, and which to remove.
    doubled: list[str] = field(default_factory=list)

    @property
    def routes(self) -> list[dict[str, str]]:
        """Every way dshkit reaches this harness: settings written by `install-hooks` (for a
        harness whose hooks run through a bridge, the bridge), its plugin."""
        found = []
        for inspection in _distinct(self.hooks):
            if inspection.installed and inspection.away is None:
                kind = "bridge" if self.harness in _BRIDGED else "settings"
                found.append(
                    {"route": kind, "scope": inspection.scope, "where": str(inspection.path)}
                )
        for installed in self.plugins:
            state = "enabled" if installed.enabled else "disabled"
            found.append(
                {
                    "route": "plugin",
                    "scope": state,
                    "where": installed.where,
                    "plugin": installed.ident,
                }
            )
        return found

    @property
    def hooks_installed(self) -> bool | None:
        """Installed and working in some scope, or its plugin enabled: True; cannot tell:
        None (unknown); else False."""
        statuses = {inspection.status for inspection in self.hooks}
        if statuses & {OK, WARN} or any(p.enabled for p in self.plugins):
            return True
        return None if UNKNOWN in statuses else False


def check_harness(
    harness: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    extra: Iterable[hookspec.Entry] = (),
) -> HarnessCheck:
    """The hooks and the MCP server's registration of `harness` in every scope it has (the
    project scope for `project`); of a harness not installed here, the user scope absent."""
    found = _harness(harness)
    scopes = ["user"] + (["project"] if found.project_settings is not None else [])
    installs = [hooks.inspect(found, s, project, state_dir, profile, extra) for s in scopes]
    registered = [
        mcp.inspect(found, scope, project, state_dir, profile, install.installed)
        for scope, install in zip(scopes, installs, strict=True)
    ]
    servers = [_here(found, inspection) for inspection in registered if inspection is not None]
    plugins = plugin.installed(found.name, project)
    checked = [_here(found, i) for i in installs]
    return HarnessCheck(found.name, checked, servers, plugins, _doubled(found, checked, plugins))


def _doubled(
    harness: harnesses.Harness,
    installs: list[Inspection],
    plugins: list[plugin.InstalledPlugin],
) -> list[str]:
    """Where two routes run the same hooks in `harness`: an enabled plugin beside the
    settings `install-hooks` wrote (the settings' entries go: the plugin updates itself and is
    switched off by the harness), or two enabled plugins (the older one goes)."""
    running = [p for p in plugins if p.enabled]
    found = []
    if len(running) > 1:
        names = ", ".join(p.ident for p in running)
        found.append(
            f"{harness.label} runs dshkit's hooks once per plugin ({names}): keep one, "
            f"e.g. remove the others with `{running[-1].remove}`"
        )
    if not running:
        return found
    for install in _distinct(installs):
        if install.installed and install.away is None:
            found.append(
                f"{harness.label} runs dshkit's hooks twice: {running[0].label} and the "
                f"entries `install-hooks` wrote in {install.path} ({install.scope} scope). "
                f"Remove the settings' entries: `dshkit uninstall-hooks --harness "
                f"{harness.name} --scope {install.scope}` (the plugin stays, and updates "
                "with the harness)"
            )
    return found


def _here(harness: harnesses.Harness, inspection: Inspection) -> Inspection:
    """`inspection`, absent in user scope when the harness is not installed here (as
    `plan_install` skips it there); the project's files are meant for other machines too."""
    if inspection.scope == "user":
        inspection.away = _absent(harness)
    return inspection


def _distinct(installs: list[Inspection]) -> list[Inspection]:
    """One inspection per file: a project in the home directory has the user's settings."""
    by_path: dict[Path | None, Inspection] = {}
    for install in installs:
        by_path.setdefault(install.path, install)
    return list(by_path.values())


_BRIDGED = frozenset(h.name for h in harnesses.all_harnesses() if h.bridge is not None)


@dataclass
class BridgeMount:
    """What adding a harness's hook bridge to a profile did."""

    command: list[str]  # `dsh plugin --profile P add …`
    ran: bool  # False: the harness's CLI is not on PATH; a person runs the command
    error: str | None = None  # what the command said when it failed


def mount_bridge(harness: str, profile: str, project: Path) -> BridgeMount | None:
    """Add the harness's hook bridge to `profile` with its own CLI, run in `project` (None:
    the harness needs no bridge)."""
    found = _harness(harness)
    if found.bridge is None:
        return None
    command = [found.launcher.executable(), "plugin", "--profile", profile, "add"]
    command += found.bridge.packages
    if shutil.which(command[0]) is None:
        return BridgeMount(command, ran=False)
    cwd = project if project.is_dir() else None
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    return BridgeMount(command, True, done.stderr.strip() if done.returncode != 0 else None)


def _harness(name: str) -> harnesses.Harness:
    try:
        return harnesses.get(name)
    except harnesses.UnknownHarness as exc:
        raise InstallError(str(exc)) from None
