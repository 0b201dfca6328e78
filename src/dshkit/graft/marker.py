"""Whether a state directory ever began a handoff: a plain-file hint for the hot hook path.

A tool call in a session that was handed off is refused, which takes a look at the store's
ledger; that look (SQLite and the store's imports) would otherwise land on every tool call of
every session. The hint is written before the first handoff begins and never removed, so its
absence always means no session here was ever handed off, and the store need not be opened.
"""

from __future__ import annotations

import os

NAME = "graft.used"


def used(state_dir: str) -> bool:
    return os.path.exists(os.path.join(state_dir, NAME))


def mark(state_dir: str) -> None:
    """Write the hint (owner-only, empty), once."""
    if not used(state_dir):
        os.close(os.open(os.path.join(state_dir, NAME), os.O_CREAT | os.O_WRONLY, 0o600))
