"""The user profile's entries, the delta contract that updates them, and truncation rescue.

The model answers with a delta (docs/design/profile.md#the-model-answers-with-a-delta):
`entries` holds new and rewritten entries,
`unchangedIds` names entries kept word for word (their bodies are copied from the previous
version), `deletedIds` names deletions. An entry the person pinned (or edited) is kept as they
left it whatever the delta says of it. Anything of the previous version found in neither
list is deleted, but only when the output is proven complete: a truncated answer may simply
not have reached its `unchangedIds` yet, so deletions then fail open
(docs/design/profile.md#a-cut-answer-is-rescued-not-thrown-away).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import Invalid, NotFound
from ..llm.rescue import largest_json_prefix
from ..words import normalise

if TYPE_CHECKING:  # (the shapes: annotations only, so the profile's face loads none of them)
    from .evidence import Checked
    from .wire import DiffJson, DroppedAsRemoved, Entry, RefusedJson

    # Whether an entry says again what the person removed: (the removed entry's id, why) or
    # None.
    RemovedCheck = Callable[[Entry], tuple[str, str] | None]

CATEGORIES = ("A", "B", "C", "D")
# What each category means, in the words the model is asked for it, the injected text heads it
# with and the console shows: (Chinese, English). The one place these names are written.
CATEGORY_LABELS: dict[str, tuple[str, str]] = {
    "A": ("他稳定的特点", "Stable traits"),
    "B": ("在他这里行不通的做法", "Approaches that do not work with them"),
    "C": ("在他这里行得通的做法", "Approaches that work with them"),
    "D": ("还没有定论", "Not settled yet"),
}
CONFIDENCES = ("high", "medium", "low")
# The profile's size (docs/design/profile.md#injected-text-is-byte-stable): stated to the
# model, enforced on its answer, and together well inside the injected text's budget.
MAX_ENTRIES = 30
MAX_CLAIM_CHARS = 100
# The entry fields the model writes; the rest are kept by dshkit.
MODEL_FIELDS = ("id", "category", "claim", "evidence", "confidence")
# Set on an entry the person wrote or pinned: the model is told so, and whatever its delta says
# of it, the entry stays as the person left it.
PINNED = "pinned"


@dataclass
class ParsedOutput:
    """What could be read from one model answer."""

    entries: list[Any] = field(default_factory=list)
    unchanged_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)
    notes: str = ""
    complete: bool = True  # parsed strictly, as a whole: the only proof deletions may follow
    rescue: dict[str, Any] | None = None  # how a broken answer was salvaged, when it was


class ProfileOutputError(Invalid):
    """Nothing usable could be read from the model's answer."""


def parse_output(text: str, truncation_reason: str | None = None) -> ParsedOutput:
    """Read an answer strictly, else rescue what it completed, in three layers
    (docs/design/profile.md#a-cut-answer-is-rescued-not-thrown-away)."""
    body = _strip_fences(text)
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict) and truncation_reason is None:
        return _from_object(value, complete=True)
    return _rescue(body, truncation_reason or "invalid-json")


def _strip_fences(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0] if body.rstrip().endswith("```") else body
    start = body.find("{")
    return body[start:] if start > 0 else body


def _from_object(value: dict[str, Any], complete: bool) -> ParsedOutput:
    return ParsedOutput(
        entries=[e for e in _list(value.get("entries")) if isinstance(e, dict)],
        unchanged_ids=[str(i) for i in _list(value.get("unchangedIds")) if isinstance(i, str)],
        deleted_ids=[str(i) for i in _list(value.get("deletedIds")) if isinstance(i, str)],
        notes=notes if isinstance(notes := value.get("notes"), str) else "",
        complete=complete,
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rescue(body: str, reason: str) -> ParsedOutput:
    # Layer 1: the largest prefix that is valid JSON once its open brackets are closed.
    prefix = largest_json_prefix(body)
    value, cut = prefix if prefix is not None else ({}, 0)
    result = _from_object(value if isinstance(value, dict) else {}, complete=False)
    salvaged: list[str] = []
    for key, target in (("unchangedIds", result.unchanged_ids), ("deletedIds", result.deleted_ids)):
        # Layer 2: a top-level key's value, complete even if the outer object is not.
        whole = _complete_value(body, key)
        if isinstance(whole, list):
            target[:] = [str(i) for i in whole if isinstance(i, str)]
            continue
        # Layer 3: the ids written out in full in an array that never closed.
        more = [i for i in _ids_in_open_array(body, key) if i not in target]
        target.extend(more)
        salvaged.extend(more)
    if not (result.entries or result.unchanged_ids or result.deleted_ids):
        raise ProfileOutputError(f"the model's answer holds no usable JSON: {body[:200]!r}")
    result.rescue = {
        "partial": True,
        "reason": reason,
        "droppedTailChars": len(body) - cut,
        "rescuedEntries": len(result.entries),
        "verbatimIds": len(result.unchanged_ids),
        "idsSalvagedFromRaw": salvaged,
    }
    return result


def _complete_value(text: str, key: str) -> Any:
    match = re.search(rf'"{re.escape(key)}"\s*:\s*', text)
    if match is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(text, match.end())[0]
    except json.JSONDecodeError:
        return None


def _ids_in_open_array(text: str, key: str) -> list[str]:
    match = re.search(rf'"{re.escape(key)}"\s*:\s*\[', text)
    if match is None:
        return []
    ids = []
    for found in re.finditer(r'"((?:[^"\\]|\\.)*)"|[\]}]', text[match.end() :]):
        if found.group(1) is None:
            break  # the array closed (layer 2 would have read it) or the text went on
        ids.append(json.loads(f'"{found.group(1)}"'))
    return ids


@dataclass
class Assembly:
    """A new profile version built from the previous one and a parsed answer."""

    entries: list[Entry]
    deleted_by_contract: list[str]
    deletions_honored: bool
    warnings: list[str]
    # Entries of the answer dropped because they say again what the person removed.
    dropped_as_removed: list[DroppedAsRemoved] = field(default_factory=list)
    # Entries of the answer that did not go in as written, each with why and what was kept.
    refused: list[RefusedJson] = field(default_factory=list)

    @property
    def unsupported(self) -> int:
        return sum(1 for r in self.refused if r["kind"] in ("unsupported", "echo"))


@dataclass
class Checks:
    """What `assemble` asks of the world: the check of an answer's evidence (numbers of this
    prompt's material resolve), the check of a kept entry's old evidence (quotes only: the
    numbers of an older prompt mean nothing now), whether a claim echoes the prompt, whether
    an entry says again what the person removed, and a new id for a new entry."""

    evidence: Callable[[list[str]], Checked]
    requote: Callable[[list[str]], Checked]
    echoes: Callable[[str], bool] = lambda claim: False
    removed: RemovedCheck | None = None
    new_id: Callable[[str], str] | None = None  # the id a new entry gets, given the proposed


def supported(entry: Entry) -> bool:
    """Whether an entry may reach the agent: the person pinned or wrote it, or at least one of
    its evidence quotes was found in their own words
    (docs/design/profile.md#evidence-is-verified)."""
    return bool(entry.get(PINNED) or entry.get("sources"))


def assemble(
    previous: list[Entry],
    parsed: ParsedOutput,
    now_ms: int,
    material_messages: int,
    checks: Checks,
) -> Assembly:
    """Apply the delta contract and its field table
    (docs/design/profile.md#the-model-answers-with-a-delta), safely
    (docs/design/profile.md#a-delta-never-loses-a-good-entry): every entry the model writes
    has its evidence verified; a rewrite that is invalid, unsupported, too long, an echo of
    the prompt or a removed claim leaves the entry as it was; a new entry gets its id from
    dshkit (`checks.new_id`), so no id the model writes can replace another entry; a claim
    already in the profile (same words, or nearly in the same category) merges into it; kept
    entries keep their order, new ones follow; new entries past MAX_ENTRIES are refused."""
    build = _Build(previous, now_ms, material_messages, checks)
    for index, raw in enumerate(parsed.entries):
        if index >= MAX_ANSWER_ENTRIES:
            rest = len(parsed.entries) - index
            build.warnings.append(
                f"the answer's entries past the first {MAX_ANSWER_ENTRIES} were not read "
                f"({rest} more)"
            )
            break
        build.take(raw)
    for entry_id in parsed.unchanged_ids:
        build.keep_unchanged(entry_id)
    for entry_id in parsed.deleted_ids:
        if entry_id not in build.before:
            build.warnings.append(f"deletedIds names {entry_id!r}, which the last version lacks")
    entries, deleted = build.result(parsed)
    return Assembly(
        entries,
        deleted,
        parsed.complete or not deleted,
        build.warnings,
        build.dropped,
        build.refused,
    )


MAX_ANSWER_ENTRIES = 2 * MAX_ENTRIES  # entries of one answer read at most
COLLIDING = 0.3  # a "rewrite" less like the entry it names than this is a new entry


class _Build:
    """One assembly in progress: the previous entries by id, what is placed, what refused."""

    def __init__(
        self, previous: list[Entry], now_ms: int, material_messages: int, checks: Checks
    ) -> None:
        self.before = {e["id"]: e for e in previous}
        self.order = [e["id"] for e in previous]
        self.now, self.material, self.checks = now_ms, material_messages, checks
        self.placed: dict[str, Entry] = {}  # previous ids kept (or rewritten), by id
        self.kept_by_refusal: set[str] = set()  # kept because their rewrite was refused
        self.new: list[Entry] = []
        self.warnings: list[str] = []
        self.dropped: list[DroppedAsRemoved] = []
        self.refused: list[RefusedJson] = []
        # The person's pinned entries first, as they are: the delta cannot change or drop them.
        for kept in previous:
            if kept.get(PINNED):
                self.placed[kept["id"]] = {**kept, "lastSeenAt": now_ms}

    # -- one entry of the answer ---------------------------------------------------------

    def take(self, raw: dict[str, Any]) -> None:
        entry, problem = _valid(raw)
        proposed = str(raw.get("id", "")).strip()
        if entry is None:
            target = proposed if proposed in self.before else None
            self._refuse(raw, "invalid", problem, target)
            return
        if entry["id"] in self.placed and entry["id"] in self.before:
            if self.before[entry["id"]].get(PINNED):
                self.warnings.append(
                    f"entry {entry['id']!r} is pinned: the person's words are kept"
                )
                self._confirm(entry["id"], entry)
            else:
                self.warnings.append(f"entry {entry['id']!r} given twice: the first one is kept")
            return
        target = self._target(entry)
        merged = None if target is not None else self._same_claim(entry)
        if merged is not None:
            self._merge(merged, entry)
            return
        old = self.before.get(target) if target is not None else None
        if old is not None and all(old.get(f) == entry[f] for f in MODEL_FIELDS):
            self.keep_unchanged(target or "")  # copied out in full: still unchanged
            return
        if len(entry["claim"]) > MAX_CLAIM_CHARS:
            why = f"the claim is {len(entry['claim'])} characters; at most {MAX_CLAIM_CHARS}"
            self._refuse(raw, "invalid", why, target)
            return
        if self.checks.echoes(entry["claim"]):
            why = "the claim repeats the prompt's own words, not anything the person said"
            self._refuse(raw, "echo", why, target)
            return
        if self._removed(entry, target, raw):
            return
        checked = self.checks.evidence(entry["evidence"])
        self.warnings.extend(f"entry {proposed!r}: {note}" for note in checked.notes)
        if not checked.sources:
            why = "no evidence traced to the person's own words: " + "; ".join(checked.untraced[:3])
            self._refuse(raw, "unsupported", why, target)
            return
        written = {
            **entry,
            "evidence": checked.quotes,
            "sources": checked.sources,
            "evidenceQuoteCount": len(checked.sources),
            "lastEvidenceMessages": self.material,
            "firstSeenAt": old["firstSeenAt"] if old else self.now,
            "lastSeenAt": self.now,
            "timesSeen": (old["timesSeen"] if old else 0) + 1,
        }
        if target is not None:
            self.placed[target] = {**written, "id": target}
        else:
            # Its id is given at the end, once it is sure to stay; until then one of its own.
            self.new.append({**written, "id": f"{_NEW}{len(self.new)}", "proposed": proposed})

    def _target(self, entry: Entry) -> str | None:
        """The previous entry this one rewrites: the one whose id it has, unless its claim is
        nothing like that entry's (a new entry under an id already taken, which must not
        replace it: docs/design/profile.md#dshkit-gives-the-ids)."""
        old = self.before.get(entry["id"])
        if old is None:
            return None
        if _likeness(old["claim"], entry["claim"]) < COLLIDING:
            self.warnings.append(
                f"entry {entry['id']!r} of the answer is not a rewrite of the entry with that "
                "id (their claims differ): it is taken as a new entry, and the old one stays"
            )
            self.placed.setdefault(entry["id"], {**old, "lastSeenAt": self.now})
            return None
        return str(entry["id"])

    def _same_claim(self, entry: Entry) -> str | None:
        """The id of a kept, previous or new entry saying the same (a merge), or None."""
        from difflib import SequenceMatcher  # not on the hooks' path, which only renders

        claim = normalise(entry["claim"])
        for other in [*self.placed.values(), *self.before.values(), *self.new]:
            said = normalise(str(other.get("claim", "")))
            if said == claim or (
                other.get("category") == entry["category"]
                and SequenceMatcher(None, said, claim, autojunk=False).ratio() >= SAME_CLAIM
            ):
                return str(other["id"])
        return None

    def _merge(self, into: str, entry: Entry) -> None:
        """The same claim said again under another id: the entry it repeats stays as it is,
        and gains the new evidence if it had none traced."""
        self.warnings.append(f"entry {entry['id']!r} says what entry {into!r} says: merged into it")
        if into.startswith(_NEW):
            return  # a new entry of this answer already says it
        self._confirm(into, entry)

    def _confirm(self, entry_id: str, entry: Entry) -> None:
        """Keep `entry_id` as it was; it gains `entry`'s evidence when it had none traced."""
        kept = self.placed.get(entry_id) or {**self.before[entry_id], "lastSeenAt": self.now}
        if not kept.get("sources") and not kept.get(PINNED):  # the person's entry stays theirs
            checked = self.checks.evidence(entry["evidence"])
            if checked.sources:
                kept = {**kept, "evidence": checked.quotes, "sources": checked.sources}
                kept["evidenceQuoteCount"] = len(checked.sources)
        self.placed[entry_id] = kept

    def _removed(self, entry: Entry, target: str | None, raw: dict[str, Any]) -> bool:
        if self.checks.removed is None:
            return False
        # A proposed id counts too: the prompt lists the removed ids as not to be used again.
        match = self.checks.removed(entry)
        if match is None:
            return False
        removed_id, why = match
        self.dropped.append(
            {
                "id": entry["id"],
                "category": entry["category"],
                "claim": entry["claim"],
                "removedId": removed_id,
                "why": why,
            }
        )
        self.warnings.append(f"entry {entry['id']!r} dropped: the person removed it ({why})")
        self._refuse(raw, "removed", f"the person removed it ({why})", target, quiet=True)
        return True

    def _refuse(
        self,
        raw: dict[str, Any],
        kind: str,
        why: str,
        target: str | None,
        *,
        quiet: bool = False,
    ) -> None:
        """Record an entry of the answer refused; a rewrite of a previous entry keeps it."""
        kept = None
        if target is not None:
            kept = target
            self.kept_by_refusal.add(target)
            if target not in self.placed:
                self.placed[target] = {**self.before[target], "lastSeenAt": self.now}
        evidence = raw.get("evidence")
        self.refused.append(
            {
                "id": str(raw.get("id", "")),
                "claim": str(raw.get("claim", ""))[: 2 * MAX_CLAIM_CHARS],
                "evidence": [str(e)[:200] for e in evidence][:MAX_EVIDENCE_SHOWN]
                if isinstance(evidence, list)
                else [],
                "kind": kind,
                "why": why,
                "kept": kept,
            }
        )
        if not quiet:
            self.warnings.append(
                f"entry {raw.get('id')!r} refused ({kind}): {why}"
                + (f"; entry {kept!r} is kept as it was" if kept else "")
            )

    # -- the rest of the delta -------------------------------------------------------------

    def keep_unchanged(self, entry_id: str) -> None:
        if entry_id in self.placed:
            return  # entries win over unchangedIds
        old = self.before.get(entry_id)
        if old is None:
            self.warnings.append(f"unchangedIds names {entry_id!r}, which the last version lacks")
            return
        self.placed[entry_id] = {**old, "lastSeenAt": self.now}

    def result(self, parsed: ParsedOutput) -> tuple[list[Entry], list[str]]:
        """The entries in order (kept ones as before, then new ones), and the deleted ids."""
        deleted = [i for i in self.order if i not in self.placed]
        if deleted and not parsed.complete:
            # Unproven deletions fail open: the entry lives one more round, unchanged.
            for entry_id in deleted:
                self.placed[entry_id] = self.before[entry_id]
        kept = [self._requoted(self.placed[i]) for i in self.order if i in self.placed]
        room = MAX_ENTRIES - len(kept)
        new: list[Entry] = []
        for entry in self.new:
            if len(new) >= max(room, 0):
                self.refused.append(
                    {
                        "id": entry["proposed"],
                        "claim": entry["claim"],
                        "evidence": entry["evidence"],
                        "kind": "over-cap",
                        "why": f"the profile holds at most {MAX_ENTRIES} entries",
                        "kept": None,
                    }
                )
                self.warnings.append(
                    f"entry {entry['proposed']!r} refused: the profile holds at most {MAX_ENTRIES} "
                    "entries"
                )
                continue
            proposed = entry.pop("proposed")
            given = self.checks.new_id(proposed) if self.checks.new_id else proposed
            new.append({**entry, "id": given})
        return kept + new, deleted

    def _requoted(self, entry: Entry) -> Entry:
        """A kept entry with no traced evidence (from before evidence was verified) gains it
        when its quotes are still found in the person's words."""
        if entry.get("sources") is not None or not isinstance(entry.get("evidence"), list):
            return entry
        checked = self.checks.requote([str(e) for e in entry["evidence"]])
        if not checked.sources:
            return entry
        return {**entry, "evidence": checked.quotes, "sources": checked.sources}


_NEW = "\0new"  # the id of a new entry until it is given one (no model writes a NUL)
MAX_EVIDENCE_SHOWN = 5  # of a refused entry's evidence, in the run's report
SAME_CLAIM = 0.8  # normalised claims this alike (difflib), in one category, are one claim


def _likeness(a: str, b: str) -> float:
    """How alike two claims are: 1 when one holds the other, else difflib's ratio."""
    from difflib import SequenceMatcher

    a, b = normalise(a), normalise(b)
    if a and b and (a in b or b in a):
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def edit_entry(
    entries: list[Entry],
    entry_id: str,
    now_ms: int,
    *,
    claim: str | None = None,
    category: str | None = None,
    pinned: bool | None = None,
) -> list[Entry]:
    """The entries with one changed by the person: a new claim or category (which pins it,
    so the next regeneration keeps their words), or pinned / unpinned. NotFound when no entry
    has `entry_id`; Invalid for a category or claim that is not one."""
    if category is not None and category not in CATEGORIES:
        raise Invalid(f"category must be one of {', '.join(CATEGORIES)}", field="category")
    if claim is not None:
        claim = " ".join(claim.split())
        if not claim:
            raise Invalid("the claim is empty", field="claim")
    found = False
    out: list[Entry] = []
    for entry in entries:
        if entry["id"] != entry_id:
            out.append(entry)
            continue
        found = True
        changed = dict(entry)
        if claim is not None and claim != entry["claim"]:
            changed["claim"], changed["editedAt"] = claim, now_ms
        if category is not None and category != entry["category"]:
            changed["category"], changed["editedAt"] = category, now_ms
        if pinned is not None:
            changed[PINNED] = pinned
        elif "editedAt" in changed and changed != entry:
            changed[PINNED] = True  # an edit is kept through regeneration
        if not changed.get(PINNED):
            changed.pop(PINNED, None)
        out.append(changed)
    if not found:
        raise NotFound(f"the profile has no entry {entry_id!r}", field="id")
    return out


def remove_entry(entries: list[Entry], entry_id: str) -> list[Entry]:
    """The entries without `entry_id` (NotFound when none has it)."""
    out = [e for e in entries if e["id"] != entry_id]
    if len(out) == len(entries):
        raise NotFound(f"the profile has no entry {entry_id!r}", field="id")
    return out


def _valid(raw: dict[str, Any]) -> tuple[Entry | None, str]:
    entry_id, claim = raw.get("id"), raw.get("claim")
    if not isinstance(entry_id, str) or not entry_id.strip():
        return None, f"no id in {orjson.dumps(raw).decode()[:120]}"
    if raw.get("category") not in CATEGORIES:
        return None, f"{entry_id}: category must be one of {CATEGORIES}"
    if not isinstance(claim, str) or not claim.strip():
        return None, f"{entry_id}: no claim"
    evidence = raw.get("evidence")
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list) or not evidence:
        return None, f"{entry_id}: no evidence"
    confidence = raw.get("confidence") if raw.get("confidence") in CONFIDENCES else "low"
    return {
        "id": entry_id.strip(),
        "category": raw["category"],
        "claim": claim.strip(),
        "evidence": [str(e) for e in evidence],
        "confidence": confidence,
    }, ""


def diff_profiles(old: list[Entry], new: list[Entry]) -> DiffJson:
    """Entry-level changes by id: `modified` is a same-id entry whose claim or category moved."""
    before = {e["id"]: e for e in old}
    after = {e["id"]: e for e in new}
    changed = [
        i
        for i in after
        if i in before
        and (before[i]["claim"], before[i]["category"]) != (after[i]["claim"], after[i]["category"])
    ]
    return {
        "added": [i for i in after if i not in before],
        "removed": [i for i in before if i not in after],
        "modified": changed,
        "unchanged": [i for i in after if i in before and i not in changed],
    }


def spurious_rate(diff: DiffJson, previous_count: int, unsupported: int = 0) -> float:
    """Changes no material asked for, per entry of the previous version (per entry written,
    the first time): rewordings, and entries written with nothing the person said behind them."""
    changes = len(diff["modified"]) + unsupported
    base = previous_count or len(diff["added"]) + unsupported
    return changes / base if base else 0.0


@dataclass(frozen=True)
class Trigger:
    min_messages: int = 12
    min_sessions: int = 3


def should_regenerate(
    watermark: dict[str, int] | None, human_messages: int, sessions: int, trigger: Trigger
) -> tuple[bool, str]:
    """Whether enough new material arrived, first criterion met wins; and why, in words
    (docs/design/profile.md#a-new-version-needs-enough-new-material)."""
    if watermark is None:
        if human_messages >= trigger.min_messages:
            return True, (
                f"first profile: enough material "
                f"({human_messages}/{trigger.min_messages} human messages)"
            )
        return False, (
            f"first profile: not enough material yet "
            f"({human_messages}/{trigger.min_messages} human messages)"
        )
    new_messages = human_messages - watermark["humanMessages"]
    new_sessions = sessions - watermark["sessions"]
    if new_messages >= trigger.min_messages:
        return True, f"{new_messages} new human messages (threshold {trigger.min_messages})"
    if new_sessions >= trigger.min_sessions:
        return True, f"{new_sessions} new sessions (threshold {trigger.min_sessions})"
    return False, (
        f"below both thresholds: {new_messages}/{trigger.min_messages} new human "
        f"messages, {new_sessions}/{trigger.min_sessions} new sessions"
    )
