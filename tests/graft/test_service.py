"""Graft's use cases end to end over a real (fake) Claude Code CLI and its sessions root: the
person's rules and the identity survive three generations over every path that starts a
target — started headless (the handoff is its first prompt) and picked up by the next session
(the handoff arrives as hook context, which its log keeps as no message of its own)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import orjson
import pytest

from dshkit.config import ConfigError
from dshkit.errors import Busy, Invalid, Unavailable
from dshkit.graft import GraftAborted, GraftService, ledger, live
from dshkit.graft.identity import Identity
from dshkit.graft.ledger import force_failure
from dshkit.graft.lifecycle import State
from dshkit.sessions import Refresh, Source
from dshkit.store import SCHEMA_VERSION, LeaseBusy, Store, StoreError

from ..support.graft_driver import World

pytestmark = pytest.mark.process

RULES = (  # one standing rule stated by the person of each generation
    "以后不要修改 docs/ 目录。",
    "每次提交前都要先跑 pytest。",
    "从现在起回答一律用中文。",
)


def log_path(world: World, session: str) -> Path:
    """Where Claude Code keeps the transcript of `session` working in the world's cwd."""
    project = re.sub(r"[^A-Za-z0-9]", "-", str(world.cwd))
    return world.claude / "projects" / project / f"{session}.jsonl"


def say(world: World, session: str, text: str, tokens: int = 20_000) -> None:
    """The person types `text` in `session` and the model answers (a Claude Code log)."""
    path = log_path(world, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": session, "cwd": str(world.cwd), "version": "2.1.197"}
    stamp = "2026-12-01T10:00:00.000Z"
    prompt = str(uuid.uuid4())
    answer = {
        "id": f"m-{prompt}",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "好的。"}],
        "usage": {"input_tokens": tokens, "output_tokens": 10},
    }
    lines = [
        {"type": "user", "message": {"role": "user", "content": text}, "uuid": prompt},
        {"type": "assistant", "message": answer, "requestId": f"r-{prompt}", "uuid": f"a{prompt}"},
    ]
    with open(path, "ab") as handle:
        for line in lines:
            handle.write(orjson.dumps({**base, "timestamp": stamp, **line}) + b"\n")


def service(world: World, *, ignite: bool) -> GraftService:
    world.state.mkdir(exist_ok=True)
    (world.state / "config.toml").write_text(
        f"[graft]\nignite_target = {'true' if ignite else 'false'}\nignite_spacing_s = 0\n"
    )
    return GraftService(world.state, sources=[Source("claude", world.claude / "projects")])


def hand_off(
    world: World, session: str, path: str, number: int
) -> tuple[str, Identity, list[tuple[str, int, int]]]:
    """Hand `session` off over `path` ("ignite": the target started headless; "pickup": the
    next session started in the directory takes it at its start): the target's id, the
    identity it carries and the handoff's constraints (text, seq, generation)."""
    sliced = service(world, ignite=path == "ignite").slice(
        session, "claude", drive="now", refresh=Refresh.WAIT
    )
    constraints = [(c.text, c.seq, c.generation) for c in sliced.handoff.constraints.constraints]
    if path == "ignite":
        assert sliced.txn.state == State.COMMITTED, sliced.txn.last_error
        target = str(sliced.txn.target_id)
    else:
        assert sliced.txn.state == State.PENDING
        target = f"picked-{number}"
        with Store(world.state) as store:  # what its SessionStart hook does
            given = live.pickup(store, "claude", target, str(world.cwd))
            assert given is not None and given.text == sliced.handoff.first_message
            given.commit(store)
        say(world, target, "继续")  # the person's first prompt: the handoff is not in it
    return target, sliced.handoff.identity, constraints


@pytest.mark.parametrize(
    "paths",
    [
        ("ignite",) * 3,
        ("pickup",) * 3,
        ("ignite", "pickup", "ignite"),
        ("pickup", "ignite", "pickup"),
    ],
    ids=["ignite", "pickup", "ignite-pickup-ignite", "pickup-ignite-pickup"],
)
def test_three_generations_keep_every_rule_with_its_first_anchor(
    world: World, paths: tuple[str, ...]
) -> None:
    session = "gen-0"
    first_anchor: dict[str, tuple[int, int]] = {}
    for number, path in enumerate(paths):
        say(world, session, f"第 {number} 代的工作。{RULES[number]}")
        target, identity, constraints = hand_off(world, session, path, number + 1)

        assert identity.generation == number + 1 and identity.source_session_id == session
        # Every rule so far, in the order stated, each anchored where it was first stated.
        assert [text for text, _, _ in constraints] == list(RULES[: number + 1])
        for text, seq, generation in constraints:
            first_anchor.setdefault(text, (seq, generation))
            assert (seq, generation) == first_anchor[text], text
        assert [generation for _, _, generation in constraints] == list(range(number + 1))
        session = target
    assert len(first_anchor) == 3


def test_a_forced_cut_that_fails_is_recorded_for_the_model_and_the_person(world: World) -> None:
    say(world, "c-forced", "以后" + "不要改动任何配置文件，" * 60 + "谢谢。")  # one long rule
    world.state.mkdir()
    (world.state / "config.toml").write_text("[graft]\nconstraint_budget_chars = 500\n")
    graft = GraftService(world.state, sources=[Source("claude", world.claude / "projects")])
    with pytest.raises(GraftAborted):
        graft.slice("c-forced", "claude", forced=True, drive="now", refresh=Refresh.WAIT)

    with Store(world.state) as store:
        failed = force_failure(store, "claude", "c-forced", 120, 1_800)
        assert failed is not None and failed.failures == 1 and not failed.told
        assert "GRAFT_ABORTED: constraints truncated" in failed.error
        assert ledger.retirement(store, "claude", "c-forced") is None  # it works on
    shown = graft.status("c-forced", "claude").as_json()
    forced = shown["forcedCutFailure"]
    assert forced is not None and forced["error"] == failed.error

    # A cut that fails by its ignition is told by the rollback notice: recorded, told already.
    (world.state / "config.toml").write_text("[graft]\nignite_attempts = 1\nignite_spacing_s = 0\n")
    world.script("fail")
    sliced = graft.slice("c-forced", "claude", forced=True, drive="now", refresh=Refresh.WAIT)
    assert sliced.txn.state == State.ROLLED_BACK
    with Store(world.state) as store:
        again = force_failure(store, "claude", "c-forced", 120, 1_800)
        assert again is not None and again.failures == 2 and again.told
        assert again.retry_at - again.at == 240_000
    # One that begins well clears the count.
    sliced = graft.slice("c-forced", "claude", forced=True, drive="now", refresh=Refresh.WAIT)
    assert sliced.txn.state == State.COMMITTED
    with Store(world.state) as store:
        assert force_failure(store, "claude", "c-forced", 120, 1_800) is None


def test_what_the_layers_below_raise_reaches_the_surfaces_as_it_is(tmp_path: Path) -> None:
    # The config's, the store's and a lease's errors are the tree's own (a surface maps them
    # by class), so the service passes them on untranslated.
    assert issubclass(ConfigError, Invalid) and issubclass(StoreError, Unavailable)
    assert issubclass(LeaseBusy, Busy)
    # A [graft] value that does not fit is no error of the service: refused, its default used
    # (as at the hooks), and the refusal shown where a person looks.
    (tmp_path / "config.toml").write_text("[graft]\nbogus = 1\n")
    refused = GraftService(tmp_path).debug_status()["settingsError"]
    assert refused is not None and "bogus" in refused
    (tmp_path / "config.toml").unlink()
    with Store(tmp_path) as store:
        store.db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer dshkit"):
        GraftService(tmp_path).audit()


def test_the_ignition_switch_overrides_the_config_for_the_next_slice(world: World) -> None:
    say(world, "s-switch", "把文档补全")
    graft = service(world, ignite=True)
    assert graft.ignition() == {"ignite": True, "chosen": None, "config": True}
    assert graft.set_ignition(False, by="cli")["ignite"] is False
    sliced = graft.slice("s-switch", "claude", drive="now", refresh=Refresh.WAIT)
    assert sliced.txn.state == State.PENDING and sliced.txn.target_id is None  # nothing started
    assert world.calls() == []
    with pytest.raises(Invalid, match="ignite must be"):
        graft.set_ignition("on", by="cli")  # type: ignore[arg-type]


def test_a_session_is_excluded_and_included_by_a_unique_prefix(world: World) -> None:
    say(world, "s-keep-me", "长任务")
    graft = service(world, ignite=True)
    graft.prepare("s-keep-me", "claude", refresh=Refresh.WAIT)  # scanned
    kept = graft.exclude("s-keep", "claude", by="cli", reason="refactor")
    assert [(x.session_id, x.by, x.reason) for x in kept.sessions] == [
        ("s-keep-me", "cli", "refactor")
    ]
    assert graft.status("s-keep-me", "claude").excluded is True
    assert graft.exclude("s-keep-me", "claude", keep=False, by="cli").sessions == ()
    with Store(world.state) as store:
        kinds = [r.kind for r in ledger.audit_records(store)]
    assert kinds == ["forced-cut-excluded", "forced-cut-included"]
