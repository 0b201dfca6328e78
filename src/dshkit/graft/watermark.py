"""When to hand off: context pressure, the safe watermark, and the decision at each step.

Everything here is a pure function of (events, settings, state), so the hooks, the CLI and
the tests ask the same question the same way
(docs/design/graft.md#the-model-decides-when-within-a-band,
docs/design/graft.md#the-cut-falls-where-the-handoff-still-fits).

- Pressure is the latest request's input + cache read + cache write (`sessions.events`)
  against the window the log announces (`request/context.contextWindow`: DSH, Codex) or, where
  the log announces none (Claude Code), the window configured for the session's model
  (`[graft.windows]`), else the configured `window_tokens`. Its `source` says how far to
  trust it: `usage` (provider usage against the log's window), `estimated` (provider usage
  against a configured window) or `unavailable` (no usage yet): never a number made up from
  characters, which would disagree with the harness's own meter
  (docs/design/graft.md#pressure-is-what-the-harness-measured).
- The watermark: in `dynamic` mode the forced cut sits where the handoff still fits, i.e.
  the window minus the handoff's cost and the growth of `reserve_turns` more turns, clamped
  to [0.50, 0.75] (0.75 was the latest cut that ever worked; below 0.50 the window cannot
  hold a handoff: `feasible` is False). The warning sits `warning_margin` below it. `fixed`
  mode keeps the old 0.70 / 0.75 constants (configurable) for differential tests.
- A warning at or above the forced line is not clamped into something that looks usable:
  there is simply no warning window, and `config_error` says so
  (docs/design/graft.md#a-warning-above-the-cut-is-a-configuration-error).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..sessions.events import (
    Event,
    TurnCounter,
    context_window,
    is_human_message,
    session_model,
    todo_items,
    usages,
)
from . import texts
from .identity import Identity, session_identity
from .lines import CEILING as CEILING  # (defined in `lines`: named here too)
from .lines import FLOOR as FLOOR
from .lines import GRAFT_TOOLS as GRAFT_TOOLS
from .lines import GROWTH_SAMPLE_TURNS, band, cut_lines, drawn, growth, plan_due, safe_cut, window
from .lines import OPEN_TODO_LIMIT as OPEN_TODO_LIMIT
from .lines import PROTECTED_TURNS as PROTECTED_TURNS
from .settings import GraftSettings
from .texts import escalation, nudge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .wire import (
        DecisionJson,
        DigestJson,
        ForcedCutMark,
        GraftStateJson,
        PressureJson,
        WatermarkJson,
    )

# A handoff tool named by its MCP name in a call's arguments: the model loading that tool
# (a harness that defers MCP tools, e.g. Claude Code's ToolSearch) is obeying the nudge.
_LOADS_GRAFT_TOOL = re.compile(rf"mcp__[\w.-]+?__({'|'.join(GRAFT_TOOLS)})\b")
# How far a transcript may grow before its session could reach the band, for the hot path's
# skip (`room_bytes`): a token stands for at least one byte of the text it encodes, and a
# transcript logs that text (escaped and framed: more bytes, never fewer), so a byte of log is
# at most a token of context; a harness may still add context it does not log (the tools of a
# server that connected late, reminders), allowed for as a share of the window.
TOKENS_PER_BYTE = 1
UNLOGGED_SHARE = 0.10


class Value:
    """A plain value class: equal, hashed and shown by its slots (what a frozen dataclass gives,
    without the cost of building one at import: the watermark is imported on the hot path)."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Pressure(Value):
    """How full the context is, and where each figure came from."""

    __slots__ = ("model", "source", "tokens", "window", "window_source")

    def __init__(
        self,
        tokens: int | None,
        window: int,
        window_source: str,  # "log" | "model-config" | "config"
        source: str,  # "usage" | "estimated" | "unavailable"
        model: str | None = None,  # the session's model, as its log last named it
    ) -> None:
        self.tokens, self.window, self.window_source = tokens, window, window_source
        self.source, self.model = source, model

    @property
    def ratio(self) -> float | None:
        return None if self.tokens is None else self.tokens / self.window

    def as_json(self) -> PressureJson:
        return {
            "tokens": self.tokens,
            "window": self.window,
            "windowSource": self.window_source,
            "ratio": self.ratio,
            "source": self.source,
            "model": self.model,
        }


def context_pressure(events: Sequence[Event], settings: GraftSettings) -> Pressure:
    """The latest request's context tokens against the session's window: the one its log
    announces, else the one configured for its model, else the configured default."""
    return Digest.of(events).pressure(settings)


@dataclass(slots=True)
class Digest:
    """What the decisions need of a session's events, small and extendable: a live session's
    hooks fold each tail read into the digest they keep, instead of rereading the whole log.

    `count` is the number of events folded; `turns` numbers turns as the session layer does
    everywhere (`events.TurnCounter`); `last_step` and `last_graft_call` are positions (0-based,
    -1 for none) of the last model step and the last call of a handoff tool."""

    count: int = 0
    window: int | None = None  # as the log last announced it
    model: str | None = None
    context: int | None = None  # the latest request's context tokens
    turns: TurnCounter = field(default_factory=TurnCounter)
    levels: list[list[int]] = field(default_factory=list)  # [ordinal, context], recent turns
    humans: int = 0
    identity: Identity | None = None  # from the first human message only
    last_step: int = -1
    last_graft_call: int = -1
    todos: list[str] = field(default_factory=list)  # the latest list's unfinished items

    @classmethod
    def of(cls, events: Sequence[Event]) -> Digest:
        digest = cls()
        digest.extend(events)
        return digest

    def extend(self, events: Sequence[Event]) -> None:
        """Fold events that follow the ones already folded."""
        for event in events:
            kind = event.get("type")
            if kind == "turn/start":
                self.turns.add(event)
            elif kind == "request/context":
                self.window = context_window((event,)) or self.window
            elif kind == "user/message" and is_human_message(event):
                if self.humans == 0:
                    self.identity = session_identity((event,))
                self.humans += 1
            if kind in ("request/context", "assistant/message"):
                self.model = session_model((event,)) or self.model
            if kind in ("assistant/message", "tool/call"):
                self.last_step = self.count
            if kind == "tool/call" and _calls_graft_tool(event.get("data") or {}):
                self.last_graft_call = self.count
            for _, usage in usages((event,)):
                self.context = usage.context
                ordinal = self.turns.ordinal
                if self.levels and self.levels[-1][0] == ordinal:
                    self.levels[-1][1] = usage.context
                else:
                    self.levels = [*self.levels, [ordinal, usage.context]][
                        -(GROWTH_SAMPLE_TURNS + 1) :
                    ]
            items = todo_items(event)
            if items is not None:
                self.todos = [
                    str(item.get("content", item.get("step", "")))
                    for item in items
                    if item.get("status") != "completed"
                ]
            self.count += 1

    @property
    def ordinal(self) -> int:
        """Turns started so far."""
        return self.turns.ordinal

    def pressure(self, settings: GraftSettings) -> Pressure:
        """The latest request's context against the window (see `context_pressure`)."""
        model = self.model
        limit, window_source = window(self.window, model, settings.windows, settings.window_tokens)
        tokens = self.context
        source = "unavailable" if tokens is None else "usage" if self.window else "estimated"
        return Pressure(tokens, limit, window_source, source, model)

    def cost(self, settings: GraftSettings) -> GraftCost:
        """The handoff's cost (see `estimate_graft_cost`)."""
        rise = growth([context for _, context in self.levels])
        if rise is None:
            rise, source = settings.growth_tokens_per_turn, "config"
        else:
            source = "history"
        return GraftCost(settings.handoff_tokens, rise, source, settings.reserve_turns)

    def as_json(self) -> DigestJson:
        return {
            "count": self.count,
            "window": self.window,
            "model": self.model,
            "context": self.context,
            "levels": self.levels,
            "humans": self.humans,
            "identity": None if self.identity is None else self.identity.as_json(),
            "last_step": self.last_step,
            "last_graft_call": self.last_graft_call,
            "todos": self.todos,
            "ordinal": self.turns.ordinal,
            "turn": self.turns.number,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Digest:
        fields = {name: value[name] for name in cls.__slots__ if name in value}
        identity = fields.get("identity")
        fields["identity"] = None if identity is None else Identity.from_json(identity)
        # A digest kept before turns had their own number: its ordinal stands in for it.
        ordinal = value.get("ordinal", 0)
        fields["turns"] = TurnCounter(ordinal, value.get("turn", ordinal))
        return cls(**fields)


def band_tokens(digest: Digest, settings: GraftSettings) -> int:
    """The fewest context tokens at which any decision but the plan-first nudge can be taken
    for the session, whatever its later log says: the lowest warning (or forced line) the
    settings allow, over the smallest window the session could be measured against (its
    log's, any configured one), less the unlogged allowance."""
    window = min(
        (
            settings.window_tokens,
            *settings.windows.values(),
            *([digest.window] if digest.window else []),
        )
    )
    if settings.mode == "fixed":
        ratios = [settings.warning_ratio] + ([settings.forced_ratio] if settings.forced else [])
    else:  # the forced line never falls below FLOOR; the warning sits its margin below it
        ratios = [FLOOR, FLOOR - settings.warning_margin]
    return int(min(ratios) * window - UNLOGGED_SHARE * window)


def room_bytes(digest: Digest, settings: GraftSettings) -> int | None:
    """How many bytes of log past the latest usage the session can take and still be below
    `band_tokens` (each byte at most TOKENS_PER_BYTE tokens of context), or None when there
    is no room or no usage to measure from."""
    if digest.context is None:
        return None
    room = band_tokens(digest, settings) - digest.context
    return room // TOKENS_PER_BYTE if room > 0 else None


def next_turn(digest: Digest) -> Digest:
    """The digest as a person's next message leaves it, for `usage_ceiling`: one more turn
    (no request of it yet: its level comes with its first usage)."""
    turns = TurnCounter(digest.turns.ordinal + 1, digest.turns.number + 1)
    return replace(digest, turns=turns)


def turn_told(digest: Digest, settings: GraftSettings) -> bool:
    """Whether a person's next message, before any request of the turn it begins, reaches
    the warning or forced line at the digest's context (a new turn: the warning counts
    again), as `decide_digest` measures it."""
    if digest.context is None:
        return False
    after = next_turn(digest)
    pressure = after.pressure(settings)
    line = _watermark(after, settings, pressure.window)
    lines = [ratio for ratio in (line.warning, line.forced) if ratio is not None]
    return bool(lines) and digest.context / pressure.window >= min(lines)


def usage_ceiling(
    digest: Digest, settings: GraftSettings, state: GraftState | None = None
) -> int | None:
    """The fewest context tokens a later request of the same turn (same window, same model,
    no new human message) needs before the warning or the forced line can be reached, or None
    when the session is there already or has no usage to measure from. A session warned and
    escalated in this turn (`state`) is told nothing more before the forced line: only that
    line counts then.

    Below it the decision stays what it was (none: the plan-first nudge reads only todos), so
    the hot path may skip a call whose log adds only such requests below it. The lines move
    with the request itself (its rise over the turn before feeds the growth a dynamic cut
    allows for), never up as it grows: the first context that reaches them is found by halving."""
    forced_only = state is not None and state.escalated and state.nudge_turn == digest.ordinal
    if digest.context is None or _reached(digest, digest.context, settings, forced_only):
        return None
    below, above = digest.context, max(2 * digest.pressure(settings).window, digest.context + 1)
    if not _reached(digest, above, settings, forced_only):
        return above  # no line at all within twice the window: the cap is a line of its own
    while above - below > 1:
        middle = (below + above) // 2
        if _reached(digest, middle, settings, forced_only):
            above = middle
        else:
            below = middle
    return above


def _reached(digest: Digest, context: int, settings: GraftSettings, forced_only: bool) -> bool:
    """Whether a request at `context` tokens in the digest's open turn is at its warning or
    forced line (only the forced one: `forced_only`), as `Digest.extend` would fold it."""
    ordinal = digest.turns.ordinal
    if digest.levels and digest.levels[-1][0] == ordinal:
        levels = [*digest.levels[:-1], [ordinal, context]]
    else:
        levels = [*digest.levels, [ordinal, context]][-(GROWTH_SAMPLE_TURNS + 1) :]
    after = replace(digest, context=context, levels=levels)
    pressure = after.pressure(settings)
    line = _watermark(after, settings, pressure.window)
    marks = (line.forced,) if forced_only else (line.warning, line.forced)
    lines = [ratio for ratio in marks if ratio is not None]
    return bool(lines) and context / pressure.window >= min(lines)


class GraftCost(Value):
    """Tokens a handoff needs free: the handoff itself and the growth until it is done."""

    __slots__ = ("handoff", "reserve_turns", "tokens_per_turn", "tokens_per_turn_source")

    def __init__(
        self,
        handoff: int,
        tokens_per_turn: int,
        tokens_per_turn_source: str,  # "history" | "config"
        reserve_turns: int,
    ) -> None:
        self.handoff, self.tokens_per_turn = handoff, tokens_per_turn
        self.tokens_per_turn_source, self.reserve_turns = tokens_per_turn_source, reserve_turns

    @property
    def growth(self) -> int:
        return self.tokens_per_turn * self.reserve_turns

    @property
    def total(self) -> int:
        return self.handoff + self.growth


def estimate_graft_cost(events: Sequence[Event], settings: GraftSettings) -> GraftCost:
    """The handoff's cost, with growth per turn read from the session's recent turns (the
    mean rise of context tokens from one turn's last request to the next), or the configured
    figure when the session has fewer than two turns with usage."""
    return Digest.of(events).cost(settings)


class Watermark(Value):
    """Where the warning band starts and where the forced cut falls (ratios of the window).

    `warning` is None when there is no warning window; `forced` is None when the session has
    no forced cut, and the warning band then runs to 100%
    (docs/design/graft.md#without-a-forced-cut-the-band-runs-to-the-end)."""

    __slots__ = ("config_error", "cost", "feasible", "forced", "mode", "warning")

    def __init__(
        self,
        mode: str,
        warning: float | None,
        forced: float | None,
        feasible: bool,
        config_error: str | None = None,
        cost: GraftCost | None = None,
    ) -> None:
        self.mode, self.warning, self.forced, self.feasible = mode, warning, forced, feasible
        self.config_error, self.cost = config_error, cost

    def as_json(self) -> WatermarkJson:
        cost = self.cost
        return {
            "mode": self.mode,
            "warning": self.warning,
            "forced": self.forced,
            "feasible": self.feasible,
            "configError": self.config_error,
            "cost": None
            if cost is None
            else {
                "handoffTokens": cost.handoff,
                "tokensPerTurn": cost.tokens_per_turn,
                "tokensPerTurnSource": cost.tokens_per_turn_source,
                "reserveTurns": cost.reserve_turns,
                "totalTokens": cost.total,
            },
        }


def calculate_safe_watermark(window_limit: int, cost: GraftCost) -> tuple[float, bool]:
    """The latest safe cut as a ratio of the window, clamped to [FLOOR, CEILING], and whether
    the window can hold a handoff at all (False: even the floor leaves too little room)."""
    return safe_cut(window_limit, cost.total)


def watermark(events: Sequence[Event], settings: GraftSettings, window: int) -> Watermark:
    """The session's watermark under `settings` (dynamic or fixed)."""
    return _watermark(Digest.of(events), settings, window)


def _watermark(digest: Digest, settings: GraftSettings, window: int) -> Watermark:
    cost = None if settings.mode == "fixed" else digest.cost(settings)
    warning, forced, feasible = cut_lines(
        settings.mode,
        (settings.warning_ratio, settings.forced_ratio),
        settings.warning_margin,
        window,
        0 if cost is None else cost.total,
    )
    warned, cut = drawn(warning, forced, settings.forced)
    if warned is not None:
        return Watermark(settings.mode, warned, cut, feasible, None, cost)
    fix = (
        "warning_ratio below forced_ratio" if settings.mode == "fixed" else "warning_margin above 0"
    )
    error = (
        f"the warning watermark ({warning:.0%}) is at or above the forced cut ({forced:.0%}): "
        f"there is no warning window, the model is never told before the cut; set [graft] {fix}"
    )
    return Watermark(settings.mode, None, cut, feasible, error, cost)


_STATE_KEYS = {  # GraftState field → its JSON key
    "nudge_turn": "nudgeTurn",
    "nudge_at": "nudgeAt",
    "escalated": "escalated",
    "plan_nudged": "planNudged",
    "migrated": "migrated",
    "allow_reslice": "allowReslice",
    "forced_cut_marks": "forcedCutMarks",
}


@dataclass(frozen=True, slots=True)
class GraftState:
    """What earlier decisions left behind for one session (kept by the caller).

    `nudge_at` is the number of events seen when the last nudge was given; `nudge_turn` the
    turn (ordinal) it was given in."""

    nudge_turn: int | None = None
    nudge_at: int | None = None
    escalated: bool = False
    plan_nudged: bool = False
    migrated: bool = False  # this session already handed off (retired or transferred)
    allow_reslice: bool = False
    forced_cut_marks: tuple[ForcedCutMark, ...] = field(default=())

    def as_json(self) -> GraftStateJson:
        return {
            "nudgeTurn": self.nudge_turn,
            "nudgeAt": self.nudge_at,
            "escalated": self.escalated,
            "planNudged": self.plan_nudged,
            "migrated": self.migrated,
            "allowReslice": self.allow_reslice,
            "forcedCutMarks": list(self.forced_cut_marks),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> GraftState:
        """A state kept as JSON (camelCase keys; missing keys take their defaults)."""
        unknown = sorted(set(value) - set(_STATE_KEYS.values()))
        if unknown:
            raise ValueError(
                f"unknown graft state keys {unknown}; known: {list(_STATE_KEYS.values())}"
            )
        names = {json: name for name, json in _STATE_KEYS.items()}
        fields = {names[key]: item for key, item in value.items()}
        fields["forced_cut_marks"] = tuple(fields.get("forced_cut_marks") or ())
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do before the model's next step, why, the text it is told, and the new state.

    `action`: `none`, `nudge` (the warning), `escalate` (the ignored warning, once), `force`
    (the forced cut; `mark` set when a warning was ignored), `plan` (set phases first)."""

    action: str
    reason: str
    pressure: Pressure
    watermark: Watermark
    state: GraftState
    text: str | None = None
    mark: ForcedCutMark | None = None

    def as_json(self) -> DecisionJson:
        return {
            "action": self.action,
            "reason": self.reason,
            "text": self.text,
            "mark": self.mark,
            "pressure": self.pressure.as_json(),
            "watermark": self.watermark.as_json(),
        }


def is_graft_tool(name: str) -> bool:
    """One of dshkit's handoff tools, bare or behind a harness's MCP prefix."""
    return any(name == tool or name.endswith("__" + tool) for tool in GRAFT_TOOLS)


def _calls_graft_tool(call: Mapping[str, Any]) -> bool:
    """A call of a handoff tool, or one loading it so that the model can call it next."""
    if is_graft_tool(str(call.get("name"))):
        return True
    return _LOADS_GRAFT_TOOL.search(str(call.get("arguments") or "")) is not None


def open_todos(events: Sequence[Event]) -> list[str]:
    """The unfinished items of the session's latest todo list (`events.todo_items`)."""
    return Digest.of(events).todos


PLAN_TEXT = texts.PLAN  # (said by the fold too: `graft.texts`)


def forced_cut_note(mark: Mapping[str, Any]) -> str:
    """The pending-state line a handoff carries when the model ignored the warning
    (docs/design/graft.md#an-ignored-warning-escalates-and-leaves-a-mark)."""
    return (
        f"模型拒绝提前切走（{mark['warning']:.0%} 预警后仍继续调用工具），"
        f"导致在 {mark['ratio']:.0%} 水位被强制中断。"
    )


def decide(events: Sequence[Event], settings: GraftSettings, state: GraftState) -> Decision:
    """The decision before the model's next step, given everything the session logged."""
    return decide_digest(Digest.of(events), settings, state)


def decide_digest(digest: Digest, settings: GraftSettings, state: GraftState) -> Decision:
    """`decide` on a session's digest (what a live session's hooks keep between calls)."""
    pressure = digest.pressure(settings)
    mark_line = _watermark(digest, settings, pressure.window)
    turn = digest.ordinal

    def result(action: str, reason: str, new: GraftState = state, **extra: Any) -> Decision:
        return Decision(action, reason, pressure, mark_line, new, **extra)

    ratio = pressure.ratio
    if ratio is None:
        return _plan_or(result, digest, state, "no usage reported yet: pressure unavailable")
    if state.migrated and not state.allow_reslice:
        return result("none", "this session already handed off (set allowReslice to cut again)")
    if digest.identity is not None and turn <= PROTECTED_TURNS:
        why = f"born from a handoff: no cut in its first {PROTECTED_TURNS} turns"
        return _plan_or(result, digest, state, why)
    nudged = state.nudge_at is not None
    obeyed = nudged and digest.last_graft_call >= (state.nudge_at or 0)
    place = band(
        ratio,
        mark_line.warning,
        mark_line.forced,
        model_driven=settings.model_driven,
        obeyed=obeyed,
        nudged_this_turn=state.nudge_turn == turn,
        stepped=digest.last_step >= (state.nudge_at or 0),
        escalated=state.escalated,
    )
    if place == "force":
        mark: ForcedCutMark | None = None
        if nudged and not obeyed and mark_line.warning is not None:
            mark = {"ratio": ratio, "warning": mark_line.warning, "nudgeTurn": state.nudge_turn}
        marks = state.forced_cut_marks + ((mark,) if mark else ())
        reason = f"at {ratio:.0%}, the forced cut is {mark_line.forced:.0%}"
        if not mark_line.feasible:
            reason += " (this window cannot hold a handoff: it may not complete)"
        return result("force", reason, replace(state, forced_cut_marks=marks), mark=mark)
    if place == "below":
        return _plan_or(result, digest, state, f"at {ratio:.0%}, below the warning band")
    if place == "off":  # docs/design/graft.md#model-driven-off-leaves-only-the-cut
        why = f"at {ratio:.0%}, in the warning band, but [graft] model_driven is off"
        return _plan_or(result, digest, state, why)
    if place == "obeyed":
        return result("none", "a handoff tool was called after the warning")
    if place == "nudge":
        new = replace(state, nudge_turn=turn, nudge_at=digest.count, escalated=False)
        return result("nudge", f"at {ratio:.0%}, in the warning band", new, text=nudge(ratio))
    if place == "escalate":
        new = replace(state, escalated=True)
        text = escalation(ratio)
        return result("escalate", "the warning was ignored for a step", new, text=text)
    return result("none", "warned in this turn already")


def _plan_or(
    result: Callable[..., Decision], digest: Digest, state: GraftState, reason: str
) -> Decision:
    """The plan-first nudge when it is due (once per session), else nothing."""
    todos = digest.todos
    if plan_due(todos, state.plan_nudged):
        why = f"{len(todos)} open todos without phases"
        return result("plan", why, replace(state, plan_nudged=True), text=PLAN_TEXT)
    return result("none", reason)
