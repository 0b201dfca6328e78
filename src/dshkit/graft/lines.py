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
