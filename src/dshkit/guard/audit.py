"""The guard's log: every decision that was not a plain allow (a deny, an ask, an ask where a
deny was relaxed by the person's own words), per workspace, redacted, for a bounded time.

Written after the harness got the answer (a hook's commit) into the audit trail the guard and
graft share (`store.audit`), each record's command or path passed through the provenance
layer's secret detector first: a token on a command line is never kept. Retention is bounded
on every write: at most MAX_PER_WORKSPACE records a workspace, none older than
RETENTION_DAYS. Read back by `dshkit guard log` and the console, newest first, with the rule
that would allow it (`suggested`), so a false alarm can be turned into an allow rule.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import Store
    from .wire import LogEntryJson

BLOCKED, ASKED, RELAXED = "command-blocked", "command-asked", "command-relaxed"
KINDS = (BLOCKED, ASKED, RELAXED)
MAX_PER_WORKSPACE = 500
RETENTION_DAYS = 90
MAX_TEXT_CHARS = 2_000  # a command longer is kept cut, marked
_IN = f"kind IN ({', '.join('?' * len(KINDS))})"


def kind_of(decision: str, relaxed: bool = False) -> str:
    """The record's kind for the decision delivered."""
    if relaxed:
        return RELAXED
    return BLOCKED if decision == "deny" else ASKED


def record(
    store: Store,
    kind: str,
    *,
    harness: str | None,
    session_id: str | None,
    command: str,
    workspace: str | None,
    now_ms: int | None = None,
    **detail: Any,
) -> None:
    """Append one decision, its command redacted (secrets replaced by `[secret: kind]`), then
    drop what is past the retention of its workspace."""
    from ..provenance.secrets import redact
    from ..store import audit

    text = command if len(command) <= MAX_TEXT_CHARS else command[:MAX_TEXT_CHARS] + "…[cut]"
    redacted = redact(text)
    words = detail.pop("words", None)
    if isinstance(words, list):
        detail["words"] = [redact(str(w)).text for w in words]
    for key in ("reason",):
        if isinstance(detail.get(key), str):
            detail[key] = redact(detail[key]).text
    audit(
        store,
        kind,
        harness=harness,
        session_id=session_id,
        command=redacted.text,
        redacted=redacted.found,
        workspace=workspace,
        **detail,
    )
    if now_ms is not None:  # (a test's clock: the record just written carries the real one)
        store.db.execute("UPDATE graft_audit SET at = ? WHERE id = last_insert_rowid()", (now_ms,))
    prune(store, workspace, now_ms)


def prune(store: Store, workspace: str | None, now_ms: int | None = None) -> None:
    """Drop the guard's records older than RETENTION_DAYS, and those of `workspace` past its
    newest MAX_PER_WORKSPACE."""
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    cutoff = now - RETENTION_DAYS * 86_400_000
    store.db.execute(f"DELETE FROM graft_audit WHERE {_IN} AND at < ?", (*KINDS, cutoff))
    store.db.execute(
        f"DELETE FROM graft_audit WHERE {_IN} AND json_extract(detail, '$.workspace') IS ? "
        f"AND id < (SELECT id FROM graft_audit WHERE {_IN} "
        "AND json_extract(detail, '$.workspace') IS ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (*KINDS, workspace, *KINDS, workspace, MAX_PER_WORKSPACE - 1),
    )


def entries(
    store: Store, workspace: str | None = None, limit: int = 100, before: int | None = None
) -> list[LogEntryJson]:
    """The guard's records, newest first: of `workspace` (or below it) when given, at most
    `limit`, older than the id `before` when given."""
    import orjson

    where, args = _IN, list[object]([*KINDS])
    if workspace:
        where += (
            " AND (json_extract(detail, '$.workspace') = ? "
            "OR json_extract(detail, '$.workspace') LIKE ? ESCAPE '\\')"
        )
        escaped = (
            workspace.rstrip("/").replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        )
        args += [workspace, escaped + "/%"]
    if before is not None:
        where += " AND id < ?"
        args.append(before)
    rows = store.db.execute(
        "SELECT id, at, kind, harness, session_id, detail FROM graft_audit "
        f"WHERE {where} ORDER BY id DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    found: list[LogEntryJson] = []
    for id_, at, kind, harness, session_id, detail in rows:
        data = orjson.loads(detail)
        found.append(
            {
                "id": id_,
                "at": at,
                "kind": kind,
                "decision": "deny" if kind == BLOCKED else "ask",
                "relaxed": kind == RELAXED,
                "harness": harness,
                "sessionId": session_id,
                "workspace": data.get("workspace"),
                "command": str(data.get("command", "")),
                "risk": str(data.get("risk", "")),
                "mode": str(data.get("mode", "")),
                "reason": str(data.get("reason") or ""),
                "rule": data.get("rule") or data.get("builtin"),
                "tool": data.get("tool"),
                "suggested": suggested(data),
            }
        )
    return found


def suggested(data: dict[str, Any]) -> str | None:
    """The allow rule that would let this one command (or tool call) through: the words of
    the simple command that decided, as a pattern matches them; None when a secret was
    redacted from them (a rule naming `[secret: …]` would match nothing) or there are none."""
    words = data.get("words")
    if not isinstance(words, list) or not words:
        return None
    shown = [str(w) for w in words]
    if any("[secret:" in w or "…" in w or not w or any(c.isspace() for c in w) for w in shown):
        return None  # (a pattern's words are split at blanks: such a word matches nothing)
    table = str.maketrans({"*": "[*]", "?": "[?]", "[": "[[]"})
    return " ".join([shown[0], *(w.translate(table) for w in shown[1:])])
