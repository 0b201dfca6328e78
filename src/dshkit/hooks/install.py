"""Installing dshkit's hooks into a harness's settings, and taking them out again.

Modelled on pre-commit's installer: dshkit's entries are recognised by the command they run
(`… hook EVENT`, with the absolute path of the installing `dshkit`, so the hook works
whatever the harness's PATH is); nobody else's hooks are touched; installing twice changes
nothing; the file is backed up first. Uninstalling restores the backup byte for byte when the
file is still what dshkit wrote, and otherwise removes only dshkit's entries.

- Claude Code: `~/.claude/settings.json` (user) or `<project>/.claude/settings.json`.
- Codex: `~/.codex/hooks.json` (same shape; Codex runs them only when trusted, or with
  `--dangerously-bypass-hook-trust`).
- DSH: a Claude-Code-shaped settings file in dshkit's state directory, read by DSH's
  Claude-Code hook bridge, which a marked block in the profile's `cordis.patch.yml` mounts
  with that `configPath`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import harnesses
from .registry import HANDLERS

HOOK_TIMEOUT_S = 30
_BEGIN = (
    "# >>> dshkit hooks (managed by `dshkit install-hooks`; `dshkit uninstall-hooks` removes it)"
)
_END = "# <<< dshkit hooks"
_STANDS_FOR_EMPTY = " — stands for the empty list `[]`"
_BACKUP = ".dshkit-backup"
_WRITTEN = ".dshkit-written"  # the sha256 of what dshkit wrote, to know if it was edited since


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


def settings_path(harness: str, scope: str, project: Path, state_dir: Path) -> Path:
    try:
        found = harnesses.get(harness)
    except harnesses.UnknownHarness as exc:
        raise InstallError(str(exc)) from None
    if scope == "user":
        return Path(found.user_settings(str(state_dir)))
    if found.project_settings is None:
        where = found.user_settings(str(state_dir))
        raise InstallError(f"{found.label} reads hooks from {where} only: use --scope user")
    return Path(found.project_settings(str(project)))


def plan_install(
    harness: str, scope: str, project: Path, state_dir: Path, profile: str = "headless"
) -> list[Change]:
    """The file changes that install dshkit's hooks (nothing written yet)."""
    command = dshkit_command()
    path = settings_path(harness, scope, project, state_dir)
    before = _read(path)
    settings = _parse(path, before)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; fix it by hand first")
    for event in HANDLERS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it by hand first")
        line = shlex.join([*command, "hook", event, "--state-dir", str(state_dir)])
        if not any(_ours(hook) for group in groups for hook in _hooks_of(group)):
            groups.append(
                {
                    "matcher": "",
                    "hooks": [{"type": "command", "command": line, "timeout": HOOK_TIMEOUT_S}],
                }
            )
    after = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    changes = [Change(path, before, after)] if after != before else []
    bridge = harnesses.get(harness).bridge
    if bridge is not None:
        changes += _plan_patch(Path(bridge.patch_path(profile)), path, bridge)
    return changes


def _plan_patch(patch: Path, config: Path, bridge: harnesses.Bridge) -> list[Change]:
    """The patch layer with a marked block mounting the bridge (a YAML block list)."""
    before = _read(patch) or ""
    if _BEGIN in before:
        return []
    if bridge.plugin_id in before:
        raise InstallError(
            f"{patch} already mounts the Claude-Code hook bridge; add dshkit's hooks to its "
            "configPath file by hand, or remove that entry first"
        )
    block = (
        f"- insert:\n    - id: {bridge.plugin_id}\n"
        f"      name: '{bridge.plugin_name}'\n      config:\n"
        f"        configPath: {json.dumps(str(config))}\n{_END}\n"
    )
    content = [line for line in before.splitlines() if line.strip() and not line.startswith("#")]
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


def plan_uninstall(
    harness: str, scope: str, project: Path, state_dir: Path, profile: str = "headless"
) -> list[Change]:
    """The file changes that take dshkit's hooks out again."""
    paths = [settings_path(harness, scope, project, state_dir)]
    bridge = harnesses.get(harness).bridge
    if bridge is not None:
        paths.append(Path(bridge.patch_path(profile)))
    changes = []
    for path in paths:
        before = _read(path)
        if before is None:
            continue
        untouched, original = _restore(path, before)
        if untouched:
            changes.append(Change(path, before, original))
        elif path.suffix == ".yml":
            changes.append(Change(path, before, _without_block(before)))
        else:
            changes.append(Change(path, before, _without_ours(path, before)))
    return [c for c in changes if c.after != c.before]


def apply(changes: list[Change], installing: bool) -> None:
    """Write the changes. Installing backs each file up the first time; uninstalling drops
    the backup and the record of what was written."""
    for change in changes:
        backup = change.path.with_name(change.path.name + _BACKUP)
        written = change.path.with_name(change.path.name + _WRITTEN)
        if installing and not written.exists():
            change.path.parent.mkdir(parents=True, exist_ok=True)
            if change.before is not None:
                backup.write_text(change.before)
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            _write(change.path, change.after)
        if installing:
            written.write_text(_sha(change.after or ""))
        else:
            written.unlink(missing_ok=True)
            backup.unlink(missing_ok=True)


def installed(harness: str, scope: str, project: Path, state_dir: Path) -> bool:
    text = _read(settings_path(harness, scope, project, state_dir))
    return text is not None and _has_ours(text)


def _restore(path: Path, current: str) -> tuple[bool, str | None]:
    """`(True, pre-install content)` when the file is still exactly what dshkit wrote (content
    None: it did not exist before); `(False, None)` when it was edited since."""
    written = path.with_name(path.name + _WRITTEN)
    if not written.exists() or written.read_text().strip() != _sha(current):
        return False, None
    backup = path.with_name(path.name + _BACKUP)
    return True, backup.read_text() if backup.exists() else None


def _without_ours(path: Path, text: str) -> str:
    settings = _parse(path, text)
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = [g for g in hooks[event] if not all(_ours(h) for h in _hooks_of(g))]
            if groups:
                hooks[event] = groups
            else:
                del hooks[event]
        if not hooks:
            del settings["hooks"]
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _without_block(text: str) -> str:
    start = text.find(_BEGIN)
    end = text.find(_END, start)
    if start < 0 or end < 0:
        return text
    first_line = text[start : text.find("\n", start)]
    rest = text[:start] + text[end + len(_END) + 1 :]
    if first_line.endswith(_STANDS_FOR_EMPTY):
        content = [line for line in rest.splitlines() if line.strip() and not line.startswith("#")]
        if not content:  # nothing else in the list: it is the empty list `[]` again
            return text[:start] + "[]\n" + text[end + len(_END) + 1 :]
    return rest


def _hooks_of(group: Any) -> list[Any]:
    return group.get("hooks", []) if isinstance(group, dict) else []


def _ours(hook: Any) -> bool:
    command = hook.get("command", "") if isinstance(hook, dict) else ""
    words = shlex.split(command) if isinstance(command, str) else []
    return len(words) >= 3 and "hook" in words and any(w.endswith("dshkit") for w in words)


def _has_ours(text: str) -> bool:
    try:
        settings = json.loads(text)
    except json.JSONDecodeError:
        return False
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    return isinstance(hooks, dict) and any(
        _ours(h)
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        for h in _hooks_of(g)
    )


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


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".dshkit-tmp")
    temporary.write_text(text)
    os.replace(temporary, path)  # never a half-written settings file


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
