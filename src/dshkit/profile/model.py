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
from typing import Any

import orjson

from ..errors import Invalid, NotFound
from ..llm.rescue import largest_json_prefix
from .wire import DiffJson, DroppedAsRemoved, Entry

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


# Whether an entry says again what the person removed: (the removed entry's id, why) or None.
RemovedCheck = Callable[[Entry], "tuple[str, str] | None"]


def assemble(
    previous: list[Entry],
    parsed: ParsedOutput,
    now_ms: int,
    material_messages: int,
    removed: RemovedCheck | None = None,
) -> Assembly:
    """Apply the delta contract and its field table
    (docs/design/profile.md#the-model-answers-with-a-delta). An entry the model writes (new
    or rewritten) that `removed` matches is dropped: a rewrite leaves the entry as it was."""
    before = {e["id"]: e for e in previous}
    entries: list[Entry] = []
    placed: set[str] = set()
    warnings: list[str] = []
    dropped: list[DroppedAsRemoved] = []
    # The person's pinned entries first, as they are: the delta cannot change or drop them.
    for kept in previous:
        if kept.get(PINNED):
            placed.add(kept["id"])
            entries.append({**kept, "lastSeenAt": now_ms})
    for raw in parsed.entries:
        entry, problem = _valid(raw)
        if entry is None:
            warnings.append(f"entry dropped: {problem}")
            continue
        if entry["id"] in placed and before.get(entry["id"], {}).get(PINNED):
            warnings.append(f"entry {entry['id']!r} is pinned: the person's words are kept")
            continue
        if entry["id"] in placed:
            warnings.append(f"entry {entry['id']!r} given twice: the first one is kept")
            continue
        old = before.get(entry["id"])
        unchanged = old is not None and all(old.get(f) == entry[f] for f in MODEL_FIELDS)
        match = None if unchanged or removed is None else removed(entry)
        if match is not None:
            # The person removed this: it does not come back, whatever the evidence.
            removed_id, why = match
            dropped.append(
                {
                    "id": entry["id"],
                    "category": entry["category"],
                    "claim": entry["claim"],
                    "removedId": removed_id,
                    "why": why,
                }
            )
            warnings.append(f"entry {entry['id']!r} dropped: the person removed it ({why})")
            if old is None:
                continue
            entry = {f: old[f] for f in MODEL_FIELDS}  # a rewrite into it: the entry as it was
            unchanged = True
        placed.add(entry["id"])
        if unchanged:
            assert old is not None
            # The model copied an unchanged entry out in full: it is still unchanged.
            entries.append({**old, "lastSeenAt": now_ms})
            continue
        entries.append(
            {
                **entry,
                "evidenceQuoteCount": len(entry["evidence"]),
                "lastEvidenceMessages": material_messages,
                "firstSeenAt": old["firstSeenAt"] if old else now_ms,
                "lastSeenAt": now_ms,
                "timesSeen": (old["timesSeen"] if old else 0) + 1,
            }
        )
    for entry_id in parsed.unchanged_ids:
        if entry_id in placed:
            continue  # entries win over unchangedIds
        old = before.get(entry_id)
        if old is None:
            warnings.append(f"unchangedIds names {entry_id!r}, which the last version lacks")
            continue
        placed.add(entry_id)
        entries.append({**old, "lastSeenAt": now_ms})
    deleted = [entry_id for entry_id in before if entry_id not in placed]
    if deleted and not parsed.complete:
        # Unproven deletions fail open: the entry lives one more round, unchanged.
        entries.extend(before[entry_id] for entry_id in deleted)
    return Assembly(entries, deleted, parsed.complete or not deleted, warnings, dropped)


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


def spurious_rate(diff: DiffJson, previous_count: int) -> float:
    """Rewordings per entry of the previous version: changes no new material asked for."""
    return len(diff["modified"]) / previous_count if previous_count else 0.0


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
