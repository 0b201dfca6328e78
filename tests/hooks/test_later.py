"""The detached step a quiet check leaves for after its call's answer (`dshkit.hooks.later`)."""

from __future__ import annotations

from pathlib import Path

from dshkit.hooks.later import main

CALLED: list[tuple[str, ...]] = []


def noted(*args: object) -> None:
    """A step: notes its string arguments, and says a line through the log it is given."""
    *strings, log = args
    CALLED.append(tuple(str(each) for each in strings))
    assert callable(log)
    log("noted")


def failing(*args: object) -> None:
    raise RuntimeError("the store is gone")


def test_a_step_runs_with_its_arguments_and_the_hooks_log(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert main([str(state), "PostToolUse", f"{__name__}:noted", "a", "b"]) == 0
    assert CALLED[-1] == ("a", "b")
    assert "PostToolUse noted" in (state / "hooks.log").read_text()


def test_a_step_that_fails_says_so_in_the_hooks_log(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert main([str(state), "PostToolUse", f"{__name__}:failing"]) == 1
    said = (state / "hooks.log").read_text()
    assert "a step after the answer failed" in said and "the store is gone" in said
    assert main([str(state), "PostToolUse", "no.such.module:step"]) == 1
    assert "ModuleNotFoundError" in (state / "hooks.log").read_text()
