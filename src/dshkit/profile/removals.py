"""The entries a person removed from the profile, kept so that no regeneration brings them back.

A removal is recorded with the entry's id, category and claim when the person removes it
(`record_removal`, inside the transaction that stores the version without it). A generation
tells the model which claims were removed (prompt.py) and, whatever it answers, drops an
entry that matches one (`match_removal`): the same id, or the same category and a claim equal
once normalised (width, case, spaces and punctuation aside) or nearly so (SIMILAR). Undoing
a removal (`undo_removal`) only forgets the record: a later regeneration may write the entry
again if the material still supports it.

A removal's claim may quote a session's words, so each is linked to the sessions it may
quote: those whose human messages hold its claim or one of its evidence quotes, and every
session whose words a profile call carried (the model wrote the claim from them), stored or
since deleted as too old.
Forgetting any of them deletes the record (store.SESSION_ROWS), so it leaves no byte behind;
the person may then have to remove the entry again.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from ..errors import NotFound
from ..store import Store
from ..words import normalise, sessions_saying
from .wire import Entry, RemovalJson

# Normalised claims at least this similar (difflib's ratio) are the same claim said again.
SIMILAR = 0.8
# The removals the prompt names, newest first (enforcement checks every one).
PROMPT_REMOVALS = 100
_QUOTE_MIN = 4  # an evidence quote shorter than this (normalised) links no session
_NUMBER = re.compile(r"^\W*\d+\W*$")  # "[12]": a message number, not a quote


@dataclass(frozen=True)
class Removal:
    """One entry the person removed."""

    removal_id: int
    entry_id: str
    category: str
    claim: str
    removed_at: int

    def as_json(self) -> RemovalJson:
        return {
            "removal": self.removal_id,
            "id": self.entry_id,
            "category": self.category,
            "claim": self.claim,
            "removedAt": self.removed_at,
        }


def removals(store: Store) -> list[Removal]:
    """Every recorded removal, newest first."""
    rows = store.db.execute(
        "SELECT id, entry_id, category, claim, removed_at FROM profile_removals "
        "ORDER BY removed_at DESC, id DESC"
    )
    return [Removal(*row) for row in rows]


def record_removal(db: sqlite3.Connection, entry: Entry, now_ms: int) -> int:
    """Record that the person removed `entry` (inside the caller's transaction), linked to the
    sessions whose words it may quote; the record's id."""
    cursor = db.execute(
        "INSERT INTO profile_removals (entry_id, category, claim, removed_at) VALUES (?, ?, ?, ?)",
        (str(entry["id"]), str(entry.get("category", "")), str(entry.get("claim", "")), now_ms),
    )
    removal_id = cursor.lastrowid
    assert removal_id is not None
    links = set(_quoting_sessions(db, entry)) | set(_profile_call_sessions(db))
    db.executemany(
        "INSERT OR IGNORE INTO profile_removal_sessions (removal_id, harness, session_id) "
        "VALUES (?, ?, ?)",
        [(removal_id, harness, session) for harness, session in sorted(links)],
    )
    return removal_id


def undo_removal(store: Store, entry_id: str) -> list[Removal]:
    """Forget every removal of the entry `entry_id` (NotFound when there is none): a later
    regeneration may bring it back. The removals undone."""
    undone = [r for r in removals(store) if r.entry_id == entry_id]
    if not undone:
        raise NotFound(f"no removal of an entry {entry_id!r} is recorded", field="id")
    with store.transaction() as db:
        db.executemany(
            "DELETE FROM profile_removals WHERE id = ?", [(r.removal_id,) for r in undone]
        )
    return undone


def match_removal(entry: Entry, removed: Iterable[Removal]) -> tuple[Removal, str] | None:
    """The removal `entry` says again, and why in words; None when it says none."""
    claim = normalise(str(entry.get("claim", "")))
    best: tuple[float, Removal] | None = None
    for removal in removed:
        if removal.entry_id == entry.get("id"):
            return removal, f"it has the id of the removed entry {removal.entry_id!r}"
        if removal.category != entry.get("category"):
            continue
        other = normalise(removal.claim)
        if claim == other:
            return removal, f"its claim is the removed entry {removal.entry_id!r}'s"
        ratio = SequenceMatcher(None, claim, other, autojunk=False).ratio()
        if ratio >= SIMILAR and (best is None or ratio > best[0]):
            best = (ratio, removal)
    if best is None:
        return None
    ratio, removal = best
    return removal, (
        f"its claim is {ratio:.0%} like the removed entry {removal.entry_id!r}'s "
        f"(same category; {SIMILAR:.0%} counts as the same)"
    )


def _quoting_sessions(db: sqlite3.Connection, entry: Entry) -> list[tuple[str, str]]:
    quotes = [str(entry.get("claim", ""))]
    evidence = entry.get("evidence")
    if isinstance(evidence, list):
        quotes += [str(e) for e in evidence]
    found: list[tuple[str, str]] = []
    for quote in quotes:
        if len(normalise(quote)) < _QUOTE_MIN or _NUMBER.match(quote):
            continue
        found += sessions_saying(db, quote)
    return found


def _profile_call_sessions(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """The sessions whose words a profile call carried: those stored, and those deleted as
    too old ([llm] keep_calls, keep_days), whose sessions were kept."""
    return [
        (h, s)
        for h, s in db.execute(
            "SELECT l.harness, l.session_id FROM llm_call_sessions l "
            "JOIN llm_calls c ON c.id = l.call_id WHERE c.purpose = 'profile' "
            "UNION SELECT harness, session_id FROM llm_pruned_sessions WHERE purpose = 'profile'"
        )
    ]
