"""Installing dshkit's hooks into a harness's settings, checking them, and taking them out.

Modelled on pre-commit's installer: dshkit's entries are recognised by the command they run
(`… dshkit hook EVENT`); nobody else's hooks are touched. Installing makes dshkit's entries
exactly what the hook registry asks for (an event added to the registry later is added by
installing again; running it twice changes nothing). User scope names the installing
`dshkit` by absolute path and its state directory, so the hook works whatever the harness's
PATH is; project scope writes `dshkit hook EVENT`, found on PATH with its default state
directory, because that file is meant to be committed and used on other machines.

Settings files are the person's: a file is written only when dshkit's entries change, through
a symlink (the link stays a link), keeping its mode, after a backup with the same mode.
Uninstalling restores the backup byte for byte when the file is still what dshkit wrote,
otherwise removes only dshkit's entries, and leaves a file without them untouched.

- Claude Code: `~/.claude/settings.json` (user) or `<project>/.claude/settings.json`.
- Codex: `~/.codex/hooks.json` (same shape; Codex runs them only when trusted, or with
  `--dangerously-bypass-hook-trust`).
- DSH: a Claude-Code-shaped settings file in dshkit's state directory, read by DSH's
  Claude-Code hook bridge, which a marked block in the profile's `cordis.patch.yml` mounts
  with that `configPath`.

The same run registers dshkit's MCP server with the harness, or takes it out
(`dshkit.mcp.register` says where and how); each file is still written once.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import harnesses
from .. import hookspec as registry
from ..hookspec import HOOK_TIMEOUT_S
from ..paths import state_dir as default_state_dir

if TYPE_CHECKING:
    from ..mcp import register

_BEGIN = (
    "# >>> dshkit hooks (managed by `dshkit install-hooks`; `dshkit uninstall-hooks` removes it)"
)
_END = "# <<< dshkit hooks"
_STANDS_FOR_EMPTY = " — stands for the empty list `[]`"
_BACKUP = ".dshkit-backup"
_WRITTEN = ".dshkit-written"  # the sha256 of what dshkit wrote, to know if it was edited since
# ... or this, for good, once a person edited the file between two installs: the backup no
# longer holds the file without dshkit, so uninstalling takes only dshkit's entries out.
_EDITED = "edited"
PROJECT_PROGRAM = "dshkit"  # what a project-scope hook runs: whichever dshkit is on PATH


class InstallError(ValueError):
    """The install cannot be done as asked (the message says why)."""


@dataclass
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is removed

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def dshkit_command() -> list[str]:
    """How this very dshkit is run: its script beside the interpreter, else `python -m`."""
    script = Path(sys.executable).parent / "dshkit"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dshkit"]


def hook_line(event: str, scope: str, state_dir: Path) -> str:
    """The command a hook runs for `event`."""
    if scope == "project":
        return shlex.join([PROJECT_PROGRAM, "hook", event])
    return shlex.join([*dshkit_command(), "hook", event, "--state-dir", str(state_dir)])


def settings_path(harness: str, scope: str, project: Path, state_dir: Path) -> Path:
    found = _harness(harness)
    if scope == "user":
        return Path(found.user_settings(str(state_dir)))
    if found.project_settings is None:
        where = found.user_settings(str(state_dir))
        raise InstallError(f"{found.label} reads hooks from {where} only: use --scope user")
    if not project.is_dir():
        raise InstallError(f"--project {project}: no such directory")
    return Path(found.project_settings(str(project)))


def plan_install(
    harness: str,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    extra: Iterable[registry.Entry] = (),
) -> list[Change]:
    """The file changes that make dshkit's hooks what the registry asks (nothing written)."""
    found = _harness(harness)
    path = settings_path(harness, scope, project, state_dir)
    before = _read(path)
    settings = _parse(path, before)
    wanted = registry.installed_events(found, extra)
    changes = []
    if _converge(path, settings, wanted, lambda event: hook_line(event, scope, state_dir)):
        changes.append(Change(path, before, _dump(settings)))
    if found.bridge is not None:
        changes += _plan_patch(Path(found.bridge.patch_path(profile)), path, found.bridge)
    registration = _mcp_registration(found, scope, project, profile)
    if registration is not None:  # the MCP server too (in the patch layer: after the bridge)
        _edit(changes, registration.path, registration.add(state_dir))
    return [c for c in changes if c.after != c.before]


def plan_uninstall(
    harness: str, scope: str, project: Path, state_dir: Path, profile: str = "headless"
) -> list[Change]:
    """The file changes that take dshkit's hooks out again (none where it has no entries)."""
    found = _harness(harness)
    path = settings_path(harness, scope, project, state_dir)

    def without_hooks(text: str) -> str:
        settings = _parse(path, text)
        return _dump(settings) if _converge(path, settings, {}, str) else text

    changes: list[Change] = []
    # The MCP server first: a bridge block taken out after it finds the patch layer's list as
    # it was before dshkit (and gives back the empty list `[]` it stood for).
    registration = _mcp_registration(found, scope, project, profile)
    if registration is not None:
        _take_out(changes, registration.path, registration.remove)
    _take_out(changes, path, without_hooks)
    if found.bridge is not None:
        _take_out(changes, Path(found.bridge.patch_path(profile)), without_block)
    return [c for c in changes if c.after != c.before]


def _mcp_registration(
    found: harnesses.Harness, scope: str, project: Path, profile: str
) -> register.Target | None:
    from ..mcp import register  # here, not at the top: it builds on this module

    return register.target(found, scope, project, profile)


def _edit(changes: list[Change], path: Path, edit: Callable[[str | None], str]) -> None:
    """Apply `edit` to what `changes` already make of `path` (else to the file as it is)."""
    for change in changes:
        if change.path == path:
            change.after = edit(change.after)
            return
    before = _read(path)
    changes.append(Change(path, before, edit(before)))


def _take_out(changes: list[Change], path: Path, edit: Callable[[str], str]) -> None:
    """Take dshkit's part out of `path`: its old bytes when the file is still what dshkit
    wrote, else `edit` applied to what `changes` already make of it."""
    change = next((c for c in changes if c.path == path), None)
    if change is None:
        before = _read(path)
        if before is None:
            return
        change = Change(path, before, before)
        changes.append(change)
    if change.before is None:
        return
    untouched, original = _restore(path, change.before)
    if untouched:
        change.after = original
    elif change.after is not None:
        change.after = edit(change.after)


def apply(changes: list[Change], installing: bool) -> None:
    """Write the changes. Installing backs each file up the first time (with its mode);
    uninstalling drops the backup and the record of what was written."""
    for change in changes:
        backup = change.path.with_name(change.path.name + _BACKUP)
        written = change.path.with_name(change.path.name + _WRITTEN)
        mode = _mode(change.path)
        if installing and not written.exists():
            change.path.parent.mkdir(parents=True, exist_ok=True)
            if change.before is not None:
                _write(backup, change.before, mode)
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            _write(change.path, change.after, mode)
        if installing:
            _write(written, _record(written, change.before, change.after), mode)
        else:
            written.unlink(missing_ok=True)
            backup.unlink(missing_ok=True)


# -- checking an install (doctor) -----------------------------------------------------------


BROKEN, UNKNOWN, WARN = "broken", "unknown", "warn"


@dataclass
class Problem:
    message: str
    level: str  # BROKEN; UNKNOWN: cannot tell whether it works; WARN: worth knowing, works


@dataclass
class Inspection:
    """One harness's install in one scope, against this dshkit, its registry and state dir."""

    harness: str
    scope: str
    path: Path | None
    installed: bool  # some dshkit entry is there
    events: dict[str, str] = field(default_factory=dict)  # installed event → matcher
    problems: list[Problem] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The worst problem's level, else "ok", or "absent" (not installed, which is fine)."""
        for level in (BROKEN, UNKNOWN, WARN):
            if any(p.level == level for p in self.problems):
                return level
        return "ok" if self.installed else "absent"

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "scope": self.scope,
            "path": str(self.path) if self.path else None,
            "status": self.status,
            "installed": self.installed,
            "events": self.events,
            "problems": [{"level": p.level, "message": p.message} for p in self.problems],
        }


def inspect(
    harness: str,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str = "headless",
    extra: Iterable[registry.Entry] = (),
) -> Inspection:
    """Whether dshkit's hooks are installed here, and everything that keeps them from working:
    an event the registry has and the install lacks, a matcher that changed, a `dshkit` that
    is missing or another one, another state directory, a bridge that is not mounted."""
    found = _harness(harness)
    try:
        path = settings_path(harness, scope, project, state_dir)
    except InstallError as exc:
        return Inspection(harness, scope, None, False, problems=[Problem(str(exc), BROKEN)])
    result = Inspection(harness, scope, path, False)
    text = _read(path)
    try:
        settings = _parse(path, text)
    except InstallError as exc:
        result.problems.append(Problem(str(exc), BROKEN))
        return result
    ours = list(_our_hooks(settings))
    result.installed = bool(ours)
    if found.bridge is not None:
        _inspect_bridge(result, found, found.bridge, profile, path)
    if not result.installed:
        return result
    again = f"run `dshkit install-hooks --harness {harness} --scope {scope}` again"
    wanted = registry.installed_events(found, extra)
    result.events = {event: matcher for event, matcher, _ in ours}
    missing = [event for event in wanted if event not in result.events]
    if missing:
        result.problems.append(Problem(f"lacks {', '.join(missing)}: {again}", BROKEN))
    for event, matcher in result.events.items():
        if event not in wanted:
            result.problems.append(Problem(f"{event} is no longer used: {again}", WARN))
        elif matcher != wanted[event]:
            wants = f"{event} matches {matcher!r}, the registry wants {wanted[event]!r}"
            result.problems.append(Problem(f"{wants}: {again}", BROKEN))
    for command in sorted({command for _, _, command in ours}):
        result.problems += _inspect_command(command, state_dir, again)
    return result


def _inspect_command(
    command: str, state_dir: Path, again: str, verb: str = "hook"
) -> list[Problem]:
    """What keeps `… dshkit VERB …` from working here: a missing or other dshkit, another
    state directory."""
    words = shlex.split(command)
    at = words.index(verb)
    program = words[0]  # the dshkit script, or the interpreter of `python -m dshkit`
    found = shutil.which(program) if os.sep not in program else program
    this = dshkit_command()[0]
    problems = []
    if found is None or not os.access(found, os.X_OK):
        where = "is not on PATH here" if os.sep not in program else "does not exist"
        problems.append(Problem(f"runs {program}, which {where}: {again}", BROKEN))
    elif os.path.realpath(found) != os.path.realpath(this):
        problems.append(Problem(f"runs another dshkit ({found}; this one is {this})", WARN))
    given = words[words.index("--state-dir") + 1] if "--state-dir" in words[at:-1] else None
    used = Path(given) if given else default_state_dir()
    if os.path.realpath(used) != os.path.realpath(state_dir):
        problems.append(
            Problem(f"feeds another state directory ({used}; this one is {state_dir})", BROKEN)
        )
    return problems


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
    text = _read(patch) or ""
    start, end = text.find(_BEGIN), text.find(_END)
    if start < 0 or end < 0:
        if result.installed:
            result.problems.append(
                Problem(f"{patch} has no dshkit block mounting {config}", BROKEN)
            )
        return
    result.installed = True
    if f"configPath: {json.dumps(str(config))}" not in text[start:end]:
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


# -- settings files ---------------------------------------------------------------------------


def _harness(name: str) -> harnesses.Harness:
    try:
        return harnesses.get(name)
    except harnesses.UnknownHarness as exc:
        raise InstallError(str(exc)) from None


def _converge(
    path: Path, settings: dict[str, Any], wanted: dict[str, str], line: Callable[[str], str]
) -> bool:
    """Make dshkit's entries in `settings` exactly `wanted` (event → matcher), each running
    `line(event)`; nobody else's entry changes. Returns whether anything changed."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        if not wanted:
            return False
        raise InstallError(f"{path}: 'hooks' is not an object; fix it by hand first")
    changed, placed = False, set()
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            if event in wanted:
                raise InstallError(f"{path}: hooks.{event} is not a list; fix it by hand first")
            continue
        kept = []
        for group in groups:
            hooks_of = _hooks_of(group)
            if not any(_ours(h) for h in hooks_of):
                kept.append(group)
                continue
            others = [h for h in hooks_of if not _ours(h)]
            matcher = wanted.get(event)
            if (
                matcher is not None
                and event not in placed
                and (not others or group.get("matcher", "") == matcher)
            ):
                placed.add(event)
                ours = {"type": "command", "command": line(event), "timeout": HOOK_TIMEOUT_S}
                mine = next(h for h in hooks_of if _ours(h))  # updated in place; others go
                renewed = [
                    {**h, **ours} if h is mine else h for h in hooks_of if h is mine or h in others
                ]
                alone = {} if others else {"matcher": matcher}  # a shared group keeps its own
                kept.append({**group, **alone, "hooks": renewed})
            elif others:
                kept.append({**group, "hooks": others})
        if kept != groups:
            changed = True
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]  # only dshkit was there
    for event, matcher in wanted.items():
        if event not in placed:
            ours = {"type": "command", "command": line(event), "timeout": HOOK_TIMEOUT_S}
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise InstallError(f"{path}: hooks.{event} is not a list; fix it by hand first")
            groups.append({"matcher": matcher, "hooks": [ours]})
            changed = True
    if hooks:
        settings["hooks"] = hooks
    elif changed:
        settings.pop("hooks", None)  # dshkit's entries were all it held
    return changed


def _our_hooks(settings: dict[str, Any]) -> Iterable[tuple[str, str, str]]:
    """(event, matcher, command) of each dshkit entry."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            for hook in _hooks_of(group):
                if _ours(hook):
                    yield event, str(group.get("matcher") or ""), hook["command"]


def _plan_patch(patch: Path, config: Path, bridge: harnesses.Bridge) -> list[Change]:
    """The patch layer with a marked block mounting the bridge (a YAML block list)."""
    before = _read(patch) or ""
    block = (
        f"- insert:\n    - id: {bridge.plugin_id}\n"
        f"      name: '{bridge.plugin_name}'\n      config:\n"
        f"        configPath: {json.dumps(str(config))}\n{_END}\n"
    )
    start = before.find(_BEGIN)
    if start >= 0:  # ours: make it mount this settings file
        body = before.find("\n", start) + 1
        end = before.find(_END, body)
        if end < 0:
            raise InstallError(f"{patch}: the dshkit block has no end line ({_END}); fix it first")
        after = before[:body] + block + before[end + len(_END) + 1 :]
        return [Change(patch, before, after)] if after != before else []
    if bridge.plugin_id in before:
        raise InstallError(
            f"{patch} already mounts the Claude-Code hook bridge; add dshkit's hooks to its "
            "configPath file by hand, or remove that entry first"
        )
    content = yaml_content(before)
    if [line.strip() for line in content] == ["[]"]:
        # `dsh plugin add` writes an empty flow list; the block stands in for it.
        lines = before.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.strip() == "[]")
        lines[at] = f"{_BEGIN}{_STANDS_FOR_EMPTY}\n{block}"
        return [Change(patch, before or None, "".join(lines))]
    if any(not line.startswith(("-", " ")) for line in content):
        raise InstallError(
            f"{patch} is not a YAML block list dshkit can extend; add this entry by hand:\n"
            + block.removesuffix(f"{_END}\n")
        )
    prefix = before if not before or before.endswith("\n") else before + "\n"
    return [Change(patch, before or None, f"{prefix}{_BEGIN}\n{block}")]


def _record(written: Path, before: str | None, after: str | None) -> str:
    """What to record of a file dshkit writes (see _WRITTEN and _EDITED)."""
    if written.exists():
        last = written.read_text().strip()
        if last == _EDITED or before is None or last != _sha(before):
            return _EDITED
    return _sha(after or "")


def _restore(path: Path, current: str) -> tuple[bool, str | None]:
    """`(True, pre-install content)` when the file is still exactly what dshkit wrote (content
    None: it did not exist before); `(False, None)` when it was edited since."""
    written = path.with_name(path.name + _WRITTEN)
    if not written.exists() or written.read_text().strip() != _sha(current):
        return False, None
    backup = path.with_name(path.name + _BACKUP)
    return True, backup.read_text() if backup.exists() else None


def yaml_content(text: str) -> list[str]:
    """The lines of a YAML patch layer that are neither blank nor comments."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def without_block(text: str, begin: str = _BEGIN, end_line: str = _END) -> str:
    """`text` without dshkit's marked block (`begin` … `end_line`); a block that stood for an
    empty YAML list gives back `[]` when nothing else is left in the list."""
    start = text.find(begin)
    end = text.find(end_line, start)
    if start < 0 or end < 0:
        return text
    first_line = text[start : text.find("\n", start)]
    rest = text[:start] + text[end + len(end_line) + 1 :]
    if first_line.endswith(_STANDS_FOR_EMPTY) and not yaml_content(rest):
        return text[:start] + "[]\n" + text[end + len(end_line) + 1 :]  # the empty list again
    return rest


def _hooks_of(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _ours(hook: Any) -> bool:
    command = hook.get("command", "") if isinstance(hook, dict) else ""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    if "hook" not in words:
        return False
    return any(os.path.basename(w) == "dshkit" for w in words[: words.index("hook")])


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _parse(path: Path, text: str | None) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it by hand first") from exc
    if not isinstance(value, dict):
        raise InstallError(f"{path} is not a JSON object; fix it by hand first")
    return value


def _dump(settings: dict[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)  # through a symlink: its target's mode
    except FileNotFoundError:
        return None


def _write(path: Path, text: str, mode: int | None) -> None:
    """Replace the file's content whole (never half-written), through a symlink so the link
    stays a link, with `mode` (None: a new file's default)."""
    target = Path(os.path.realpath(path))
    temporary = target.with_name(target.name + ".dshkit-tmp")
    # Created with the old mode, never wider even for a moment (a 0600 file may hold secrets).
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    descriptor = os.open(temporary, flags, 0o666 if mode is None else mode)
    try:
        if mode is not None:
            os.fchmod(descriptor, mode)  # exactly the old mode, whatever the umask
        data = memoryview(text.encode())
        while data:
            data = data[os.write(descriptor, data) :]
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        os.close(descriptor)
    os.replace(temporary, target)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
