"""What the harness reports about a session's permissions: sandbox, approval, permission mode.

Each fact comes from where the harness really says it (the registry's `Capability` and
`harnesses.sandbox`): the hook payload's `permission_mode`, the harness's config file (Codex
`sandbox_mode`, `approval_policy`), then what the session itself runs in, which wins: Codex's
latest rollout turn context (a mode switched mid-session), Claude Code's `sandbox.enabled`
setting, DSH's log mode events (`sandbox/mode`, `approval/policy`, read through the session
layer). A fact nobody reported is `unknown`, never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import harnesses

if TYPE_CHECKING:
    from ..sessions.events import Event
    from ..store import Store
    from .wire import FactsJson

UNKNOWN = "unknown"
FACTS = ("sandbox", "approval", "permission")
PAYLOAD_MODE = "permission_mode"  # the hook protocol's field (Claude Code's, shared by all)


@dataclass(frozen=True)
class Facts:
    """The modes a session runs in, each with where it was read (or `unknown`)."""

    harness: str = UNKNOWN
    sandbox: str = UNKNOWN
    approval: str = UNKNOWN
    permission: str = UNKNOWN
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The cache key of the modes: a changed mode is another key, so it is probed again."""
        return f"sandbox={self.sandbox};approval={self.approval};permission={self.permission}"

    @staticmethod
    def modes_in(key: str) -> dict[str, str]:
        """The modes a key (`key`, or a longer key beginning with it) names."""
        named = dict(part.partition("=")[::2] for part in key.partition("#")[0].split(";"))
        return {fact: named[fact] for fact in FACTS if fact in named}

    @property
    def full_access(self) -> bool:
        """Whether every layer of the harness's permissions (its sandbox, its permission
        mode) reports a mode that restricts nothing: one layer open while another restricts
        (Claude Code's bypassPermissions inside its bash sandbox) is not full access, and an
        unknown mode never is."""
        info = harnesses.HARNESSES.get(self.harness)
        if info is None or info.capability is None or not info.capability.full_access:
            return False
        modes = {"sandbox": self.sandbox, "approval": self.approval, "permission": self.permission}
        layers = info.capability.full_access.items()
        return all(modes.get(layer) in open_ for layer, open_ in layers)

    @property
    def restricted(self) -> bool | None:
        """Whether the session's tools run in a sandbox that restricts them (None: its mode
        is not known)."""
        if self.full_access:
            return False
        if self.sandbox == UNKNOWN:
            return None
        return self.sandbox != "off"

    def with_modes(self, **modes: str | None) -> Facts:
        """These facts with the modes given (by a person, or by the process that started a
        probe) in place of what was read; None leaves a fact as read."""
        given = {k: v for k, v in modes.items() if v is not None}
        sources = {k: v for k, v in self.sources.items() if k not in given}
        sources.update((k, "given") for k, v in given.items() if v != UNKNOWN)
        return replace(self, **given, sources=sources)

    def as_json(self) -> FactsJson:
        return {
            "harness": self.harness,
            "sandbox": self.sandbox,
            "approval": self.approval,
            "permissionMode": self.permission,
            "sources": self.sources,
            "fullAccess": self.full_access,
            "restricted": self.restricted,
        }


def read_facts(
    store: Store, harness: str, payload: Mapping[str, Any], errors: list[str] | None = None
) -> Facts:
    """The facts of the session a hook payload names, from every source its harness has.

    A source that cannot be read leaves its facts unknown and adds the reason to `errors`.
    """
    errors = errors if errors is not None else []
    found: dict[str, str] = {}
    sources: dict[str, str] = {}
    mode = payload.get(PAYLOAD_MODE)
    if isinstance(mode, str) and mode:
        found["permission"], sources["permission"] = mode, "hook payload"
    info = harnesses.HARNESSES.get(harness)
    known = info.capability if info else None
    if known is not None and known.config_modes is not None:
        path, keys = known.config_modes
        for fact, value in config_modes(path(), keys, errors).items():
            found[fact], sources[fact] = value, path()
    # The harness's own files for this session (Codex's rollout turn context, the latest
    # one; Claude Code's sandbox setting): what the session really runs in.
    own = harnesses.sandbox(harness).modes
    if own is not None:
        read = own(payload, errors)
        for fact in FACTS:
            if fact in read:
                found[fact], sources[fact] = read[fact], read.get(f"source:{fact}", "harness")
    if known is not None and known.log_modes is not None:
        session = str(payload.get("session_id") or "")
        transcript = str(payload.get("transcript_path") or "")
        modes = _log_modes(store, harness, known.log_modes, session, transcript, errors)
        for fact, value in modes.items():
            found[fact], sources[fact] = value, "session log"
    return Facts(harness, **found, sources=sources)


def config_modes(path: str, keys: Mapping[str, str], errors: list[str]) -> dict[str, str]:
    """The modes a TOML config file sets at its top level (a missing file sets none)."""
    import tomllib  # (here and below: only for a harness whose modes are in such a file)

    try:
        with open(path, "rb") as file:
            config = tomllib.load(file)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        errors.append(f"{path}: {exc}")
        return {}
    return {f: str(config[k]) for f, k in keys.items() if isinstance(config.get(k), str)}


def log_modes(events: Iterable[Event], kinds: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """The last value each mode event in `events` set."""
    wanted = {kind: (fact, key) for fact, (kind, key) in kinds.items()}
    found: dict[str, str] = {}
    for event in events:
        target = wanted.get(event.get("type", ""))
        if target is not None:
            value = (event.get("data") or {}).get(target[1])
            if isinstance(value, str) and value:
                found[target[0]] = value
    return found


def _log_modes(
    store: Store,
    harness: str,
    kinds: Mapping[str, tuple[str, str]],
    session: str,
    transcript: str,
    errors: list[str],
) -> dict[str, str]:
    """The modes the live session log set so far: what its tail adds to what earlier calls saw
    (kept per session, since a tail read returns only what is new)."""
    if not session or not transcript:
        return {}
    import orjson

    from ..sessions.tail import read_tail

    key = (harness, session)
    with store.transaction() as db:
        row = db.execute(
            "SELECT modes FROM capability_sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
        known: dict[str, str] = orjson.loads(row[0]) if row else {}
        try:
            events = [kind for kind, _ in kinds.values()]  # (what a hint may watch for)
            tail = read_tail(store, transcript, harness, consumer="capability", kinds=events)
        except (OSError, ValueError) as exc:
            errors.append(f"{transcript}: {exc}")
            return known
        found = {**({} if tail.reset else known), **log_modes(tail.events, kinds)}
        if found != known or row is None:
            db.execute(
                "INSERT INTO capability_sessions (harness, session_id, modes) VALUES (?, ?, ?) "
                "ON CONFLICT (harness, session_id) DO UPDATE SET modes = excluded.modes",
                (*key, orjson.dumps(found).decode()),
            )
    return found
