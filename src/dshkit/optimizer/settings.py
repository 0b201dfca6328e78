"""The optimizer's settings: the config's `[optimizer]` defaults, then a project's, then a
session's own.

A project (a working directory, as `dir_key` spells it) and a session each keep only the
choices made for them (tier, form, context, permission, …), in the store, checked by the same
schema as the config file, so a bad value is refused with the key and what is allowed,
wherever it comes from. Changing one key never touches the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..config import ConfigError, check_section, load_config
from ..harnesses.prompt_input import DEFAULT_PREFIX, collision
from ..paths import dir_key
from ..store import Store

if TYPE_CHECKING:
    from ..sessions.catalog import SessionKey
    from .wire import SettingsJson

SECTION = "optimizer"


@dataclass(frozen=True)
class Settings:
    tier: str
    form: str
    turns: int
    full: bool
    permission: str
    skip_prefix: str  # "": the harness's safe default (`skip_prefix_for`)
    skip_trivial: bool
    trivial_words: str
    timeout_s: float
    stall_s: float
    max_tokens: int
    budget_s: float = 10.0  # the prompt hook's wall budget per prompt
    strategy: str = "v6"
    model: str = ""  # "": the [llm] model
    reasoning_effort: str = ""  # "": none sent

    def skip_prefix_for(self, harness: str | None) -> str:
        """dshkit's prompt prefix in `harness`: the configured one, refused (ConfigError
        naming the key) where it collides with that harness's own, else the safe default."""
        if not self.skip_prefix:
            return DEFAULT_PREFIX
        why = collision(self.skip_prefix, harness)
        if why is not None:
            raise ConfigError(
                f"[{SECTION}] skip_prefix = {self.skip_prefix!r} is not allowed: {why}; "
                f"choose another (default {DEFAULT_PREFIX!r})"
            )
        return self.skip_prefix

    def as_json(self) -> SettingsJson:
        return {
            "tier": self.tier,
            "form": self.form,
            "turns": self.turns,
            "full": self.full,
            "permission": self.permission,
            "skipPrefix": self.skip_prefix or DEFAULT_PREFIX,
            "skipTrivial": self.skip_trivial,
            "trivialWords": self.trivial_words,
            "timeoutS": self.timeout_s,
            "stallS": self.stall_s,
            "maxTokens": self.max_tokens,
            "budgetS": self.budget_s,
            "strategy": self.strategy,
            "model": self.model,
            "reasoningEffort": self.reasoning_effort,
        }


def settings_for(
    store: Store,
    key: SessionKey | None,
    overrides: dict[str, Any] | None = None,
    *,
    project: str | None = None,
) -> Settings:
    """The defaults of `<state dir>/config.toml`, then the project's (the directory
    `project`), then the session's own, then `overrides` (e.g. a command line's options).
    ConfigError names a value that does not fit."""
    values = load_config(store.state_dir)[SECTION]
    if project is not None:
        values.update(project_settings(store, project))
    if key is not None:
        values.update(session_settings(store, key))
    if overrides:
        values.update(_checked(overrides, "the given settings"))
    return Settings(**values)


def session_settings(store: Store, key: SessionKey) -> dict[str, Any]:
    """What one session chose apart from the defaults."""
    row = store.db.execute(
        "SELECT settings FROM optimizer_sessions WHERE harness = ? AND session_id = ?", key
    ).fetchone()
    return orjson.loads(row[0]) if row else {}


def project_settings(store: Store, project: str) -> dict[str, Any]:
    """What one project (a working directory) chose apart from the defaults."""
    row = store.db.execute(
        "SELECT settings FROM optimizer_projects WHERE dir = ?", (dir_key(project),)
    ).fetchone()
    return orjson.loads(row[0]) if row else {}


def set_session_settings(store: Store, key: SessionKey, values: dict[str, Any]) -> dict[str, Any]:
    """Merge `values` into the session's own settings; returns them. Only the keys given
    change: a key absent from `values` is kept, and a key given as None is removed (the
    session then follows its project or the defaults for it)."""
    checked = _checked(values, f"the settings of session {key[0]}:{key[1]}")
    with store.transaction() as db:
        merged = _merged(session_settings(store, key), checked, values)
        # An upsert, not a replace: the row also holds what the endpoint answered about tools.
        db.execute(
            "INSERT INTO optimizer_sessions (harness, session_id, settings) VALUES (?, ?, ?) "
            "ON CONFLICT (harness, session_id) DO UPDATE SET settings = excluded.settings",
            (*key, orjson.dumps(merged).decode()),
        )
    return merged


def set_project_settings(store: Store, project: str, values: dict[str, Any]) -> dict[str, Any]:
    """Merge `values` into the settings of the project in directory `project`, as
    `set_session_settings` does for a session; returns them."""
    where = dir_key(project)
    checked = _checked(values, f"the settings of project {where}")
    with store.transaction() as db:
        merged = _merged(project_settings(store, where), checked, values)
        db.execute(
            "INSERT OR REPLACE INTO optimizer_projects (dir, settings) VALUES (?, ?)",
            (where, orjson.dumps(merged).decode()),
        )
    return merged


def tools_refused(store: Store, key: SessionKey) -> bool:
    """Whether the session's endpoint has refused the read-only tools."""
    row = store.db.execute(
        "SELECT tools_refused_at FROM optimizer_sessions WHERE harness = ? AND session_id = ?",
        key,
    ).fetchone()
    return bool(row and row[0] is not None)


def remember_tools_refused(store: Store, key: SessionKey, at_ms: int) -> None:
    """Record that the session's endpoint refused the tools: later runs go without them."""
    with store.transaction() as db:
        db.execute(
            "INSERT INTO optimizer_sessions (harness, session_id, settings, tools_refused_at) "
            "VALUES (?, ?, '{}', ?) ON CONFLICT (harness, session_id) "
            "DO UPDATE SET tools_refused_at = excluded.tools_refused_at",
            (*key, at_ms),
        )


def _merged(kept: dict[str, Any], checked: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    merged = {**kept, **checked}
    for name in (k for k, v in given.items() if v is None):
        merged.pop(name, None)
    return merged


def _checked(values: dict[str, Any], where: str) -> dict[str, Any]:
    """The keys given in `values` (None: not given), checked by the config's schema."""
    given = {k: v for k, v in values.items() if v is not None}
    return {k: v for k, v in check_section(SECTION, given, where).items() if k in given}
