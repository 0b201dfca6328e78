"""Writing one of the person's rules into config.toml: `[guard] allow` (or deny) for every
workspace, `[guard.projects."DIR"]` for one, so a false alarm in the guard's log becomes a
rule in one step.

The person's file is edited, never re-serialised: the pattern goes in as the first item of the
array where it is, or as a new key under the table's header, or as a new table at the end.
The result is parsed again before it is written, and written only when every other value is
as it was and the array is the old one with the pattern added; otherwise nothing is written
and the error says what to add by hand. The file is replaced whole, owner-only.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from ..errors import Invalid
from .rules import ALLOW, DENY, problem

_KEY_LINE = r"^\s*{key}\s*=\s*\["


def add_rule(
    config: Path, pattern: str, kind: str = ALLOW, project: str | None = None
) -> tuple[str, bool]:
    """Add `pattern` to the `kind` array of `[guard]`, or of `[guard.projects."project"]`;
    the table it went into and whether it was added (False: it was there). Invalid names a
    bad pattern, kind or project, or a file this cannot edit safely."""
    if kind not in (ALLOW, DENY):
        raise Invalid(f"kind must be allow or deny, got {kind!r}", field="kind")
    wrong = problem(pattern)
    if wrong is not None:
        raise Invalid(f"the pattern {pattern!r} {wrong}", field="pattern")
    if project is not None and not Path(project).is_absolute():
        raise Invalid(
            f"the project must be an absolute directory, got {project!r}", field="project"
        )
    path = ["guard"] if project is None else ["guard", "projects", project]
    table = "[guard]" if project is None else f"[guard.projects.{_quoted(project)}]"
    try:
        text = config.read_text(encoding="utf-8") if config.exists() else ""
        before = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise Invalid(f"{config} cannot be read as TOML: {exc}", field="config") from exc
    found = _get(before, path)
    old = found.get(kind) if isinstance(found, dict) else None
    if isinstance(old, list) and pattern in old:
        return table, False
    item = _quoted(pattern)
    if found is None:
        lead = (
            "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        )
        edited = f"{text}{lead}{table}\n{kind} = [{item}]\n"
    else:
        edited = _into(text, path, kind, item, old is not None)
    after = _checked(config, edited)
    now = _get(after, path) or {}
    if now.get(kind) != [pattern, *(old or [])] or _without(after, path, kind) != _without(
        before, path, kind
    ):
        raise Invalid(
            f"{config} cannot be edited safely here; add {kind} = [{item}] under {table} by hand",
            field="config",
        )
    from ..paths import private_dir, replace_whole

    private_dir(config.parent)
    replace_whole(config, edited.encode("utf-8"))
    return table, True


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def _get(data: dict[str, Any], path: list[str]) -> dict[str, Any] | None:
    for part in path:
        data = data.get(part)  # type: ignore[assignment]
        if not isinstance(data, dict):
            return None
    return data


def _without(data: dict[str, Any], path: list[str], kind: str) -> dict[str, Any]:
    """`data` (a copy) without the one array being edited."""
    copied: dict[str, Any] = json.loads(json.dumps(data, default=str))
    table = _get(copied, path)
    if table is not None:
        table.pop(kind, None)
    for depth in range(len(path), 0, -1):  # a table the edit made, now empty, was not there
        parent = _get(copied, path[: depth - 1]) if depth > 1 else copied
        if parent is not None and parent.get(path[depth - 1]) == {}:
            del parent[path[depth - 1]]
    return copied


def _checked(config: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Invalid(f"{config} cannot be edited safely here: {exc}", field="config") from exc


def _into(text: str, path: list[str], kind: str, item: str, has_key: bool) -> str:
    """`text` with `item` first in the table's `kind` array (or a new key after its header)."""
    lines = text.splitlines(keepends=True)
    header = next((i for i, line in enumerate(lines) if _names(line, path)), None)
    if header is None:
        return text  # (a table made by dotted keys or a sub-table: refused by the check)
    end = next(
        (i for i in range(header + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    if not has_key:
        lines.insert(header + 1, f"{kind} = [{item}]\n")
        return "".join(lines)
    key = re.compile(_KEY_LINE.format(key=re.escape(kind)))
    for index in range(header + 1, end):
        match = key.match(lines[index])
        if match:
            at = match.end()
            lines[index] = f"{lines[index][:at]}{item}, {lines[index][at:]}"
            return "".join(lines)
    return text


def _names(line: str, path: list[str]) -> bool:
    """Whether a line is the header of the table at `path`."""
    stripped = line.strip()
    if not stripped.startswith("[") or stripped.startswith("[["):
        return False
    try:
        probe = tomllib.loads(f"{stripped}\n__probe = 1\n")
    except tomllib.TOMLDecodeError:
        return False
    found = _get(probe, path)
    return found is not None and "__probe" in found
