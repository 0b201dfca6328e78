"""The optimizer's settings: the config's `[optimizer]` defaults, overridden per session.

A session's own choices (tier, form, context, permission, …) are kept in the store and checked
by the same schema as the config file, so a bad value is refused with the key and what is
allowed, wherever it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..config import check_section, load_config
from ..sessions.catalog import SessionKey
from ..store import Store

SECTION = "optimizer"


@dataclass(frozen=True)
class Settings:
    tier: str
    form: str
    turns: int
    full: bool
    permission: str
    skip_prefix: str
    timeout_s: float
    stall_s: float
    max_tokens: int

    def as_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "form": self.form,
            "turns": self.turns,
            "full": self.full,
            "permission": self.permission,
            "skipPrefix": self.skip_prefix,
            "timeoutS": self.timeout_s,
            "stallS": self.stall_s,
            "maxTokens": self.max_tokens,
        }


def settings_for(
    store: Store, key: SessionKey | None, overrides: dict[str, Any] | None = None
) -> Settings:
    """The defaults of `<state dir>/config.toml`, then the session's own, then `overrides`
    (e.g. a command line's options). ConfigError names a value that does not fit."""
    values = load_config(store.state_dir)[SECTION]
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


def set_session_settings(store: Store, key: SessionKey, values: dict[str, Any]) -> dict[str, Any]:
    """Merge `values` into the session's own settings (None removes a key); returns them."""
    checked = _checked(values, f"the settings of session {key[0]}:{key[1]}")
    with store.transaction() as db:
        merged = {**session_settings(store, key), **checked}
        for name in (k for k, v in values.items() if v is None):
            merged.pop(name, None)
        db.execute(
            "INSERT OR REPLACE INTO optimizer_sessions (harness, session_id, settings) "
            "VALUES (?, ?, ?)",
            (*key, orjson.dumps(merged).decode()),
        )
    return merged


def _checked(values: dict[str, Any], where: str) -> dict[str, Any]:
    """The keys given in `values` (None: not given), checked by the config's schema."""
    given = {k: v for k, v in values.items() if v is not None}
    return {k: v for k, v in check_section(SECTION, given, where).items() if k in given}
