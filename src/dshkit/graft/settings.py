"""The `[graft]` settings, typed: when to hand off, what the handoff may hold, how to start it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..config import CONFIG_NAME, SECTIONS, ConfigError, check_section, env_override, load_config

# What a refused `[graft]` value leaves in force, said after the refusal
# (docs/design/graft.md#a-refused-setting-falls-back-to-its-default).
FALLBACK = "the default is used instead"


@dataclass(frozen=True, slots=True)
class GraftSettings:
    """The `[graft]` configuration section, typed (see `dshkit.config` for each key)."""

    mode: str = "dynamic"
    warning_ratio: float = 0.70
    forced_ratio: float = 0.75
    warning_margin: float = 0.05
    forced: bool = True
    model_driven: bool = True
    search_scope: bool = False
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

    @classmethod
    def resolve(
        cls, state_dir: str | os.PathLike[str], environ: Mapping[str, str] | None = None
    ) -> tuple[GraftSettings, str | None]:
        """The settings the watermark runs on whatever the file says, and what in `[graft]`
        was refused (None: nothing). A value that does not fit is refused with the config's
        own message and its key takes its default; the keys that fit keep their values. The
        nudge and the forced cut never go quiet because one value is wrong, as the guard
        never stops judging for a broken file
        (docs/design/graft.md#a-refused-setting-falls-back-to-its-default). A problem in
        another section is that section's: `[graft]` is read as written."""
        env = os.environ if environ is None else environ
        try:
            return cls.from_config(load_config(Path(state_dir), env)["graft"]), None
        except ConfigError as whole:
            refused = str(whole)
        path = Path(state_dir) / CONFIG_NAME
        try:
            import tomllib

            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return cls(), f"{refused}; every [graft] setting: {FALLBACK}"
        table = document.get("graft", {})
        if not isinstance(table, dict):
            return cls(), f"{refused}; every [graft] setting: {FALLBACK}"
        schema = SECTIONS["graft"]
        values: dict[str, Any] = {}
        problems: list[str] = []
        for key, value in table.items():
            if key not in schema:
                problems.append(
                    f"{path}: [graft] has unknown key {key!r} (ignored); known: {', '.join(schema)}"
                )
                continue
            try:
                values[key] = check_section("graft", {key: value}, str(path))[key]
            except ConfigError as exc:
                problems.append(f"{exc}; {FALLBACK}")
        for key in schema:
            try:
                override = env_override("graft", key, env)
            except ConfigError as exc:
                problems.append(f"{exc}; {FALLBACK}")
                continue
            if override is not None:
                values[key] = override
        return cls.from_config(values), "\n".join(problems) or None
