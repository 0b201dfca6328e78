"""The command-hook protocol: events, who is calling, and well-formed, capped answers.

Kept free of heavy imports: it runs on every tool call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import harnesses

# Claude Code caps a hook's output strings at 10,000 characters; nothing longer is emitted.
MAX_OUTPUT_CHARS = 10_000


@dataclass
class HookInput:
    event: str
    payload: dict[str, Any]
    harness: str  # "claude", "codex", "dsh", or "unknown"
    state_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def harness_info(self) -> harnesses.Harness | None:
        """The registry's entry for the calling harness (None when it is not known)."""
        return harnesses.HARNESSES.get(self.harness)

    @property
    def session_id(self) -> str:
        return str(self.payload.get("session_id") or "")


def cap(text: str) -> str:
    """`text` within the output cap, cut at a line break (deterministic, so still stable)."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
    return text[: cut if cut > 0 else MAX_OUTPUT_CHARS]


def answer(event: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """Merge handler results into the protocol's JSON; {} is "no opinion".

    A result may carry `additionalContext`, `decision`/`reason` (block), or
    `permissionDecision`/`permissionDecisionReason` (PreToolUse). The first decision wins;
    contexts are joined.
    """
    contexts = [r["additionalContext"] for r in results if r.get("additionalContext")]
    specific: dict[str, Any] = {}
    if contexts:
        specific["additionalContext"] = cap("\n\n".join(contexts))
    permission = next((r for r in results if r.get("permissionDecision")), None)
    if permission is not None:
        specific["permissionDecision"] = permission["permissionDecision"]
        specific["permissionDecisionReason"] = cap(permission.get("permissionDecisionReason", ""))
    out: dict[str, Any] = {}
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event, **specific}
    block = next((r for r in results if r.get("decision") == "block"), None)
    if block is not None:
        out.update(decision="block", reason=cap(str(block.get("reason", ""))))
    return out
