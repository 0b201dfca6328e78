"""Handing a session off, as the CLI, the MCP tools and the forced cut all ask for it.

`slice_session` re-reads the source (a scan of its roots), builds the handoff at that moment
(never a stale preparation: seed 004 v0.9 §一) and begins it: from then on the source takes no
new work. Starting the target is `drive`, which may take a minute, so interactive callers
start it detached (`dshkit graft drive`). `caller` finds the session an MCP tool call comes
from when the harness does not say.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .. import harnesses
from ..sessions import Scanner, Source
from ..sessions.catalog import Catalog, SessionInfo
from ..store import Store
from . import lifecycle
from .handoff import Handoff, prepare_handoff
from .settings import GraftSettings


def ignition(settings: GraftSettings) -> lifecycle.Ignition:
    return lifecycle.Ignition(settings.ignite_timeout_s, settings.ignite_attempts)


def refresh(store: Store, sources: Sequence[Source]) -> Catalog:
    """Scan `sources` (waiting for a scan another process runs) and return the catalog."""
    Scanner(store).scan(list(sources))
    return Catalog(store)


def transcript_sources(path: str | os.PathLike[str]) -> list[Source]:
    """The root to scan for the session whose log is `path` (ValueError when no harness
    names its logs so)."""
    name = harnesses.detect({"transcript_path": str(path)}, {})
    for harness in [harnesses.get(name)] if name != "unknown" else harnesses.all_harnesses():
        log = harness.adapter.log_file(os.path.abspath(path))
        if log is not None:
            return [Source(harness.name, log.root)]
    raise ValueError(f"{path} is not named like the log of any harness")


def caller(catalog: Catalog, harness: str | None, cwd: str) -> SessionInfo:
    """The session a tool call without a session id comes from (`Catalog.caller`)."""
    return catalog.caller(cwd, harness)


def slice_session(
    store: Store,
    catalog: Catalog,
    source: SessionInfo,
    settings: GraftSettings,
    *,
    forced_mark: Mapping[str, Any] | None = None,
    allow_reslice: bool = False,
) -> tuple[Handoff, lifecycle.Txn]:
    """Build `source`'s handoff now and begin it (the source is transferring from here on);
    with `[graft] ignite_target` off it waits for the next session started in its directory.
    GraftAborted when its rules do not fit; GraftError (SOURCE_ALREADY_MIGRATED, BAD_PLAN)."""
    handoff = prepare_handoff(catalog, source, settings, forced_mark)
    plan = lifecycle.Plan(
        source.harness,
        source.session_id,
        source.cwd,
        handoff.first_message,
        handoff.identity,
        handoff.card.text,
    )
    txn = lifecycle.begin(store, plan, ignite=settings.ignite_target, allow_reslice=allow_reslice)
    return handoff, txn


def drive(store: Store, txn_id: int, settings: GraftSettings) -> lifecycle.Txn:
    """Start and verify the handoff's target, or roll it back (blocks for the attempts)."""
    return lifecycle.drive(store, txn_id, ignition(settings))
