"""Memory records in the store: append-only, bitemporal, with their source and its grade.

A record is never rewritten. What changes is only how it stands: a later fact about the same
subject closes an earlier one (its valid time ends where the new one's begins, its record
time is marked expired, and it names the record that superseded it); a quarantine is set or
lifted; a skill draft is accepted or rejected. Both records of a supersession stay queryable
with their times. A record whose superseding record is gone (forgotten) is current again.

Supersession verdicts: a quarantined record supersedes nothing; a record of a lower grade
(the person's words > tool evidence > the model's own claim) does not close one of a higher
grade, it is recorded as superseded by it; a record older in valid time than the current one
is recorded as closed where the current one begins.

The text is indexed in `memory_fts` (FTS5, trigram: Chinese has no spaces) under the record's
id, written in the same transaction.
"""

from __future__ import annotations

import time

import orjson

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ..provenance.injection import Verdict
    from ..store import Store
    from .wire import MemoryCountsJson, RecordJson
    from .workspace import Workspace

FACT, EXPERIENCE, NEGATIVE, SKILL = "fact", "experience", "negative", "skill"
KINDS = (FACT, EXPERIENCE, NEGATIVE, SKILL)
PERSON, TOOL, MODEL = "person", "tool", "model"
GRADES = {PERSON: 3, TOOL: 2, MODEL: 1}
HARVEST_LEASE = "memory-harvest"  # one harvest at a time per store
PROPOSED, ACCEPTED, REJECTED = "proposed", "accepted", "rejected"  # a skill's state
# A record learned on its own while `[memory] confirm` is on: waits for the person (then
# accepted or rejected); given to no session and closing nothing until accepted.
PENDING = "pending"
# What a person's review kept out: given to no session, never standing in a supersession.
NOT_STANDING = (PENDING, REJECTED)

COLUMNS = (
    "id, kind, subject, text, detail, workspace, remote, valid_from, valid_to, recorded_at, "
    "expired_at, superseded_by, harness, session_id, seq, grade, quarantined, "
    "quarantine_reason, state"
)
# Current: not closed by a record that still exists.
CURRENT = "NOT EXISTS (SELECT 1 FROM memory_records n WHERE n.id = memory_records.superseded_by)"
SAME_WORKSPACE = "workspace = ? AND remote IS ?"


def now_ms() -> int:
    return int(time.time() * 1000)


class Record:
    """One memory record as stored."""

    __slots__ = (
        "detail",
        "expired_at",
        "grade",
        "harness",
        "id",
        "kind",
        "quarantine_reason",
        "quarantined",
        "recorded_at",
        "remote",
        "seq",
        "session_id",
        "state",
        "subject",
        "superseded_by",
        "text",
        "valid_from",
        "valid_to",
        "workspace",
    )

    def __init__(self, row: Sequence[Any]) -> None:
        (
            self.id,
            self.kind,
            self.subject,
            self.text,
            detail,
            self.workspace,
            self.remote,
            self.valid_from,
            self.valid_to,
            self.recorded_at,
            self.expired_at,
            self.superseded_by,
            self.harness,
            self.session_id,
            self.seq,
            self.grade,
            quarantined,
            self.quarantine_reason,
            self.state,
        ) = row
        self.detail: dict[str, Any] = orjson.loads(detail) if detail else {}
        self.quarantined = bool(quarantined)

    @property
    def source(self) -> str:
        """Where it came from, as a person or the agent names it: harness:session#seq."""
        seq = "" if self.seq is None else f"#{self.seq}"
        return f"{self.harness}:{self.session_id}{seq}"

    def as_json(self, current: bool | None = None) -> RecordJson:
        found: RecordJson = {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "text": self.text,
            "detail": self.detail,
            "workspace": {"root": self.workspace, "remote": self.remote},
            "validFrom": self.valid_from,
            "validTo": self.valid_to,
            "recordedAt": self.recorded_at,
            "expiredAt": self.expired_at,
            "supersededBy": self.superseded_by,
            "source": {"harness": self.harness, "sessionId": self.session_id, "seq": self.seq},
            "grade": self.grade,
            "quarantined": self.quarantined,
            "quarantineReason": self.quarantine_reason,
            "state": self.state or None,
        }
        if current is not None:
            found["current"] = current
        return found


class Draft:
    """A record to be written: what the harvest found, before it has an id."""

    __slots__ = (
        "detail",
        "grade",
        "kind",
        "quarantine",
        "say",
        "scanned",
        "seq",
        "subject",
        "text",
        "valid_from",
    )

    def __init__(
        self,
        kind: str,
        text: str,
        *,
        grade: str,
        seq: int | None,
        valid_from: int,
        subject: str = "",
        detail: dict[str, Any] | None = None,
        scanned: tuple[str, ...] = (),
        say: Callable[[str], str] | None = None,
    ) -> None:
        self.kind = kind
        self.text = text
        self.grade = grade
        self.seq = seq
        self.valid_from = valid_from
        self.subject = subject
        self.detail = detail or {}
        # The full source texts the record was made from (scanned whole before any clipping).
        self.scanned = scanned
        self.quarantine: str | None = None
        # dshkit's template for the text, given the language (`templates`): the harvest says
        # it in its session's language once it has read the person's words.
        self.say = say

    @property
    def digest(self) -> str:
        import hashlib  # (here: a session's start reads memory, it takes no digest)

        return hashlib.sha256(f"{self.kind}\0{self.subject}\0{self.text}".encode()).hexdigest()[:32]


def scan_as(grade: str, *texts: str) -> Verdict:
    """The poisoning scanner's verdict on a record's texts, as its grade reads them: the
    person's own words may ask to be remembered and be addressed to the agent (that is what
    "remember" means); every other finding stands for them too."""
    from ..provenance.injection import PERSON_MAY, scan

    verdict = scan(*texts)
    return verdict.without(*PERSON_MAY) if grade == PERSON else verdict


def rescanned(record: Record, store: Store | None = None) -> Verdict:
    """`scan_as` on a stored record, whole, now (the scanner may know more than at write).

    With `store`, the verdict the same scanner reached on the same texts is read back from
    `memory_scans` instead (the scanner's model costs milliseconds a record on a session's
    start); a new verdict is kept there when the store takes the write."""
    detail = orjson.dumps(record.detail).decode()
    if store is None or record.id is None:
        return scan_as(record.grade, record.text, record.subject, detail)
    import contextlib
    import zlib

    from ..provenance.injection import Verdict, version
    from ..store import StoreError

    texts = "\0".join((record.grade, record.text, record.subject, detail)).encode()
    # The texts' checksum and length: they change only by dshkit's own hand (a state, a
    # redaction), and `redact_stored` drops the verdicts it makes stale.
    scanned_by = f"{version()}|{zlib.crc32(texts):08x}.{len(texts)}"
    row = store.db.execute(
        "SELECT scanned_by, findings FROM memory_scans WHERE record_id = ?", (record.id,)
    ).fetchone()
    if row is not None and row[0] == scanned_by:
        kept = orjson.loads(row[1])
        return Verdict(tuple((str(kind), str(sample)) for kind, sample in kept))
    verdict = scan_as(record.grade, record.text, record.subject, detail)
    # A store busy or read-only: the verdict stands, kept another time.
    with contextlib.suppress(StoreError):
        store.db.execute(
            "INSERT OR REPLACE INTO memory_scans (record_id, scanned_by, findings) "
            "VALUES (?, ?, ?)",
            (record.id, scanned_by, orjson.dumps(verdict.findings).decode()),
        )
    return verdict


def add(
    store: Store,
    workspace: Workspace,
    source: tuple[str, str],
    draft: Draft,
    *,
    state: str = "",
) -> int | None:
    """Write `draft` as a record of `workspace` from the session `source` (harness, id), with
    its supersession verdict, inside the caller's transaction; None when the very record was
    harvested from that session before."""
    verdict = scan_as(draft.grade, draft.text, *draft.scanned, orjson.dumps(draft.detail).decode())
    reason = draft.quarantine or (None if verdict.clean else verdict.reason)
    redact_draft(draft)  # scanned as it was seen; stored with no secret in it
    recorded = now_ms()
    cursor = store.db.execute(
        "INSERT OR IGNORE INTO memory_records (kind, subject, text, detail, workspace, remote, "
        "valid_from, recorded_at, harness, session_id, seq, grade, digest, quarantined, "
        "quarantine_reason, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            draft.kind,
            draft.subject,
            draft.text,
            orjson.dumps(draft.detail).decode(),
            workspace.root,
            workspace.remote,
            draft.valid_from,
            recorded,
            *source,
            draft.seq,
            draft.grade,
            draft.digest,
            int(reason is not None),
            reason,
            state,
        ),
    )
    if not cursor.rowcount:
        return None
    new = int(cursor.lastrowid or 0)
    store.db.execute("INSERT INTO memory_fts (rowid, text) VALUES (?, ?)", (new, draft.text))
    if (
        draft.kind == FACT
        and reason is None
        and state != PENDING
        and (draft.subject or draft.detail.get("supersedes"))
    ):
        _supersede(store, workspace, new, draft, recorded)
    return new


def redact_draft(draft: Draft) -> None:
    """Replace every secret in what `draft` will store (its text, subject and detail, every
    string in it) by the provenance layer's marker (`[secret: <kind>]`): a key in a tool's
    output or in the person's "remember …" is never kept, nor handed to a later session."""
    from ..provenance.secrets import redact

    draft.text = redact(draft.text).text
    draft.subject = redact(draft.subject).text
    draft.detail = _redacted(draft.detail, redact)


# The meta key that says the stored records went through `redact_stored` (its value the
# version of that step): a harvest runs it once on a store written before redaction at write.
REDACTED_META = "memory.redacted-at-rest"
REDACTED_VERSION = "1"
REDACT_BATCH = 200


def redact_stored(store: Store) -> int:
    """Redact, in place, every stored record's text, subject and detail (records harvested
    before secrets were redacted at write, or by an older detector), leaving no byte of a
    secret: each changed record's index entry is deleted and written again, the index merged
    (no segment keeps a trigram of it), and the WAL checkpointed, as `forget` does; the
    store's secure_delete zeroes what the old cells took. A record keeps its id, times,
    grade and source; its digest follows its new words (a record that redacts to one already
    there is kept apart by its id). How many records changed; marks the store as done."""
    from ..provenance.secrets import redact

    changed = 0
    last = 0
    while True:
        with store.transaction() as db:
            rows = db.execute(
                "SELECT id, kind, subject, text, detail, harness, session_id FROM memory_records "
                "WHERE id > ? ORDER BY id LIMIT ?",
                (last, REDACT_BATCH),
            ).fetchall()
            for ident, kind, subject, text, detail, harness, session_id in rows:
                before = orjson.loads(detail) if detail else {}
                now = Draft(kind, redact(text).text, grade="", seq=None, valid_from=0)
                now.subject = redact(subject).text
                now.detail = _redacted(before, redact)
                if (now.text, now.subject, now.detail) == (text, subject, before):
                    continue
                digest = now.digest
                if db.execute(
                    "SELECT 1 FROM memory_records WHERE harness IS ? AND session_id IS ? "
                    "AND kind = ? AND digest = ? AND id != ?",
                    (harness, session_id, kind, digest, ident),
                ).fetchone():
                    digest = f"{digest[:24]}{ident:08x}"[-32:]
                db.execute("DELETE FROM memory_fts WHERE rowid = ?", (ident,))
                db.execute("DELETE FROM memory_scans WHERE record_id = ?", (ident,))
                db.execute(
                    "UPDATE memory_records SET text = ?, subject = ?, detail = ?, digest = ? "
                    "WHERE id = ?",
                    (now.text, now.subject, orjson.dumps(now.detail).decode(), digest, ident),
                )
                db.execute("INSERT INTO memory_fts (rowid, text) VALUES (?, ?)", (ident, now.text))
                changed += 1
        if len(rows) < REDACT_BATCH:
            break
        last = rows[-1][0]
    with store.transaction() as db:
        if changed:
            db.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
        store.set_meta(REDACTED_META, REDACTED_VERSION)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return changed


def _redacted(value: Any, redact: Any) -> Any:
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {key: _redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    return value


def _supersede(store: Store, workspace: Workspace, new: int, draft: Draft, at: int) -> None:
    # The current facts of its subject, and the one it names (the model's delta names it by id).
    named = draft.detail.get("supersedes")
    rows = store.db.execute(
        f"SELECT id, valid_from, grade, text FROM memory_records WHERE {SAME_WORKSPACE} "
        f"AND kind = ? AND (subject = ? AND subject != '' OR id = ?) AND id != ? "
        f"AND quarantined = 0 AND state NOT IN ('{PENDING}', '{REJECTED}') AND {CURRENT}",
        (
            workspace.root,
            workspace.remote,
            FACT,
            draft.subject,
            named if isinstance(named, int) else -1,
            new,
        ),
    ).fetchall()
    rank = GRADES.get(draft.grade, 0)
    for old, valid_from, grade, text in rows:
        if text == draft.text:
            continue  # the same fact said again: both stand
        older_in_time = valid_from > draft.valid_from
        if older_in_time or GRADES.get(grade, 0) > rank:
            # The new record loses: it is closed where (or as) the standing one holds.
            end = valid_from if older_in_time else draft.valid_from
            _close(store, new, old, end, at, "older" if older_in_time else "lower-grade")
            return
    for old, _valid_from, _grade, text in rows:
        if text != draft.text:
            _close(store, old, new, draft.valid_from, at, "superseded")


def resolve(store: Store, workspace: Workspace, ids: Sequence[int], at: int | None = None) -> int:
    """Settle supersession between the records `ids`, just moved into `workspace` (a rekey),
    and the records it had: each moved current fact, oldest in valid time first, is weighed
    against the standing facts of its subject as a new harvest's would be (`_supersede`),
    inside the caller's transaction. How many records were closed."""
    if not ids:
        return 0
    when = now_ms() if at is None else at
    before = _closed_count(store, workspace)
    moved = set(ids)
    rows = store.db.execute(
        f"SELECT {COLUMNS} FROM memory_records WHERE {SAME_WORKSPACE} AND kind = ? "
        f"AND quarantined = 0 AND state NOT IN ('{PENDING}', '{REJECTED}') "
        "ORDER BY valid_from, id",
        (workspace.root, workspace.remote, FACT),
    ).fetchall()
    for record in (Record(row) for row in rows):
        if record.id not in moved or not (record.subject or record.detail.get("supersedes")):
            continue
        found = get(store, record.id)  # as it stands now: an earlier step may have closed it
        if found is None or not is_current(store, found):
            continue
        draft = Draft(
            FACT,
            found.text,
            grade=found.grade,
            seq=found.seq,
            valid_from=found.valid_from,
            subject=found.subject,
            detail=found.detail,
        )
        _supersede(store, workspace, found.id, draft, when)
    return _closed_count(store, workspace) - before


def _closed_count(store: Store, workspace: Workspace) -> int:
    return int(
        store.db.execute(
            f"SELECT count(*) FROM memory_records WHERE {SAME_WORKSPACE} AND NOT {CURRENT}",
            (workspace.root, workspace.remote),
        ).fetchone()[0]
    )


def _close(store: Store, record: int, by: int, valid_to: int, at: int, verdict: str) -> None:
    store.db.execute(
        "UPDATE memory_records SET valid_to = ?, expired_at = ?, superseded_by = ?, "
        "detail = json_set(detail, '$.verdict', ?) WHERE id = ?",
        (valid_to, at, by, verdict, record),
    )


def get(store: Store, record: int) -> Record | None:
    row = store.db.execute(
        f"SELECT {COLUMNS} FROM memory_records WHERE id = ?", (record,)
    ).fetchone()
    return None if row is None else Record(row)


def is_current(store: Store, record: Record) -> bool:
    if record.superseded_by is None:
        return True
    return get(store, int(record.superseded_by)) is None


def select(
    store: Store,
    workspace: Workspace | None,
    *,
    kinds: Sequence[str] = KINDS,
    current_only: bool = True,
    quarantined: bool | None = None,
    limit: int = 200,
    ids: Sequence[int] | None = None,
    as_of: int | None = None,
    known_at: int | None = None,
) -> list[Record]:
    """Records, newest first: of `workspace` (every workspace when None), of `kinds`, current
    only unless asked, quarantined or not when given. `as_of` (ms): instead of the current
    ones, those that were current at that time (`as_of_clause`), as the store knew it at
    `known_at` (now when None)."""
    where = [f"kind IN ({', '.join('?' * len(kinds))})"]
    params: list[Any] = list(kinds)
    if workspace is not None:
        where.append(SAME_WORKSPACE)
        params += [workspace.root, workspace.remote]
    if as_of is not None:
        clause, values = as_of_clause(as_of, known_at)
        where.append(clause)
        params += values
    elif current_only:
        where.append(CURRENT)
    if quarantined is not None:
        where.append("quarantined = ?")
        params.append(int(quarantined))
    if ids is not None:
        where.append(f"id IN ({', '.join('?' * len(ids))})")
        params += list(ids)
    query = (
        f"SELECT {COLUMNS} FROM memory_records WHERE {' AND '.join(where)} "
        "ORDER BY valid_from DESC, id DESC LIMIT ?"
    )
    return [Record(row) for row in store.db.execute(query, [*params, limit])]


def as_of_clause(as_of: int, known_at: int | None = None) -> tuple[str, list[Any]]:
    """The records current at `as_of`, as the store knew it at `known_at` (now when None),
    over the four times: recorded (`recorded_at`) by `known_at`; valid (`valid_from`) by
    `as_of`; and not closed by then — a closing counts once it was recorded (`expired_at` by
    `known_at`) and only while the record that closed it exists (a forgotten closer closes
    nothing), and it ends the record's valid time at `valid_to`."""
    closed = (
        "(valid_to IS NOT NULL AND valid_to <= ? AND superseded_by IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM memory_records n WHERE n.id = memory_records.superseded_by)"
    )
    values: list[Any] = [as_of]
    if known_at is not None:
        closed += " AND expired_at IS NOT NULL AND expired_at <= ?"
        values.append(known_at)
    closed += ")"
    clause = f"valid_from <= ? AND NOT {closed}"
    values = [as_of, *values]
    if known_at is not None:
        clause += " AND recorded_at <= ?"
        values.append(known_at)
    return clause, values


def search_ids(store: Store, query: str, limit: int) -> list[int]:
    """Record ids whose text holds every word of `query` (three characters or more: the
    trigram index; shorter words are matched by LIKE), best match first."""
    words = [w for w in query.split() if w]
    long_words = [w for w in words if len(w) >= 3]
    short = [w for w in words if len(w) < 3]
    if long_words:
        match = " AND ".join('"' + w.replace('"', '""') + '"' for w in long_words)
        sql = "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?"
        params: list[Any] = [match]
        for word in short:
            sql += " AND text LIKE ? ESCAPE '\\'"
            params.append("%" + _like(word) + "%")
        sql += " ORDER BY rank LIMIT ?"
        return [int(r[0]) for r in store.db.execute(sql, [*params, limit])]
    if not short:
        return []
    sql = "SELECT rowid FROM memory_fts WHERE " + " AND ".join(
        "text LIKE ? ESCAPE '\\'" for _ in short
    )
    rows = store.db.execute(
        sql + " ORDER BY rowid DESC LIMIT ?", [*("%" + _like(w) + "%" for w in short), limit]
    )
    return [int(r[0]) for r in rows]


def _like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def forget(store: Store, record: int) -> bool:
    """Delete one record, its index entry with it, leaving no byte of it (secure_delete, the
    index merged so no segment keeps its terms, the WAL checkpointed). Records it closed are
    current again (their closer is gone)."""
    with store.transaction() as db:
        db.execute("DELETE FROM memory_fts WHERE rowid = ?", (record,))
        gone = db.execute("DELETE FROM memory_records WHERE id = ?", (record,)).rowcount
        db.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    store.drop_hints()  # a hint may hold the record's row
    return bool(gone)


def set_quarantine(store: Store, record: int, reason: str | None) -> None:
    store.db.execute(
        "UPDATE memory_records SET quarantined = ?, quarantine_reason = ? WHERE id = ?",
        (int(reason is not None), reason, record),
    )


def set_state(store: Store, record: int, state: str, detail: dict[str, Any]) -> None:
    store.db.execute(
        "UPDATE memory_records SET state = ?, detail = ? WHERE id = ?",
        (state, orjson.dumps(detail).decode(), record),
    )


def in_states(
    store: Store, workspace: Workspace | None, states: Sequence[str], limit: int = 200
) -> list[Record]:
    """Records (skills aside) in one of `states`, of `workspace` (every workspace when None),
    oldest first: the review queue in the order it was learned."""
    where = [f"state IN ({', '.join('?' * len(states))})", "kind != ?"]
    params: list[Any] = [*states, SKILL]
    if workspace is not None:
        where.append(SAME_WORKSPACE)
        params += [workspace.root, workspace.remote]
    query = (
        f"SELECT {COLUMNS} FROM memory_records WHERE {' AND '.join(where)} "
        "ORDER BY recorded_at, id LIMIT ?"
    )
    return [Record(row) for row in store.db.execute(query, [*params, limit])]


def by_workspace(store: Store) -> list[dict[str, Any]]:
    """Per workspace (root, remote), the one learned in last first: its current records per
    kind (neither set aside nor kept out by a review), the superseded, the set aside, the
    pending and rejected, when it last learned something."""
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    rows = store.db.execute(
        f"SELECT workspace, remote, kind, quarantined, state, {CURRENT}, count(*), "
        "max(recorded_at) FROM memory_records GROUP BY 1, 2, 3, 4, 5, 6"
    )
    for root, remote, kind, quarantined, state, current, count, last in rows:
        one = found.setdefault(
            (root, remote),
            {
                "root": root,
                "remote": remote,
                "kinds": dict.fromkeys(KINDS, 0),
                "superseded": 0,
                "quarantined": 0,
                "pending": 0,
                "rejected": 0,
                "lastRecordedAt": 0,
            },
        )
        one["lastRecordedAt"] = max(one["lastRecordedAt"], int(last or 0))
        if quarantined:
            one["quarantined"] += count
        elif not current:
            one["superseded"] += count
        elif state == PENDING:
            one["pending"] += count
        elif state == REJECTED and kind != SKILL:
            one["rejected"] += count
        else:
            one["kinds"][kind] = one["kinds"].get(kind, 0) + count
    return sorted(found.values(), key=lambda w: (-w["lastRecordedAt"], w["root"]))


def chains(store: Store, workspace: Workspace | None, limit: int = 1_000) -> list[list[Record]]:
    """The supersession chains of `workspace`'s facts (every workspace when None): each set of
    facts linked by `superseded_by`, in the order they held, the chain changed last first."""
    where = [
        "kind = ?",
        "(superseded_by IS NOT NULL OR id IN (SELECT superseded_by FROM memory_records "
        "WHERE superseded_by IS NOT NULL))",
    ]
    params: list[Any] = [FACT]
    if workspace is not None:
        where.append(SAME_WORKSPACE)
        params += [workspace.root, workspace.remote]
    rows = store.db.execute(
        f"SELECT {COLUMNS} FROM memory_records WHERE {' AND '.join(where)} "
        "ORDER BY recorded_at DESC, id DESC LIMIT ?",
        [*params, limit],
    )
    records = {r.id: r for r in (Record(row) for row in rows)}
    parent = {i: i for i in records}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for record in records.values():
        if record.superseded_by in records:
            parent[root(record.id)] = root(int(record.superseded_by))
    groups: dict[int, list[Record]] = {}
    for i, record in records.items():
        groups.setdefault(root(i), []).append(record)
    found = [
        sorted(group, key=lambda r: (r.valid_from, r.id))
        for group in groups.values()
        if len(group) > 1
    ]
    return sorted(found, key=lambda g: -max(max(r.recorded_at, r.expired_at or 0) for r in g))


def review(store: Store, record: Record, accepted: bool, at: int | None = None) -> None:
    """The person's verdict on a pending record, inside the caller's transaction: accepted,
    it stands as if just harvested (a fact closes what it supersedes now); rejected, it is
    kept and shown, given to no session. When they were reviewed is kept in its detail."""
    when = now_ms() if at is None else at
    detail = {**record.detail, "reviewedAt": when}
    set_state(store, record.id, ACCEPTED if accepted else REJECTED, detail)
    if not accepted or record.kind != FACT or record.quarantined or not is_current(store, record):
        return
    if not (record.subject or detail.get("supersedes")):
        return
    from .workspace import Workspace

    draft = Draft(
        record.kind,
        record.text,
        grade=record.grade,
        seq=record.seq,
        valid_from=record.valid_from,
        subject=record.subject,
        detail=detail,
    )
    _supersede(store, Workspace(record.workspace, record.remote), record.id, draft, when)


def counts(store: Store, workspace: Workspace | None = None) -> MemoryCountsJson:
    """The debug panel's counts: current records per kind, the proposals waiting (the queue),
    the quarantined; with a workspace, how the current records stand to it (same workspace,
    another one, no provenance)."""
    by_kind = {kind: 0 for kind in KINDS}
    for kind, count in store.db.execute(
        f"SELECT kind, count(*) FROM memory_records WHERE {CURRENT} AND quarantined = 0 "
        "GROUP BY kind"
    ):
        by_kind[kind] = count
    queue = store.db.execute(
        "SELECT count(*) FROM memory_records WHERE kind = ? AND state = ?", (SKILL, PROPOSED)
    ).fetchone()[0]
    quarantined = store.db.execute(
        "SELECT count(*) FROM memory_records WHERE quarantined = 1"
    ).fetchone()[0]
    pending = store.db.execute(
        "SELECT count(*) FROM memory_records WHERE state = ?", (PENDING,)
    ).fetchone()[0]
    found: MemoryCountsJson = {
        "skills": by_kind[SKILL],
        "negative": by_kind[NEGATIVE],
        "facts": by_kind[FACT],
        "experiences": by_kind[EXPERIENCE],
        "queue": queue,
        "quarantined": quarantined,
        "pending": pending,
    }
    if workspace is not None:
        same = cross = none = 0
        for root, remote, session in store.db.execute(
            f"SELECT workspace, remote, session_id FROM memory_records WHERE {CURRENT}"
        ):
            if not session:
                none += 1
            elif (root, remote) == (workspace.root, workspace.remote):
                same += 1
            else:
                cross += 1
        found["workspace"] = {
            **workspace.as_json(),
            "same": same,
            "cross": cross,
            "noProvenance": none,
        }
    return found
