"""The profile's kept versions, newest first, each with its entries, its diff against the one
before and how its answer was read (spurious rate, partial, rescue), for the console."""

from __future__ import annotations

import orjson

from ..store import Store
from .wire import ProfileVersionsJson

VERSIONS_LIMIT = 200


def profile_versions(store: Store, limit: int = 50) -> ProfileVersionsJson:
    """The newest `limit` versions and how many are kept in all (ValueError on a bad limit)."""
    if not 1 <= limit <= VERSIONS_LIMIT:
        raise ValueError(f"limit must be from 1 to {VERSIONS_LIMIT}, got {limit}")
    rows = store.db.execute(
        "SELECT version, at, entries, diff, spurious_rate, partial, rescue, material_messages, "
        "reason, notes FROM profile_versions ORDER BY version DESC LIMIT ?",
        (limit,),
    ).fetchall()
    (kept,) = store.db.execute("SELECT count(*) FROM profile_versions").fetchone()
    return {
        "kept": kept,
        "versions": [
            {
                "version": row[0],
                "at": row[1],
                "entries": orjson.loads(row[2]),
                "diff": orjson.loads(row[3]),
                "spuriousRate": row[4],
                "partial": bool(row[5]),
                "rescue": orjson.loads(row[6]) if row[6] else None,
                "materialMessages": row[7],
                "reason": row[8],
                "notes": row[9],
            }
            for row in rows
        ],
    }
