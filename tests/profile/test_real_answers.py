"""Real small models' answers to the profile prompt, replayed through the whole pipeline.

`tests/data/fixtures/real-model-answers/` holds what Qwen2.5-Coder 1.5B and 0.5B and SmolLM2
answered (fenced JSON, category definitions copied as claims, dates and placeholders as
evidence, near-identical entries under new ids, invented ids, the pinned entry rewritten or
deleted, answers cut at max_tokens, garbled text). Each is streamed by the fake server as the
model streamed it, against the profile it was answering: no good entry of that profile is
lost, nothing the person's own words do not support is injected, and every entry of the answer
that did not go in is named in lastRun.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMConfig
from dshkit.profile.generate import generate, last_run
from dshkit.profile.model import ProfileOutputError, parse_output, supported
from dshkit.profile.state import ProfileState, latest_version
from dshkit.provenance.quotes import fold
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.corpus import encode_frame, header
from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import human, session_dir
from ..support.paths import FIXTURES

ANSWERS = FIXTURES / "real-model-answers"
INPUTS = orjson.loads((ANSWERS / "profile-inputs.json").read_bytes())
REPLIES = [
    orjson.loads(line) for line in (ANSWERS / "profile-answers.jsonl").read_bytes().splitlines()
]
START = 1_760_000_000_000


def name(reply: dict[str, Any]) -> str:
    return f"{reply['model'].split()[0]}-{reply['mode']}-{reply['try']}"


def world(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "sessions"
    events = [
        {**human(n, text), "time": START + 60_000 * n} for n, text in enumerate(INPUTS["material"])
    ]
    path = session_dir(root, "person") / "session.v4.jsonl.zstd"
    path.write_bytes(
        encode_frame([header("person", 4, "/home/dev/work", 1)]) + encode_frame(events)
    )
    return root, tmp_path / "state"


def store_previous(store: Store) -> list[dict[str, Any]]:
    """The profile the delta answers were given, as an older dshkit stored it."""
    previous = [
        {**e, "firstSeenAt": 1, "lastSeenAt": 1, "timesSeen": 1} for e in INPUTS["previous"]
    ]
    with store.transaction() as db:
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "material_messages, reason) VALUES (1, 1, ?, '{}', 0, 0, 15, 'older dshkit')",
            (orjson.dumps(previous).decode(),),
        )
    return previous


@pytest.mark.parametrize("reply", REPLIES, ids=[name(r) for r in REPLIES])
def test_a_real_models_answer_loses_nothing_good_and_injects_nothing_unsupported(
    tmp_path: Path, reply: dict[str, Any]
) -> None:
    root, state = world(tmp_path)
    said = {fold(text) for text in INPUTS["material"]}
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        previous = store_previous(store) if reply["mode"] == "delta" else []
        finish = "length" if reply["outcome"] == "max-tokens" else "stop"
        fake.replies.append(Reply(deltas=[reply["text"]], finish=finish))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        run = generate(scanner, keys, llm, force=True)
        newest = latest_version(store)
        entries = newest[1] if newest else []
        recorded = last_run(store)
        text = ProfileState(store).effective().text

    # No good entry lost: every entry of the previous profile is still there (none of these
    # answers deletes one explicitly and completely), the pinned one word for word.
    kept = {e["id"]: e for e in entries}
    for old in previous:
        assert old["id"] in kept, f"{old['id']} lost"
        if old.get("pinned"):
            assert kept[old["id"]]["claim"] == old["claim"]

    # Nothing unsupported injected: an injected entry is pinned, or each of its sources is
    # one of the person's messages, at its place.
    for entry in entries:
        if entry["claim"] in text:
            assert supported(entry), entry
            for source in entry.get("sources") or ():
                assert source["session"] == "person" and isinstance(source["seq"], int)
                assert any(fold(source["quote"].rstrip("…")) in s for s in said), source
    assert recorded is not None

    # Every entry of the answer that did not go in as written is named in lastRun.
    try:
        parsed = parse_output(reply["text"], "max-tokens" if finish == "length" else None)
    except ProfileOutputError:
        assert run.outcome == "unusable-reply" and recorded["outcome"] == "unusable-reply"
        return
    stored = {fold(e["claim"]) for e in entries}
    named = " ".join(recorded["warnings"]) + orjson.dumps(recorded["refused"]).decode()
    for raw in parsed.entries:
        claim = raw.get("claim")
        if isinstance(claim, str) and fold(claim) in stored:
            continue
        assert str(raw.get("id")) in named, f"{raw.get('id')}: {claim!r} went unnamed"
