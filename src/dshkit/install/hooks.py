"""dshkit's hooks in a harness: which settings file holds them, the entries the hook
registry (`dshkit.hookspec`) asks for, and what keeps an install from working (`doctor`).

- Claude Code: `~/.claude/settings.json` (user) or `<project>/.claude/settings.json`.
- Codex: `~/.codex/hooks.json` (same shape; Codex runs them only when trusted, or with
  `--dangerously-bypass-hook-trust`).
- DSH: a Claude-Code-shaped settings file in dshkit's state directory, read by DSH's
  Claude-Code hook bridge, which a marked block in the profile's `cordis.patch.yml` mounts
  with that `configPath` (the bridge package itself is added by `dsh plugin add`).

Installing makes dshkit's entries exactly what the hook registry asks for, each under the
name the harness's dialect gives its event (`HookDialect.installed`; an event it lacks gets
none) and running `dshkit hook EVENT` with dshkit's own name for it: an event added to the
registry later is added by installing again, and running it twice changes nothing.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from pathlib import Path

from .. import harnesses, hookspec
from . import dsh_patch, hook_settings
from .commands import hook_line, inspect_command
from .files import Change, edit, read, take_out
from .ledger import Ledger
from .model import BROKEN, UNKNOWN, WARN, Inspection, InstallError, Problem


def has_scope(harness: harnesses.Harness, scope: str) -> bool:
    """Whether `harness` reads hooks in `scope` (every harness has the user scope)."""
    return scope == "user" or harness.project_settings is not None


def settings_path(harness: harnesses.Harness, scope: str, project: Path, state_dir: Path) -> Path:
    """The file that holds dshkit's hooks for `harness` in `scope`."""
    if scope == "user":
        return Path(harness.user_settings(str(state_dir)))
    if harness.project_settings is None:
        where = harness.user_settings(str(state_dir))
        raise InstallError(f"{harness.label} reads hooks from {where} only: use --scope user")
    if not project.is_dir():
        raise InstallError(f"--project {project}: no such directory")
    return Path(harness.project_settings(str(project)))


def plan_install(
    changes: list[Change],
    harness: harnesses.Harness,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str,
    extra: Iterable[hookspec.Entry],
    resident: int | None = None,
) -> list[Path]:
    """Add to `changes` what makes dshkit's hooks what the hook registry asks (and, for a
    bridge, the patch layer's block mounting them); returns the files it plans. With
    `resident` (the service's port), the events the harness can send over HTTP
    (`HookDialect.http_events`) post to the service instead of running a command."""
    path = settings_path(harness, scope, project, state_dir)
    wanted = wanted_events(harness, extra, state_dir)
    matchers = {name: matcher for name, (_, matcher) in wanted.items()}
    conditions = wanted_conditions(harness, extra, state_dir)
    http = {
        name: hook_settings.resident_url(resident, event)
        for name, (event, _) in wanted.items()
        if resident is not None and event in harness.dialect.http_events
    }
    edit(
        changes,
        path,
        lambda text: hook_settings.with_hooks(
            path,
            text,
            matchers,
            lambda name: hook_line(wanted[name][0], scope, state_dir),
            conditions,
            http,
            timeout=harness.dialect.timeout(hookspec.HOOK_TIMEOUT_S),
        ),
    )
    if harness.bridge is None:
        return [path]
    bridge, patch = harness.bridge, Path(harness.bridge.patch_path(profile))
    edit(changes, patch, lambda text: dsh_patch.with_bridge(patch, text, path, bridge))
    return [path, patch]


def wanted_events(
    harness: harnesses.Harness, extra: Iterable[hookspec.Entry], state_dir: Path | None = None
) -> dict[str, tuple[str, str]]:
    """The hooks dshkit installs in `harness` for `state_dir` (None: for any, a plugin's):
    the harness's name for each event the hook registry wants → (dshkit's event, matcher)."""
    state = None if state_dir is None else str(state_dir)
    return harness.dialect.installed(hookspec.installed_events(harness, extra, state=state))


def wanted_conditions(
    harness: harnesses.Harness, extra: Iterable[hookspec.Entry], state_dir: Path | None = None
) -> dict[str, tuple[str, ...]]:
    """The harness's name for each event whose handlers dshkit installs with conditions →
    those conditions (`hookspec.conditions`)."""
    state = None if state_dir is None else str(state_dir)
    found = hookspec.conditions(harness, extra, state=state)
    return {
        name: found[event]
        for event, name in harness.dialect.events.items()
        if name is not None and event in found
    }


def plan_uninstall(
    changes: list[Change],
    harness: harnesses.Harness,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str,
) -> list[Path]:
    """Add to `changes` what takes dshkit's hooks out (nothing where it has no entries);
    returns the files it looks at."""
    path = settings_path(harness, scope, project, state_dir)
    ledger = Ledger(state_dir)
    take_out(changes, path, lambda text: hook_settings.without_hooks(path, text), ledger)
    if harness.bridge is None:
        return [path]
    patch = Path(harness.bridge.patch_path(profile))
    take_out(changes, patch, lambda text: dsh_patch.without_bridge(patch, text), ledger)
    return [path, patch]


def inspect(
    harness: harnesses.Harness,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str,
    extra: Iterable[hookspec.Entry],
) -> Inspection:
    """Whether dshkit's hooks are installed here, and everything that keeps them from working:
    an event the hook registry has and the install lacks, a matcher that changed, a `dshkit`
    that is missing or another one, another state directory, a bridge that is not mounted."""
    try:
        path = settings_path(harness, scope, project, state_dir)
    except InstallError as exc:
        return Inspection(harness.name, scope, None, False, problems=[Problem(str(exc), BROKEN)])
    result = Inspection(harness.name, scope, path, False)
    try:
        settings = hook_settings.load(path, read(path))
    except InstallError as exc:
        result.problems.append(Problem(str(exc), BROKEN))
        return result
    ours = list(hook_settings.ours(settings))
    result.installed = bool(ours)
    if harness.bridge is not None:
        _inspect_bridge(result, harness, harness.bridge, profile, path)
    if not result.installed:
        return result
    again = f"run `dshkit install-hooks --harness {harness.name} --scope {scope}` again"
    events = wanted_events(harness, extra, state_dir)
    wanted = {name: matcher for name, (_, matcher) in events.items()}
    result.events = {event: matcher for event, matcher, _ in ours}
    said, conditions = (
        hook_settings.conditions(settings),
        wanted_conditions(harness, extra, state_dir),
    )
    for event in sorted(set(said) | set(conditions)):
        if event in wanted and said.get(event, ()) != conditions.get(event, ()):
            wants = f"{event}'s handlers have other conditions than the registry's"
            result.problems.append(Problem(f"{wants}: {again}", BROKEN))
    missing = [event for event in wanted if event not in result.events]
    if missing:
        result.problems.append(Problem(f"lacks {', '.join(missing)}: {again}", BROKEN))
    for event, matcher in result.events.items():
        if event not in wanted:
            result.problems.append(Problem(f"{event} is no longer used: {again}", WARN))
        elif matcher != wanted[event]:
            wants = f"{event} matches {matcher!r}, the registry wants {wanted[event]!r}"
            result.problems.append(Problem(f"{wants}: {again}", BROKEN))
    for name, _, command in ours:  # under the harness's name for one event, another's
        runs = _event_of(command)
        if name in events and runs != events[name][0]:
            wants = f"{name} runs `dshkit hook {runs}`, the registry wants {events[name][0]}"
            result.problems.append(Problem(f"{wants}: {again}", BROKEN))
    for command in sorted({command for _, _, command in ours if not _resident(command)}):
        result.problems += inspect_command(command, state_dir, again, scope=scope)
    return result


def _resident(command: str) -> bool:
    return command.startswith("http://")


def resident_urls(harness: harnesses.Harness, path: Path) -> list[str]:
    """The resident hooks' URLs in `harness`'s settings file `path` (none: command hooks)."""
    try:
        settings = hook_settings.load(path, read(path))
    except InstallError:
        return []
    return sorted({said for _, _, said in hook_settings.ours(settings) if _resident(said)})


def _event_of(command: str) -> str:
    """The event a `… dshkit hook EVENT …` command line runs (or a resident hook posts)."""
    if _resident(command):
        return command.rsplit("/", 1)[-1]
    words = shlex.split(command)
    at = words.index("hook") + 1
    return words[at] if at < len(words) else ""


def _inspect_bridge(
    result: Inspection,
    harness: harnesses.Harness,
    bridge: harnesses.Bridge,
    profile: str,
    config: Path,
) -> None:
    """Whether the bridge really runs this settings file: the marked block mounts it and the
    bridge package is in the profile (as `dsh plugin add` puts it there). What cannot be told
    is said to be unknown, never that it works."""
    patch = Path(bridge.patch_path(profile))
    present, mounts = dsh_patch.mounted(read(patch) or "", bridge)
    if not present:
        if result.installed:
            result.problems.append(
                Problem(f"{patch} has no dshkit block mounting {config}", BROKEN)
            )
        return
    result.installed = True
    if mounts != str(config):
        result.problems.append(
            Problem(f"the dshkit block in {patch} mounts another file than {config}", BROKEN)
        )
    # The patch layer sits in the profile's directory, beside the package.json that
    # `dsh plugin add` writes and the node_modules it installs into.
    directory = patch.parent
    add = shlex.join([harness.launcher.program, "plugin", "--profile", profile, "add"])
    add += " " + " ".join(bridge.packages)
    installed = (directory / "node_modules" / bridge.plugin_name / "package.json").is_file()
    try:
        manifest = json.loads((directory / "package.json").read_text())
    except FileNotFoundError:
        manifest = {}  # no plugin was ever added to this profile
    except (OSError, ValueError):
        manifest = None
    dependencies = manifest.get("dependencies") if isinstance(manifest, dict) else None
    listed = isinstance(dependencies, dict) and bridge.plugin_name in dependencies
    if listed and installed:
        return
    if isinstance(manifest, dict) and not listed and not installed:
        result.problems.append(
            Problem(f"the hook bridge is not added to profile {profile!r}: run {add}", BROKEN)
        )
        return
    result.problems.append(
        Problem(
            f"cannot tell whether the hook bridge is installed in {directory} "
            f"(package.json {'lists' if listed else 'does not list'} it, "
            f"node_modules {'has' if installed else 'lacks'} it)",
            UNKNOWN,
        )
    )
