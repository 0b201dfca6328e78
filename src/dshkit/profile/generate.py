"""One profile generation: trigger check, prompt, model call, delta assembly, stored version.

Every run leaves a `lastRun` record, triggered or not, successful or not, with its reason in
words; each new version is kept with its diff in a bounded history that never drops the
newest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from ..llm import LLMClient, LLMConfig, LLMConfigError
from ..sessions import Scanner, Source
from ..sessions.events import human_messages, message_text
from ..sessions.scanner import SessionKey
from ..store import Store
from .model import (
    ProfileOutputError,
    Trigger,
    assemble,
    diff_profiles,
    parse_output,
    should_regenerate,
    spurious_rate,
)
from .prompt import MAX_MATERIAL, Material, build_messages
from .signals import SignalConfig, collect_signals
from .state import latest_version

HISTORY_LIMIT = 50
_WATERMARK = "profile.watermark"
_LAST_RUN = "profile.lastRun"


@dataclass
class Generation:
    """The outcome of one `generate` call (also stored as the profile's `lastRun`)."""

    ok: bool = False  # a new version was stored
    version: int | None = None
    entries: int = 0
    diff: dict[str, list[str]] = field(
        default_factory=lambda: {"added": [], "removed": [], "modified": [], "unchanged": []}
    )
    spurious_rate: float = 0.0
    partial: bool = False
    reason: str = ""
    error: str | None = None
    triggered: bool = False
    at: int = 0
    outcome: str | None = None  # the LLM call's outcome, when one was made
    truncation_reason: str | None = None
    dropped_tail_chars: int = 0
    warnings: list[str] = field(default_factory=list)
    deleted_by_contract: list[str] = field(default_factory=list)
    deletions_honored: bool = True

    def as_json(self) -> dict[str, Any]:
        """The `dshkit profile generate --json` contract."""
        return {
            "ok": self.ok,
            "version": self.version,
            "entries": self.entries,
            "diff": self.diff,
            "spuriousRate": self.spurious_rate,
            "partial": self.partial,
            "reason": self.reason,
            "error": self.error,
        }


def last_run(store: Store) -> dict[str, Any] | None:
    stored = store.get_meta(_LAST_RUN)
    return orjson.loads(stored) if stored else None


def generate(
    scanner: Scanner,
    keys: Iterable[SessionKey],
    llm: LLMConfig,
    *,
    force: bool = False,
    trigger: Trigger | None = None,
    history_limit: int = HISTORY_LIMIT,
    on_delta: Callable[[str], None] | None = None,
) -> Generation:
    """Generate a new profile version from the sessions `keys` when the trigger fires."""
    if history_limit < 1:
        raise ValueError(f"history_limit must be at least 1, got {history_limit}")
    keys = list(keys)
    run = Generation(at=int(time.time() * 1000))
    signals = collect_signals(scanner, keys, SignalConfig())
    stored = scanner.store.get_meta(_WATERMARK)
    watermark = orjson.loads(stored) if stored else None
    run.triggered, run.reason = should_regenerate(
        watermark, signals.human_messages, signals.sessions, trigger or Trigger()
    )
    if force:
        run.triggered, run.reason = True, f"forced ({run.reason})"
    if not run.triggered:
        return _finish(scanner, run)
    try:
        client = LLMClient(llm, scanner.store)
    except LLMConfigError as exc:
        run.error = str(exc)
        return _finish(scanner, run)

    previous = latest_version(scanner.store)
    material = _material(scanner, keys)
    messages = build_messages(
        previous[1] if previous else None,
        previous[0] if previous else None,
        material,
        {"humanMessages": signals.human_messages, "sessions": signals.sessions},
        signals.totals,
    )
    with client:
        reply = client.complete(messages, purpose="profile", on_delta=on_delta)
    run.outcome = reply.outcome
    if reply.outcome not in ("ok", "max-tokens"):
        run.error = f"the model call failed ({reply.outcome}): {reply.error}"
        return _finish(scanner, run)
    run.truncation_reason = "max-tokens" if reply.outcome == "max-tokens" else None
    try:
        parsed = parse_output(reply.text, run.truncation_reason)
    except ProfileOutputError as exc:
        run.error = str(exc)
        return _finish(scanner, run)

    before = previous[1] if previous else []
    used = min(len(material), MAX_MATERIAL)
    built = assemble(before, parsed, run.at, used)
    if not built.entries:
        run.error = "the model's answer left the profile empty; the last version is kept"
        run.warnings = built.warnings
        return _finish(scanner, run)
    run.diff = diff_profiles(before, built.entries)
    run.spurious_rate = spurious_rate(run.diff, len(before))
    run.entries = len(built.entries)
    run.partial = parsed.rescue is not None
    run.dropped_tail_chars = (parsed.rescue or {}).get("droppedTailChars", 0)
    run.warnings = built.warnings
    run.deleted_by_contract = built.deleted_by_contract
    run.deletions_honored = built.deletions_honored
    run.version = (previous[0] if previous else 0) + 1
    run.ok = True
    with scanner.store.transaction() as db:
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "rescue, material_messages, reason, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.version,
                run.at,
                orjson.dumps(built.entries).decode(),
                orjson.dumps(run.diff).decode(),
                run.spurious_rate,
                run.partial,
                orjson.dumps(parsed.rescue).decode() if parsed.rescue else None,
                used,
                run.reason,
                parsed.notes,
            ),
        )
        # A bounded history (unlike seed §8.5), and never without the newest version.
        db.execute(
            "DELETE FROM profile_versions WHERE version <= ?", (run.version - history_limit,)
        )
        mark = {"at": run.at, "humanMessages": signals.human_messages, "sessions": signals.sessions}
        scanner.store.set_meta(_WATERMARK, orjson.dumps(mark).decode())
        record_run(scanner.store, run)
    return run


def scan_and_generate(
    store: Store, sources: Sequence[Source], *, force: bool = False, wait: float = 30.0
) -> Generation:
    """Scan `sources`, then generate when the trigger fires (or `force`): what the hooks'
    detached refresh and the service's background runs both do. A configuration problem is
    kept in lastRun like any other failure; LeaseBusy is raised when another scan is running."""
    scanner = Scanner(store)
    keys = scanner.scan(sources, wait=wait).keys
    try:
        llm = LLMConfig.load(store.state_dir)
    except LLMConfigError as exc:
        return _finish(scanner, Generation(at=int(time.time() * 1000), error=str(exc)))
    return generate(scanner, keys, llm, force=force)


def _material(scanner: Scanner, keys: list[SessionKey]) -> list[Material]:
    """Every human message of the sessions, oldest first (the prompt keeps the newest)."""
    found: list[Material] = []
    for key in keys:
        found += [
            Material(e.get("time"), message_text(e)) for e in human_messages(scanner.events(*key))
        ]
    found.sort(key=lambda m: m.time or 0)
    return found


def _finish(scanner: Scanner, run: Generation) -> Generation:
    with scanner.store.transaction():
        record_run(scanner.store, run)
    return run


def record_run(store: Store, run: Generation) -> None:
    """Keep `run` as the profile's lastRun (inside the caller's transaction, if any)."""
    store.set_meta(_LAST_RUN, orjson.dumps(asdict(run)).decode())
