"""The matchers and per-handler conditions `install-hooks` writes (`hookspec.installed_events`,
`hookspec.conditions`): narrow enough that a harness starts no dshkit for a call no handler
looks at, never so narrow that a call the guard judges goes unjudged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshkit import harnesses, hookspec, plugins
from dshkit.gate.rework import DELIVERABLE_SUFFIXES
from dshkit.graft import marker
from dshkit.guard.edits import DELETE_WORDS, judge_tool
from dshkit.guard.policy import SAFE

# Tool names an MCP server may give (as the harnesses report them), and the harnesses' own.
MCP_NAMES = (
    "mcp__db__drop_table",
    "mcp__github__deleteIssue",
    "mcp__github__delete_issue",
    "mcp__x__DESTROY_ALL",
    "mcp__s__purge-cache",
    "mcp__fs__WipeVolume",
    "mcp__fs__erase",
    "mcp__pg__truncateTable",
    "db.dropTable",
    "DeleteFile",
    "mcp__github__create_issue",
    "mcp__github__list_issues",
    "mcp__db__dropdown_values",
    "mcp__notes__undelete",
    "Grep",
    "Glob",
    "TodoWrite",
    "WebFetch",
    "Task",
)


def matches(matcher: str, tool: str) -> bool:
    """Whether a harness starts the hook for `tool`: "" matches all, else the regex is
    searched (Claude Code's `new RegExp(matcher).test(name)`; our regexes use nothing
    JavaScript and Python read differently)."""
    return matcher == "" or re.search(matcher, tool) is not None


@pytest.mark.parametrize("harness", [h.name for h in harnesses.all_harnesses()])
@pytest.mark.parametrize("armed", [False, True])
def test_every_tool_the_guard_judges_still_starts_the_hook(
    harness: str, armed: bool, tmp_path: Path
) -> None:
    found = harnesses.get(harness)
    if armed:
        (tmp_path / marker.NAME).touch()
    matcher = hookspec.installed_events(found, state=str(tmp_path))["PreToolUse"]
    guard = [e for e in hookspec.HANDLERS if e.handler.startswith("dshkit.guard.")]
    # Each guarded vocabulary: commands, writes (Codex's patches), reads.
    for entry in guard:
        for tool in entry.tool_names(found) or ():
            assert matches(matcher, tool), (entry, tool)
    # Every other tool whose name the guard judges a delete (its own judge decides).
    judged = [name for name in MCP_NAMES if judge_tool(name).risk != SAFE]
    assert len(judged) == 10  # db.dropTable and DeleteFile too; not undelete or dropdown
    for name in judged:
        assert matches(matcher, name), name
    # Not started for the rest, unless a handoff began (graft then looks at every tool).
    for name in ("Grep", "mcp__github__create_issue", "mcp__github__list_issues"):
        assert matches(matcher, name) is armed, name
    assert (matcher == "") is armed


def test_a_delete_word_is_matched_in_any_spelling() -> None:
    claude = harnesses.get("claude")
    matcher = hookspec.installed_events(claude, state="/nonexistent")["PreToolUse"]
    for word in sorted(DELETE_WORDS):
        for spelled in (word, word.upper(), word.title(), f"mcp__s__x{word.title()}Now"):
            assert re.search(matcher, spelled), spelled
            if judge_tool(spelled).risk != SAFE:
                assert matches(matcher, spelled)


def test_the_narrowing_words_and_patterns_are_the_judges_own() -> None:
    (tool,) = [h for h in plugins.hooks() if h.handler == "dshkit.guard.hook:on_tool"]
    assert set(tool.names or ()) == DELETE_WORDS
    (write,) = [h for h in plugins.hooks() if h.handler == "dshkit.gate.hook:on_write"]
    assert tuple(p.removeprefix("*") for p in write.paths or ()) == DELIVERABLE_SUFFIXES


def test_the_tool_events_no_handler_names_every_tool_for_are_narrowed(tmp_path: Path) -> None:
    claude = harnesses.get("claude")
    events = hookspec.installed_events(claude, state=str(tmp_path))
    assert events["PreToolUse"] != ""  # the guard's tools and delete-named ones only
    assert events["PostToolUse"] == ""  # graft's watermark reads every tool's result
    assert hookspec.installed_events(claude)["PreToolUse"] == ""  # a plugin: any state


def test_conditions_name_each_tool_once_and_the_html_patterns_for_the_gates_writes() -> None:
    claude, codex = harnesses.get("claude"), harnesses.get("codex")
    gate = tuple(e for e in hookspec.HANDLERS if e.handler.startswith("dshkit.gate.hook:on_"))
    said = hookspec.conditions(claude, builtin=gate)
    patterns = ("*.htm", "*.html", "*.svg", "*.xhtml")
    assert said == {
        "PostToolUse": (
            "Bash",
            *(f"Edit({p})" for p in patterns),
            *(f"MultiEdit({p})" for p in patterns),
            *(f"NotebookEdit({p})" for p in patterns),
            *(f"Write({p})" for p in patterns),
        )
    }
    assert hookspec.installed_events(claude, builtin=gate)["PostToolUse"] == (
        "^(Bash|Edit|MultiEdit|NotebookEdit|Write)$"
    )
    assert hookspec.conditions(codex, builtin=gate) == {}  # Codex has no such conditions
    # With every handler: graft's watermark looks at every tool result, and the guard at
    # tools it can only name by words; nothing is narrower than the matcher.
    assert hookspec.conditions(claude) == {}


def test_a_narrowing_that_names_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="paths narrow a tool vocabulary"):
        hookspec.Entry("PostToolUse", "m:f", paths=("*.html",))
    with pytest.raises(ValueError, match="letters-only words"):
        hookspec.Entry("PreToolUse", "m:f", tools=("read",), names=("delete",))
    with pytest.raises(ValueError, match="letters-only words"):
        hookspec.Entry("PreToolUse", "m:f", names=("a.b",))
