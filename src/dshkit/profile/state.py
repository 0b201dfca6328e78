"""What the agent is told about the user: the mode, the texts, and their byte-stable rendering.

The mode is one enum, `auto` (the generated profile, plus optional extra text) or `custom`
(the user's own text), so "both on" cannot be represented (seed 001 §7.3); switching keeps
the other side's data. The rendered text carries no live value (no time, version or count):
DSH appends a new system message whenever the text changes, so identical state must give
identical bytes (§6.2). DSH's system prompt also treats `{{…}}` as a template variable and
then fails every turn: user text containing it is refused, model-written text is escaped.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from ..store import Store
from .model import Entry

MAX_CUSTOM_TEXT = 200_000  # UTF-16 code units, as the seed's HTTP layer counts them
ALGORITHM_VERSION = "entries-v1"
_TEMPLATE = re.compile(r"\{\{|\}\}")

_KEYS = {
    "mode": "profile.mode",
    "customText": "profile.customText",
    "autoExtraText": "profile.autoExtraText",
    "copiedSnapshot": "profile.copiedSnapshot",
}

_HEADING = "## 关于这位用户（dshkit 根据他以往的会话整理）"
_INTRO = "以下是从他过去的发言里归纳出的协作习惯，本次会话请照此配合："
_SECTIONS = (
    ("A", "【他稳定的特点】"),
    ("B", "【在他这里行不通的做法】"),
    ("C", "【在他这里行得通的做法】"),
    ("D", "【还没有定论（仅供参考，不要当成事实）】"),
)


class Mode(StrEnum):
    AUTO = "auto"
    CUSTOM = "custom"


class TextRejected(ValueError):
    """Text the user gave cannot be injected as it is (the message says why and the limit)."""


class TextTooLong(TextRejected):
    """Not a string, or longer than MAX_CUSTOM_TEXT."""


def check_text(text: Any, what: str) -> str:
    """The text, if it may be injected; TextRejected with the reason otherwise."""
    if not isinstance(text, str):
        raise TextTooLong(f"{what} must be a string, got {type(text).__name__}")
    units = len(text.encode("utf-16-le")) // 2
    if units > MAX_CUSTOM_TEXT:
        raise TextTooLong(f"{what} is {units} characters long; the limit is {MAX_CUSTOM_TEXT}")
    if _TEMPLATE.search(text):
        raise TextRejected(
            f"{what} contains '{{{{' or '}}}}': DSH reads that as a template variable and then "
            "fails every turn; write it with a space between the braces, like '{ {'"
        )
    return text


def latest_version(store: Store) -> tuple[int, list[Entry]] | None:
    """The newest profile version and its entries, if there is one."""
    row = store.db.execute(
        "SELECT version, entries FROM profile_versions ORDER BY version DESC LIMIT 1"
    ).fetchone()
    return (row[0], orjson.loads(row[1])) if row else None


def render_profile(entries: list[Entry]) -> str:
    """The profile as the section the agent reads; '' when there is nothing to say."""
    blocks = []
    for category, title in _SECTIONS:
        claims = [_escape(e["claim"]) for e in entries if e.get("category") == category]
        if claims:
            blocks.append(title + "\n" + "\n".join(f"- {claim}" for claim in claims))
    if not blocks:
        return ""
    return "\n\n".join([_HEADING, _INTRO, *blocks])


def _escape(text: str) -> str:
    return " ".join(text.split()).replace("{{", "{ {").replace("}}", "} }")


@dataclass(frozen=True)
class Effective:
    mode: Mode
    text: str
    source: str  # "profile" or "customText"


class ProfileState:
    """The user's choices, read from and written to the store; the render is cached by content.

    Every setter writes in one transaction and drops the cached render, so a change shows at
    once; an unchanged state returns the very same string object.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: tuple[tuple[Any, ...], Effective] | None = None

    # -- reading ---------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        # Anything but a valid stored value falls back to auto: "both on" cannot come back.
        return Mode.CUSTOM if self.store.get_meta(_KEYS["mode"]) == Mode.CUSTOM.value else Mode.AUTO

    @property
    def custom_text(self) -> str:
        return self.store.get_meta(_KEYS["customText"]) or ""

    @property
    def auto_extra_text(self) -> str:
        return self.store.get_meta(_KEYS["autoExtraText"]) or ""

    def copied_snapshot(self) -> dict[str, Any] | None:
        stored = self.store.get_meta(_KEYS["copiedSnapshot"])
        return orjson.loads(stored) if stored else None

    def latest(self) -> tuple[int, list[Entry]] | None:
        return latest_version(self.store)

    def profile_view(self) -> dict[str, Any] | None:
        """The newest version as shown to people and scripts: number, time, notes, entries."""
        row = self.store.db.execute(
            "SELECT version, at, notes, entries FROM profile_versions ORDER BY version DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        return {
            "version": row[0],
            "generatedAt": row[1],
            "notes": row[2],
            "entries": orjson.loads(row[3]),
        }

    def effective(self) -> Effective:
        """The one text the agent is given, and where it comes from."""
        latest = self.latest()
        key = (self.mode, self.custom_text, self.auto_extra_text, latest[0] if latest else None)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        mode, custom, extra = key[0], key[1], key[2]
        if mode is Mode.CUSTOM:
            result = Effective(mode, custom.strip(), "customText")
        else:
            rendered = render_profile(latest[1]) if latest else ""
            text = "\n\n".join(part for part in (rendered, extra.strip()) if part)
            result = Effective(mode, text, "profile")
        self._cache = (key, result)
        return result

    # -- writing ---------------------------------------------------------------------------

    def set_mode(self, mode: str) -> Mode:
        if mode not in (m.value for m in Mode):
            raise TextRejected(f"mode must be 'auto' or 'custom', got {mode!r}")
        self._write({_KEYS["mode"]: mode})
        return Mode(mode)

    def set_custom_text(self, text: Any) -> str:
        checked = check_text(text, "custom text")
        self._write({_KEYS["customText"]: checked})
        return checked

    def set_auto_extra_text(self, text: Any) -> str:
        checked = check_text(text, "extra text")
        self._write({_KEYS["autoExtraText"]: checked})
        return checked

    def mark_copied(self, text: Any, entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Record that the user copied the effective text; the time and version are ours."""
        check_text(text, "copied text")
        latest = self.latest()
        if entries is None:
            entries = latest[1] if latest else []
        snapshot = {
            "text": text,
            "at": int(time.time() * 1000),
            "profileVersion": latest[0] if latest else None,
            "entries": [
                {k: e.get(k) for k in ("id", "category", "claim", "evidenceQuoteCount")}
                for e in entries
                if isinstance(e, dict)
            ],
            "algorithmVersion": ALGORITHM_VERSION,
        }
        self._write({_KEYS["copiedSnapshot"]: orjson.dumps(snapshot).decode()})
        return snapshot

    def stale_copy(self) -> bool:
        """Whether the effective text differs from the copied one.

        Not for telling the user to copy again: a mere rewording makes it true (seed §6-2.5(b)).
        """
        snapshot = self.copied_snapshot()
        return snapshot is not None and snapshot["text"] != self.effective().text

    def _write(self, values: dict[str, str]) -> None:
        with self.store.transaction():
            for key, value in values.items():
                self.store.set_meta(key, value)
        self._cache = None
