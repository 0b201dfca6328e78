"""Delivery: deliverables judged in the background as they are written, a hard failure handed
to the agent when it tries to end its turn (or with its next prompt), once per content.

A write of a web deliverable only records it for the session and starts a detached
`dshkit gate check` for its content (one run per path and content hash; a run whose start is
older than `RUN_DEAD_S` has died and may be started again). Files a shell command wrote are
found by a bounded scan of the session's working directory for deliverables changed since
its turn began. At Stop the session's deliverables whose current content has no verdict yet
are waited for (within the caller's deadline); a failure not yet delivered to this session
(the "delivered once" ledger, kind `GATE_REWORK_DELIVERY`, keyed by path and hash) becomes
the reason to go on. What is still unjudged then is owed to the next prompt.

Every function takes the caller's store; `GateService` opens it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..config import load_config
from ..store import GATE_REWORK_DELIVERY, Store
from .rework import NOT_FAILURES
from .scan import SCAN_DEPTH as SCAN_DEPTH  # (the scan's bounds, named here too)
from .scan import SCAN_ENTRIES as SCAN_ENTRIES
from .scan import SCAN_FOUND as SCAN_FOUND
from .scan import changed

Key = tuple[str, str]  # (harness, session id)

RUN_DEAD_S = 360.0  # a run started longer ago without a verdict has died (budget ≤ 300 s)
MAX_RUNNING = 3  # background runs at once: each is a Chromium (a 2-core machine stays usable)
SESSION_FILES = 50  # deliverables of one session looked at when delivering (latest first)
POLL_S = 0.2


def content_hash(path: Path) -> str:
    import hashlib  # (here: a prompt with no failure to hand back hashes nothing)

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _now_ms() -> int:
    return int(time.time() * 1000)


# -- per-session settings and turns ------------------------------------------------------------


def session_rework(store: Store, key: Key) -> bool | None:
    """The session's own rework switch (None: it follows `[gate] rework`)."""
    row = store.db.execute(
        "SELECT rework FROM gate_sessions WHERE harness = ? AND session_id = ?", key
    ).fetchone()
    return None if row is None or row[0] is None else bool(row[0])


def set_session_rework(store: Store, key: Key, on: bool | None) -> None:
    """Switch rework on or off for one session (None: back to the config's)."""
    value = None if on is None else int(on)
    with store.transaction() as db:
        db.execute(
            "INSERT INTO gate_sessions (harness, session_id, rework) VALUES (?, ?, ?) "
            "ON CONFLICT (harness, session_id) DO UPDATE SET rework = excluded.rework",
            (*key, value),
        )


def rework_on(store: Store, key: Key) -> bool:
    """Whether failures go back to this session: its own switch, else the config's."""
    own = session_rework(store, key)
    return bool(load_config(store.state_dir)["gate"]["rework"]) if own is None else own


def begin_turn(store: Store, key: Key, now_ms: int | None = None) -> None:
    """Mark the session's turn as begun now, unless one is open (a harness that asks before
    every model step begins its turn once, at the first)."""
    with store.transaction() as db:
        db.execute(
            "INSERT INTO gate_sessions (harness, session_id, turn_at, turn_open) "
            "VALUES (?, ?, ?, 1) ON CONFLICT (harness, session_id) DO UPDATE SET "
            "turn_at = CASE WHEN turn_open THEN turn_at ELSE excluded.turn_at END, turn_open = 1",
            (*key, _now_ms() if now_ms is None else now_ms),
        )


def end_turn(store: Store, key: Key) -> None:
    with store.transaction() as db:
        db.execute(
            "UPDATE gate_sessions SET turn_open = 0 WHERE harness = ? AND session_id = ?", key
        )


def turn_began(store: Store, key: Key) -> int | None:
    """When the session's open turn began (ms since the epoch; None: no turn seen)."""
    row = store.db.execute(
        "SELECT turn_at FROM gate_sessions WHERE harness = ? AND session_id = ?", key
    ).fetchone()
    return None if row is None else row[0]


# -- writes and background runs ----------------------------------------------------------------


def note_writes(store: Store, key: Key, files: list[Path]) -> None:
    """Record the deliverables the session wrote (their path; the content is read when it
    is judged or delivered)."""
    at = _now_ms()
    with store.transaction() as db:
        db.executemany(
            "INSERT INTO gate_writes (harness, session_id, path, at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (harness, session_id, path) DO UPDATE SET at = excluded.at",
            [(*key, str(f), at) for f in files],
        )


def latest_verdict(store: Store, path: str, sha256: str) -> dict[str, Any] | None:
    """The newest stored verdict of this content of `path`, with its id (None: not judged)."""
    row = store.db.execute(
        "SELECT id, at, evidence FROM gate_verdicts WHERE path = ? AND sha256 = ? "
        "ORDER BY id DESC LIMIT 1",
        (path, sha256),
    ).fetchone()
    if row is None:
        return None
    return {**orjson.loads(row["evidence"]), "id": row["id"], "at": row["at"]}


def claim_runs(store: Store, wanted: list[tuple[Path, str]]) -> list[Path]:
    """Of `wanted` (file, content hash), those a run must be started for now: not judged,
    no live run of theirs, and no more than MAX_RUNNING live runs in all (decided in one
    transaction, so concurrent hooks start each once)."""
    now = _now_ms()
    dead = now - int(RUN_DEAD_S * 1000)
    claimed: list[Path] = []
    with store.transaction() as db:
        db.execute("DELETE FROM gate_runs WHERE started < ?", (dead,))
        running = db.execute("SELECT count(*) FROM gate_runs").fetchone()[0]
        for path, sha in wanted:
            if running >= MAX_RUNNING:
                break
            if latest_verdict(store, str(path), sha) is not None:
                continue
            if db.execute(
                "SELECT 1 FROM gate_runs WHERE path = ? AND sha256 = ?", (str(path), sha)
            ).fetchone():
                continue
            db.execute(
                "INSERT INTO gate_runs (path, sha256, started) VALUES (?, ?, ?)",
                (str(path), sha, now),
            )
            running += 1
            claimed.append(path)
    return claimed


def start_runs(store: Store, files: list[Path]) -> list[Path]:
    """Start a detached `dshkit gate check --watch` for each file whose current content needs
    one, sampling for `[gate] hook_budget_s` (short enough for a failure to be judged within
    the time Stop waits; an early "ok" is stored at once and the page watched to the end of
    the budget, a late failure stored after it); the files started."""
    from ..procs import spawn_detached

    wanted = [(f, content_hash(f)) for f in files if f.is_file()]
    started = claim_runs(store, wanted)
    if started:
        budget = str(load_config(store.state_dir)["gate"]["hook_budget_s"])
        state = str(store.state_dir)
        for path in started:
            spawn_detached(
                "gate",
                "check",
                str(path),
                "--budget",
                budget,
                "--state-dir",
                state,
                "--quiet",
                "--watch",
            )
    return started


def finish_run(store: Store, path: str, sha256: str) -> None:
    """A run ended (its verdict stored, or it failed): another may start."""
    with store.transaction() as db:
        db.execute("DELETE FROM gate_runs WHERE path = ? AND sha256 = ?", (path, sha256))


# -- files written by shell commands -----------------------------------------------------------


def changed_deliverables(root: str, since_ms: int) -> list[Path]:
    """Deliverables under `root` modified at or after `since_ms`, newest first (`scan.changed`:
    a bounded walk)."""
    return [Path(path) for path in changed(root, since_ms)]


# -- what is owed to a session -------------------------------------------------------------------


@dataclass
class Owed:
    """What one session is owed now: the failed verdicts not yet delivered to it (each with
    the content hash it judged), and the deliverables whose current content is unjudged."""

    failed: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[Path] = field(default_factory=list)

    def marks(self) -> list[str]:
        return [delivery_mark(v["path"], v["sha256"]) for v in self.failed]


def delivery_mark(path: str, sha256: str) -> str:
    return f"{path}\n{sha256}"


def session_files(store: Store, key: Key) -> list[Path]:
    rows = store.db.execute(
        "SELECT path FROM gate_writes WHERE harness = ? AND session_id = ? "
        "ORDER BY at DESC LIMIT ?",
        (*key, SESSION_FILES),
    ).fetchall()
    return [Path(row[0]) for row in rows]


def owed(store: Store, key: Key) -> Owed:
    """The session's deliverables as they are now: failures not delivered to it, and what
    has no verdict yet (a file removed since is nobody's concern)."""
    found = Owed()
    for path in session_files(store, key):
        try:
            sha = content_hash(path)
        except OSError:
            continue
        verdict = latest_verdict(store, str(path), sha)
        if verdict is None:
            found.unjudged.append(path)
        elif verdict.get("verdict") not in NOT_FAILURES and not store.delivered(
            key, GATE_REWORK_DELIVERY, delivery_mark(str(path), sha)
        ):
            found.failed.append({**verdict, "path": str(path), "sha256": sha})
    return found


def wait_for_verdicts(store: Store, key: Key, deadline: float) -> Owed:
    """`owed`, again and again until nothing is unjudged or the monotonic `deadline` passed;
    what did not die is started again on the way."""
    while True:
        found = owed(store, key)
        if not found.unjudged or time.monotonic() >= deadline:
            return found
        start_runs(store, found.unjudged)
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))


def mark_delivered(store: Store, key: Key, marks: list[str]) -> None:
    with store.transaction():
        for mark in marks:
            store.mark_delivered(key, GATE_REWORK_DELIVERY, mark)
