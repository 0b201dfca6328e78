"""The lean foreground (dshkit.hooks.lean): a prompt or a start answered from its session's
hint gets byte for byte what the full path gives, whatever changed between the calls; a hint
that turns out wrong is caught by the step after it, and nothing it skipped is lost."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.hooks import hint, lean
from dshkit.optimizer import OptimizerService
from dshkit.quiet import Say
from dshkit.store import PROFILE_DELIVERY, Store

from ..support.cli import environment, hook_here, state_of
from ..support.hooks import claude, dsh
from ..support.profile import PROFILE, effective, store_version

OFF = {"DSHKIT_CAPABILITY": "off"}


class Home:
    """A home whose hook calls are counted by how they were answered; `hinted` False drops
    every hint before each call (the full path answers all of them)."""

    def __init__(self, root: Path, hinted: bool) -> None:
        self.root, self.hinted = root, hinted
        self.state = state_of(root)
        with Store(self.state) as store:
            store_version(store, PROFILE)
        (root / "p").mkdir()
        self.config("off")
        self.lean = 0

    def config(self, tier: str) -> None:
        (self.state / "config.toml").write_text(f'[optimizer]\ntier = "{tier}"\n')

    def call(self, event: str, payload: dict[str, Any], **env: str) -> bytes:
        """The hook's stdout, as the harness reads it (it exits 0, says nothing on stderr)."""
        if not self.hinted:
            shutil.rmtree(self.state / hint.HINT_DIR, ignore_errors=True)
        variables = environment(self.root, {**OFF, **env})
        code, out, err = hook_here([event], variables, orjson.dumps(payload))
        assert code == 0 and err == b"", err
        return out

    def raws(self) -> list[str]:
        return [run.raw for run in reversed(OptimizerService(self.state).runs(50).runs)]


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Home, Home]:
    both = (Home(tmp_path / "a", True), Home(tmp_path / "b", False))
    answer = lean.answer

    def counted(event: str, wanted: Any, raw: bytes, state: str, *args: Any) -> int | None:
        code = answer(event, wanted, raw, state, *args)
        for home in both:
            if code is not None and state == str(home.state):
                home.lean += 1
        return code

    monkeypatch.setattr(lean, "answer", counted)
    return both


def context(out: bytes) -> str:
    """The context an answer carries ("" for none)."""
    found = orjson.loads(out).get("hookSpecificOutput", {}) if out else {}
    return str(found.get("additionalContext") or "")


def start(home: Home, **extra: Any) -> dict[str, Any]:
    return claude("c1", **{"source": "startup", "cwd": str(home.root / "p"), **extra})


def prompt(home: Home, words: str, **extra: Any) -> dict[str, Any]:
    payload = start(home, hook_event_name="UserPromptSubmit", prompt=words, **extra)
    payload.pop("source")
    return payload


def scenario(home: Home) -> list[bytes]:
    """A Claude Code session's events, and the config changed between them: what each said."""
    said = [home.call("SessionStart", start(home))]  # the profile, delivered
    for words in ("fix the build", "and the tests", "》ok", "go on", "more"):  # 》ok: a mark
        said.append(home.call("UserPromptSubmit", prompt(home, words)))
    home.config("basic")  # a tier that asks a model (none is configured)
    said.append(home.call("UserPromptSubmit", prompt(home, "now refine this")))
    home.config("off")
    for words in ("plain again", "still plain"):
        said.append(home.call("UserPromptSubmit", prompt(home, words)))
    said.append(home.call("UserPromptSubmit", prompt(home, "plan it", permission_mode="plan")))
    for source in ("resume", "resume", "compact"):  # a compaction: given again
        said.append(home.call("SessionStart", start(home, source=source)))
    return said


def test_what_a_hint_answers_is_what_the_full_path_answers(homes: tuple[Home, Home]) -> None:
    hinted, full = homes
    said = scenario(hinted)
    assert said == scenario(full)  # byte for byte
    # (what they said: the profile twice, the mark's hold)
    assert context(said[0]) == context(said[12]) == effective(hinted.root)
    assert b'"decision": "block"' in said[3]
    assert [i for i, out in enumerate(said) if out] == [0, 3, 12]
    # The tier that asks a model was not answered from the hint: it failed to find one.
    assert "no LLM API key" in (hinted.state / "hooks.log").read_text()
    # Answered from their hints: "and the tests", "more", "still plain", the second resume.
    assert (hinted.lean, full.lean) == (4, 0)
    # What the hinted calls skipped was still done: every prompt recorded, in order.
    assert hinted.raws() == full.raws()
    assert len(hinted.raws()) == 7  # (a mark and a failed model call record no run)


def test_a_dsh_session_is_answered_from_its_hint_between_steps(homes: tuple[Home, Home]) -> None:
    hinted, full = homes
    outs = []
    for home in homes:
        for words in ("fix it", "step contexts", "more contexts", "and more"):
            payload = dsh("d1", cwd=str(home.root / "p"), hook_event_name="UserPromptSubmit")
            outs.append(home.call("UserPromptSubmit", {**payload, "prompt": words}))
    assert outs[:4] == outs[4:]
    assert context(outs[0]) == effective(hinted.root)  # the first prompt carries it
    assert outs[1:4] == [b"", b"", b""]
    assert hinted.lean >= 2 and full.lean == 0


def test_a_hint_that_turns_out_wrong_is_dropped_and_nothing_owed_is_lost(
    homes: tuple[Home, Home],
) -> None:
    home, _ = homes
    assert context(home.call("SessionStart", start(home))) == effective(home.root)
    assert home.call("UserPromptSubmit", prompt(home, "one")) == b""
    target = hint.path(str(home.state), "UserPromptSubmit", "claude", "c1")
    assert target is not None and Path(target).exists()
    # A dependency the hint failed to hold (here: its store rows taken out of its key), then
    # changed: the session's delivery forgotten, so the profile is owed again.
    held = orjson.loads(Path(target).read_bytes())
    assert held["key"]["queries"]
    held["key"]["queries"] = []
    Path(target).write_bytes(orjson.dumps(held))
    with Store(home.state) as store:
        store.db.execute("DELETE FROM deliveries WHERE kind = ?", (PROFILE_DELIVERY,))
    assert home.call("UserPromptSubmit", prompt(home, "two")) == b""  # the hint answered
    assert home.lean == 1
    log = (home.state / "hooks.log").read_text()
    assert "dshkit.profile.hook:on_prompt had something to say" in log
    assert not Path(target).exists()
    # Not delivered, so not recorded: the next prompt carries it.
    with Store(home.state) as store:
        assert not store.delivered(("claude", "c1"), PROFILE_DELIVERY)
    assert context(home.call("UserPromptSubmit", prompt(home, "three"))) == effective(home.root)


ONCE = "tests.support.hook_handlers:told_once"
UNRECORDED = "tests.support.hook_handlers:told_unrecorded"
SPEAKS = "tests.support.hook_handlers:speak"


@pytest.mark.parametrize(
    ("handler", "hinted_after"),
    [(ONCE, True), (UNRECORDED, False), (SPEAKS, False)],
    ids=["delivered once and recorded", "its record failed", "not delivered once"],
)
def test_words_delivered_once_and_recorded_leave_the_sessions_hint(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch, handler: str, hinted_after: bool
) -> None:
    # A call that said something leaves its session's hint where every word it said was
    # delivered once (`plugins.Hook.once`) and recorded (the commit ran): run again on what
    # they read, as the commit left it, its handlers say nothing. Words whose record failed
    # are owed still, and words said at every call are said again: no hint for those
    # (docs/design/hooks.md#words-delivered-once-leave-a-hint).
    monkeypatch.setattr(lean, "once", lambda: {ONCE, UNRECORDED})
    extra = {"DSHKIT_HOOK_HANDLERS": f"UserPromptSubmit={handler}"}

    def session(home: Home) -> tuple[list[bytes], list[bool]]:
        home.call("SessionStart", start(home))  # (the profile, delivered)
        said, lean_ = [], []
        for words in ("one", "two", "three"):
            before = home.lean
            said.append(home.call("UserPromptSubmit", prompt(home, words), **extra))
            lean_.append(home.lean > before)
        return said, lean_

    hinted, full = homes
    said, answered = session(hinted)
    assert said == session(full)[0]  # byte for byte
    told = [context(out) for out in said]
    if handler == ONCE:
        assert told == ["told", "", ""]
    else:
        assert told == [context(said[0])] * 3 and told[0] != ""
    # The first prompt said it in full; the second is answered from the hint it left, or in
    # full again where it left none.
    assert answered == [False, hinted_after, hinted_after]


# -- a start of a session the store knows nothing of: its event's template --------------------

NEW = [f"0b7e{n:04d}-5d1c-4a8e-9f00-7c3a9d2e1b{n:02d}" for n in range(6)]  # as harnesses name them


def fresh(home: Home, session: str, **extra: Any) -> dict[str, Any]:
    """A new Claude Code session's start: a UUID, its transcript not written yet."""
    return claude(session, source="startup", cwd=str(home.root / "p"), **extra)


def delivered(home: Home, session: str) -> bool:
    with Store(home.state) as store:
        return store.delivered(("claude", session), PROFILE_DELIVERY)


def test_a_new_sessions_start_is_answered_from_its_template_byte_for_byte(
    homes: tuple[Home, Home],
) -> None:
    def sessions(home: Home) -> list[bytes]:
        said = []
        for session in NEW[:4]:
            said.append(home.call("SessionStart", fresh(home, session)))
            payload = {**fresh(home, session), "hook_event_name": "UserPromptSubmit"}
            payload.pop("source")
            said.append(home.call("UserPromptSubmit", {**payload, "prompt": "go"}))
        home.config("basic")  # the key's configuration file changed: a full start again
        said.append(home.call("SessionStart", fresh(home, NEW[4])))
        home.config("off")
        said.append(home.call("SessionStart", fresh(home, NEW[5], model="other")))
        return said

    hinted, full = homes
    said = sessions(hinted)
    assert said == sessions(full)  # byte for byte
    # Each new session was told its profile at its start, and not again at its first prompt:
    # what the templated answer left behind (the delivery) was recorded as after a full one.
    assert [bool(context(out)) for out in said] == [True, False] * 4 + [True, True]
    assert all(context(out) == effective(hinted.root) for out in said[::2])
    assert all(delivered(hinted, session) for session in NEW)
    # Answered from the templates: the starts and the first prompts of the second, third and
    # fourth sessions (the first session's wrote them; a changed configuration and another
    # payload field take the full path).
    assert (hinted.lean, full.lean) == (6, 0)


def capability_on(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The variables that turn the capability facts on, no probe started for real (a test
    stores the probes' results it wants)."""
    from dshkit.capability import service

    monkeypatch.setattr(service, "start_probe", lambda state, facts, cwd: None)
    return {"DSHKIT_CAPABILITY": "on"}


def probed(home: Home, session: str) -> None:
    """The capability probes' results for the project, fresh, with the mode unknown (as at a
    start) and "default" (as at a prompt): what a new session is told."""
    from dshkit.capability import service
    from dshkit.capability.facts import read_facts

    results = [{"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"}]
    with Store(home.state) as store:
        for payload in (fresh(home, session), first_prompt(home, session)):
            facts = read_facts(store, "claude", payload, [])
            key = service.cache_key(facts, str(home.root / "p"))
            now = int(time.time() * 1000)
            store.db.execute(
                "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
                (key, now, orjson.dumps(results)),
            )


def first_prompt(home: Home, session: str, words: str = "go", **extra: Any) -> dict[str, Any]:
    """A new Claude Code session's first prompt: its permission mode, which its start did not
    report."""
    payload = {**fresh(home, session), "hook_event_name": "UserPromptSubmit", "prompt": words}
    payload.pop("source")
    return {**payload, "permission_mode": "default", **extra}


def test_a_new_sessions_first_prompt_is_answered_from_its_template_byte_for_byte(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code's start reports no permission mode and its first prompt does: the
    # capability facts are told again, with the mode, at every new session's first prompt.
    # Its handlers write as they answer (the gate begins the turn, then reads that row): a
    # template holds to what they found, not to what they wrote.
    from dshkit.store import CAPABILITY_DELIVERY

    on = capability_on(monkeypatch)

    def sessions(home: Home) -> list[bytes]:
        probed(home, NEW[0])
        said = []
        for session in NEW[:4]:
            said.append(home.call("SessionStart", fresh(home, session), **on))
            said.append(home.call("UserPromptSubmit", first_prompt(home, session), **on))
            # An answer whose words were all delivered once (the capability facts) leaves the
            # session's hint, from a template as in full: run again on what they read, as the
            # commit left it, its handlers say nothing.
            own = hint.path(str(home.state), "UserPromptSubmit", "claude", session)
            assert own is not None and Path(own).exists()
            said.append(home.call("UserPromptSubmit", first_prompt(home, session, "on"), **on))
        # Words the optimizer answers (its mark): the full path, whatever the template says.
        said.append(home.call("SessionStart", fresh(home, NEW[4]), **on))
        said.append(home.call("UserPromptSubmit", first_prompt(home, NEW[4], "》ok"), **on))
        # Another mode: told with it, in full.
        said.append(home.call("SessionStart", fresh(home, NEW[5]), **on))
        plan = first_prompt(home, NEW[5], permission_mode="plan")
        said.append(home.call("UserPromptSubmit", plan, **on))
        return said

    hinted, full = homes
    said = sessions(hinted)
    assert said == sessions(full)  # byte for byte
    told = [context(out) for out in said]
    assert all("sh -c echo: exit 0" in told[i] for i in range(0, 12, 3))  # each start
    assert all("default" in told[i] for i in range(1, 12, 3))  # each first prompt, its mode
    assert [told[i] for i in range(2, 12, 3)] == [""] * 4  # (and not again)
    assert b'"decision": "block"' in said[13] and "plan" in told[15]
    with Store(hinted.state) as store:
        for session in NEW[:4]:
            last = store.last_delivered(("claude", session), CAPABILITY_DELIVERY)
            assert last is not None and "permission=default" in last
    # From the templates: the starts and first prompts of the second, third and fourth
    # sessions, and the starts of the fifth and sixth; from the hint each session's first
    # prompt left (its words delivered once), every session's second prompt.
    assert (hinted.lean, full.lean) == (12, 0)
    assert not (hinted.state / "hooks.log").exists()  # (nothing went wrong)


def test_a_template_stands_only_for_a_session_the_store_knows_nothing_of(
    homes: tuple[Home, Home],
) -> None:
    home, _ = homes
    first = home.call("SessionStart", fresh(home, NEW[0]))
    assert context(first) == effective(home.root)
    template = Path(
        hint.template_path(str(home.state), "SessionStart", fresh(home, NEW[0]), "claude")
    )
    assert template.exists()
    held = orjson.loads(template.read_bytes())
    # No trace of the session it was written from: its id and transcript are marks.
    assert NEW[0] not in template.read_text()
    assert any("<session " in sql for sql, _ in held["key"]["queries"])
    # The same session starting anew (it was told already: its rows differ) is no new one.
    hint.drop(str(home.state), "SessionStart", "claude", NEW[0])
    assert home.call("SessionStart", fresh(home, NEW[0])) == b""
    assert home.lean == 0
    # A session id too short to be marked safely gets no template's answer.
    assert context(home.call("SessionStart", fresh(home, "c1"))) == effective(home.root)
    assert home.lean == 0
    assert context(home.call("SessionStart", fresh(home, NEW[1]))) == effective(home.root)
    assert home.lean == 1


def test_a_templated_answer_that_turns_out_wrong_is_not_recorded(
    homes: tuple[Home, Home],
) -> None:
    home, _ = homes
    profile = context(home.call("SessionStart", fresh(home, NEW[0])))
    template = Path(
        hint.template_path(str(home.state), "SessionStart", fresh(home, NEW[0]), "claude")
    )
    # A dependency the template failed to hold (its rows taken out of its key), then changed:
    # the person's own text now chosen over the observed profile.
    held = orjson.loads(template.read_bytes())
    held["key"]["queries"] = []
    template.write_bytes(orjson.dumps(held))
    with Store(home.state) as store:
        store.set_meta("profile.mode", "custom")
        store.set_meta("profile.customText", "Answer in English, briefly.")
    out = home.call("SessionStart", fresh(home, NEW[1]))
    assert home.lean == 1 and context(out) == profile  # the template answered
    log = (home.state / "hooks.log").read_text()
    assert "a templated answer was not the one its handlers give now" in log
    assert not template.exists()
    assert not delivered(home, NEW[1])  # nothing of it recorded


def test_a_templated_start_tells_probe_results_only_while_they_are_fresh(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A start's capability facts tell the probes' results while they are fresh (the TTL);
    # past it, the handler says they are pending, and so must a template made from them.
    from dshkit.capability import service
    from dshkit.capability.facts import read_facts
    from dshkit.capability.text import PENDING

    home, _ = homes
    on = {"DSHKIT_CAPABILITY": "on"}
    probes: list[str] = []
    monkeypatch.setattr(service, "start_probe", lambda state, facts, cwd: probes.append(cwd))
    results = [{"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"}]
    fresh_for_ms = 8_000  # (the first two starts come well within it, on a busy machine too)
    probed = int(time.time() * 1000) - int(service.TTL_S * 1000) + fresh_for_ms
    with Store(home.state) as store:
        facts = read_facts(store, "claude", fresh(home, NEW[0]), [])
        store.db.execute(
            "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
            (service.cache_key(facts, str(home.root / "p")), probed, orjson.dumps(results)),
        )
    told = context(home.call("SessionStart", fresh(home, NEW[0]), **on))
    assert "sh -c echo: exit 0" in told and PENDING not in told
    assert context(home.call("SessionStart", fresh(home, NEW[1]), **on)) == told
    assert home.lean == 1  # (the template answered: the results still fresh)
    time.sleep(max(0.0, (probed + service.TTL_S * 1000) / 1000 - time.time()) + 0.05)
    # The same store, the same files: only the clock moved. The full path answers.
    late = context(home.call("SessionStart", fresh(home, NEW[2]), **on))
    assert home.lean == 1
    assert PENDING in late and "sh -c echo: exit 0" not in late
    assert probes == [str(home.root / "p")]  # (the handler's: a probe of the expired results)


def test_a_field_no_handler_reads_is_held_by_its_presence_alone(homes: tuple[Home, Home]) -> None:
    # As the real Claude Code (2.1.x) sends them: every prompt has a `prompt_id` of its own, a
    # resumed start says how long since the last response and how large the context is. No
    # handler reads those: they must not void the hint, nor a field a handler does read keep
    # it (the resumed start's `source`).
    def session(home: Home) -> list[bytes]:
        said = [home.call("SessionStart", start(home))]
        for n in range(4):
            extra = {"prompt_id": f"9c1e{n:04d}-0000-4000-8000-000000000000"}
            said.append(home.call("UserPromptSubmit", prompt(home, f"step {n}", **extra)))
        for n in range(3):
            since = {"seconds_since_last_response": 2 + n, "context_tokens": 107 + n}
            said.append(home.call("SessionStart", start(home, source="resume", **since)))
        said.append(home.call("SessionStart", start(home, source="compact", **since)))
        return said

    hinted, full = homes
    said = session(hinted)
    assert said == session(full)
    assert [i for i, out in enumerate(said) if out] == [0, 8]  # the profile, and after compact
    # Answered from their hints: the prompts after the first, the resumes after the first.
    assert (hinted.lean, full.lean) == (5, 0)
    held = orjson.loads(
        Path(hint.path(str(hinted.state), "UserPromptSubmit", "claude", "c1") or "").read_bytes()
    )
    assert held["key"]["payload"]["prompt_id"] is True  # by its presence


def test_a_live_checks_words_are_the_answer_and_recorded_only_once_its_handler_gives_them(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A live check that knows its handler's words (`quiet.Say`) has them written as the whole
    # answer, from the hint (the other handlers say nothing), in the harness's dialect. The
    # step after runs that handler: what it does not give is not recorded, and the log says
    # so. (graft's real words are compared with a full call's in tests/hooks/test_imports.py.)
    hinted, _ = homes
    payload = dsh("d1", cwd=str(hinted.root / "p"), hook_event_name="UserPromptSubmit")
    for words in ("fix it", "step contexts", "more contexts"):
        hinted.call("UserPromptSubmit", {**payload, "prompt": words})
    answered = hinted.lean
    assert answered >= 1  # (from its hint: the live check said nothing)
    monkeypatch.setattr(lean, "named", lambda reference: lambda state, call: Say("words"))
    out = hinted.call("UserPromptSubmit", {**payload, "prompt": "and more"})
    assert hinted.lean == answered + 1
    assert orjson.loads(out) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "words"}
    }
    log = (hinted.state / "hooks.log").read_text()
    assert "the answer a quiet check gave was not the one its handlers give now" in log


def test_no_template_holds_a_live_handlers_words(tmp_path: Path) -> None:
    # graft's watermark speaks from what moves at every call (its live check says it anew,
    # `plugins.Hook.live`): an answer holding its words stands for no other session.
    from typing import cast

    from dshkit.harnesses import Reply
    from dshkit.hookio import Call

    home = Home(tmp_path, True)
    live = next(iter(lean.live()))
    payload = {**first_prompt(home, NEW[0]), "session_id": NEW[0]}
    for speakers, templated in (([live], False), (["dshkit.capability.hook:on_prompt"], True)):
        with lean.Observation(str(home.state)) as seen:
            seen.payload(payload)
            reply = Reply({"hookSpecificOutput": {"additionalContext": "words"}})
            seen.heard([(speaker, {"context": "words"}) for speaker in speakers], reply)
            seen.answered(reply, cast(Call, None))
        assert (seen.template is not None) is templated


DSH_NEW = [f"session-6a1b{n:04d}-1d2e-4b3a-8c9d-0e1f2a3b4c5d" for n in range(5)]


def dsh_opening(home: Home, session: str, mode: str, words: str = "go") -> dict[str, Any]:
    """A new DSH session's prompt, its log written as DSH writes one: the modes it was started
    in (events with their own sequence numbers and times in every session), its first turn
    and the person's words."""
    from ..support.logs import event, human, session_dir, write_log

    cwd = str(home.root / "p")
    log = session_dir(home.root / ".dsh" / "sessions", session, cwd) / "session.jsonl.zstd"
    if not log.exists():
        at = 1_790_000_000_000 + 7_919 * DSH_NEW.index(session) if session in DSH_NEW else 1
        opened = [
            event("sandbox/mode", 1, {"mode": mode}, time=at),
            event("approval/policy", 2, {"policy": "ask"}, time=at + 1),
            event("turn/start", 3, {"turn": 1}, time=at + 2),
            human(4, words),
        ]
        write_log(log, [opened], session_id=session, cwd=cwd)
    payload = dsh(session, cwd=cwd, transcript_path=str(log), hook_event_name="UserPromptSubmit")
    return {**payload, "prompt": words}


def dsh_probed(home: Home) -> None:
    """The capability probes' results for the project, fresh, for a DSH session started
    in workspace-write, asking (the key read from a log of its own)."""
    from dshkit.capability import service
    from dshkit.capability.facts import read_facts

    results = [{"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"}]
    with Store(home.state) as store:
        payload = dsh_opening(home, "probe-0000-0000-0000", "workspace-write")
        key = service.cache_key(read_facts(store, "dsh", payload, []), str(home.root / "p"))
        store.db.execute(
            "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
            (key, int(time.time() * 1000), orjson.dumps(results)),
        )


def test_a_new_dsh_sessions_first_prompt_is_answered_from_its_template_byte_for_byte(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # DSH's first prompt carries the session's first context (the profile, the capability
    # facts with the modes its log set). The capability facts tail the log for the mode
    # events alone: a template holds while another session's log holds the same ones (their
    # kinds and data: each log numbers and times its own) since the same cursor (none yet).
    on = capability_on(monkeypatch)

    def sessions(home: Home) -> list[bytes]:
        dsh_probed(home)
        said = []
        for session in DSH_NEW[:4]:
            said.append(
                home.call("UserPromptSubmit", dsh_opening(home, session, "workspace-write"), **on)
            )
        # A log that set another mode: told it, in full.
        said.append(home.call("UserPromptSubmit", dsh_opening(home, DSH_NEW[4], "read-only"), **on))
        return said

    hinted, full = homes
    said = sessions(hinted)
    assert said == sessions(full)  # byte for byte
    told = [context(out) for out in said]
    assert all(effective(hinted.root) in text and "workspace-write" in text for text in told[:4])
    assert "sh -c echo: exit 0" in told[0] and "read-only" in told[4]
    assert (hinted.lean, full.lean) == (3, 0)  # the second to fourth sessions' first prompts
    assert not (hinted.state / "hooks.log").exists()
    with Store(hinted.state) as store:  # (what the templated answers left: recorded)
        assert all(store.delivered(("dsh", session), PROFILE_DELIVERY) for session in DSH_NEW)


def test_new_sessions_of_two_harnesses_in_one_project_each_keep_their_template(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Claude Code session and a DSH session started in turn in one project: each harness's
    # first prompt has its own template (one in its place would be replaced at every turn).
    on = capability_on(monkeypatch)

    def sessions(home: Home) -> list[bytes]:
        probed(home, NEW[0])
        dsh_probed(home)
        said = []
        for claude_session, dsh_session in zip(NEW[:3], DSH_NEW[:3], strict=True):
            said.append(home.call("SessionStart", fresh(home, claude_session), **on))
            said.append(home.call("UserPromptSubmit", first_prompt(home, claude_session), **on))
            opening = dsh_opening(home, dsh_session, "workspace-write")
            said.append(home.call("UserPromptSubmit", opening, **on))
        return said

    hinted, full = homes
    said = sessions(hinted)
    assert said == sessions(full)  # byte for byte
    assert all(context(out) for out in said)
    # The second and third rounds: the Claude session's start and first prompt, the DSH
    # session's first prompt, each from its harness's template.
    assert (hinted.lean, full.lean) == (6, 0)


@pytest.mark.process  # (what a turn's end starts: the refresh, the harvest)
def test_a_dsh_turns_first_prompt_is_answered_from_the_hint_the_last_ones_left(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # DSH asks before every model step, and a turn's end closes the session's turn: the hint
    # its last step left is a step's, not the person's next prompt's. The hint the last
    # turn's first prompt left answers that, though the steps between moved the capability
    # facts' cursor over the log on (a tail read's cursor is held by its own check: no mode
    # set since). docs/design/hooks.md#a-turns-first-prompt-has-a-hint-of-its-own
    from ..support.logs import event, human, write_log
    from ..support.procs import running_with, wait_until

    on = capability_on(monkeypatch)
    session = DSH_NEW[0]

    def session_turns(home: Home) -> tuple[list[bytes], list[bool]]:
        dsh_probed(home)
        opened = dsh_opening(home, session, "workspace-write", "turn 0")
        log, cwd = Path(opened["transcript_path"]), opened["cwd"]
        said, lean = [], []
        sequence = 10

        def logged(*records: dict[str, Any]) -> None:
            write_log(log, [list(records)], session_id=session, cwd=cwd, mode="ab")

        def asked(event_name: str, **fields: Any) -> None:
            before = home.lean
            said.append(
                home.call(event_name, {**opened, "hook_event_name": event_name, **fields}, **on)
            )
            lean.append(home.lean > before)

        for turn in range(4):
            if turn:  # (the first turn's opening is in the log already)
                logged(
                    event("turn/start", sequence, {"turn": turn + 1}),
                    human(sequence + 1, f"turn {turn}"),
                )
                sequence += 2
            asked("UserPromptSubmit", prompt=f"turn {turn}")
            for _ in range(2):  # the model's steps, the bridge asking before the next
                message = {"role": "assistant", "content": [], "source": {"model": "m"}}
                usage = {"inputTokens": 1_000 + sequence, "outputTokens": 10}
                logged(event("assistant/message", sequence, {"message": message, "usage": usage}))
                sequence += 1
                asked("UserPromptSubmit", prompt="")
            asked("Stop", stop_hook_active=False)
            # What the turn's end started (the profile's refresh, the memory harvest) writes
            # the store: done before the next turn, as a person's next words come later.
            wait_until(lambda: not running_with(f" {home.state} "), "what the turn's end started")
        return said, lean

    hinted, full = homes
    said, lean = session_turns(hinted)
    assert said == session_turns(full)[0]  # byte for byte
    assert context(said[0]) and not any(said[1:])  # the first context, then nothing to say
    # A turn: its first prompt, two steps, its end (no hint answers a Stop). The first turn's
    # prompt said the first context (the profile and the capability facts, delivered once)
    # and left a turn's first prompt's hint, not a step's: its first step in full. Every
    # later turn's prompt from the hint the one before left, every step after from the
    # steps' hint (docs/design/hooks.md#words-delivered-once-leave-a-hint).
    first, later = [False, False, True, False], [True] * 3
    assert lean == first + [*later, False] * 3
    # What the hinted calls skipped was still done: each person's prompt a run, no step one.
    assert hinted.raws() == full.raws() == [f"turn {turn}" for turn in range(4)]
    assert not (hinted.state / "hooks.log").exists()


@pytest.mark.process  # (what a turn's end starts: the refresh, the harvest)
def test_a_dsh_turn_answered_from_its_hint_is_open_before_the_step_after_it_runs(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn's first prompt answered from its hint opens the session's turn before the
    # answer: the model's next step may ask before the step the answer started has run (it
    # is detached), and must be taken for a step, not for the person's next prompt (which
    # would send the agent's own context through the optimizer as the person's words).
    from dshkit.hooks import after

    from ..support.logs import event, human, write_log
    from ..support.procs import running_with, wait_until

    home, _ = homes
    opened = dsh_opening(home, DSH_NEW[0], "workspace-write", "turn 0")
    log, cwd = Path(opened["transcript_path"]), opened["cwd"]

    def logged(*records: dict[str, Any]) -> None:
        write_log(log, [list(records)], session_id=DSH_NEW[0], cwd=cwd, mode="ab")

    def asked(event_name: str, **fields: Any) -> bytes:
        return home.call(event_name, {**opened, "hook_event_name": event_name, **fields})

    message = {"role": "assistant", "content": [], "source": {"model": "m"}}
    usage = {"inputTokens": 1_000, "outputTokens": 10}
    assert context(asked("UserPromptSubmit", prompt="turn 0"))  # (the first context, in full)
    logged(event("assistant/message", 10, {"message": message, "usage": usage}))
    assert asked("UserPromptSubmit", prompt="step contexts") == b""
    asked("Stop", stop_hook_active=False)
    wait_until(lambda: not running_with(f" {home.state} "), "what the turn's end started")
    # The next turn's first prompt, from the hint the first one left; its step held back.
    held: list[tuple[Any, ...]] = []
    run = after.step
    monkeypatch.setattr(after, "step", lambda *args: held.append(args))
    logged(event("turn/start", 11, {"turn": 2}), human(12, "turn 1"))
    before = home.lean
    assert asked("UserPromptSubmit", prompt="turn 1") == b""
    assert home.lean == before + 1 and len(held) == 1
    with Store(home.state) as store:  # open before its step ran
        row = store.db.execute("SELECT open FROM prompt_turns WHERE session_id = ?", DSH_NEW[:1])
        assert tuple(row.fetchone()) == (1,)
    # The model's next step asks first: a step (the optimizer leaves it alone).
    monkeypatch.setattr(after, "step", run)
    logged(event("assistant/message", 13, {"message": message, "usage": usage}))
    assert asked("UserPromptSubmit", prompt="step contexts") == b""
    after.step(*held[0])  # (then the held step runs)
    assert home.raws() == ["turn 0", "turn 1"]
    assert not (home.state / "hooks.log").exists()


def test_a_new_dsh_sessions_templated_first_prompt_is_open_before_the_step_after_it_runs(
    homes: tuple[Home, Home], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same for a new session's first prompt answered from its event's template: its turn
    # is opened before the answer, so a step asking before the step the answer started has
    # run is a step, answered in full (no template answers a step), and the optimizer leaves
    # its text alone. (What the template told is recorded by that step: a step before it is
    # told the same again, and the step then finds its answer no longer the template's.)
    from dshkit.hooks import after

    from ..support.logs import event, write_log

    on = capability_on(monkeypatch)
    home, _ = homes
    dsh_probed(home)
    first = dsh_opening(home, DSH_NEW[0], "workspace-write")
    assert context(home.call("UserPromptSubmit", first, **on))
    held: list[tuple[Any, ...]] = []
    run = after.step
    monkeypatch.setattr(after, "step", lambda *args: held.append(args))
    opened = dsh_opening(home, DSH_NEW[1], "workspace-write")
    before = home.lean
    told = context(home.call("UserPromptSubmit", opened, **on))
    assert effective(home.root) in told  # (the first context, from the template)
    assert home.lean == before + 1 and len(held) == 1
    with Store(home.state) as store:  # open before its step ran
        row = store.db.execute("SELECT open FROM prompt_turns WHERE session_id = ?", DSH_NEW[1:2])
        assert tuple(row.fetchone()) == (1,)
    # The model's next step asks first: a step, in full.
    monkeypatch.setattr(after, "step", run)
    message = {"role": "assistant", "content": [], "source": {"model": "m"}}
    usage = {"inputTokens": 9, "outputTokens": 1}
    records = [event("assistant/message", 10, {"message": message, "usage": usage})]
    log = Path(opened["transcript_path"])
    write_log(log, [records], session_id=DSH_NEW[1], cwd=opened["cwd"], mode="ab")
    before = home.lean
    home.call("UserPromptSubmit", {**opened, "prompt": "step contexts"}, **on)
    assert home.lean == before
    after.step(*held[0])  # (then the held step runs)
    assert home.raws() == ["go", "go"]  # each person's prompt, and no step's text
