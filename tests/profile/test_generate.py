"""Profile generation end to end, against a real fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMConfig
from dshkit.profile.generate import Generation, generate, last_run
from dshkit.profile.state import latest_version
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.corpus import Corpus
from ..support.fakes import FakeOpenAI, Reply
from ..support.profile import A1, B1, Gated, answer


@pytest.fixture
def world(tmp_path: Path) -> Any:
    root = tmp_path / "sessions"
    Corpus(root, seed=21).generate(sessions=3, frames=240)
    with FakeOpenAI() as fake, Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        yield fake, scanner, keys, llm


def test_first_version_then_no_trigger_then_a_forced_delta(world: Any) -> None:
    fake, scanner, keys, llm = world
    fake.replies.append(answer({"entries": [A1, B1], "notes": ""}))
    first = generate(scanner, keys, llm)
    assert first.ok and first.version == 1 and first.entries == 2
    _, v1 = latest_version(scanner.store)  # type: ignore[misc]
    # "[7]" cites the material's 7th message: kept as the person's words, where said.
    assert all(s["session"] and s["quote"] for e in v1 for s in e["sources"])
    assert [len(e["sources"]) for e in v1] == [1, 2]
    assert first.diff["added"] == ["A1", "B1"] and first.spurious_rate == 0
    assert first.reason.startswith("first profile: enough material")
    prompt = fake.requests[0].body["messages"][1]["content"]
    assert "第一次归纳" in prompt and "已有画像" not in prompt and "[1] " in prompt

    idle = generate(scanner, keys, llm)
    assert not idle.ok and idle.error is None and "below both thresholds" in idle.reason
    assert len(fake.requests) == 1, "no model call when nothing is new"
    assert last_run(scanner.store)["reason"] == idle.reason  # type: ignore[index]

    fake.replies.append(
        answer(
            {"entries": [{**A1, "claim": "用中文交流"}], "unchangedIds": ["B1"], "deletedIds": []}
        )
    )
    forced = generate(scanner, keys, llm, force=True)
    assert forced.ok and forced.version == 2 and forced.diff["modified"] == ["A1"]
    assert forced.spurious_rate == 0.5 and forced.reason.startswith("forced (")
    prompt = fake.requests[1].body["messages"][1]["content"]
    assert "版本 v1" in prompt and "不要未经确认就改代码" in prompt
    version, entries = latest_version(scanner.store)  # type: ignore[misc]
    b1 = next(e for e in entries if e["id"] == "B1")
    assert version == 2 and b1["timesSeen"] == 1 and b1 == {**v1[1], "lastSeenAt": b1["lastSeenAt"]}


def test_a_cut_answer_keeps_what_it_can_and_deletes_nothing(world: Any) -> None:
    fake, scanner, keys, llm = world
    fake.replies.append(answer({"entries": [A1, B1]}))
    generate(scanner, keys, llm)
    new = orjson.dumps(
        {
            "id": "n1",
            "category": "C",
            "claim": "先给方案再动手",
            "evidence": ["[12]"],
            "confidence": "high",
        }
    ).decode()
    fake.replies.append(
        Reply(deltas=['{"entries": [' + new + ', {"id": "n2", "cat'], finish="length")
    )
    cut = generate(scanner, keys, llm, force=True)
    assert cut.ok and cut.partial and cut.truncation_reason == "max-tokens"
    assert cut.dropped_tail_chars > 0
    assert cut.deleted_by_contract == ["A1", "B1"] and not cut.deletions_honored
    assert sorted(e["id"] for e in latest_version(scanner.store)[1]) == ["A1", "B1", "n1"]  # type: ignore[index]
    assert last_run(scanner.store)["partial"] is True  # type: ignore[index]


def test_failures_store_nothing_but_say_why(world: Any, tmp_path: Path) -> None:
    fake, scanner, keys, llm = world
    fake.replies.append(Reply(status=503, error_body={"error": {"message": "overloaded"}}))
    failed = generate(scanner, keys, llm)
    assert not failed.ok and failed.outcome == "http-error" and "overloaded" in (failed.error or "")
    assert latest_version(scanner.store) is None
    assert last_run(scanner.store)["outcome"] == "http-error"  # type: ignore[index]
    fake.replies.append(Reply(deltas=["I'd rather not."]))
    prose = generate(scanner, keys, llm)
    assert not prose.ok and "no usable JSON" in (prose.error or "")
    assert prose.failed and prose.outcome == "unusable-reply"
    keyless = generate(scanner, keys, LLMConfig(base_url=fake.base_url))
    assert not keyless.ok and "set DSHKIT_LLM_API_KEY" in (keyless.error or "")
    assert keyless.as_json()["outcome"] == "config-error"
    assert len(fake.requests) == 2
    calls = scanner.store.db.execute("SELECT outcome FROM llm_calls ORDER BY id").fetchall()
    assert [c[0] for c in calls] == ["http-error", "ok"]


def test_history_is_bounded_and_keeps_the_newest(world: Any) -> None:
    fake, scanner, keys, llm = world
    for claim in ("用中文沟通一", "用中文沟通二", "用中文沟通三"):
        fake.replies.append(answer({"entries": [{**A1, "claim": claim}]}))
        assert generate(scanner, keys, llm, force=True, history_limit=2).ok
    kept = scanner.store.db.execute("SELECT version FROM profile_versions ORDER BY 1").fetchall()
    assert [k[0] for k in kept] == [2, 3]
    assert latest_version(scanner.store)[1][0]["claim"] == "用中文沟通三"  # type: ignore[index]


def test_profile_cli_contract(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    Corpus(root, seed=22).generate(sessions=2, frames=200)
    with FakeOpenAI() as fake:
        fake.replies.append(answer({"entries": [A1]}))
        env = {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "k"}
        state = ["--state-dir", str(tmp_path / "state")]
        made = run_dshkit(
            "profile", "generate", "--root", str(root), *state, "--json", home=tmp_path, env=env
        )
        status = run_dshkit("profile", "status", *state, "--json", home=tmp_path, env=env)
    result = orjson.loads(made.stdout)
    assert list(result) == [
        "ok",
        "outcome",
        "version",
        "entries",
        "diff",
        "spuriousRate",
        "partial",
        "reason",
        "error",
    ]
    assert result["ok"] and result["outcome"] == "ok" and result["version"] == 1
    assert result["diff"]["added"] == ["A1"]
    shown = orjson.loads(status.stdout)
    assert shown["version"] == 1 and shown["entries"][0]["claim"] == "用中文沟通"
    assert shown["lastRun"]["ok"] and "sk-" not in status.stdout


def test_last_run_keeps_every_field_of_the_run() -> None:
    """lastRun lists the run's fields one by one (its type, LastRunJson, declares each): a
    field added to Generation and not to lastRun is caught here."""
    names = [re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f.name) for f in fields(Generation)]
    assert list(Generation().record()) == names  # each field, in the order it is declared


def test_a_failure_recorded_without_an_outcome_is_an_error() -> None:
    """A caller that records a failure names no outcome (ProfileService's failed job): it is
    "error" (it once asked `failed`, which asked the outcome back, without end)."""
    run = Generation(at=1, error="the model went away", triggered=True)
    assert run.failed and run.record()["outcome"] == run.as_json()["outcome"] == "error"
    assert Generation(ok=True).as_json()["outcome"] == "ok"
    assert Generation().as_json()["outcome"] == "not-triggered"


def test_last_run_keys_are_camel_case_like_the_rest(world: Any) -> None:
    fake, scanner, keys, llm = world
    fake.replies.append(
        Reply(deltas=['{"entries": [' + orjson.dumps(A1).decode()], finish="length")
    )
    assert generate(scanner, keys, llm).partial
    run = last_run(scanner.store)
    assert run is not None and not [key for key in run if "_" in key]
    assert run["outcome"] == "ok" and run["truncationReason"] == "max-tokens"
    assert run["droppedTailChars"] == 0 and run["deletionsHonored"] is True
    assert {"spuriousRate", "deletedByContract", "warnings", "triggered", "at"} <= set(run)


def test_a_run_finding_another_running_is_skipped_and_leaves_its_result(world: Any) -> None:
    fake, scanner, keys, llm = world
    release = threading.Event()
    text = orjson.dumps({"entries": [A1]}).decode()
    fake.replies.append(Reply(deltas=Gated([text[:10], text[10:]], release)))
    done: list[Any] = []

    def first() -> None:
        with Store(scanner.store.state_dir) as store:
            done.append(generate(Scanner(store), keys, llm))

    thread = threading.Thread(target=first)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not fake.requests:
            assert thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)
        skipped = generate(scanner, keys, llm, force=True)  # even forced: it is not its turn
        assert skipped.outcome == "skipped" and not skipped.failed and not skipped.ok
        assert "another profile generation" in skipped.reason
        assert last_run(scanner.store)["outcome"] == "skipped"  # type: ignore[index]
    finally:
        release.set()
        thread.join(60)
    assert done[0].ok and len(fake.requests) == 1
    # The run that went ahead has the last word: its lastRun stands, and it stored v1.
    assert last_run(scanner.store)["outcome"] == "ok"  # type: ignore[index]
    assert latest_version(scanner.store)[0] == 1  # type: ignore[index]
