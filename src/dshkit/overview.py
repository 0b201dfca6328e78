"""What dshkit knows and what is missing, at a glance: the console's first view.

Cheap facts only (no probe, no network): the sessions read per harness, whether the LLM is
configured (never the key: only whether there is one) with the next step when it is not,
whether the hooks are installed per harness (user scope, as `doctor` inspects it: each
harness's settings where its environment says, e.g. under $HOME or $CLAUDE_CONFIG_DIR), and
the profile's state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NotRequired, TypedDict

import orjson

from . import harnesses, plugins
from .errors import NotFound
from .install import inspect, plugin
from .llm import LLMConfig, LLMConfigError
from .profile.state import ProfileState
from .sessions.catalog import Catalog
from .store import SCAN_LEASE, Store


def overview(state_dir: Path, project: Path) -> OverviewJson:
    """The facts above for the state directory `state_dir`, the hooks' install per harness in
    user scope (what a console can speak for)."""
    with Store(state_dir) as store:
        catalog = Catalog(store)
        sessions = {name: 0 for name in harnesses.NAMES}
        humans = 0
        for info in catalog.recent(None, None):
            sessions[info.harness] = sessions.get(info.harness, 0) + 1
            humans += info.human_messages
        profile = ProfileState(store)
        latest = profile.latest()
        mode = profile.mode.value
    return {
        "stateDir": str(state_dir),
        "harnesses": list(harnesses.NAMES),
        "sessions": sessions,
        "humanMessages": humans,
        "llm": _llm(state_dir),
        "hooks": [_hooks(h.name, project, state_dir) for h in harnesses.all_harnesses()],
        "profile": {"mode": mode, "version": latest[0] if latest else None},
    }


def _llm(state_dir: Path) -> LlmStatusJson:
    try:
        config = LLMConfig.load(state_dir)
        config.check()
    except LLMConfigError as exc:  # the message names a key only by its length
        return {
            "configured": False,
            "problem": str(exc),
            "nextStep": f"set DSHKIT_LLM_API_KEY for `dshkit serve`, or put api_key under [llm] "
            f"in {state_dir / 'config.toml'}, then restart the service",
        }
    return {"configured": True, "model": config.model, "baseUrl": config.base_url}


def _hooks(harness: str, project: Path, state_dir: Path) -> HooksStatusJson:
    found = inspect(harness, "user", project, state_dir)
    if not found.installed and any(p.enabled for p in plugin.installed(harness, project)):
        # The harness runs dshkit's hooks through its plugin (doctor says the same).
        return {
            "harness": harness,
            "installed": True,
            "status": "plugin",
            "problems": [],
            "nextStep": None,
        }
    return {
        "harness": harness,
        "installed": found.installed,
        "status": found.status,
        "problems": [problem.message for problem in found.problems],
        "nextStep": None
        if found.installed and not found.problems
        else f"dshkit install-hooks --harness {harness}",
    }


# What the console follows, each read as one cheap figure that moves when it changes: one
# topic per descriptor that has a counter (`dshkit.plugins`).
_COUNTERS = plugins.counters()
TOPICS = tuple(_COUNTERS)


class Changes:
    """The store's change counters for one follower: `poll` is one `PRAGMA data_version` (it
    moves only when another connection committed) while nothing changed, and the counters
    of `TOPICS` plus whether a scan is running when something did. Reads only. Each instance
    holds its own connection: use it from one thread."""

    def __init__(self, state_dir: Path) -> None:
        self.store = Store(state_dir)
        self._version: int | None = None
        self._scanning = False

    def poll(self) -> tuple[dict[str, str], bool] | None:
        """The counters and whether a scan holds the store, or None when no other connection
        has committed since the last call."""
        version = int(self.store.db.execute("PRAGMA data_version").fetchone()[0])
        if version == self._version:
            return None
        self._version = version
        counters = {
            topic: str(self.store.db.execute(sql).fetchone()[0]) for topic, sql in _COUNTERS.items()
        }
        self._scanning = bool(self.store.get_meta(f"lease.{SCAN_LEASE}"))
        return counters, self._scanning

    def close(self) -> None:
        self.store.close()


_CALL_FIELDS = (
    "id, at, purpose, model, outcome, error, finish_reason, elapsed_ms, usage, "
    "length(prompt), length(response)"
)


def _call(row: Any) -> LlmCallJson:
    return {
        "id": row[0],
        "at": row[1],
        "purpose": row[2],
        "model": row[3],
        "outcome": row[4],
        "error": row[5],
        "finishReason": row[6],
        "elapsedMs": row[7],
        "usage": orjson.loads(row[8]) if row[8] else None,
        "promptChars": row[9],
        "responseChars": row[10],
    }


def llm_calls(state_dir: Path, limit: int = 100) -> LlmCallsJson:
    """The newest `limit` calls to the model (the profile's and the optimizer's), newest
    first, without their texts, and how many are kept."""
    with Store(state_dir) as store:
        rows = store.db.execute(
            f"SELECT {_CALL_FIELDS} FROM llm_calls ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        total = store.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
    return {"calls": [_call(row) for row in rows], "total": total}


def llm_call(state_dir: Path, call_id: int) -> LlmCallTextJson:
    """One call to the model with the prompt it was sent and the reply it gave, whole."""
    with Store(state_dir) as store:
        row = store.db.execute(
            f"SELECT {_CALL_FIELDS}, prompt, response FROM llm_calls WHERE id = ?", (call_id,)
        ).fetchone()
    if row is None:
        raise NotFound(f"no LLM call {call_id}", field="id")
    return {**_call(row), "prompt": row[11], "response": row[12]}


class StatusService:
    """The overview for the web API; each call opens its own store connection."""

    def __init__(self, state_dir: Path, project: Path | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.project = project or Path.cwd()

    def overview(self) -> OverviewJson:
        return overview(self.state_dir, self.project)

    def llm_calls(self, limit: int = 100) -> LlmCallsJson:
        return llm_calls(self.state_dir, limit)

    def llm_call(self, call_id: int) -> LlmCallTextJson:
        return llm_call(self.state_dir, call_id)

    def changes(self) -> Changes:
        """A follower of the store's changes (see `Changes`)."""
        return Changes(self.state_dir)


# -- the JSON shapes of the answers above (`GET /api/status/…`) -------------------------------


class LlmStatusJson(TypedDict):
    """Whether the LLM is configured (never its key): its model and endpoint, or the problem
    and the next step."""

    configured: bool
    problem: NotRequired[str]
    nextStep: NotRequired[str]
    model: NotRequired[str]
    baseUrl: NotRequired[str]


class HooksStatusJson(TypedDict):
    """Whether one harness has the hooks installed (user scope), what is wrong, what to do."""

    harness: str
    installed: bool
    status: str
    problems: list[str]
    nextStep: str | None


class ProfileGlance(TypedDict):
    """The profile's mode and newest version (None: none yet)."""

    mode: str
    version: int | None


class OverviewJson(TypedDict):
    """What dshkit knows and what is missing: the state directory, the sessions read per
    harness, the human messages, the LLM, the hooks per harness, the profile."""

    stateDir: str
    harnesses: list[str]
    sessions: dict[str, int]
    humanMessages: int
    llm: LlmStatusJson
    hooks: list[HooksStatusJson]
    profile: ProfileGlance


class LlmCallJson(TypedDict):
    """One call to the model, without its texts: when, what for, the model, its outcome and
    error, why it finished, how long it took, its usage, and its texts' lengths."""

    id: int
    at: int
    purpose: str
    model: str | None
    outcome: str
    error: str | None
    finishReason: str | None
    elapsedMs: int
    usage: dict[str, Any] | None
    promptChars: int
    responseChars: int


class LlmCallsJson(TypedDict):
    """The newest calls to the model, newest first, and how many are kept."""

    calls: list[LlmCallJson]
    total: int


class LlmCallTextJson(LlmCallJson):
    """One call to the model with the prompt it was sent and the reply it gave, whole."""

    prompt: str
    response: str
