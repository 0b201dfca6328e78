"""The `[graft]` settings, typed: when to hand off, what the handoff may hold, how to start it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..config import load_config


@dataclass(frozen=True, slots=True)
class GraftSettings:
    """The `[graft]` configuration section, typed (see `dshkit.config` for each key)."""

    mode: str = "dynamic"
    warning_ratio: float = 0.70
    forced_ratio: float = 0.75
    warning_margin: float = 0.05
    forced: bool = True
    reserve_turns: int = 3
    growth_tokens_per_turn: int = 4_000
    handoff_tokens: int = 12_000
    window_tokens: int = 200_000
    card_chars: int = 1_400
    constraint_budget_chars: int = 8_000
    ignite_target: bool = True
    ignite_timeout_s: float = 20.0
    ignite_attempts: int = 3
    ignite_spacing_s: float = 20.0
    force_retry_s: float = 120.0
    force_retry_cap_s: float = 1_800.0
    report_wait_s: float = 30.0
    # model name → its window ([graft.windows]); read-only, and left out of the hash
    windows: Mapping[str, int] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "windows", MappingProxyType(dict(self.windows)))

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> GraftSettings:
        return cls(**{key: section[key] for key in cls.__slots__ if key in section})

    @classmethod
    def load(cls, state_dir: Path) -> GraftSettings:
        """The `[graft]` section of the state directory's config (ConfigError if unusable)."""
        return cls.from_config(load_config(state_dir)["graft"])
