"""What one optimization request resolves to, the same for the CLI, the service and MCP: the
session it names, the settings it runs with, the directory its tools may read, the LLM."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..llm import LLMConfig
from ..sessions import Catalog, SessionKey
from ..store import Store
from .context import resolve_session
from .settings import Settings, settings_for


@dataclass(frozen=True, slots=True)
class Request:
    key: SessionKey | None
    settings: Settings
    cwd: str | None  # the directory the read-only tools may read (None: no files)


def session_key(store: Store, session: str | None, harness: str | None) -> SessionKey | None:
    """The stored session `session` names (None when it is None or empty); ValueError when it
    matches none or several."""
    if not session:
        return None
    key = resolve_session(Catalog(store), session, harness)
    if key is None:
        raise ValueError(f"no single session matches {session!r} (dshkit sessions list)")
    return key


def resolve_request(
    store: Store,
    session: str | None,
    harness: str | None,
    overrides: Mapping[str, Any],
    cwd: str | None = None,
) -> Request:
    """The request's session (ValueError when `session` matches none or several), its
    settings with `overrides` on top (ConfigError) and its directory: `cwd`, else the
    session's."""
    key = session_key(store, session, harness)
    settings = settings_for(store, key, dict(overrides))
    info = Catalog(store).get(key) if key else None
    return Request(key, settings, cwd or (info.cwd if info and info.cwd else None))


def llm_for(store: Store, settings: Settings) -> LLMConfig | None:
    """The LLM the settings call for, checked (ConfigError naming what is missing), or None
    when the tier is off."""
    if settings.tier == "off":
        return None
    llm = LLMConfig.load(store.state_dir)
    llm.check()
    return llm
