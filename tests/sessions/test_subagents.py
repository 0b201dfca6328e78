"""A sub-agent's prompts are not the person's words
(docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons).

A DSH sub-agent's session (its header says `origin: "subagent"`, or a `delegationDepth` of 1
or more) and a Codex rollout another agent started (`session_meta.source` `{"subagent": …}`,
`thread_source` `subagent`) hold the parent agent's prompts as typed `user` messages: they are
mapped to `agent-message`, so the catalog, the signals and the profile's material never see
them. A store scanned before the rule reads those sessions again, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMConfig
from dshkit.profile.generate import generate
from dshkit.profile.signals import SignalConfig, SignalsReport, collect_signals
from dshkit.sessions import Scanner, Source
from dshkit.sessions import dsh as dsh_adapter
from dshkit.sessions import rollout as codex_mapping
from dshkit.sessions.events import AGENT_MESSAGE, SUBAGENT, is_human_message
from dshkit.store import Store

from ..support.corpus import header
from ..support.fakes import FakeOpenAI
from ..support.logs import (
    Log,
    assistant,
    dsh,
    event,
    exchange_events,
    human,
    session_dir,
    write_log,
)
from ..support.paths import CODEX
from ..support.profile import A1, answer

PERSON = "以后提交之前先把测试跑一遍"
PARENT = "SUBAGENT TASK: list every TODO under src/ and report them"
FOLLOW_UP = "SUBAGENT TASK: now group them by module"
OPTIONS = {"questions": [{"question": "?", "options": [{"label": "src"}, {"label": "tests"}]}]}
MAIN, SUB = "s-main", "s-sub"


def write_world(root: Path) -> None:
    """A person's DSH session, and a sub-agent's that it started: the parent's prompt, an ask
    with options, and the parent's next prompt, which answers none of them."""
    main = exchange_events(0, 1, PERSON, "好的，之后先跑测试。")
    write_log(session_dir(root, MAIN) / "session.v4.jsonl.zstd", [main], session_id=MAIN)
    log = Log()
    log.turn_start()
    log.human(PARENT)
    log.call("ask_user_question", "q1", OPTIONS)
    log.result("q1", 1000, text="{}")
    log.say("Which directories?")
    log.turn_start()
    log.human(FOLLOW_UP)
    log.say("Grouped.")
    path = session_dir(root, SUB) / "session.v4.jsonl.zstd"
    write_log(path, [log.events[:5], log.events[5:]], session_id=SUB, subagent_of=MAIN)


def test_a_dsh_header_marks_a_subagents_prompts_in_every_batch() -> None:
    adapter = dsh_adapter.DshAdapter()
    for extra in ({"origin": "subagent", "parentSession": MAIN}, {"delegationDepth": 2}):
        state: dict[str, Any] = {}
        first = adapter.normalize([{**header(SUB, 4, "/w", 1), **extra}, human(0, PARENT)], state)
        # A later batch (the next frames) knows it from the state kept with the cursor; so
        # does one expanded from v2+ seq ranges.
        ranged = {**human(2, FOLLOW_UP), "sourceEventSeqs": [[0, 1]]}
        later = adapter.normalize([event("turn/start", 1, {"turn": 1}), ranged], state)
        prompts = [e for e in first + later if e["type"] == "user/message"]
        assert [e["data"]["source"]["kind"] for e in prompts] == [AGENT_MESSAGE] * 2
        assert not any(is_human_message(e) for e in prompts)
        assert prompts[1]["sourceEventSeqs"] == [0, 1]
    state = {}
    person = adapter.normalize([header(MAIN, 4, "/w", 1), human(0, PERSON)], state)
    assert is_human_message(person[0]) and state[SUBAGENT] is False


def test_a_person_session_is_returned_as_read() -> None:
    # The common path stays a pass-through: the very records parsed, not copies.
    adapter = dsh_adapter.DshAdapter()
    state: dict[str, Any] = {}
    adapter.normalize([header(MAIN, 4, "/w", 1)], state)
    records = [human(0, PERSON), assistant(1, "好")]
    assert adapter.normalize(records, state) is records


def test_a_subagents_prompts_reach_no_catalog_signal_or_profile(tmp_path: Path) -> None:
    root = tmp_path / "dsh"
    write_world(root)
    with Store(tmp_path / "state") as store, FakeOpenAI() as fake:
        scanner = Scanner(store)
        report = scanner.scan(dsh(root))
        catalog = scanner.catalog
        assert report.errors == [] and report.human_messages == 1
        assert [m.text for m in catalog.human_messages()] == [PERSON]
        sub = catalog.get(("dsh", SUB))
        assert sub is not None and sub.human_messages == 0 and PARENT not in sub.title
        # The prompts are still the session's events, told for what they are.
        kinds = [
            e["data"]["source"]["kind"]
            for e in catalog.events(("dsh", SUB))
            if e["type"] == "user/message"
        ]
        assert kinds == [AGENT_MESSAGE, AGENT_MESSAGE]

        signals = collect_signals(catalog, report.keys, SignalConfig())
        assert signals.human_messages == 1 and signals.sessions == 1
        assert signals.totals["freeformAnswers"] == 0, "the parent's prompt answered no ask"

        fake.replies.append(answer({"entries": [{**A1, "evidence": ["[1]"]}]}))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        assert generate(scanner, report.keys, llm, force=True).ok
        prompt = orjson.dumps(fake.requests[0].body).decode()
        assert PERSON in prompt and "SUBAGENT TASK" not in prompt
        linked = store.db.execute("SELECT harness, session_id FROM llm_call_sessions").fetchall()
        assert [tuple(row) for row in linked] == [("dsh", MAIN)]


def codex_rollout(root: Path, meta: dict[str, Any]) -> Path:
    """The real Codex rollout, its session_meta changed by `meta`, under `root`."""
    (source,) = CODEX.rglob("*.jsonl")
    lines = source.read_bytes().splitlines()
    first = orjson.loads(lines[0])
    first["payload"].update(meta)
    path = root / source.relative_to(CODEX)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join([orjson.dumps(first), *lines[1:]]) + b"\n")
    return path


SPAWNED = {"thread_spawn": {"parent_thread_id": "01a22aa8-0000-7000-8000-000000000000", "depth": 1}}


@pytest.mark.parametrize(
    ("meta", "person"),
    [
        ({}, True),  # the real rollout: `source: "exec"`, `thread_source: "user"`
        ({"source": {"subagent": SPAWNED}, "thread_source": "subagent"}, False),
        ({"source": {"subagent": "review"}}, False),
        ({"source": {"internal": "memory_consolidation"}}, False),
        ({"source": "cli", "thread_source": "subagent"}, False),
    ],
)
def test_a_codex_rollout_another_agent_started(
    tmp_path: Path, meta: dict[str, Any], person: bool
) -> None:
    root = tmp_path / "codex"
    codex_rollout(root, meta)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        scanner.scan([Source("codex", root)])
        texts = [m.text for m in scanner.catalog.human_messages()]
        assert texts == (["say hi"] if person else [])
        (key,) = [info.key for info in scanner.catalog.recent()]
        prompts = [e for e in scanner.catalog.events(key) if "say hi" in orjson.dumps(e).decode()]
        kind = prompts[0]["data"]["source"]["kind"]
        assert kind == ("user" if person else AGENT_MESSAGE)


# -- a store scanned before the rule ---------------------------------------------------------


def scan_as_before(
    monkeypatch: pytest.MonkeyPatch, store: Store, sources: list[Source]
) -> SignalsReport:
    """Scan, and count and store the signals, as dshkit did before sub-agents were told
    apart: every typed prompt a person's, and nothing in a cursor's state about whose session
    it is."""
    with monkeypatch.context() as patch:
        patch.setattr(dsh_adapter, "as_agent_prompts", lambda events: None)
        patch.setattr(codex_mapping, "_spawned", lambda meta: False)
        keys = Scanner(store).scan(sources).keys
        memo = collect_signals(Scanner(store).catalog, keys, SignalConfig(), memo=True)
    with store.transaction() as db:
        db.execute("UPDATE log_files SET state = json_remove(state, '$.subagent')")
        db.execute("DELETE FROM meta WHERE key = 'scan.subagentsChecked'")
    return memo


def test_a_store_scanned_before_reads_subagent_sessions_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsh_root, codex_root = tmp_path / "dsh", tmp_path / "codex"
    write_world(dsh_root)
    codex_rollout(codex_root, {"source": {"subagent": "review"}})
    sources = [Source("dsh", dsh_root), Source("codex", codex_root)]
    with Store(tmp_path / "state") as store:
        memo = scan_as_before(monkeypatch, store, sources)
        catalog = Scanner(store).catalog
        keys = [info.key for info in catalog.recent()]
        before = {m.text for m in catalog.human_messages()}
        assert before == {PERSON, PARENT, FOLLOW_UP, "say hi"}
        assert collect_signals(catalog, keys, SignalConfig()).human_messages == 4, "memo"
        assert memo.human_messages == 4 and memo.totals["freeformAnswers"] == 1
        person = catalog.get(("dsh", MAIN))
        assert person is not None

        report = Scanner(store).scan(sources)

        assert report.errors == [] and report.human_messages == 1
        assert [m.text for m in catalog.human_messages()] == [PERSON]
        (codex_key,) = [k for k in keys if k[0] == "codex"]
        codex = catalog.get(codex_key)
        sub = catalog.get(("dsh", SUB))
        assert codex is not None and codex.human_messages == 0 and codex.events > 0
        assert sub is not None and sub.human_messages == 0 and sub.events > 0
        assert PARENT not in sub.title
        # Only the sub-agents' files were read again; the person's session is as it was.
        assert catalog.get(("dsh", MAIN)) == person
        marks = {c.session_id: c.state.get("subagent") for c in catalog.cursors().values()}
        assert marks == {MAIN: None, SUB: True, codex_key[1]: True}
        # Their stored signals are gone: counted again, from what the scan read now.
        stored = store.db.execute(
            "SELECT harness, session_id FROM session_signals ORDER BY 1, 2"
        ).fetchall()
        assert [tuple(row) for row in stored] == [("dsh", MAIN)]
        again = collect_signals(catalog, keys, SignalConfig())
        assert again.human_messages == 1 and again.totals["freeformAnswers"] == 0

        # Once: a later scan has nothing to check and nothing to read.
        assert store.get_meta("scan.subagentsChecked") == "1"
        later = Scanner(store).scan(sources)
        assert later.bytes_read == 0 and later.human_messages == 1
