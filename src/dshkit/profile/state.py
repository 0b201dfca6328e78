"""What the agent is told about the user: the mode, the texts, and their byte-stable rendering.

The mode is one enum, `auto` (the generated profile, plus optional extra text) or `custom`
(the user's own text), so "both on" cannot be represented
(docs/design/profile.md#one-mode-at-a-time); switching keeps
the other side's data. The rendered text carries no live value (no time, version or count):
DSH appends a new system message whenever the text changes, so identical state must give
identical bytes (docs/design/profile.md#injected-text-is-byte-stable). DSH's system prompt
also treats `{{…}}` as a template variable and
then fails every turn: user text containing it is refused, model-written text is escaped.

Nothing is cut on the way to the agent. A hook answer carries at most INJECT_LIMIT characters
(counted as the harnesses count them: UTF-16 code units), so the budget is split up front:
custom text may use all of it; in auto mode the generated profile (heading and intro
included) has PROFILE_BUDGET and extra text the rest, MAX_EXTRA_TEXT. Text people give over
its limit is refused. The profile fits by design: the prompt asks for at most MAX_ENTRIES
entries of at most MAX_CLAIM_CHARS characters, which render well within PROFILE_BUDGET; should
a version still be over (too many entries, or the model wrote long), entries are placed best
evidence first — more evidence items, then higher confidence, then seen more recently, then
their order in the version — while they fit, and the rest are left out whole and listed as
`dropped`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from .. import harnesses
from ..errors import Invalid, TooLarge
from ..harnesses import text_length
from ..language import is_han
from ..store import Store
from .model import CATEGORY_LABELS, CONFIDENCES, MAX_ENTRIES, diff_profiles, supported

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .wire import CopiedSnapshotJson, Entry, ProfileViewJson

# The whole injected text fits in one hook answer.
INJECT_LIMIT = harnesses.HOOK_TEXT_LIMIT
PROFILE_BUDGET = 6_000  # the rendered profile, heading and intro included
_JOIN = "\n\n"  # between the profile and the extra text
MAX_CUSTOM_TEXT = INJECT_LIMIT
MAX_EXTRA_TEXT = INJECT_LIMIT - PROFILE_BUDGET - len(_JOIN)
ALGORITHM_VERSION = "entries-v1"
_TEMPLATE = re.compile(r"\{\{|\}\}")

_KEYS = {
    "mode": "profile.mode",
    "customText": "profile.customText",
    "autoExtraText": "profile.autoExtraText",
    "copiedSnapshot": "profile.copiedSnapshot",
}


@dataclass(frozen=True)
class _Wrapper:
    heading: str
    intro: str
    sections: tuple[tuple[str, str], ...]


_CHINESE = _Wrapper(
    "## 关于这位用户（dshkit 从他以往的会话里观察到的）",
    "以下是从他过去的原话里整理出的观察，括号里是他最近一次这样说的日期。"
    "这些只是背景：他这次的要求与之不同时，以他现在说的为准。",
    tuple(
        (key, f"【{zh}{'（仅供参考，不要当成事实）' if key == 'D' else ''}】")
        for key, (zh, _) in CATEGORY_LABELS.items()
    ),
)
_ENGLISH = _Wrapper(
    "## About this user (observed by dshkit in their past sessions)",
    "These are observations drawn from what they said before, each dated by when they last "
    "said so. They are background only: when what they ask now differs, what they say now "
    "wins.",
    tuple(
        (key, f"[{en}{' (for reference only, not facts)' if key == 'D' else ''}]")
        for key, (_, en) in CATEGORY_LABELS.items()
    ),
)
# How an entry's date reads: when the person last said it, or set it themselves.
_DATED = {
    True: ("（{day}）", "（他本人写定）", "（他本人写定，{day}）"),
    False: (" ({day})", " (set by them)", " (set by them, {day})"),
}


class Mode(StrEnum):
    AUTO = "auto"
    CUSTOM = "custom"


class TextRejected(Invalid):
    """Text the user gave cannot be injected as it is (the message says why and the limit)."""


class TextTooLong(TextRejected, TooLarge):
    """Longer than its limit: it could not reach the agent whole."""


def check_text(text: Any, what: str, limit: int = MAX_CUSTOM_TEXT) -> str:
    """The text, if it may be injected whole; TextRejected with the reason otherwise.

    Its length is counted as injected (without surrounding blank space).
    """
    if not isinstance(text, str):
        raise TextRejected(f"{what} must be a string, got {type(text).__name__}")
    units = text_length(text.strip())
    if units > limit:
        raise TextTooLong(
            f"{what} is {units:,} characters long; the limit is {limit:,}, so that the agent "
            f"gets it whole (a hook delivers at most {INJECT_LIMIT:,} characters"
            + (
                f", of which the generated profile keeps {INJECT_LIMIT - limit:,})"
                if limit < INJECT_LIMIT
                else ")"
            )
        )
    if "\0" in text:
        raise TextRejected(
            f"{what} contains a NUL character (at position {text.index(chr(0)):,}); "
            "remove it (it is not text the agent can read)"
        )
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


def save_person_version(
    store: Store, entries: list[Entry], reason: str, removed: Entry | None = None
) -> int:
    """Store `entries` as the next version, made by the person (no model call): its diff from
    the newest, the newest's material count; its number. One transaction, so a generation that
    read the version before finds itself superseded rather than overwriting the change; an
    entry the person `removed` is recorded in it too, so no later regeneration brings it back."""
    from .removals import record_removal  # not on the hooks' path, which only reads state

    with store.transaction() as db:
        if removed is not None:
            record_removal(db, removed, int(time.time() * 1000))
        row = db.execute(
            "SELECT version, entries, material_messages FROM profile_versions "
            "ORDER BY version DESC LIMIT 1"
        ).fetchone()
        before = orjson.loads(row[1]) if row else []
        version = (row[0] if row else 0) + 1
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "rescue, material_messages, reason, notes) VALUES (?, ?, ?, ?, 0, 0, NULL, ?, ?, '')",
            (
                version,
                int(time.time() * 1000),
                orjson.dumps(entries).decode(),
                orjson.dumps(diff_profiles(before, entries)).decode(),
                row[2] if row else 0,
                reason,
            ),
        )
    return version


def is_chinese(entries: list[Entry]) -> bool:
    """The profile's language, from its entries alone (so the same entries, the same answer):
    Chinese when at least half of the claims hold a Han character (and when there are none)."""
    claims = [str(e.get("claim", "")) for e in entries]
    # (`language.is_han`, not a compiled character class: compiling one spanning the CJK
    # blocks costs ~3 ms, paid by every hook that loads the profile)
    return 2 * sum(1 for claim in claims if any(map(is_han, claim))) >= len(claims)


def render_profile(entries: list[Entry], *, chinese: bool | None = None) -> str:
    """The profile as the section the agent reads, its wrapper in the profile's language
    (`chinese`, decided from `entries` when not given); '' when there is nothing to say."""
    wrapper = _CHINESE if (is_chinese(entries) if chinese is None else chinese) else _ENGLISH
    chinese = wrapper is _CHINESE
    blocks = []
    for category, title in wrapper.sections:
        lines = [
            f"- {_escape(e['claim'])}{_dated(e, chinese)}"
            for e in entries
            if e.get("category") == category
        ]
        if lines:
            blocks.append(title + "\n" + "\n".join(lines))
    if not blocks:
        return ""
    return _JOIN.join([wrapper.heading, wrapper.intro, *blocks])


def _dated(entry: Entry, chinese: bool) -> str:
    """When the person last said what the entry observes (its newest traced quote's day, UTC),
    or that they set it themselves; from the entry alone, so the same entry, the same bytes."""
    said, own, own_on = _DATED[chinese]
    times = [s["at"] for s in entry.get("sources") or () if isinstance(s.get("at"), int)]
    if times:
        return said.format(day=_day(max(times)))
    if entry.get("pinned"):
        edited = entry.get("editedAt")
        return own_on.format(day=_day(edited)) if isinstance(edited, int) else own
    return ""


def _day(ms: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


def _escape(text: str) -> str:
    return " ".join(text.split()).replace("{{", "{ {").replace("}}", "} }")


@dataclass(frozen=True)
class FittedProfile:
    """A version's rendered text within the budget, the ids of the entries left out to fit
    it, and of those never injected: no evidence traced to the person's words, or a claim
    another entry already says."""

    text: str
    dropped: tuple[str, ...]
    unsupported: tuple[str, ...] = ()


def fit_profile(entries: list[Entry]) -> FittedProfile:
    """The profile within MAX_ENTRIES and PROFILE_BUDGET: entries placed best evidence first
    while they fit, rendered in the version's order; the others are dropped whole. Only the
    supported ones are candidates (docs/design/profile.md#evidence-is-verified), each claim
    once."""
    chinese = is_chinese(entries)
    order = sorted(range(len(entries)), key=lambda i: _rank(entries[i], i))
    claims: set[str] = set()
    unsupported: set[int] = set()
    for index in order:
        claim = " ".join(str(entries[index].get("claim", "")).split()).casefold()
        if not supported(entries[index]) or claim in claims:
            unsupported.add(index)
        claims.add(claim)
    kept: set[int] = set()
    for index in (i for i in order if i not in unsupported):
        if len(kept) == MAX_ENTRIES:
            break
        trial = [entries[i] for i in sorted(kept | {index})]
        if text_length(render_profile(trial, chinese=chinese)) <= PROFILE_BUDGET:
            kept.add(index)
    text = render_profile([entries[i] for i in sorted(kept)], chinese=chinese)
    dropped = tuple(
        str(e.get("id")) for i, e in enumerate(entries) if i not in kept and i not in unsupported
    )
    withheld = tuple(str(e.get("id")) for i, e in enumerate(entries) if i in unsupported)
    return FittedProfile(text, dropped, withheld)


def _rank(entry: Entry, index: int) -> tuple[int, int, int, int]:
    """Best first: more evidence items, higher confidence, seen more recently, earlier."""
    evidence = entry.get("evidence")
    confidence = entry.get("confidence")
    seen = entry.get("lastSeenAt")
    return (
        -(len(evidence) if isinstance(evidence, list) else 0),
        CONFIDENCES.index(confidence) if confidence in CONFIDENCES else len(CONFIDENCES),
        -(seen if isinstance(seen, int) else 0),
        index,
    )


@dataclass(frozen=True)
class Effective:
    mode: Mode
    text: str
    source: str  # "profile" or "customText"
    dropped: tuple[str, ...] = ()  # profile entries left out to fit the budget (auto mode)
    withheld: str | None = None  # why stored text of the user's is not injected, if it is not


class ProfileState:
    """The user's choices, read from and written to the store; the render is cached by content.

    Every setter writes in one transaction and drops the cached render, so a change shows at
    once; an unchanged state returns the very same string object.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: tuple[tuple[Any, ...], Effective] | None = None
        self._fitted: tuple[int, FittedProfile] | None = None

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

    def copied_snapshot(self) -> CopiedSnapshotJson | None:
        stored = self.store.get_meta(_KEYS["copiedSnapshot"])
        return orjson.loads(stored) if stored else None

    def latest(self) -> tuple[int, list[Entry]] | None:
        return latest_version(self.store)

    def profile_view(self) -> ProfileViewJson | None:
        """The newest version as shown to people and scripts: number, time, notes, entries,
        the entries left out of the injected text (`dropped`, ids) and the budget."""
        row = self.store.db.execute(
            "SELECT version, at, notes, entries FROM profile_versions ORDER BY version DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        entries = orjson.loads(row[3])
        return {
            "version": row[0],
            "generatedAt": row[1],
            "notes": row[2],
            "entries": entries,
            "dropped": list(self._fit(row[0], entries).dropped),
            "unsupported": list(self._fit(row[0], entries).unsupported),
            "budget": {"entries": MAX_ENTRIES, "characters": PROFILE_BUDGET},
        }

    def effective(self) -> Effective:
        """The one text the agent is given, where it comes from, and what it leaves out."""
        latest = self.latest()
        key = (self.mode, self.custom_text, self.auto_extra_text, latest[0] if latest else None)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        mode, custom, extra = key[0], key[1], key[2]
        if mode is Mode.CUSTOM:
            withheld = _unusable(custom, "custom text", MAX_CUSTOM_TEXT)
            text = "" if withheld else custom.strip()
            result = Effective(mode, text, "customText", withheld=withheld)
        else:
            fitted = self._fit(*latest) if latest else FittedProfile("", ())
            withheld = _unusable(extra, "extra text", MAX_EXTRA_TEXT)
            added = "" if withheld else extra.strip()
            text = _JOIN.join(part for part in (fitted.text, added) if part)
            result = Effective(mode, text, "profile", fitted.dropped, withheld)
        self._cache = (key, result)
        return result

    def _fit(self, version: int, entries: list[Entry]) -> FittedProfile:
        if self._fitted is None or self._fitted[0] != version:
            self._fitted = (version, fit_profile(entries))
        return self._fitted[1]

    # -- writing ---------------------------------------------------------------------------

    def set_mode(self, mode: str) -> Mode:
        if mode not in (m.value for m in Mode):
            raise TextRejected(f"mode must be 'auto' or 'custom', got {mode!r}")
        self._write({_KEYS["mode"]: mode})
        return Mode(mode)

    def set_custom_text(self, text: Any) -> str:
        checked = check_text(text, "custom text", MAX_CUSTOM_TEXT)
        self._write({_KEYS["customText"]: checked})
        return checked

    def set_auto_extra_text(self, text: Any) -> str:
        checked = check_text(text, "extra text", MAX_EXTRA_TEXT)
        self._write({_KEYS["autoExtraText"]: checked})
        return checked

    def mark_copied(
        self, text: Any, entries: list[dict[str, Any]] | None = None
    ) -> CopiedSnapshotJson:
        """Record that the user copied the effective text; the time and version are ours."""
        check_text(text, "copied text", MAX_CUSTOM_TEXT)
        latest = self.latest()
        if entries is None:
            entries = latest[1] if latest else []
        snapshot: CopiedSnapshotJson = {
            "text": text,
            "at": int(time.time() * 1000),
            "profileVersion": latest[0] if latest else None,
            "entries": [
                {
                    "id": e.get("id"),
                    "category": e.get("category"),
                    "claim": e.get("claim"),
                    "evidenceQuoteCount": e.get("evidenceQuoteCount"),
                }
                for e in entries
                if isinstance(e, dict)
            ],
            "algorithmVersion": ALGORITHM_VERSION,
        }
        self._write({_KEYS["copiedSnapshot"]: orjson.dumps(snapshot).decode()})
        return snapshot

    def stale_copy(self) -> bool:
        """Whether the effective text differs from the copied one.

        Not for telling the user to copy again: a mere rewording makes it true
        (docs/design/profile.md#a-copy-goes-stale-only-when-its-evidence-changes).
        """
        snapshot = self.copied_snapshot()
        return snapshot is not None and snapshot["text"] != self.effective().text

    def _write(self, values: dict[str, str]) -> None:
        with self.store.transaction():
            for key, value in values.items():
                self.store.set_meta(key, value)
        self._cache = None


def _unusable(text: str, what: str, limit: int) -> str | None:
    """Why stored text (kept by an older dshkit, before the limits) is not injected, if so:
    it is left out whole rather than cut."""
    try:
        check_text(text, what, limit)
    except TextRejected as exc:
        return f"{exc}; it is not injected until it is changed"
    return None
