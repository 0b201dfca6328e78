"""Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`.

Found by their names; each line mapped to events by `sessions.rollout` (which says how Codex
writes them), which the hot path uses too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from .events import Event
from .harness import LogFile, list_dirs, list_files, mapped
from .rollout import events

_ROLLOUT = re.compile(
    r"^rollout-.*?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$"
)


class CodexAdapter:
    name: ClassVar[str] = "codex"
    strict_lines: ClassVar[bool] = False

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        for year in list_dirs(root, links):
            for month in list_dirs(year.path, links):
                for day in list_dirs(month.path, links):
                    for entry in list_files(day.path):
                        match = _ROLLOUT.match(entry.name)
                        if match:
                            yield LogFile(entry.path, self.name, match.group(1), "", root)

    def log_file(self, path: str) -> LogFile | None:
        match = _ROLLOUT.match(os.path.basename(path))
        if match is None:
            return None
        day = os.path.dirname(path)  # <root>/YYYY/MM/DD
        root = os.path.dirname(os.path.dirname(os.path.dirname(day)))
        return LogFile(path, self.name, match.group(1), "", root)

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]:
        return mapped(records, state, events)
