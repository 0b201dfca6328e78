"""The watermark's check where no room hint answers (`dshkit.graft.fold`), against the full
check it stands in for (`graft.live.watch`), on the same logs and the same store."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft import fold, live
from dshkit.graft.settings import GraftSettings
from dshkit.graft.watermark import Digest
from dshkit.store import Store

SESSION = "5f0c0001-1d2e-4b3a-8c9d-0e1f2a3b4c5d"
MODELS = ("claude-a", "claude-b", "<synthetic>")
KINDS = (
    "prompt",
    "prompt",
    "words",
    "reminder",
    "meta",
    "compact",
    "sidechain",
    "command",
    "interrupt",
    "result",
    "result",
    "mixed",
    "request",
    "request",
    "request",
    "split",
    "unnamed",
    "nousage",
    "todo",
    "attachment",
    "spoken",
    "summary",
    "skipped",
    "unknown",
    "notdict",
)


@pytest.fixture(autouse=True)
def claude_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    # Each call here comes once the check after the last one ended: a saying it did not
    # record is one left unrecorded, never one whose record is pending (`fold.PENDING_MS`,
    # tested on its own below).
    monkeypatch.setattr(fold, "PENDING_MS", 0)
    for name in [name for name in os.environ if name.startswith("DSHKIT_GRAFT")]:
        monkeypatch.delenv(name)


def user(content: Any, **marks: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **marks}


def level(rng: random.Random, at: float) -> int:
    """A request's context `at` a share of the log: as a session's, rising into the band and
    staying there (a 200,000 window's warning and forced lines lie near 140,000 and 150,000),
    with now and then a low one (a compacted context) or one far past the lines."""
    draw = rng.random()
    if draw < 0.03:
        return rng.randrange(5_000, 30_000)
    if draw < 0.06:
        return rng.randrange(150_000, 190_000)
    return 5_000 + int(min(1.0, at * 1.6) * 138_000) + rng.randrange(0, 6_000)


def request(
    rng: random.Random, number: int, blocks: list[dict[str, Any]], lines: int = 1
) -> list[dict[str, Any]]:
    """A model request as Claude Code logs it: one line per content block group, each with
    the request's usage (the first line's counts)."""
    context = level(rng, number / 160)
    usage = {
        "input_tokens": context // 10,
        "cache_read_input_tokens": context - context // 10 - 50,
        "cache_creation_input_tokens": 50,
        "output_tokens": rng.randrange(1, 500),
    }
    model = rng.choice(MODELS)
    out = []
    for at in range(lines):
        message = {
            "id": f"msg{number}",
            "role": "assistant",
            "model": model,
            "content": blocks if at == lines - 1 else [{"type": "text", "text": "thinking"}],
            # (the first line's usage is the one counted: a later one that differs is not)
            "usage": {**usage, "cache_creation_input_tokens": 50 + at},
        }
        out.append({"type": "assistant", "requestId": f"req{number}", "message": message})
    return out


def todo(rng: random.Random) -> dict[str, Any]:
    phases = rng.random() < 0.3
    items = [
        {
            "content": f"阶段 {n}: step {n}" if phases else f"step {n}",
            "status": rng.choice(("pending", "in_progress", "completed")),
        }
        for n in range(rng.randrange(0, 5))
    ]
    return {"type": "tool_use", "id": "t", "name": "TodoWrite", "input": {"todos": items}}


def entries(rng: random.Random, count: int) -> list[Any]:
    """`count` kinds of Claude Code log lines, drawn at random (every kind the fold reads)."""
    out: list[Any] = []
    use = {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "a"}}
    for number in range(count):
        kind = rng.choice(KINDS)
        if kind == "prompt":
            out.append(user("fix the failing test"))
        elif kind == "words":
            out.append(user([{"type": "text", "text": "and run it"}]))
        elif kind == "reminder":
            out.append(user([{"type": "text", "text": "<system-reminder>x</system-reminder>"}]))
        elif kind == "meta":
            out.append(user("context", isMeta=True))
        elif kind == "compact":
            out.append(user("summary of the session", isCompactSummary=True))
        elif kind == "sidechain":
            out.append(user("a subagent's task", isSidechain=True))
        elif kind == "command":
            out.append(user("<command-name>/clear</command-name>"))
        elif kind == "interrupt":
            out.append(user([{"type": "text", "text": "[Request interrupted by user]"}]))
        elif kind == "result":
            out.append(user([{"type": "tool_result", "tool_use_id": "t", "content": "x"}]))
        elif kind == "mixed":
            result = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
            out.append(user([result, {"type": "text", "text": "also this"}]))
        elif kind == "request":
            out.extend(request(rng, number, [use]))
        elif kind == "split":
            out.extend(request(rng, number, [use], lines=rng.randrange(2, 4)))
        elif kind == "unnamed":
            line = request(rng, number, [use])[0]
            del line["requestId"]
            out.append(line)
        elif kind == "nousage":
            line = request(rng, number, [use])[0]
            del line["message"]["usage"]
            out.append(line)
        elif kind == "todo":
            out.extend(request(rng, number, [todo(rng)]))
        elif kind == "attachment":
            out.append({"type": "attachment", "attachment": {"type": "file", "content": "x"}})
        elif kind == "spoken":
            context = {"type": "hook_additional_context", "content": ["said"]}
            out.append({"type": "attachment", "attachment": context})
        elif kind == "summary":
            out.append({"type": "summary", "summary": "a title"})
        elif kind == "skipped":
            out.append({"type": rng.choice(("system", "progress", "file-history-snapshot"))})
        elif kind == "unknown":
            out.append({"type": "something-new", "x": 1})
        else:
            out.append([1, 2])
    return out


def kept(tmp_path: Path, settings: GraftSettings) -> Path:
    """A state directory holding `settings` as a full check keeps them for the fold."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    fold.keep_settings(str(state), settings, {})
    return state


def setup(tmp_path: Path, settings: GraftSettings) -> tuple[str, Path]:
    state = kept(tmp_path, settings)
    log = tmp_path / ".claude" / "projects" / "-p" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"")
    return str(state), log


def full_check(
    state: str,
    log: Path,
    settings: GraftSettings,
    harness: str = "claude",
    session: str = SESSION,
    deliver: bool = False,
) -> tuple[Digest, str | None]:
    """The full check, as a hook runs it, and the digest it leaves in the store: what it says
    is recorded as delivered (`deliver`: a nudge, an escalation or the plan-first nudge; a
    forced cut would start a handoff) or not at all."""
    with Store(Path(state)) as store:
        watched = live.watch(store, harness, session, str(log), settings, state)
        if deliver and watched.decision.action in ("nudge", "escalate", "plan"):
            watched.commit(store)
        row = store.db.execute(
            "SELECT digest FROM graft_watch WHERE harness = ? AND session_id = ?",
            (harness, session),
        ).fetchone()
    return Digest.from_json(orjson.loads(row[0])), watched.text


class Tally:
    """The fold and the full check on the same log, call after call (see `check`)."""

    def __init__(self, seed: int = 0) -> None:
        self.checks = self.covered = self.proved = self.spoke = self.told = 0
        self.rng = random.Random(seed)

    def check(
        self, state: str, log: Path, settings: GraftSettings, harness: str, session: str, at: str
    ) -> None:
        """Before a full check, the fold reads the same lines: the digest it folds is the full
        check's, a prompt it proves quiet is one the full check says nothing to, and what it
        says after a tool call or at a prompt, half of the calls each (nothing, a nudge, an
        escalation), the full check says too, byte for byte. Most of what the full check says
        is then recorded as delivered, so that the session goes through the band's sayings
        (nudged, escalated, told)."""
        seen = fold.glance(state, str(log), session)
        quiet = fold.quiet(state, str(log), session)
        said_by = fold.prompted if self.rng.random() < 0.5 else fold.verdict
        verdict = said_by(state, str(log), session)
        deliver = self.rng.random() < 0.8
        digest, said = full_check(state, log, settings, harness, session, deliver)
        self.checks += 1
        if seen is not None:
            self.covered += 1
            assert projection(seen[0]) == projection(digest), at
            assert seen[0].window == digest.window, at
        if quiet:
            assert said is None, f"proved quiet {at}, but the check says {said}"
        if verdict is not None:
            assert verdict == (said or ""), f"{at}: the fold says {verdict!r}, the check {said!r}"
            self.told += bool(verdict)
        self.proved += quiet or verdict == ""
        self.spoke += said is not None

    def in_chunks(
        self,
        data: bytes,
        state: str,
        log: Path,
        settings: GraftSettings,
        harness: str,
        session: str,
    ) -> None:
        """`data` appended to `log` in chunks (some cut mid-line), each one `check`ed."""
        written = 0
        while written < len(data):
            step = self.rng.randrange(1, 1_500)
            with open(log, "ab") as handle:
                handle.write(data[written : written + step])
            written += step
            self.check(state, log, settings, harness, session, f"after {written} bytes")

    def enough(self, covered: float) -> None:
        """Not vacuous: most checks folded, many proved quiet, some spoke (the band was
        reached), and the fold said some of it itself."""
        assert self.covered >= self.checks * covered, (self.covered, self.checks)
        assert self.proved >= self.checks * 0.2 and self.spoke > 0, (self.proved, self.spoke)
        assert self.told > 0, (self.told, self.spoke)


def projection(found: fold.Fold | Digest) -> tuple[Any, ...]:
    return (found.context, found.model, found.ordinal, found.levels, found.todos)


@pytest.mark.parametrize("seed", range(12))
def test_what_the_fold_proves_quiet_the_full_check_finds_quiet(tmp_path: Path, seed: int) -> None:
    # Random Claude Code logs of every line kind the fold reads, appended in chunks (some cut
    # mid-line); before each full check the fold reads the same lines: the digest it folds is
    # the full check's, and a call it proves quiet is one the full check says nothing to.
    rng = random.Random(seed)
    windows = {"claude-b": 120_000} if seed % 2 else {}
    settings = GraftSettings(windows=windows, mode="fixed" if seed % 3 == 0 else "dynamic")
    state, log = setup(tmp_path, settings)
    if seed % 4 == 1:  # a handoff began here once (none of this session's): the same holds
        from dshkit.graft import marker

        marker.mark(state)
    data = b"".join(orjson.dumps(line) + b"\n" for line in entries(rng, 160))
    tally = Tally(seed)
    tally.in_chunks(data, state, log, settings, "claude", SESSION)
    tally.enough(covered=0.5)


def asked(
    tmp_path: Path, seed: int, block: dict[str, Any]
) -> tuple[GraftSettings, str, Path, random.Random]:
    """A log with a person's prompt and one request holding `block` (default settings kept):
    the settings, the state directory, the log, and the draw that made the request."""
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    rng = random.Random(seed)
    lines = [user("go"), *request(rng, 1, [block])]
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return settings, state, log, rng


def test_a_line_of_a_handoff_tool_or_a_changed_past_is_left_to_the_full_check(
    tmp_path: Path,
) -> None:
    use = {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "a"}}
    settings, state, log, rng = asked(tmp_path, 7, use)
    full_check(state, log, settings)
    assert fold.glance(state, str(log), SESSION) is not None  # nothing new: the store's fold
    graft = {"type": "tool_use", "id": "g", "name": "mcp__dshkit__graft_prepare", "input": {}}
    with open(log, "ab") as handle:
        handle.write(orjson.dumps(request(rng, 2, [graft])[0]) + b"\n")
    assert fold.glance(state, str(log), SESSION) is None
    full_check(state, log, settings)
    assert fold.glance(state, str(log), SESSION) is not None
    # The bytes before the cursor rewritten: the reader starts again from 0, so does the check.
    raw = log.read_bytes()
    log.write_bytes(raw.replace(b'"go"', b'"no"'))
    assert fold.glance(state, str(log), SESSION) is None
    # Another file at the same path.
    full_check(state, log, settings)
    os.replace(log, log.with_suffix(".old"))
    log.write_bytes(raw)
    assert fold.glance(state, str(log), SESSION) is None


def test_settings_not_kept_or_changed_since_prove_nothing(tmp_path: Path) -> None:
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    log.write_bytes(orjson.dumps(user("go")) + b"\n")
    assert fold.quiet(state, str(log), SESSION)  # no usage yet: nothing to measure
    (Path(state) / "config.toml").write_text("[graft]\nwindow_tokens = 100000\n")
    assert not fold.quiet(state, str(log), SESSION)  # the file changed: resolved anew
    fold.keep_settings(state, GraftSettings.resolve(state)[0], {})
    assert fold.quiet(state, str(log), SESSION)
    (Path(state) / fold.SETTINGS_FILE).unlink()
    assert not fold.quiet(state, str(log), SESSION)


def test_the_plan_first_nudge_is_said_as_the_full_check_says_it_and_a_forced_cut_is_not(
    tmp_path: Path,
) -> None:
    items = [{"content": f"step {n}", "status": "pending"} for n in range(5)]
    listed = {"type": "tool_use", "id": "t", "name": "TodoWrite", "input": {"todos": items}}
    settings, state, log, _ = asked(tmp_path, 3, listed)
    assert fold.glance(state, str(log), SESSION) is not None
    assert not fold.quiet(state, str(log), SESSION)  # five open todos, no phases: plan first
    said_here = fold.verdict(state, str(log), SESSION)
    _, said = full_check(state, log, settings)
    assert said is not None and "阶段" in said and said_here == said
    # Not the fold's twice (the check after did not record it): the full check's then.
    assert fold.verdict(state, str(log), SESSION) is None
    with Store(Path(state)) as store, store.transaction() as db:
        db.execute("UPDATE graft_watch SET state = ?", ('{"planNudged": true}',))
    assert fold.quiet(state, str(log), SESSION)  # nudged once: never again
    with Store(Path(state)) as store, store.transaction() as db:
        db.execute("UPDATE graft_watch SET forced_at = 1")
    assert fold.glance(state, str(log), SESSION) is None


def in_band(number: int, context: int = 145_000) -> dict[str, Any]:
    """A request of one Read call at `context` tokens (a 200,000 window's band, by default)."""
    use = {"type": "tool_use", "id": f"t{number}", "name": "Read", "input": {"file_path": "a"}}
    usage = {"input_tokens": context, "output_tokens": 9}
    message = {"id": f"m{number}", "model": "claude-a", "content": [use], "usage": usage}
    return {"type": "assistant", "requestId": f"r{number}", "message": message}


def append(log: Path, *lines: Any) -> None:
    with open(log, "ab") as handle:
        handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_the_fold_nudges_then_escalates_as_the_full_check_and_is_quiet_after(
    tmp_path: Path,
) -> None:
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    append(log, user("go"), in_band(0, 20_000))
    full_check(state, log, settings)  # the store's fold: below the band
    append(log, in_band(1))
    assert not fold.quiet(state, str(log), SESSION)  # at a prompt: the full check says it
    said = fold.verdict(state, str(log), SESSION)
    assert said is not None and "145,000" not in said and "72%" in said and SESSION in said
    assert full_check(state, log, settings, deliver=True)[1] == said  # (recorded as said)
    append(log, user([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]), in_band(2))
    escalated = fold.verdict(state, str(log), SESSION)
    assert escalated is not None and escalated.startswith("[系统提示] 水位告急")
    assert full_check(state, log, settings, deliver=True)[1] == escalated
    append(log, in_band(3))
    assert fold.verdict(state, str(log), SESSION) == ""  # told all there is in this turn
    assert fold.quiet(state, str(log), SESSION)  # (a DSH step's prompt, too)
    append(log, user("next"), in_band(4))
    assert fold.verdict(state, str(log), SESSION) is not None  # a new turn: nudged again
    # What the fold said and was not recorded (the check after the answer said otherwise),
    # it does not say again: the full check answers.
    assert fold.verdict(state, str(log), SESSION) is None


def test_a_prompt_is_told_the_nudge_as_the_full_check_tells_it_unless_a_scope_may_be_owed(
    tmp_path: Path,
) -> None:
    for scope in (False, True):
        settings = GraftSettings(search_scope=scope)
        (tmp_path / str(scope)).mkdir()
        state, log = setup(tmp_path / str(scope), settings)
        append(log, user("go"), in_band(0, 20_000))
        full_check(state, log, settings)  # the store's fold: below the band
        append(log, in_band(1))
        said = fold.prompted(state, str(log), SESSION)
        if scope:  # graft's prompt face may owe the search scope with it: the full check's
            assert said is None
            continue
        assert said is not None and "72%" in said and SESSION in said
        assert full_check(state, log, settings)[1] == said  # (said, not recorded)
        # Not said twice in a turn, at a prompt or after a tool call: the full check answers.
        assert fold.prompted(state, str(log), SESSION) is None
        assert fold.verdict(state, str(log), SESSION) is None


def test_a_handoff_or_first_words_not_read_keep_the_fold_from_speaking(tmp_path: Path) -> None:
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    card = '<!-- graft-identity: {"sourceSessionId":"s0","boundarySeq":4,"generation":1} -->'
    append(log, in_band(0, 140_000))
    full_check(state, log, settings)  # folded: no person's words yet
    append(log, user(f"{card}\ncarry on"), in_band(1))
    # Born from a handoff, in its first turns: the full check says nothing; the fold, which
    # does not read who a session came from, leaves the call to it.
    assert fold.verdict(state, str(log), SESSION) is None
    assert full_check(state, log, settings)[1] is None
    from dshkit.graft import marker
    from dshkit.graft.lifecycle import begin, claim_pending

    from ..support.graft_driver import plan_for

    # A handoff began here once (another session's): past its first turns, what the ledger
    # holds for this session (nothing) is read beside its digest, and the fold says the nudge
    # as the full check says it.
    marker.mark(state)
    with Store(Path(state)) as store:
        elsewhere = begin(store, plan_for("s-elsewhere", str(tmp_path)), ignite=False)
        claim_pending(store, elsewhere.id, "claude", "s-picked")
    append(log, user("and now this"), user("and this"), user("and more"), in_band(2))
    said = fold.verdict(state, str(log), SESSION)
    assert said is not None and SESSION in said
    assert full_check(state, log, settings)[1] == said
    # This session handed off itself: the decisions' `migrated`, the full check's to say.
    with Store(Path(state)) as store:
        begin(store, plan_for(SESSION, str(tmp_path)), ignite=False)
    append(log, user("one more"), in_band(3))
    assert fold.verdict(state, str(log), SESSION) is None
    assert full_check(state, log, settings)[1] is None


def test_a_session_the_ledger_names_a_target_is_not_nudged_by_the_fold_in_its_first_turns(
    tmp_path: Path,
) -> None:
    # Its log keeps no identity (it was given its handoff as hook context), but the ledger
    # holds the handoff it received: no cut in its first turns.
    from dshkit.graft import marker
    from dshkit.graft.lifecycle import begin, claim_pending

    from ..support.graft_driver import plan_for

    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    marker.mark(state)
    with Store(Path(state)) as store:
        txn = begin(store, plan_for("s-before", str(tmp_path)), ignite=False)
        claim_pending(store, txn.id, "claude", SESSION)
    append(log, user("go"), in_band(0, 20_000))
    full_check(state, log, settings)  # the store's fold: below the band
    append(log, in_band(1))
    assert fold.verdict(state, str(log), SESSION) is None
    assert full_check(state, log, settings)[1] is None


def test_a_log_read_anew_after_a_nudge_is_left_to_the_full_check(tmp_path: Path) -> None:
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    append(log, user("go"), *(in_band(n, 20_000) for n in range(4)), in_band(4))
    assert full_check(state, log, settings, deliver=True)[1] is not None  # nudged
    # The log replaced by a shorter one (read again from its start: its events counted anew,
    # fewer than when the nudge was given), still in the nudge's turn.
    log.write_bytes(b"")
    append(log, user("go"), in_band(5))
    assert full_check(state, log, settings)[1] is None
    append(log, in_band(6))
    assert fold.verdict(state, str(log), SESSION) is None
    assert full_check(state, log, settings)[1] is None


# -- an event log: DSH's, zstd frames of events -------------------------------------------------

DSH_SESSION = "session-5f0c0001-1d2e-4b3a-8c9d-0e1f2a3b4c5d"
DSH_KINDS = (
    "turn",
    "turn",
    "prompt",
    "context",
    "step",
    "step",
    "step",
    "usage",
    "call",
    "todo-call",
    "todo",
    "result",
    "chunks",
    "title",
    "other",
)


def dsh_events(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """`count` DSH events (after a header), drawn at random: every kind the fold reads."""
    out: list[dict[str, Any]] = []
    message: dict[str, Any]
    data: dict[str, Any]
    announced = rng.choice((None, 128_000))
    for number in range(count):
        kind = rng.choice(DSH_KINDS)
        context = level(rng, number / count) * (announced or 200_000) // 200_000
        usage = {
            "inputTokens": context // 10,
            "outputTokens": 9,
            "cacheReadTokens": context - context // 10,
            "cacheWriteTokens": 0,
        }
        model = rng.choice(("deepseek-a", "deepseek-b", "<none>"))
        if kind == "turn":
            out.append({"type": "turn/start", "data": {"turn": number}})
        elif kind == "prompt":
            message = {"role": "user", "content": [{"type": "text", "text": "go"}]}
            out.append({"type": "user/message", "data": {**message, "source": {"kind": "user"}}})
        elif kind == "context":
            # (mostly the log's own window, now and then another: a model switched)
            window = rng.choice((None, 128_000, 200_000)) if rng.random() < 0.2 else announced
            data = {"provider": "p", "model": model, "contextWindow": window}
            out.append({"type": "request/context", "data": data})
        elif kind == "step":
            message = {"role": "assistant", "content": [], "source": {"model": model}}
            data = {"turn": 1, "step": 1, "message": message}
            out.append({"type": "assistant/message", "data": {**data, "usage": usage}})
        elif kind == "usage":
            out.append({"type": "usage/record", "data": {"usage": usage}})
        elif kind in ("call", "todo-call"):
            items = [
                {"content": f"step {n}", "status": rng.choice(("pending", "completed"))}
                for n in range(rng.randrange(0, 5))
            ]
            arguments = {"todos": items} if kind == "todo-call" else {"path": "a"}
            name = "todo_write" if kind == "todo-call" else "read_file"
            data = {"turn": 1, "step": 1, "callId": "c", "name": name}
            out.append(
                {
                    "type": "tool/call",
                    "data": {**data, "arguments": orjson.dumps(arguments).decode()},
                }
            )
        elif kind == "todo":
            items = [{"content": f"阶段 {n}: x", "status": "pending"} for n in range(5)]
            out.append({"type": "todo/write", "data": {"todos": items}})
        elif kind == "result":
            message = {"role": "tool", "content": [], "source": {"kind": "tool", "callId": "c"}}
            out.append({"type": "tool/result", "data": {"message": message}})
        elif kind == "chunks":
            data = {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}
            out.append({"type": "text-chunks", "seq0": number, "time0": 0, "data": data})
        elif kind == "title":
            out.append({"type": "session/title", "data": {"title": "t"}})
        else:
            out.append({"type": "sandbox/mode", "data": {"mode": "read-only"}})
    for seq, event in enumerate(out):
        event.setdefault("seq", seq)
        event.setdefault("time", 0)
    return out


def dsh_log(tmp_path: Path, name: str = "session.jsonl.zstd") -> Path:
    log = tmp_path / ".dsh" / "sessions" / "--p--" / DSH_SESSION / name
    log.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": DSH_SESSION, "createdAt": 0, "cwd": "/p"}
    log.write_bytes(frame(orjson.dumps(header) + b"\n") if name.endswith(".zstd") else b"")
    if not name.endswith(".zstd"):
        log.write_bytes(orjson.dumps(header) + b"\n")
    return log


def frame(text: bytes) -> bytes:
    """One zstd frame as DSH writes them: a checksum, no content size."""
    import zstandard

    return zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(text)


@pytest.mark.parametrize("seed", range(8))
def test_a_dsh_log_folded_in_frames_agrees_with_the_full_check(tmp_path: Path, seed: int) -> None:
    # DSH's log is its events themselves, in zstd frames (one per append; some left torn
    # for a while, as a session being written leaves them), or in plain lines.
    rng = random.Random(seed)
    settings = GraftSettings(windows={"deepseek-b": 120_000} if seed % 2 else {})
    framed = seed % 4 != 3
    state = kept(tmp_path, settings)
    log = dsh_log(tmp_path, "session.jsonl.zstd" if framed else "session.jsonl")
    events = dsh_events(rng, 200)
    tally = Tally(seed)
    torn = b""
    at = 0
    while at < len(events):
        take = rng.randrange(1, 8)
        text = b"".join(orjson.dumps(event) + b"\n" for event in events[at : at + take])
        at += take
        data = frame(text) if framed else text
        with open(log, "ab") as handle:
            if torn:  # the rest of the frame left torn before
                handle.write(torn)
                torn = b""
            if framed and rng.random() < 0.2:
                cut = rng.randrange(1, len(data))
                data, torn = data[:cut], data[cut:]
            handle.write(data)
        tally.check(str(state), log, settings, "dsh", DSH_SESSION, f"after {at} events")
    tally.enough(covered=0.8)


def test_the_real_dsh_log_is_folded_as_the_full_check_folds_it(tmp_path: Path) -> None:
    from ..support.paths import DSH_ZSTD

    real = next(DSH_ZSTD.rglob("session.jsonl.zstd"))
    settings = GraftSettings()
    state = kept(tmp_path, settings)
    log = tmp_path / ".dsh" / "sessions" / real.parent.parent.name / real.parent.name / real.name
    log.parent.mkdir(parents=True)
    log.write_bytes(real.read_bytes())
    session = real.parent.name
    seen = fold.glance(str(state), str(log), session)
    assert seen is not None
    with Store(state) as store:
        live.watch(store, "dsh", session, str(log), settings, str(state))
        (row,) = store.db.execute("SELECT digest FROM graft_watch").fetchone()
    digest = Digest.from_json(orjson.loads(row))
    assert projection(seen[0]) == projection(digest) and digest.context is not None


# -- a mapped log: Codex's rollout, lines the adapter maps to events ------------------------------

CODEX_SESSION = "01a22aa8-d960-7ae2-8fb7-bfdbb0b55be1"
CODEX_KINDS = (
    "started",
    "started",
    "started",
    "prompt",
    "prompt",
    "injected",
    "provenance",
    "assistant",
    "reasoning",
    "developer",
    "count",
    "count",
    "record",
    "record",
    "call",
    "plan-call",
    "custom",
    "shell",
    "output",
    "complete",
    "context",
    "world",
    "meta",
    "unknown",
    "notdict",
)


def codex_records(rng: random.Random, count: int, spawned: bool) -> list[Any]:
    """A rollout's first `session_meta` (of a rollout another agent started, `spawned`), then
    `count` lines drawn at random: every kind the adapter maps."""
    meta: dict[str, Any] = {"session_id": CODEX_SESSION, "cwd": "/p", "thread_source": "user"}
    if spawned:
        meta["source"] = {"subagent": "review"}
    out: list[Any] = [{"type": "session_meta", "payload": meta}]
    responses: list[str] = []
    for number in range(count):
        kind = rng.choice(CODEX_KINDS)
        context = level(rng, number / count)
        usage = {
            "input_tokens": context,
            "cached_input_tokens": context - context // 8,
            "cache_write_input_tokens": rng.choice((0, 0, 40)),
            "output_tokens": rng.randrange(1, 300),
            "reasoning_output_tokens": 0,
        }
        if kind == "started":
            window = rng.choice((None, 200_000, 258_400)) if rng.random() < 0.5 else None
            out.append(
                {
                    "type": "event_msg",
                    "payload": {"type": "task_started", "model_context_window": window},
                }
            )
        elif kind in ("prompt", "injected"):
            text = "<environment_context>\n  <cwd>/p</cwd>" if kind == "injected" else "fix it"
            content = [{"type": "input_text", "text": text}]
            if rng.random() < 0.3:
                content.append({"type": "input_text", "text": "# AGENTS.md instructions\nx"})
            out.append(
                {
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": content},
                }
            )
        elif kind == "provenance":
            content = [
                {"type": "input_text", "text": "<environment_context>"},
                {"type": "input_text", "text": "go"},
            ]
            marks = [{"provenance": {"type": rng.choice(("user", "system"))}} for _ in content]
            passthrough = {"content_item_metadata": marks}
            payload = {
                "type": "message",
                "role": "user",
                "content": content,
                "internal_chat_message_metadata_passthrough": passthrough,
            }
            out.append({"type": "response_item", "payload": payload})
        elif kind in ("assistant", "developer"):
            content = [{"type": "output_text", "text": "done"}]
            out.append(
                {
                    "type": "response_item",
                    "payload": {"type": "message", "role": kind, "content": content},
                }
            )
        elif kind == "reasoning":
            summary = [{"type": "summary_text", "text": "think"}] if rng.random() < 0.7 else []
            out.append(
                {"type": "response_item", "payload": {"type": "reasoning", "summary": summary}}
            )
        elif kind == "count":
            info = {
                "last_token_usage": usage,
                "model_context_window": rng.choice((200_000, 200_000, 258_400)),
            }
            out.append(
                {
                    "type": "event_msg",
                    "payload": {
                        "type": "token_count",
                        "info": info if rng.random() < 0.9 else None,
                    },
                }
            )
        elif kind == "record":
            again = responses and rng.random() < 0.2  # (a response's usage told twice)
            response = rng.choice(responses) if again else f"resp{number}"
            responses.append(response)
            out.append(
                {"type": "token_usage_record", "payload": {"response_id": response, "usage": usage}}
            )
        elif kind in ("call", "plan-call"):
            items = [
                {
                    "step": f"阶段 {n}: x" if rng.random() < 0.3 else f"step {n}",
                    "status": rng.choice(("pending", "in_progress", "completed")),
                }
                for n in range(rng.randrange(0, 6))
            ]
            name = "update_plan" if kind == "plan-call" else "shell"
            arguments = {"plan": items} if kind == "plan-call" else {"command": ["ls"]}
            payload = {
                "type": "function_call",
                "name": name,
                "call_id": f"c{number}",
                "arguments": orjson.dumps(arguments).decode(),
            }
            out.append({"type": "response_item", "payload": payload})
        elif kind == "custom":
            payload = {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": f"c{number}",
                "input": "*** Begin Patch",
            }
            out.append({"type": "response_item", "payload": payload})
        elif kind == "shell":
            payload = {
                "type": "local_shell_call",
                "call_id": f"c{number}",
                "action": {"command": ["ls"]},
            }
            out.append({"type": "response_item", "payload": payload})
        elif kind == "output":
            output: Any = "ok" if rng.random() < 0.8 else {"content": "ok", "success": False}
            out.append(
                {
                    "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": "c", "output": output},
                }
            )
        elif kind == "complete":
            out.append(
                {
                    "type": "event_msg",
                    "payload": {"type": rng.choice(("task_complete", "turn_aborted"))},
                }
            )
        elif kind == "context":
            out.append({"type": "turn_context", "payload": {"cwd": "/p", "model": "gpt-x"}})
        elif kind == "world":
            out.append({"type": "world_state", "payload": {"full": True}})
        elif kind == "meta":  # (a fork may copy its parent's: the first one holds)
            out.append({"type": "session_meta", "payload": {**meta, "source": {"subagent": "x"}}})
        elif kind == "unknown":
            out.append({"type": "compacted_v9", "payload": {}})
        else:
            out.append({"type": "event_msg", "payload": "not an object"})
    for at, line in enumerate(out):
        if isinstance(line, dict):
            line.setdefault("timestamp", f"2026-11-30T04:13:{at % 60:02d}.000Z")
    return out


@pytest.mark.parametrize("seed", range(10))
def test_a_codex_rollout_mapped_by_its_adapters_own_mapping_agrees_with_the_full_check(
    tmp_path: Path, seed: int
) -> None:
    # Codex's rollout lines are mapped to events by the adapter's own mapping
    # (`harnesses.EventLog.mapping`), with the adapter's state kept with the cursor: the fold
    # folds the events it gives, appended in chunks (some cut mid-line).
    rollout = f".codex/sessions/2026/11/30/rollout-2026-11-30T04-13-58-{CODEX_SESSION}.jsonl"
    lines = codex_records(random.Random(seed), 220, spawned=seed == 7)
    mapped_agrees(tmp_path, seed, "codex", CODEX_SESSION, rollout, lines)


def mapped_agrees(
    tmp_path: Path, seed: int, harness: str, session: str, relative: str, lines: list[Any]
) -> None:
    """`lines` of `harness`'s log at `relative` (its own place: its adapter names the session
    by it) appended in chunks, fold and full check tallied after each (`Tally.in_chunks`),
    under fixed lines (their arithmetic: the tests above); enough of it folded, proved quiet
    and said."""
    settings = GraftSettings(mode="fixed")
    state = kept(tmp_path, settings)
    log = tmp_path / relative
    log.parent.mkdir(parents=True)
    log.write_bytes(b"")
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    tally = Tally(seed)
    tally.in_chunks(data, str(state), log, settings, harness, session)
    tally.enough(covered=0.5)


def folded_from(
    state: Path, settings: GraftSettings, harness: str, session: str, log: Path, split: int
) -> fold.Fold:
    """`log`'s first `split` lines checked in full, then the rest written and folded from the
    cursor the check left (with its adapter's state): the fold, which must be the next full
    check's digest."""
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:split]))
    with Store(state) as store:
        live.watch(store, harness, session, str(log), settings, str(state))
    with open(log, "ab") as handle:
        handle.write(b"".join(lines[split:]))
    seen = fold.glance(str(state), str(log), session)
    assert seen is not None, log.name
    with Store(state) as store:
        live.watch(store, harness, session, str(log), settings, str(state))
        (row,) = store.db.execute(
            "SELECT digest FROM graft_watch WHERE session_id = ?", (session,)
        ).fetchone()
    digest = Digest.from_json(orjson.loads(row))
    assert projection(seen[0]) == projection(digest) and digest.context is not None, log.name
    return seen[0]


def test_the_real_codex_rollout_is_folded_as_the_full_check_folds_it(tmp_path: Path) -> None:
    from ..support.paths import CODEX

    real = next(CODEX.rglob("rollout-*.jsonl"))
    settings = GraftSettings()
    state = kept(tmp_path, settings)
    log = tmp_path / ".codex" / "sessions" / real.relative_to(CODEX)
    log.parent.mkdir(parents=True)
    log.write_bytes(real.read_bytes())
    half = len(real.read_bytes().splitlines()) // 2
    folded_from(state, settings, "codex", real.stem[-36:], log, half)


GEMINI_SESSION = "2964c2e8-289a-45dc-b07d-bdbfe28c8997"
GEMINI_KINDS = (
    "prompt",
    "prompt",
    "prompt",
    "hooked",
    "continued",
    "answer",
    "answer",
    "answer",
    "rewrite",
    "rewrite",
    "todo-call",
    "result",
    "set",
    "context-set",
    "rewind",
    "notice",
    "unknown",
    "notdict",
)


def gemini_records(rng: random.Random, count: int) -> list[Any]:
    """A chat recording's first line (its metadata), then `count` lines drawn at random: every
    kind the adapter maps, a model's message written again under its id as it grows."""
    meta = {"sessionId": GEMINI_SESSION, "projectHash": "e6d6", "kind": "main"}
    out: list[Any] = [meta]
    answers: list[dict[str, Any]] = []
    for number in range(count):
        kind = rng.choice(GEMINI_KINDS)
        context = level(rng, number / count)
        tokens = {"input": context, "output": 7, "cached": context // 2, "thoughts": 3}
        if kind in ("prompt", "hooked", "continued"):
            hooked = "<hook_context>CTX</hook_context>\n\n"
            text = {"prompt": "list files", "hooked": "", "continued": "go on"}[kind]
            content = [{"text": (hooked if rng.random() < 0.5 else "") + text}]
            if kind == "hooked":
                content = [{"text": hooked.strip()}]
            line: dict[str, Any] = {"id": f"u{number}", "type": "user", "content": content}
            if kind == "continued":
                line["displayContent"] = [{"text": "the person's earlier words"}]
            out.append(line)
        elif kind == "answer":
            line = {"id": f"g{number}", "type": "gemini", "content": "ok", "thoughts": []}
            if rng.random() < 0.8:
                line["tokens"] = tokens
            answers.append(line)
            out.append(line)
        elif kind in ("rewrite", "todo-call") and answers:
            line = dict(rng.choice(answers))  # (the same message, grown)
            name = "write_todos" if kind == "todo-call" else "run_shell_command"
            items = [
                {"content": f"阶段 {n}: x", "status": rng.choice(("pending", "completed"))}
                for n in range(rng.randrange(0, 6))
            ]
            args: Any = {"todos": items} if kind == "todo-call" else {"command": "ls", "n": 1.5}
            call: dict[str, Any] = {"id": f"{name}_{number}", "name": name, "args": args}
            if rng.random() < 0.5:
                given = {"output": "done"} if rng.random() < 0.7 else {"error": "denied"}
                body: Any = given if rng.random() < 0.8 else {"output": {"lines": ["a"]}}
                call["result"] = [{"functionResponse": {"id": call["id"], "response": body}}]
            line["toolCalls"] = [*line.get("toolCalls", []), call]
            out.append(line)
        elif kind == "result":
            body = {"output": "x"} if rng.random() < 0.8 else {"output": ["not", "text"]}
            response: Any = {"id": f"call{number}", "name": "run_shell_command", "response": body}
            out.append(
                {"id": f"r{number}", "type": "user", "content": [{"functionResponse": response}]}
            )
        elif kind == "set":
            out.append({"$set": {"lastUpdated": "2026-12-06T13:26:05.192Z"}})
        elif kind == "context-set":
            text = "<session_context>\n**Workspace Directories:**\n  - /p\n</session_context>"
            message = {"id": "c", "type": "user", "content": [{"text": text}]}
            out.append({"$set": {"messages": [message]}})
        elif kind == "rewind":
            out.append({"$rewindTo": f"u{number}"})
        elif kind == "notice":
            out.append({"id": f"n{number}", "type": rng.choice(("info", "warning", "error"))})
        elif kind == "unknown":
            out.append({"id": f"x{number}", "type": "mystery"})
        else:
            out.append([number])
    return out


@pytest.mark.parametrize("seed", range(8))
def test_a_gemini_recording_mapped_by_its_adapters_own_mapping_agrees_with_the_full_check(
    tmp_path: Path, seed: int
) -> None:
    # The Gemini CLI writes a model's message again under its id as it grows (its tokens,
    # its calls, their results): the adapter's mapping emits each once, by id, with the ids
    # it remembers in its state, which the cursor keeps; a call's arguments are written as
    # JSON text (`jsonscan.dumps` here, orjson in the adapter).
    recording = ".gemini/tmp/project/chats/session-2026-12-06T13-26-2964c2e8.jsonl"
    lines = gemini_records(random.Random(seed), 220)
    mapped_agrees(tmp_path, seed, "gemini", GEMINI_SESSION, recording, lines)


def test_the_real_gemini_recording_is_folded_as_the_full_check_folds_it(tmp_path: Path) -> None:
    from ..support.paths import REPO

    real = REPO / "tests" / "data" / "fixtures" / "gemini-cli" / "tmp" / "project" / "chats"
    settings = GraftSettings()
    state = kept(tmp_path, settings)
    for recording in sorted(real.glob("session-*.jsonl")):
        log = tmp_path / ".gemini" / "tmp" / "project" / "chats" / recording.name
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(recording.read_bytes())
        session = orjson.loads(recording.read_bytes().splitlines()[0])["sessionId"]
        # Its metadata and the CLI's first context checked in full, the rest folded.
        folded_from(state, settings, "gemini", session, log, 2)


def todo_request(number: int, context: int) -> dict[str, Any]:
    """A request writing a long todo list without phases, at `context` tokens."""
    items = [{"content": f"step {n}", "status": "pending"} for n in range(5)]
    use = {"type": "tool_use", "id": f"t{number}", "name": "TodoWrite", "input": {"todos": items}}
    usage = {"input_tokens": context, "output_tokens": 9}
    message = {"id": f"m{number}", "model": "claude-a", "content": [use], "usage": usage}
    return {"type": "assistant", "requestId": f"r{number}", "message": message}


def test_the_plan_first_nudge_is_not_said_where_the_band_or_a_handoff_says_otherwise(
    tmp_path: Path,
) -> None:
    # Warned in full in this turn (nudged, then escalated), past its first turns: a long todo
    # list now is no plan-first nudge (nothing more is said in the turn).
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    append(log, user("一"), user("二"), user("三"), in_band(0, 20_000))
    full_check(state, log, settings)
    append(log, in_band(1))
    assert full_check(state, log, settings, deliver=True)[1] is not None  # nudged
    append(log, user([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]), in_band(2))
    assert full_check(state, log, settings, deliver=True)[1] is not None  # escalated
    append(log, todo_request(3, 146_000))
    said = fold.verdict(state, str(log), SESSION)
    assert said in (None, full_check(state, log, settings)[1] or "")
    # Below the band, in a session handed off itself: the decisions say nothing.
    from dshkit.graft import marker
    from dshkit.graft.lifecycle import begin

    from ..support.graft_driver import plan_for

    (tmp_path / "other").mkdir()
    state, log = setup(tmp_path / "other", settings)
    append(log, user("一"), user("二"), user("三"), in_band(0, 20_000))
    full_check(state, log, settings)
    marker.mark(state)
    with Store(Path(state)) as store:
        begin(store, plan_for(SESSION, str(tmp_path)), ignite=False)
    append(log, todo_request(1, 21_000))
    said = fold.verdict(state, str(log), SESSION)
    assert said in (None, full_check(state, log, settings)[1] or "")


def test_a_saying_whose_record_is_pending_is_not_said_again_at_the_same_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A harness's parallel tool calls: the second comes before the check after the first's
    # answer recorded the nudge. It has nothing to say (the full check would say it again);
    # once the window passed, a saying still unrecorded is the full check's.
    monkeypatch.setattr(fold, "PENDING_MS", 60_000)
    settings = GraftSettings()
    state, log = setup(tmp_path, settings)
    append(log, user("go"), in_band(0, 20_000))
    full_check(state, log, settings)  # the store's fold: below the band
    append(log, in_band(1))
    said = fold.verdict(state, str(log), SESSION)
    assert said is not None and "72%" in said
    assert fold.verdict(state, str(log), SESSION) == ""  # (its record pending)
    assert fold.prompted(state, str(log), SESSION) == ""
    assert full_check(state, log, settings)[1] == said  # (what it would have said again)
    monkeypatch.setattr(fold, "PENDING_MS", 0)  # the window passed, still unrecorded
    assert fold.verdict(state, str(log), SESSION) is None
    assert full_check(state, log, settings, deliver=True)[1] == said  # recorded now
    assert fold.verdict(state, str(log), SESSION) == ""  # told all there is in this turn
    monkeypatch.setattr(fold, "PENDING_MS", 60_000)
    append(log, user("next"), in_band(2))
    assert fold.verdict(state, str(log), SESSION) == said  # a new turn: said again, once
    assert fold.verdict(state, str(log), SESSION) == ""


@pytest.mark.process
def test_two_calls_at_once_never_both_find_a_saying_unsaid(tmp_path: Path) -> None:
    # The fold notes a saying under a lock on its file: a call that comes while another holds
    # it waits, then finds the saying noted.
    state = str(tmp_path)
    path = tmp_path / fold.SAID_FILE
    path.write_bytes(b"")
    probe = (
        "import sys\nfrom dshkit.graft import fold\n"
        f"print(fold._first_said({state!r}, 's', 1, 'nudge'))\n"
    )
    descriptor = os.open(path, os.O_RDWR)
    try:
        os.lockf(descriptor, os.F_LOCK, 0)
        child = subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE)
        time.sleep(1.0)
        assert child.poll() is None  # waiting for the lock
        assert fold._first_said(state, "s", 1, "nudge") is True  # (this process holds it)
    finally:
        os.close(descriptor)  # (the lock let go)
    out, _ = child.communicate(timeout=60)
    assert out.strip() == b"False"  # noted meanwhile: the other call's record is pending
