"""dshkit's hook entries in a Claude-Code-shaped settings file, read and written: Claude
Code's `settings.json`, Codex's `~/.codex/hooks.json` (the same shape) and the file DSH's
Claude-Code hook bridge reads.

`{"hooks": {NAME: [{"matcher": …, "hooks": [{"type": "command", "command": …}]}]}}`, NAME
the harness's name for an event (its dialect's, see `install.hooks`). dshkit's entries are
recognised by the command they run (`… dshkit hook EVENT`, modelled on pre-commit's
installer); nobody else's entry changes, and anything else in the file stays.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..harnesses.config_files import Unreadable, dump_json, load_json
from ..hookspec import HOOK_TIMEOUT_S
from .commands import runs_dshkit
from .model import InstallError, unreadable


def load(path: Path, text: str | None) -> dict[str, Any]:
    """The settings object (empty for a missing or blank file); InstallError when it is not
    one."""
    try:
        return load_json(str(path), text)
    except Unreadable as exc:
        raise unreadable(exc) from exc


def ours(settings: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(the harness's event name, matcher, command) of each dshkit entry."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            for hook in _hooks_of(group):
                if _ours(hook):
                    yield event, str(group.get("matcher") or ""), hook["command"]


def with_hooks(
    path: Path,
    text: str | None,
    wanted: dict[str, str],
    line: Callable[[str], str],
    timeout: int = HOOK_TIMEOUT_S,
) -> str | None:
    """The file with dshkit's entries exactly `wanted` (the harness's event name → matcher),
    each running `line(name)` within `timeout` (in the harness's unit); `text` itself when
    that changes nothing."""
    settings = load(path, text)
    return dump_json(settings) if _converge(path, settings, wanted, line, timeout) else text


def without_hooks(path: Path, text: str) -> str:
    """The file without dshkit's entries; `text` itself when it has none."""
    settings = load(path, text)
    return dump_json(settings) if _converge(path, settings, {}, str) else text


def _converge(
    path: Path,
    settings: dict[str, Any],
    wanted: dict[str, str],
    line: Callable[[str], str],
    timeout: int = HOOK_TIMEOUT_S,
) -> bool:
    """Make dshkit's entries in `settings` exactly `wanted`, in place; returns whether
    anything changed."""
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
                entry = {"type": "command", "command": line(event), "timeout": timeout}
                mine = next(h for h in hooks_of if _ours(h))  # updated in place; others go
                renewed = [
                    {**h, **entry} if h is mine else h for h in hooks_of if h is mine or h in others
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
            entry = {"type": "command", "command": line(event), "timeout": timeout}
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise InstallError(f"{path}: hooks.{event} is not a list; fix it by hand first")
            groups.append({"matcher": matcher, "hooks": [entry]})
            changed = True
    if hooks:
        settings["hooks"] = hooks
    elif changed:
        settings.pop("hooks", None)  # dshkit's entries were all it held
    return changed


def _hooks_of(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _ours(hook: Any) -> bool:
    command = hook.get("command", "") if isinstance(hook, dict) else ""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return runs_dshkit(words, "hook")
