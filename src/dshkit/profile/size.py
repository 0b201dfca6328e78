"""Static estimate of how much the model must write: the full contract against the delta one.

Not a model call: it measures the JSON each contract asks for, for profiles of 8 entries up
to the most the prompt allows (MAX_ENTRIES), of which one or two changed. Tokens are estimated
from UTF-8: one per CJK character, one per four ASCII bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from .model import MAX_ENTRIES
from .wire import Entry

SIZES = (8, 12, 16, 20, 24, MAX_ENTRIES)


@dataclass(frozen=True)
class SizeRow:
    entries: int
    changed: int
    full_tokens: int
    delta_tokens: int

    @property
    def saved(self) -> float:
        return 1 - self.delta_tokens / self.full_tokens


def estimate_tokens(text: str) -> int:
    cjk = sum(1 for ch in text if ord(ch) > 0x2E7F)
    ascii_bytes = sum(1 for ch in text if ord(ch) < 0x80)
    other = len(text.encode()) - ascii_bytes - 3 * cjk
    return cjk + (ascii_bytes + max(0, other)) // 4


def _entry(number: int, changed: bool = False) -> Entry:
    claim = (
        "动手修改前先说清楚打算怎么改，并等他确认" if number % 2 else "回答用中文，术语保留英文原文"
    )
    if changed:
        claim += "（已补充新的证据）"
    return {
        "id": f"{'ABCD'[number % 4]}{number}",
        "category": "ABCD"[number % 4],
        "claim": claim,
        "evidence": ["先别改，先说你打算怎么做", "用中文回答我", "[12]"][: 2 + number % 2],
        "confidence": ("high", "medium", "low")[number % 3],
    }


def size_table(sizes: tuple[int, ...] = SIZES) -> list[SizeRow]:
    rows = []
    for count in sizes:
        changed = 1 if count % 8 == 0 else 2
        entries = [_entry(n, changed=n < changed) for n in range(count)]
        full = {"entries": entries, "notes": ""}
        delta = {
            "entries": entries[:changed],
            "unchangedIds": [e["id"] for e in entries[changed:]],
            "deletedIds": [],
            "notes": "",
        }
        rows.append(
            SizeRow(
                count,
                changed,
                estimate_tokens(orjson.dumps(full).decode()),
                estimate_tokens(orjson.dumps(delta).decode()),
            )
        )
    return rows
