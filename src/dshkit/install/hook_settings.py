"""dshkit's hook entries in a Claude-Code-shaped settings file, read and written: Claude
Code's `settings.json`, Codex's `~/.codex/hooks.json` (the same shape) and the file DSH's
Claude-Code hook bridge reads.

`{"hooks": {NAME: [{"matcher": …, "hooks": [{"type": "command", "command": …}]}]}}`, NAME
the harness's name for an event (its dialect's, see `install.hooks`); where the hook registry
gives an event per-handler conditions (`hookspec.conditions`), dshkit's group holds one
handler per condition, each with its `if`. dshkit's entries are
recognised by the command they run (`… dshkit hook EVENT`, modelled on pre-commit's
installer), or, for a resident hook (`install-hooks --resident`), by its `type: "http"` URL on
loopback under `/api/hooks/`; nobody else's entry changes, and anything else in the file
stays.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping
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


_RESIDENT_URL = re.compile(r"^http://127\.0\.0\.1:\d+/api/hooks/[A-Za-z]+$")
# What a resident hook sends: its own credential, from Claude Code's environment (only the
# variables listed are interpolated into a header; the value is never in this file).
HOOK_HEADER = "X-Dshkit-Hook"
HOOK_TOKEN_ENV = "DSHKIT_HOOK_TOKEN"
# The keys of a handler dshkit writes; any other key someone added to it is kept.
_WRITTEN = ("type", "command", "args", "url", "headers", "allowedEnvVars", "timeout", "if")


def resident_url(port: int, event: str) -> str:
    """Where the resident hook of `event` (dshkit's name) posts its payload."""
    return f"http://127.0.0.1:{port}/api/hooks/{event}"


def ours(settings: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(the harness's event name, matcher, command) of each dshkit entry (a resident hook's
    URL in the command's place)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            for hook in _hooks_of(group):
                if _ours(hook):
                    said = hook["url"] if hook.get("type") == "http" else hook["command"]
                    yield event, str(group.get("matcher") or ""), said


def conditions(settings: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The harness's event name → the conditions (`if`) of dshkit's handlers there, for each
    event where dshkit has a conditioned handler."""
    found: dict[str, list[str]] = {}
    hooks = settings.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in _hooks_of(group):
                if _ours(hook) and isinstance(hook.get("if"), str):
                    found.setdefault(event, []).append(hook["if"])
    return {event: tuple(said) for event, said in found.items()}


def with_hooks(
    path: Path,
    text: str | None,
    wanted: dict[str, str],
    line: Callable[[str], str],
    conditions: Mapping[str, tuple[str, ...]] | None = None,
    http: Mapping[str, str] | None = None,
    *,
    timeout: int = HOOK_TIMEOUT_S,
) -> str | None:
    """The file with dshkit's entries exactly `wanted` (the harness's event name → matcher),
    each running `line(name)` within `timeout` (in the harness's unit), or posting to the URL
    `http` gives its event (a resident hook), one handler per condition where `conditions`
    gives the event some; `text` itself when that changes nothing."""
    settings = load(path, text)
    changed = _converge(path, settings, wanted, line, timeout, conditions or {}, http or {})
    return dump_json(settings) if changed else text


def without_hooks(path: Path, text: str) -> str:
    """The file without dshkit's entries; `text` itself when it has none."""
    settings = load(path, text)
    return (
        dump_json(settings) if _converge(path, settings, {}, str, HOOK_TIMEOUT_S, {}, {}) else text
    )


def _handlers(
    event: str,
    line: Callable[[str], str],
    timeout: int,
    conditions: tuple[str, ...],
    url: str | None,
) -> list[Any]:
    entry: dict[str, Any]
    if url is not None:
        entry = {
            "type": "http",
            "url": url,
            "headers": {HOOK_HEADER: f"${{{HOOK_TOKEN_ENV}}}"},
            "allowedEnvVars": [HOOK_TOKEN_ENV],
            "timeout": HOOK_TIMEOUT_S,
        }
    else:
        entry = {"type": "command", "command": line(event), "timeout": timeout}
    return [{**entry, "if": said} for said in conditions] if conditions else [entry]


def _converge(
    path: Path,
    settings: dict[str, Any],
    wanted: dict[str, str],
    line: Callable[[str], str],
    timeout: int,
    conditions: Mapping[str, tuple[str, ...]],
    http: Mapping[str, str],
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
                handlers = _handlers(
                    event, line, timeout, conditions.get(event, ()), http.get(event)
                )
                mine = next(h for h in hooks_of if _ours(h))  # replaced in place; others go
                renewed = []
                for h in hooks_of:
                    if h is mine:  # a key of its own (say a statusMessage) kept
                        kept_keys = {k: v for k, v in h.items() if k not in _WRITTEN}
                        renewed += [{**kept_keys, **handler} for handler in handlers]
                    elif h in others:
                        renewed.append(h)
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
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise InstallError(f"{path}: hooks.{event} is not a list; fix it by hand first")
            handlers = _handlers(event, line, timeout, conditions.get(event, ()), http.get(event))
            groups.append({"matcher": matcher, "hooks": handlers})
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
    if isinstance(hook, dict) and hook.get("type") == "http":
        url = hook.get("url")
        return isinstance(url, str) and _RESIDENT_URL.match(url) is not None
    command = hook.get("command", "") if isinstance(hook, dict) else ""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return runs_dshkit(words, "hook")
