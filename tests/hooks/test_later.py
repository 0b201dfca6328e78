"""Handlers run once their call was answered, their answers discarded (`dshkit.hooks.later`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.hookio import Answer
from dshkit.hooks.later import main, run

HERE = __name__


def speaks(hook: Any) -> Answer:
    """Notes the session it ran for and would say something, with a commit to record it."""
    (hook.state_dir / "ran").write_text(str(hook.session_id))

    def commit(store: Any) -> None:
        (hook.state_dir / "committed").write_text("")

    return Answer("test", "something to say", commit=commit)


def fails(hook: Any) -> None:
    raise RuntimeError("the store is gone")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / ".dsh"))
    handlers = f"PostToolUse={HERE}:speaks;PostToolUse={HERE}:fails"
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", handlers)
    folder = tmp_path / ".dsh" / "dshkit"
    folder.mkdir(parents=True, mode=0o700)
    return folder


def test_a_handler_runs_on_the_payload_and_its_answer_is_not_committed(state: Path) -> None:
    raw = orjson.dumps({"session_id": "s1", "hook_event_name": "PostToolUse"})
    run("PostToolUse", [f"{HERE}:speaks"], raw, str(state))
    assert (state / "ran").read_text() == "s1"
    assert not (state / "committed").exists()  # said nothing to anyone: nothing recorded


def test_the_detached_step_removes_its_payload_and_logs_a_failure(state: Path) -> None:
    name = state / "hints" / "payload.later.1.x"
    name.parent.mkdir(mode=0o700)
    name.write_bytes(orjson.dumps({"session_id": "s2"}))
    assert main(["PostToolUse", str(state), str(name), f"{HERE}:speaks", f"{HERE}:fails"]) == 0
    assert not name.exists()
    assert (state / "ran").read_text() == "s2"
    assert "the store is gone" in (state / "hooks.log").read_text()


def written_for(raw: bytes, text: str) -> bytes:
    """The answer the foreground writes for a handler's words, as the step compares it."""
    from dshkit.harnesses import detect
    from dshkit.hooks.protocol import answer, said, written

    harness = detect(orjson.loads(raw), os.environ)
    merged = answer("PostToolUse", [("x", {"additionalContext": text})], harness)
    return said(*written(merged.reply), merged.reply.code)


def test_an_answer_the_handler_gives_again_is_recorded_and_one_it_does_not_is_not(
    state: Path,
) -> None:
    raw = orjson.dumps({"session_id": "s3", "hook_event_name": "PostToolUse", "cwd": "/p"})
    run("PostToolUse", [f"{HERE}:speaks"], raw, str(state), written_for(raw, "something else"))
    assert not (state / "committed").exists()
    assert "nothing of it was recorded" in (state / "hooks.log").read_text()
    run("PostToolUse", [f"{HERE}:speaks"], raw, str(state), written_for(raw, "something to say"))
    assert (state / "committed").exists()


def test_the_detached_step_reads_the_answer_written_beside_its_payload(state: Path) -> None:
    raw = orjson.dumps({"session_id": "s4", "hook_event_name": "PostToolUse", "cwd": "/p"})
    name = state / "hints" / "payload.later.2.x"
    name.parent.mkdir(mode=0o700)
    name.write_bytes(raw)
    Path(f"{name}.said").write_bytes(written_for(raw, "something to say"))
    assert main(["PostToolUse", str(state), str(name), f"{HERE}:speaks"]) == 0
    assert (state / "committed").exists()
    assert list(name.parent.iterdir()) == []
