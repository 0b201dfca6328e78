"""Where a session came from: the identity line a handoff puts in its target's first message.

A target's first message starts with one machine-readable line
(docs/design/graft.md#every-target-carries-its-identity)::

    <!-- graft-identity: {"sourceSessionId":"…","boundarySeq":4043,"generation":1} -->

An HTML comment renders as nothing and reads to the model as no instruction, while any plain
log read gives back the exact source, boundary and generation. The ignition mark names the
message as dshkit's own words: it is a `user` message in every harness (it arrives as the
first prompt), but nobody typed it, so no human rule or request is read from it.

DSH's own handoff plugin (dsh-graft-slice) starts its targets the same way: a seeded card,
a message of source kind `plugin:dsh-graft-slice`, and an ignition prompt that is a real
`user` message beginning with `[dsh-graft-slice 点火]`. Both are its words, not the person's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

from ..sessions.events import Event, human_messages, message_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .wire import IdentityJson

IDENTITY_PREFIX = "<!-- graft-identity: "
IDENTITY_SUFFIX = " -->"
IGNITION_MARK = "[dshkit 交接点火]"
# DSH's handoff plugin: the source kind of the card it seeds a target with, and the marks
# that open its own messages (the ignition prompt; the rollback notice it writes to a source).
PLUGIN_SOURCE_KIND = "plugin:dsh-graft-slice"
PLUGIN_MARKS = ("[dsh-graft-slice 点火]", "[dsh-graft-slice 回滚]")


@dataclass(frozen=True, slots=True)
class Identity:
    """A target's origin: the source session, the seq it was cut at and its generation (the
    source's generation + 1; a session started by a person is generation 0)."""

    source_session_id: str
    boundary_seq: int
    generation: int

    def as_json(self) -> IdentityJson:
        return {
            "sourceSessionId": self.source_session_id,
            "boundarySeq": self.boundary_seq,
            "generation": self.generation,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Identity:
        return cls(value["sourceSessionId"], value["boundarySeq"], value["generation"])

    def render(self) -> str:
        """The identity line (compact JSON, keys in a fixed order, non-ASCII kept)."""
        return IDENTITY_PREFIX + orjson.dumps(self.as_json()).decode() + IDENTITY_SUFFIX


def parse_identity(text: str) -> Identity | None:
    """The identity on the first line of `text` that is one, or None (no line, or a line
    whose JSON is not an identity: a wrong identity is worse than none)."""
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith(IDENTITY_PREFIX.rstrip()) and line.endswith(IDENTITY_SUFFIX)):
            continue
        try:
            value = orjson.loads(line[len(IDENTITY_PREFIX.rstrip()) : -len(IDENTITY_SUFFIX)])
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        source, seq, generation = (
            value.get("sourceSessionId"),
            value.get("boundarySeq"),
            value.get("generation"),
        )
        # boundarySeq -1: the source had no finished turn when it was cut.
        if isinstance(source, str) and source and _whole(seq, -1) and _whole(generation, 1):
            return Identity(source, seq, generation)
        return None
    return None


def _whole(value: object, minimum: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def session_identity(events: Sequence[Event]) -> Identity | None:
    """The identity of a session born from a handoff, read from its first human message only
    (a line pasted later in a session does not make it a target), or None."""
    first = next(iter(human_messages(events)), None)
    return None if first is None else parse_identity(message_text(first))


def generation(events: Sequence[Event]) -> int:
    """The session's generation: 0 for one a person started, the identity's otherwise."""
    identity = session_identity(events)
    return 0 if identity is None else identity.generation


def is_handoff_message(text: str) -> bool:
    """Handoff words, not a person's: dshkit's ignition prompt and card, or a message of DSH's
    handoff plugin (a line opening with one of its marks)."""
    if IGNITION_MARK in text or parse_identity(text) is not None:
        return True
    return any(line.lstrip().startswith(PLUGIN_MARKS) for line in text.splitlines())


def is_plugin_card(event: Event) -> bool:
    """A message DSH's handoff plugin wrote into a session (the card it seeds a target with):
    source kind `plugin:dsh-graft-slice`, or the older `plugin` kind naming it."""
    if event.get("type") != "user/message":
        return False
    source = (event.get("data") or {}).get("source") or {}
    kind = source.get("kind")
    if kind == PLUGIN_SOURCE_KIND:
        return True
    plugin = str(source.get("plugin") or "")
    return kind == "plugin" and plugin.rsplit("/", 1)[-1] == PLUGIN_SOURCE_KIND.split(":")[1]
