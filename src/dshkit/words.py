"""Taking forgotten sessions' words out of values no session keys (store.SESSION_WORDS):
which strings quote a session, and each value rewritten without them
(docs/design/profile.md#forgetting-a-session-takes-its-words-out-of-the-profile)."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from .store import SessionWords

# A string is anyone's words from this many folded units on (a letter or digit counts one, a
# Han or other wide character two: 4 Han characters or 8 letters); a longer one quotes a
# session when it shares a run of _QUOTE_RUN units with one of its human messages.
_QUOTE_SHORTEST = 8
_QUOTE_RUN = 12
_DROP = object()  # what `_without` answers for a value that goes whole


def normalise(text: str) -> str:
    """Text as compared for quoting and claims: NFKC, case folded, letters and digits only."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def sessions_saying(db: sqlite3.Connection, text: str) -> set[tuple[str, str]]:
    """The sessions (harness, session id) a human message of which holds `text` word for word
    (its runs of whitespace as single spaces)."""
    quote = " ".join(text.split())
    rows = db.execute(
        "SELECT DISTINCT harness, session_id FROM human_messages WHERE instr(text, ?) > 0",
        (quote,),
    )
    return {(harness, session_id) for harness, session_id in rows}


def _fold(text: str) -> str:
    """`normalise`d, each wide character written twice (so that a run's length weighs what it
    says)."""
    return "".join(ch * 2 if ord(ch) >= 0x2E80 else ch for ch in normalise(text))


def _quoting(
    db: sqlite3.Connection, keys: set[tuple[str, str]], said: list[str], strings: set[str]
) -> set[str]:
    """Those of `strings` that quote the sessions `keys`, whose human messages are `said`: a
    short one found whole in a message, a longer one sharing a run of _QUOTE_RUN units with
    one; but not one a session that stays holds word for word (still its words)."""
    run = _QUOTE_RUN
    messages = [_fold(text) for text in said]
    folded = {s: f for s in strings if len(f := _fold(s)) >= _QUOTE_SHORTEST}
    windows = {f[i : i + run] for f in folded.values() for i in range(len(f) - run + 1)}
    shared = {
        w for m in messages for i in range(len(m) - run + 1) if (w := m[i : i + run]) in windows
    }
    joined = "\0".join(messages)
    found = set()
    for string, f in folded.items():
        said_here = (len(f) <= run and f in joined) or any(
            f[i : i + run] in shared for i in range(len(f) - run + 1)
        )
        if said_here and sessions_saying(db, string) <= keys:
            found.add(string)
    return found


def _strings(value: Any, into: set[str]) -> None:
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            _strings(item, into)


def _without(value: Any, gone: set[str], essential: tuple[str, ...]) -> Any:
    """`value` without the strings `gone` (see SessionWords); _DROP when it goes whole."""
    if isinstance(value, str):
        return _DROP if value in gone else value
    if isinstance(value, list):
        kept = (_without(item, gone, essential) for item in value)
        return [item for item in kept if item is not _DROP]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            new = _without(item, gone, essential)
            new = "" if new is _DROP else new
            if key in essential and new in ("", []) and item not in ("", []):
                return _DROP
            out[key] = new
        return out
    return value


def forget_words(
    db: sqlite3.Connection, keys: list[tuple[str, str]], declared: Iterable[SessionWords]
) -> None:
    """Take the words of the sessions `keys` out of every `declared` value (inside the
    forget's transaction, before their human messages are deleted)."""
    values: list[tuple[SessionWords, int, Any, bool]] = []
    strings: set[str] = set()
    for words in declared:
        query = f"SELECT rowid, {words.column} FROM {words.table} WHERE {words.where}"
        for rowid, raw in db.execute(query).fetchall():
            parsed = words.json
            try:
                value = orjson.loads(raw) if parsed else raw
            except orjson.JSONDecodeError:
                value, parsed = raw, False  # not JSON after all: judged as plain text
            _strings(value, strings)
            values.append((words, rowid, value, parsed))
    if not strings:
        return  # no profile yet: nothing to read the sessions' messages for
    said = [
        row[0]
        for key in keys
        for row in db.execute(
            "SELECT text FROM human_messages WHERE harness = ? AND session_id = ?", key
        )
    ]
    gone = _quoting(db, set(keys), said, strings) if said else set()
    for words, rowid, value, parsed in values if gone else ():
        new = _without(value, gone, words.essential)
        if new == value:
            continue
        stored = "" if new is _DROP else orjson.dumps(new).decode() if parsed else new
        db.execute(f"UPDATE {words.table} SET {words.column} = ? WHERE rowid = ?", (stored, rowid))
