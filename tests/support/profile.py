"""Profile material for tests: entries as the model gives them, a version stored as a
generation stores it, and scripted model answers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from dshkit.profile.model import ParsedOutput, assemble
from dshkit.profile.state import ProfileState
from dshkit.store import Store

from .fakes import Reply


def store_version(store: Store, entries: list[dict[str, object]], version: int = 1) -> None:
    built = assemble([], ParsedOutput(entries=entries), 1_000 * version, 10).entries
    with store.transaction() as db:
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "material_messages, reason) VALUES (?, ?, ?, '{}', 0, 0, 10, 'test')",
            (version, 1_000 * version, orjson.dumps(built).decode()),
        )


def entry(entry_id: str, category: str, claim: str) -> dict[str, object]:
    return {
        "id": entry_id,
        "category": category,
        "claim": claim,
        "evidence": ["x"],
        "confidence": "high",
    }


PROFILE = [
    entry("A1", "A", "用中文沟通"),
    entry("B1", "B", "不要在他没要求时升级依赖"),
    entry("C1", "C", "先给分析，再决定改哪一项"),
    entry("D1", "D", "偏好哪种编辑器尚不明确"),
    entry("A2", "A", "习惯一句话下达任务"),
]


def many(count: int, claim_chars: int = 20, chinese: bool = True) -> list[dict[str, Any]]:
    """`count` entries over the four categories with evidence and confidence that vary."""
    word = "按他的习惯来做事" if chinese else "works in small steps "
    return [
        {
            "id": f"e{n}",
            "category": "ABCD"[n % 4],
            "claim": f"e{n}:" + (word * claim_chars)[: claim_chars - len(f"e{n}:")],
            "evidence": [f"[{k}]" for k in range(1 + n % 5)],
            "confidence": ("high", "medium", "low")[n % 3],
        }
        for n in range(count)
    ]


A1 = {"id": "A1", "category": "A", "claim": "用中文沟通", "evidence": ["[3]"], "confidence": "high"}
B1 = {
    "id": "B1",
    "category": "B",
    "claim": "不要未经确认就改代码",
    "evidence": ["[7]", "[9]"],
    "confidence": "medium",
}


class Gated(list[str]):
    """Deltas whose stream stops after the first one until `release` is set: the model call
    is in flight for as long as the test needs, whatever the machine's speed."""

    def __init__(self, deltas: list[str], release: threading.Event) -> None:
        super().__init__(deltas)
        self.release = release

    def __iter__(self) -> Iterator[str]:
        items = list(super().__iter__())
        yield items[0]
        self.release.wait(120)
        yield from items[1:]


def answer(value: dict[str, Any]) -> Reply:
    """A model answer of `value` as JSON, streamed in two deltas."""
    text = orjson.dumps(value).decode()
    return Reply(deltas=[text[: len(text) // 2], text[len(text) // 2 :]])


def effective(home: Path) -> str:
    """The text the hooks inject under `home` now."""
    with Store(home / ".dsh" / "dshkit") as store:
        return ProfileState(store).effective().text
