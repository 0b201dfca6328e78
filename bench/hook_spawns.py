"""How many processes a session starts for dshkit's hooks, before and after the narrowing
(`hookspec.installed_events`, `hookspec.conditions`): recorded sessions replayed through the
matchers and per-handler conditions `install-hooks` writes.

Each session's events are read from its log as the harness would fire them (one SessionStart
and SessionEnd, a UserPromptSubmit and a Stop per prompt the person typed, a PreToolUse and a
PostToolUse per tool call) and each is counted where the installed hook would start dshkit:
"before" is the install this change replaced (a handler of no vocabulary matching every
tool), "after" is today's, for a state directory where no handoff ever began and for one
where one did (graft's retirement check then looks at every tool again). A matcher is tested
as Claude Code tests it (a regex searched in the tool's name, "" for every tool), a condition
`Tool(*.ext)` as a case-blind file-name pattern of that tool's call.

    python bench/hook_spawns.py [TRANSCRIPT ...]   (default: the recorded fixtures; Claude
                                                    Code .jsonl and Codex rollout files)
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dshkit import harnesses, hookspec
from dshkit.graft import marker

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = [ROOT / "tests" / "data" / "fixtures", Path("/work/shared/fixtures")]

Call = tuple[str, str, dict[str, object]]  # (event, tool, tool input)


def records(path: Path) -> Iterator[Any]:
    """The JSON lines of a session log, lines that do not parse left out."""
    for line in path.read_text(errors="replace").splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def claude_events(path: Path) -> Iterator[Call]:
    yield ("SessionStart", "", {})
    for entry in records(path):
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if entry.get("type") == "user" and not entry.get("isMeta"):
            typed = isinstance(content, str) or (
                isinstance(content, list)
                and any(isinstance(b, dict) and b.get("type") == "text" for b in content)
            )
            if typed and not str(content).startswith("<"):
                yield ("UserPromptSubmit", "", {})
                yield ("Stop", "", {})
        if entry.get("type") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    found = block.get("input")
                    given: dict[str, object] = found if isinstance(found, dict) else {}
                    yield ("PreToolUse", str(block.get("name")), given)
                    yield ("PostToolUse", str(block.get("name")), given)
    yield ("SessionEnd", "", {})


def codex_events(path: Path) -> Iterator[Call]:
    yield ("SessionStart", "", {})
    for entry in records(path):
        item = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message" and item.get("role") == "user":
            yield ("UserPromptSubmit", "", {})
            yield ("Stop", "", {})
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(item.get("name") or "local_shell")
            yield ("PreToolUse", name, {})
            yield ("PostToolUse", name, {})


def spawns(
    harness: harnesses.Harness, calls: list[Call], builtin: tuple[hookspec.Entry, ...], state: str
) -> Counter[str]:
    """Processes started per event under the install for `state`."""
    matchers = hookspec.installed_events(harness, builtin=builtin, state=state)
    conditions = hookspec.conditions(harness, builtin=builtin, state=state)
    started: Counter[str] = Counter()
    for event, tool, given in calls:
        if event not in matchers or (harness.dialect.name(event) is None):
            continue
        matcher = matchers[event]
        if event in hookspec.TOOL_EVENTS and matcher and not re.search(matcher, tool):
            continue
        if event in conditions:
            named = str(given.get("file_path") or given.get("path") or "")
            started[event] += sum(_holds(said, tool, named) for said in conditions[event])
            continue
        started[event] += 1
    return started


def _holds(condition: str, tool: str, path: str) -> bool:
    name, _, pattern = condition.partition("(")
    if name != tool:
        return False
    return not pattern or fnmatch.fnmatch(Path(path).name.lower(), pattern[:-1].lower())


def before() -> tuple[hookspec.Entry, ...]:
    """The entries as the replaced install read them: no words, patterns or waiting."""
    return tuple(
        hookspec.Entry(e.event, e.handler, tools=e.tools, harnesses=e.harnesses, order=e.order)
        for e in hookspec.HANDLERS
    )


def sessions(paths: list[Path]) -> Iterator[tuple[str, Path]]:
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*.jsonl"))
        for path in files:
            if "rollout-" in path.name:
                yield "codex", path
            elif "/projects/" in str(path) and "claude" in str(path):
                yield "claude", path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=FIXTURES)
    args = parser.parse_args()
    totals: dict[str, Counter[str]] = {"before": Counter(), "after": Counter(), "armed": Counter()}
    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as unarmed, tempfile.TemporaryDirectory() as armed:
        (Path(armed) / marker.NAME).touch()
        print(f"{'session':<44} {'events':>6} {'before':>6} {'after':>6} {'handoff':>7}")
        for name, path in sessions([p for p in args.paths if p.exists()]):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest in seen:
                continue  # the same fixture in two places
            seen.add(digest)
            harness = harnesses.get(name)
            reader = claude_events if name == "claude" else codex_events
            calls = list(reader(path))
            rows = {
                "before": spawns(harness, calls, before(), unarmed),
                "after": spawns(harness, calls, hookspec.HANDLERS, unarmed),
                "armed": spawns(harness, calls, hookspec.HANDLERS, armed),
            }
            for key, row in rows.items():
                totals[key] += row
            label = f"{name}:{path.name[:36]}"
            figures = " ".join(f"{sum(rows[k].values()):>6}" for k in ("before", "after"))
            print(f"{label:<44} {len(calls):>6} {figures} {sum(rows['armed'].values()):>7}")
    print()
    events = sorted(set().union(*totals.values()))
    print(f"{'event':<20} {'before':>7} {'after':>7} {'handoff':>8}")
    for event in events:
        line = " ".join(f"{totals[k][event]:>7}" for k in ("before", "after"))
        print(f"{event:<20} {line} {totals['armed'][event]:>8}")
    line = " ".join(f"{sum(totals[k].values()):>7}" for k in ("before", "after"))
    print(f"{'total':<20} {line} {sum(totals['armed'].values()):>8}")
    per_tool()
    return 0


# The tools Claude Code 2.1.332 offers in `-p` (read from its requests, tests/real), and MCP
# tools as a server names them.
CLAUDE_TOOLS = (
    "Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup", "Skill",
    "ToolSearch", "Workflow", "Write", "mcp__github__create_issue", "mcp__db__drop_table",
)  # fmt: skip


def per_tool() -> None:
    """Processes one call of each tool starts in Claude Code (PreToolUse + PostToolUse)."""
    claude = harnesses.get("claude")
    print()
    print(f"{'Claude Code tool call':<28} {'before':>6} {'after':>6} {'handoff':>7}")
    with tempfile.TemporaryDirectory() as unarmed, tempfile.TemporaryDirectory() as armed:
        (Path(armed) / marker.NAME).touch()
        named: list[tuple[str, dict[str, object]]] = [(t, {}) for t in CLAUDE_TOOLS]
        named += [("Write", {"file_path": "notes.md"}), ("Write", {"file_path": "site/X.HTML"})]
        for tool, given in named:
            calls: list[Call] = [("PreToolUse", tool, given), ("PostToolUse", tool, given)]
            row = [
                sum(spawns(claude, calls, before(), unarmed).values()),
                sum(spawns(claude, calls, hookspec.HANDLERS, unarmed).values()),
                sum(spawns(claude, calls, hookspec.HANDLERS, armed).values()),
            ]
            label = tool + (f" {given['file_path']}" if given else "")
            print(f"{label:<28} {row[0]:>6} {row[1]:>6} {row[2]:>7}")


if __name__ == "__main__":
    sys.exit(main())
