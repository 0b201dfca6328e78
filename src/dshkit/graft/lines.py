"""The watermark's lines as plain arithmetic: the window a session is measured against, the
growth its recent turns predict, and where the warning and the forced cut fall.

One definition for the decisions (`watermark`) and for the hot path's proof that a call has
nothing to say (`fold`), on plain numbers: it imports nothing, so the proof costs no more
than its own arithmetic (docs/design/graft.md#the-cut-falls-where-the-handoff-still-fits).
"""

from __future__ import annotations

from itertools import pairwise  # (built into the interpreter: no import cost)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

# The latest cut point that ever worked: the old constant, now a ceiling
# (docs/design/graft.md#seventy-five-percent-is-a-ceiling).
CEILING = 0.75
FLOOR = 0.50  # below this the window cannot hold a handoff
GROWTH_SAMPLE_TURNS = 5  # recent turns whose context growth predicts the next ones
# dshkit's own handoff tools; harnesses prefix MCP tools (`mcp__dshkit__graft_prepare`).
GRAFT_TOOLS = ("graft_prepare", "graft_slice_and_inject", "graft_commit")
# More open todos than this without phases: plan first
# (docs/design/graft.md#plan-phases-before-a-long-todo-list).
OPEN_TODO_LIMIT = 3
_PHASE_WORDS = ("阶段", "phase")  # how a phase item begins (`phased`)
# A session born from a handoff cannot be cut in its first turns
# (docs/design/graft.md#a-new-target-is-protected).
PROTECTED_TURNS = 2


def window(
    announced: int | None, model: str | None, windows: Mapping[str, int], default: int
) -> tuple[int, str]:
    """The window a session's pressure is measured against, and where it came from: the one
    its log announces (`log`), else the one configured for its model (`model-config`), else
    the configured default (`config`)."""
    if announced:
        return announced, "log"
    if model is not None and model in windows:
        return windows[model], "model-config"
    return default, "config"


def growth(levels: Sequence[int]) -> int | None:
    """The mean rise of context from one turn's last request to the next (`levels`, recent
    turns in order; a fall counts as no rise), or None with fewer than two."""
    rises = [max(0, after - before) for before, after in pairwise(levels)]
    return round(sum(rises) / len(rises)) if rises else None


def safe_cut(window_limit: int, cost: int) -> tuple[float, bool]:
    """The latest safe cut as a ratio of the window, clamped to [FLOOR, CEILING], and whether
    the window can hold a handoff of `cost` tokens at all (False: even the floor leaves too
    little room)."""
    if window_limit <= 0:
        raise ValueError(f"window_limit must be a positive number of tokens, not {window_limit}")
    safe = (window_limit - cost) / window_limit
    return min(CEILING, max(FLOOR, safe)), safe >= FLOOR


def cut_lines(
    mode: str, fixed: tuple[float, float], margin: float, window_limit: int, cost: int
) -> tuple[float, float, bool]:
    """(warning, forced, feasible) as ratios of the window, as the arithmetic draws them:
    `fixed` mode keeps its configured (warning, forced) pair; `dynamic` puts the forced cut
    where a handoff of `cost` tokens still fits (`safe_cut`) and the warning `margin` below
    it. What the settings make of them (no forced line, a warning at or above the cut) is the
    decisions' (`watermark`)."""
    if mode == "fixed":
        warning, forced = fixed
        return warning, forced, True
    forced, feasible = safe_cut(window_limit, cost)
    return round(forced - margin, 6), forced, feasible


def drawn(warning: float, forced: float, cut: bool) -> tuple[float | None, float | None]:
    """The lines the decisions are taken at, from `cut_lines`' pair: no forced line where the
    cut is off (`cut` False); no warning at or above the forced line (a configuration error
    the decisions name: docs/design/graft.md#a-warning-above-the-cut-is-a-configuration-error)."""
    if not cut:
        return warning, None
    return (warning if warning < forced else None), forced


def band(
    ratio: float,
    warning: float | None,
    forced: float | None,
    *,
    model_driven: bool,
    obeyed: bool,
    nudged_this_turn: bool,
    stepped: bool,
    escalated: bool,
) -> str:
    """Where a measured session stands, in the order the decisions take the rules
    (docs/design/graft.md#the-model-decides-when-within-a-band): `force` (at the forced
    line), `below` (under the warning, or none), `off` (in the band, the model not asked:
    `[graft] model_driven` off), `obeyed` (a handoff tool was called since the nudge),
    `nudge` (not nudged in this turn), `escalate` (nudged, a step taken since, not escalated
    yet), `warned` (told all there is to tell in this turn)."""
    if forced is not None and ratio >= forced:
        return "force"
    if warning is None or ratio < warning:
        return "below"
    if not model_driven:
        return "off"
    if obeyed:
        return "obeyed"
    if not nudged_this_turn:
        return "nudge"
    if stepped and not escalated:
        return "escalate"
    return "warned"


def phased(item: str) -> bool:
    """Whether a todo item names its phase: "阶段 N:" or "Phase N:" (any case; blanks around
    the number, which may be any decimal digits; a full-width colon too) at its start
    (docs/design/graft.md#plan-phases-before-a-long-todo-list). Plain string methods: the hot
    path reads todo lists without loading `re`."""
    rest = item.lstrip()
    for word in _PHASE_WORDS:
        if rest[: len(word)].lower() == word:
            rest = rest[len(word) :].lstrip()
            break
    else:
        return False
    digits = 0  # (any decimal digit: full-width ones too)
    while digits < len(rest) and rest[digits].isdecimal():
        digits += 1
    return digits > 0 and rest[digits:].lstrip()[:1] in (":", "：")


def plan_due(todos: Sequence[str], nudged: bool) -> bool:
    """Whether the plan-first nudge is due: not given yet (`nudged`), and the latest todo
    list holds more than OPEN_TODO_LIMIT open items, none of them a phase."""
    return not nudged and len(todos) > OPEN_TODO_LIMIT and not any(map(phased, todos))
