"""Answer hints (dshkit.hooks.hint): used only while everything they were computed from holds,
never when anything changed, and a missing or broken one is no answer (the full path runs)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from dshkit.hooks import hint
from dshkit.store import Store
from dshkit.storeview import queries_rows

EVENT, HARNESS, SESSION = "UserPromptSubmit", "claude", "c1"
SQL = "SELECT key, value FROM meta WHERE key LIKE 'test.%'"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    with Store(state) as store:
        store.db.execute("INSERT INTO meta (key, value) VALUES ('test.a', '1')")
    return state


def payload(**extra: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "cwd": "/p", "prompt": "fix it", **extra}


def written(
    state: Path, config: Path, reply: hint.Reply | None = None, env: dict[str, str] | None = None
) -> None:
    assert hint.write(
        str(state),
        EVENT,
        HARNESS,
        SESSION,
        payload(),
        reply or hint.Reply(b'{"a": "\xe4\xb8\xad"}', b"", 0),
        free=("prompt",),
        env={"DSHKIT_X": "1", "PATH": "/bin"} if env is None else env,
        files=(str(config),),
        queries=((SQL, []),),
    )


def read(state: Path, env: dict[str, str] | None = None, **extra: Any) -> hint.Reply | None:
    return hint.read(
        str(state),
        EVENT,
        HARNESS,
        SESSION,
        payload(**extra),
        {"DSHKIT_X": "1"} if env is None else env,
    )


def test_a_hint_answers_while_its_key_holds_whatever_the_free_fields_say(
    state: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[optimizer]\n")
    written(state, config)
    found = read(state, prompt="another prompt altogether")
    assert found is not None
    assert (found.output, found.error, found.code) == (b'{"a": "\xe4\xb8\xad"}', b"", 0)
    target = hint.path(str(state), EVENT, HARNESS, SESSION)
    assert target is not None
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(target)).st_mode) == 0o700


def test_a_hint_is_never_used_once_what_it_depended_on_changed(state: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[optimizer]\n")
    written(state, config)
    assert read(state) is not None
    # Each change alone voids it: a payload field, a variable set or unset, a file, a row.
    assert read(state, cwd="/q") is None
    assert read(state, permission_mode="plan") is None
    assert read(state, {"DSHKIT_X": "2"}) is None
    assert read(state, {}) is None
    assert read(state, {"DSHKIT_X": "1", "DSHKIT_CAPABILITY": "off"}) is None
    assert read(state, {"DSHKIT_X": "1", "PATH": "/usr/bin"}) is not None  # not dshkit's
    config.write_text("[optimizer]\ntier = 'fast'\n")  # same size or not: a new mtime
    assert read(state) is None
    written(state, config)
    config.unlink()
    assert read(state) is None
    config.write_text("[optimizer]\ntier = 'fast'\n")
    written(state, config)
    assert read(state) is not None
    with Store(state) as store:  # a row changed in place: same count, same ids
        store.db.execute("UPDATE meta SET value = '2' WHERE key = 'test.a'")
    assert read(state) is None
    written(state, config)
    with Store(state) as store:
        store.db.execute("INSERT INTO meta (key, value) VALUES ('test.b', '1')")
    assert read(state) is None
    written(state, config)
    with Store(state) as store:  # rows it did not read change nothing
        store.db.execute("INSERT INTO meta (key, value) VALUES ('other', '1')")
    assert read(state) is not None
    # Without its free field the payload is another one (the field is held by its presence).
    assert (
        hint.read(
            str(state),
            EVENT,
            HARNESS,
            SESSION,
            {"session_id": SESSION, "cwd": "/p"},
            {"DSHKIT_X": "1"},
        )
        is None
    )
    # Asked without a harness, a hint answers as the harness it was written for.
    found = hint.read(str(state), EVENT, None, SESSION, payload(), {"DSHKIT_X": "1"})
    assert found is not None and found.harness == HARNESS
    # Another session's or event's or harness's hint is not this one's.
    assert hint.read(str(state), EVENT, HARNESS, "c2", payload(), {"DSHKIT_X": "1"}) is None
    assert (
        hint.read(str(state), "SessionStart", HARNESS, SESSION, payload(), {"DSHKIT_X": "1"})
        is None
    )
    assert hint.read(str(state), EVENT, "codex", SESSION, payload(), {"DSHKIT_X": "1"}) is None


def test_a_hint_answers_only_before_the_time_its_answer_holds_until(state: Path) -> None:
    # `Call.holds_until`: a face whose words depend on the clock says when they stop holding.
    import time

    now = int(time.time() * 1000)
    for until, answers in ((None, True), (now + 60_000, True), (now - 1, False)):
        assert hint.write(str(state), EVENT, HARNESS, SESSION, payload(), hint.Reply(), until=until)
        assert (read(state, env={}) is not None) is answers, until


def test_a_missing_broken_or_unnamable_hint_is_no_answer(state: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    assert read(state) is None  # none written
    written(state, config)
    target = hint.path(str(state), EVENT, HARNESS, SESSION)
    assert target is not None
    data = Path(target).read_bytes()
    older = data.replace(b'"version": "', b'"version": "0.0.0-older-')
    for broken in (
        older,
        data[: len(data) // 2],
        b"",
        b"[]",
        data.replace(b'"format": %d' % hint.FORMAT, b'"format": 9'),
    ):
        Path(target).write_bytes(broken)
        assert read(state) is None
    Path(target).write_bytes(data)
    assert read(state) is not None
    # The store gone: its rows cannot be read, so the hint cannot hold.
    for name in os.listdir(state):
        if name.startswith("dshkit.db"):
            os.unlink(state / name)
    assert read(state) is None
    # A session id no file can be named by gets no hint at all.
    for session in ("", "../x", "a/b", "x" * 200):
        assert hint.path(str(state), EVENT, HARNESS, session) is None
        assert not hint.write(str(state), EVENT, HARNESS, session, {}, hint.Reply())


def test_a_hint_that_cannot_be_keyed_is_not_written(state: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    written(state, config)
    assert read(state) is not None
    bad = hint.write(
        str(state),
        EVENT,
        HARNESS,
        SESSION,
        payload(),
        hint.Reply(),
        queries=(("SELECT x FROM nowhere", []),),
    )
    assert not bad
    assert read(state) is None  # the old one is gone too: it may be what changed


def test_forgetting_removes_every_hint(state: Path, tmp_path: Path) -> None:
    """A hint holds the rows and payload fields its answer was read from: forgetting a session
    (or a memory record) leaves none of them behind; the next call takes the full path."""
    from dshkit.memory import records
    from dshkit.store import HINTS_DIR

    assert HINTS_DIR == hint.HINT_DIR
    config = tmp_path / "config.toml"
    config.write_text("")
    written(state, config)
    hints = state / HINTS_DIR
    assert [p.name for p in hints.iterdir()] and read(state) is not None
    with Store(state) as store:
        store.forget_sessions([("claude", "someone-else")], for_good=True)
    assert list(hints.iterdir()) == []
    assert read(state) is None
    written(state, config)
    with Store(state) as store:
        records.forget(store, 12345)  # even one that was not there: the hints go
    assert list(hints.iterdir()) == []


def test_forgetting_removes_the_watermarks_caches_keyed_by_sessions(tmp_path: Path) -> None:
    # Its room hints and what its fold said name sessions by checksums, with turn numbers.
    from dshkit.graft import fold, marker
    from dshkit.store import SESSION_CACHES

    assert SESSION_CACHES == (marker.ROOM_DIR, fold.SAID_FILE)
    state = tmp_path / "state"
    with Store(state):
        pass
    (state / marker.ROOM_DIR).mkdir()
    (state / marker.ROOM_DIR / "1f2e3d4c").write_text("room")
    (state / fold.SAID_FILE).write_text("1f2e3d4c 3 nudge\n")
    (state / fold.SETTINGS_FILE).write_text("{}")
    with Store(state) as store:
        store.forget_sessions([("claude", "someone")], for_good=True)
    assert list((state / marker.ROOM_DIR).iterdir()) == []
    assert not (state / fold.SAID_FILE).exists()
    assert (state / fold.SETTINGS_FILE).exists()  # (no session's: kept)


# -- templates: a start of a session the store knows nothing of --------------------------------

A, B = "3f2b8c1e-0d4a-4e6b-9a7c-5d1e2f3a4b5c", "7c1d9e2f-3a4b-4c5d-8e6f-0a1b2c3d4e5f"
START = "SessionStart"
SEEN = "SELECT value FROM meta WHERE key = 'seen.{}'"  # a row only a known session has


def start(session: str, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    where = tmp_path / "projects" / "-p"
    return {"session_id": session, "transcript_path": f"{where}/{session}.jsonl", "cwd": "/p"} | (
        extra
    )


def looks(state: Path) -> Any:
    """What a template's key reads the store with: its rows now."""
    return lambda queries: queries_rows(str(state), queries)


def templated(state: Path, tmp_path: Path, reply: hint.Reply, **extra: Any) -> bool:
    payload = start(A, tmp_path, **extra)
    session_file = str(tmp_path / "env" / A / "hook.sh")  # a per-session file, not there
    files, queries = (payload["transcript_path"], session_file), (SEEN.format(A), SQL)
    seen = hint.seen(payload, files, queries, looks(state))
    return seen is not None and hint.write_template(
        str(state),
        START,
        HARNESS,
        payload,
        reply,
        env={"DSHKIT_X": "1", "CLAUDE_ENV_FILE": session_file},
        seen=seen,
        handlers=("h:one",),
    )


def read_for(state: Path, tmp_path: Path, session: str, **extra: Any) -> hint.Reply | None:
    env = {"DSHKIT_X": "1", "CLAUDE_ENV_FILE": str(tmp_path / "env" / session / "hook.sh")}
    return hint.read_template(str(state), START, start(session, tmp_path, **extra), env)


def test_a_template_answers_another_unseen_session_and_holds_no_trace_of_its_own(
    state: Path, tmp_path: Path
) -> None:
    told = hint.Reply(b'{"hookSpecificOutput": {"additionalContext": "facts"}}', b"", 0)
    assert templated(state, tmp_path, told)
    target = Path(hint.template_path(str(state), START, start(A, tmp_path), HARNESS))
    assert A not in target.read_text() and str(tmp_path / "projects") not in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    found = read_for(state, tmp_path, B)
    assert found is not None and (found.output, found.code) == (told.output, 0)
    assert found.handlers == ["h:one"] and found.harness == HARNESS
    # Not for a session the store knows (its row), nor one whose transcript is written
    # already, nor a payload that differs but in the session's names, nor a short id.
    with Store(state) as store:
        store.set_meta(f"seen.{B}", "1")
    assert read_for(state, tmp_path, B) is None
    other = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
    assert read_for(state, tmp_path, other) is not None
    transcript = Path(start(other, tmp_path)["transcript_path"])
    transcript.parent.mkdir(parents=True)
    transcript.write_text("{}\n")
    assert read_for(state, tmp_path, other) is None
    third = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    assert read_for(state, tmp_path, third) is not None
    assert read_for(state, tmp_path, third, source="resume") is None
    assert read_for(state, tmp_path, "c1") is None
    # What the store's rows read changed: no session is answered by it any more.
    with Store(state) as store:
        store.set_meta("test.b", "2")
    assert read_for(state, tmp_path, third) is None


def test_a_template_is_not_written_for_an_answer_naming_its_session(
    state: Path, tmp_path: Path
) -> None:
    assert not templated(state, tmp_path, hint.Reply(f'{{"id": "{A}"}}'.encode(), b"", 0))
    assert not templated(state, tmp_path, hint.Reply(b"", b"", 0), transcript_path="/p/it's.jsonl")
    for slot in (hint.SAID, hint.QUIET):
        assert not Path(
            hint.template_path(str(state), START, start(A, tmp_path), HARNESS, slot)
        ).exists()


def test_a_session_is_unseen_only_while_everything_read_is_as_for_a_fresh_one(
    state: Path, tmp_path: Path
) -> None:
    payload = start(A, tmp_path)
    files, queries = [payload["transcript_path"]], [SEEN.format(A), SQL]
    assert hint.unseen(payload, files, queries, looks(state))
    with Store(state) as store:
        store.set_meta(f"seen.{A}", "1")
    assert not hint.unseen(payload, files, queries, looks(state))
    assert not hint.unseen(start("c1", tmp_path), files, queries, looks(state))


def opening(session: str, tmp_path: Path, words: str | None = "fix it") -> dict[str, Any]:
    """A session's first prompt (`words` None: a payload without them)."""
    payload = start(session, tmp_path, permission_mode="default")
    return payload if words is None else {**payload, "prompt": words}


def test_a_template_holds_to_what_its_writers_handlers_read_and_a_prompts_words_by_presence(
    state: Path, tmp_path: Path
) -> None:
    # A first prompt's template: its session was told something at its start (its row), as
    # every session is; its words are held by their presence, and their prefixes.
    with Store(state) as store:
        for session in (A, B):
            store.set_meta(f"seen.{session}", "told at its start")
    payload = opening(A, tmp_path)
    seen = hint.seen(payload, [], [SEEN.format(A), SQL], looks(state))
    assert seen is not None and SEEN.format(seen.marks[0]) in [sql for sql, _ in seen.queries]
    told = hint.Reply(b'{"hookSpecificOutput": {"additionalContext": "mode"}}', b"", 0)
    env = {"DSHKIT_X": "1"}
    assert hint.write_template(
        str(state),
        EVENT,
        HARNESS,
        payload,
        told,
        env=env,
        seen=seen,
        handlers=("h:one",),
        free=("prompt",),
        unprefixed={"prompt": ["》"]},
    )
    found = hint.read_template(str(state), EVENT, opening(B, tmp_path, "other words"), env)
    assert found is not None and found.output == told.output
    # Not for a session told something else (or nothing), nor words with the prefix, nor a
    # payload without words.
    third = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    assert hint.read_template(str(state), EVENT, opening(third, tmp_path), env) is None
    with Store(state) as store:
        store.set_meta(f"seen.{third}", "told something else")
    assert hint.read_template(str(state), EVENT, opening(third, tmp_path), env) is None
    assert hint.read_template(str(state), EVENT, opening(B, tmp_path, "》ok"), env) is None
    assert hint.read_template(str(state), EVENT, opening(B, tmp_path, None), env) is None
    assert hint.read_template(str(state), EVENT, opening(B, tmp_path), env) is not None


def test_a_template_that_says_nothing_is_kept_beside_one_that_says_something(
    state: Path, tmp_path: Path
) -> None:
    told = hint.Reply(b'{"hookSpecificOutput": {"additionalContext": "facts"}}', b"", 0)
    assert templated(state, tmp_path, told)
    with Store(state) as store:
        store.set_meta(f"seen.{B}", "1")  # (then, what read nothing for B is no template of it)
    assert templated(state, tmp_path, hint.Reply())  # the same state: both hold
    paths = [
        Path(hint.template_path(str(state), START, start(A, tmp_path), HARNESS, slot))
        for slot in (hint.SAID, hint.QUIET)
    ]
    assert all(path.exists() for path in paths)
    third = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    found = read_for(state, tmp_path, third)  # the one that says something first
    assert found is not None and found.output == told.output
    paths[0].unlink()
    found = read_for(state, tmp_path, third)
    assert found is not None and found.output == b""
    hint.drop_template(str(state), START, start(A, tmp_path), HARNESS)
    assert not any(path.exists() for path in paths)


def test_a_hint_holds_to_no_variable_a_harness_gives_each_process_anew(
    state: Path, tmp_path: Path
) -> None:
    # Claude Code gives each session's process its own pid, messaging socket and token.
    first = {"DSHKIT_X": "1", "CLAUDE_PID": "17408", "CLAUDE_CODE_MESSAGING_TOKEN": "357a6a0a"}
    config = tmp_path / "config.toml"
    config.write_text("[optimizer]\n")
    written(
        state, config, env={**first, "CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/cc-socks/17408.sock"}
    )
    target = hint.path(str(state), EVENT, HARNESS, SESSION)
    assert target is not None and "357a6a0a" not in Path(target).read_text()  # not written down
    again = {"DSHKIT_X": "1", "CLAUDE_PID": "17664", "CLAUDE_CODE_MESSAGING_TOKEN": "82d8ed7a"}
    assert read(state, env=again) is not None  # the next process of the same session
    assert read(state, env={**again, "DSHKIT_X": "2"}) is None  # (dshkit's own still count)


def test_a_harness_that_asks_every_step_keeps_a_steps_hint_and_a_turns_first_prompts(
    state: Path,
) -> None:
    # DSH asks before every model step: the session's turn (`turns.stepping`, read now) says
    # which hint answers, and is no part of either's key, so a turn's end voids neither.
    from dshkit import turns

    key = ("dsh", SESSION)

    def kept(step: bool, said: bytes) -> None:
        reply = hint.Reply(said, b"", 0)
        assert hint.write(
            str(state), EVENT, "dsh", SESSION, payload(), reply, free=("prompt",), step=step
        )

    def answer(prompt: str = "fix it") -> bytes | None:
        found = hint.read(str(state), EVENT, None, SESSION, payload(prompt=prompt), {})
        return None if found is None else found.output

    kept(True, b"a step's")
    assert answer() is None  # no turn under way: the person's prompt, which has no hint yet
    with Store(state) as store:
        turns.record(store, key, EVENT, step=False, blocked=False, context="【画像】" * 9)
    assert answer() == b"a step's"  # the turn is open: a step
    kept(False, b"a prompt's")
    assert answer() == b"a step's"
    with Store(state) as store:
        turns.record(store, key, "Stop", step=False, blocked=False, context="")
    assert answer() == b"a prompt's"  # the turn ended: the person's next prompt
    assert answer("【画像】" * 9) == b"a step's"  # dshkit's own words: a step whatever the turn
    hint.drop(str(state), EVENT, "dsh", SESSION, opening=True)
    assert answer() is None
    assert answer("【画像】" * 9) == b"a step's"
