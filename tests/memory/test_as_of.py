"""What was current at a time: the `as_of` view over the four times (valid from and to,
recorded and expired), through the records, the service and `dshkit memory list --as-of`."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from dshkit.memory import records as rec
from dshkit.memory.records import FACT, TOOL, Draft
from dshkit.memory.service import MemoryService
from dshkit.memory.workspace import Workspace
from dshkit.store import Store

from ..support.cli import run_dshkit

WS = Workspace("/w/app", None)
DAY = 86_400_000
T0 = int(datetime(2026, 3, 1, tzinfo=UTC).timestamp() * 1000)


def add(store: Store, text: str, at: int, subject: str = "command:test", seq: int = 1) -> int:
    with store.transaction():
        made = rec.add(
            store,
            WS,
            ("dsh", f"s-{text}"),
            Draft(FACT, text, grade=TOOL, seq=seq, valid_from=at, subject=subject),
        )
    assert made is not None
    return made


def texts(store: Store, as_of: int, known_at: int | None = None) -> list[str]:
    found = rec.select(store, WS, as_of=as_of, known_at=known_at)
    return sorted(r.text for r in found)


def test_as_of_a_time_the_fact_then_current_is_shown(store: Store) -> None:
    old = add(store, "测试命令：make test", T0)
    add(store, "测试命令：pytest -q", T0 + 10 * DAY)
    add(store, "构建命令：make", T0 + 5 * DAY, subject="command:build")
    assert texts(store, T0 - 1) == []
    assert texts(store, T0 + DAY) == ["测试命令：make test"]
    assert texts(store, T0 + 6 * DAY) == ["构建命令：make", "测试命令：make test"]
    assert texts(store, T0 + 10 * DAY) == ["构建命令：make", "测试命令：pytest -q"]
    # the stale one is history now, not current
    assert old not in [r.id for r in rec.select(store, WS)]


def test_as_known_at_a_time_before_the_closing_was_recorded(store: Store) -> None:
    add(store, "测试命令：make test", T0)
    time.sleep(0.005)
    before = rec.now_ms()
    time.sleep(0.005)  # recorded a few milliseconds later
    add(store, "测试命令：pytest -q", T0 + 10 * DAY)
    # As the store knew it before the newer fact was recorded: the old one stood, open-ended.
    assert texts(store, T0 + 20 * DAY, known_at=before) == ["测试命令：make test"]
    assert texts(store, T0 + 20 * DAY) == ["测试命令：pytest -q"]
    # nothing was recorded yet at T0 (the records were written now)
    assert texts(store, T0 + DAY, known_at=T0) == []


def test_a_forgotten_closer_closes_nothing_as_of_any_time(store: Store) -> None:
    add(store, "测试命令：make test", T0)
    new = add(store, "测试命令：pytest -q", T0 + 10 * DAY)
    assert rec.forget(store, new)
    assert texts(store, T0 + 20 * DAY) == ["测试命令：make test"]


def test_the_service_and_the_cli_answer_as_of(tmp_path: Path) -> None:
    home = tmp_path / "home"
    state = home / ".dshkit"
    state.mkdir(parents=True, mode=0o700)
    with Store(state) as store:
        add(store, "测试命令：make test", T0)
        add(store, "测试命令：pytest -q", T0 + 10 * DAY)
    service = MemoryService(state)
    found = service.records(WS, as_of=T0 + DAY)
    assert [r.text for r in found.records] == ["测试命令：make test"]
    assert found.current == {found.records[0].id: False}  # current then, superseded since
    done = run_dshkit(
        "memory", "list", "--workspace", "/w/app", "--as-of", "2026-03-02", "--json",
        "--state-dir", str(state), home=home,
    )  # fmt: skip
    listed = orjson.loads(done.stdout)
    assert [r["text"] for r in listed["records"]] == ["测试命令：make test"]
    done = run_dshkit(
        "memory", "list", "--workspace", "/w/app", "--as-of", str(T0 + 11 * DAY), "--json",
        "--state-dir", str(state), home=home,
    )  # fmt: skip
    assert [r["text"] for r in orjson.loads(done.stdout)["records"]] == ["测试命令：pytest -q"]
    bad = run_dshkit(
        "memory", "list", "--as-of", "last tuesday", "--state-dir", str(state), home=home,
        check=False,
    )  # fmt: skip
    assert bad.returncode != 0 and "ISO 8601" in bad.stderr
