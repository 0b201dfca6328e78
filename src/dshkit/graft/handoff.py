"""The handoff: everything a new session receives from the one it continues, built read-only.

`prepare_handoff` reads the source session's conversation through the session layer and
returns the task board (`semantic.py`, `board.py`), the human's standing rules verbatim
(`constraints.py`), the identity of the target-to-be (`identity.py`) and the first message
that starts the target: identity line, ignition prompt, card, constraints. It writes nothing:
`graft_prepare` and the single-step slice both call it, the slice at the moment it cuts, so
what the target receives is never a stale preparation
(docs/design/graft.md#prepare-at-the-moment-of-the-cut).

A handoff that cannot carry every constraint whole is not built: `GraftAborted` says which
did not fit (docs/design/graft.md#hard-constraints-are-never-cut).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import harnesses
from ..provenance.secrets import redact
from ..sessions.catalog import Catalog, SessionInfo
from ..sessions.events import Event, session_model
from . import ledger
from .board import CLOSING_RULE, Card, render_card
from .constraints import (
    NO_MAYBE,
    ConstraintPack,
    MaybeBlock,
    assert_constraints_preserved,
    extract,
    pack_constraints,
    render_maybe_rules,
)
from .identity import IGNITION_MARK, Identity, generation, session_identity
from .scope import SCOPE_MARK, search_scope
from .semantic import SemanticState, extract_semantic_state
from .settings import GraftSettings
from .watermark import forced_cut_note
from .wire import HandoffJson


@dataclass(frozen=True, slots=True)
class Handoff:
    """A prepared handoff of one source session (see the module docstring)."""

    source: SessionInfo
    identity: Identity  # the target's: source, boundary seq, its generation
    state: SemanticState
    card: Card
    constraints: ConstraintPack
    first_message: str
    model: str | None = None  # the source's, as its log names it: the target runs on it
    mode: str | None = None  # the source's permission mode, as its log names it
    maybe: MaybeBlock = NO_MAYBE  # the person's sentences no class took

    def as_json(self) -> HandoffJson:
        state = self.state
        return {
            "board": {
                "request": state.request.text if state.request else None,
                "done": [item.as_json() for item in state.done],
                "inProgress": [item.as_json() for item in state.in_progress],
                "todo": [item.as_json() for item in state.todo],
                "blocker": state.blocker.as_json() if state.blocker else None,
            },
            "constraints": [c.as_json() for c in self.constraints.constraints],
            "maybeRules": {
                "carried": [c.as_json() for c in self.maybe.carried],
                "leftOut": [c.as_json() for c in self.maybe.left_out],
                "text": self.maybe.text,
            },
            "card": self.card.text,
            "boundarySeq": state.boundary_seq,
            "artifacts": [item.as_json() for item in state.artifacts],
            "cardCut": dict(self.card.omitted) if self.card.cut else None,
            "slimming": state.slimming.as_json(),
            "constraintIntegrity": self.constraints.integrity,
            "identity": self.identity.as_json(),
            "source": {
                "harness": self.source.harness,
                "sessionId": self.source.session_id,
                "cwd": self.source.cwd,
            },
            "firstMessage": self.first_message,
            "launch": {"model": self.model, "mode": self.mode},
        }


def ignition_prompt(source_session_id: str, turn: int, cwd: str = "") -> str:
    """The words that start the target: whose work it continues, where it may search, and
    the closing rule."""
    where = f"第 {turn} 轮结束处" if turn else "第一轮结束之前"
    scope = search_scope(cwd).removeprefix(SCOPE_MARK + " ") if cwd else ""
    return (
        f"{IGNITION_MARK} 这是一次上下文交接：会话 {source_session_id} 在{where}"
        "把工作交给了你，下面的看板和硬约束就是交接的全部内容。" + scope + CLOSING_RULE
    )


def build_handoff(
    source: SessionInfo,
    events: Sequence[Event],
    settings: GraftSettings,
    forced_mark: Mapping[str, Any] | None = None,
    *,
    received: str | None = None,
    mode: str | None = None,
) -> Handoff:
    """The handoff of `source` given its conversation `events` (pure: no store, no files).

    `forced_mark`: the mark of a forced cut after an ignored warning (`watermark.Decision`),
    which the card states so the target knows the cut was not planned
    (docs/design/graft.md#an-ignored-warning-escalates-and-leaves-a-mark). `received`:
    the first message of the handoff this session was born from, when its log does not keep
    it as its first message (it arrived as hook context): read as that message, so its
    identity and inherited constraints pass on to the next generation. `mode`: the source's
    permission mode, which the target is started in."""
    if received is not None and session_identity(events) is None:
        events = [_received_event(received), *events]
    model = session_model(events)
    state = extract_semantic_state(events, source.harness, source.cwd)
    notes = (f"**强制切断**：{forced_cut_note(forced_mark)}",) if forced_mark else ()
    card = render_card(state, source.session_id, settings.card_chars, notes)
    said = extract(events, state.request.text if state.request else None)
    pack = pack_constraints(said.constraints, settings.constraint_budget_chars)
    maybe = render_maybe_rules(said.maybe)
    identity = Identity(source.session_id, state.boundary_seq, generation(events) + 1)
    prompt = ignition_prompt(source.session_id, state.turn, source.cwd)
    parts = [identity.render(), prompt, "", card.text]
    if pack.text:
        parts += ["", pack.text]
    if maybe.text:
        parts += ["", maybe.text]
    # Every part was redacted where it was taken from the log; this is the last look, over
    # the message as it leaves (a secret split across parts, a note): nothing secret goes.
    first_message = redact("\n".join(parts)).text
    assert_constraints_preserved(pack, first_message)
    return Handoff(source, identity, state, card, pack, first_message, model, mode, maybe)


def _received_event(text: str) -> Event:
    """The first message of a session's handoff as the message it stands for (before every
    event of the log: seq -1)."""
    content = [{"type": "text", "text": text}]
    return {
        "type": "user/message",
        "seq": -1,
        "data": {"role": "user", "content": content, "source": {"kind": "user"}},
    }


def prepare_handoff(
    catalog: Catalog,
    source: SessionInfo,
    settings: GraftSettings,
    forced_mark: Mapping[str, Any] | None = None,
) -> Handoff:
    """The handoff of a scanned session, read from the store (read-only): with what it was
    given by the handoff it was born from, and the permission mode its log names last."""
    got = ledger.received(catalog.store, source.harness, source.session_id)
    files = catalog.files(source.key)
    read_mode = harnesses.get(source.harness).launcher.read_mode
    mode = read_mode(files[-1].path) if files and read_mode is not None else None
    return build_handoff(
        source,
        catalog.conversation(source.key),
        settings,
        forced_mark,
        received=None if got is None else got[1],
        mode=mode,
    )
