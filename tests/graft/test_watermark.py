"""The watermark (seed 004 v0.9 §一/§三, v0.11 item 1, v0.12, v0.15 D2, v0.18 item 2): pressure
and its source, the dynamic and fixed watermarks, and every decision rule on built sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.config import check_section
from dshkit.graft.identity import Identity, session_identity
from dshkit.graft.settings import GraftSettings
from dshkit.graft.watermark import (
    CEILING,
    FLOOR,
    UNLOGGED_SHARE,
    Digest,
    GraftCost,
    GraftState,
    band_tokens,
    calculate_safe_watermark,
    context_pressure,
    decide,
    estimate_graft_cost,
    forced_cut_note,
    open_todos,
    room_bytes,
    usage_ceiling,
    watermark,
)
from dshkit.sessions import Scanner, Source
from dshkit.sessions.events import session_model

from ..support.paths import CLAUDE, CODEX, DSH_PLAIN

FIXED = GraftSettings(mode="fixed")  # warning 0.70, forced 0.75: ratios easy to aim at


class Session:
    """One session's normalized events, built step by step."""

    def __init__(self, window: int | None = 100_000) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        if window:
            self.add("request/context", {"provider": "p", "model": "m", "contextWindow": window})

    def add(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append({"type": kind, "seq": len(self.events), "time": 0, "data": data})

    def start(self, text: str = "继续") -> Session:
        self.turn += 1
        self.add("turn/start", {"turn": self.turn})
        self.add(
            "user/message",
            {
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"},
            },
        )
        return self

    def step(self, tokens: int, *, cached: int = 0, written: int = 0) -> Session:
        usage = {
            "inputTokens": tokens - cached - written,
            "outputTokens": 50,
            "cacheReadTokens": cached,
            "cacheWriteTokens": written,
        }
        message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
        self.add("assistant/message", {"turn": self.turn, "message": message, "usage": usage})
        return self

    def call(self, name: str, arguments: Any = None) -> Session:
        call_id = f"c{len(self.events)}"
        self.add(
            "tool/call",
            {
                "turn": self.turn,
                "callId": call_id,
                "name": name,
                "arguments": orjson.dumps(arguments or {}).decode(),
            },
        )
        self.add(
            "tool/result",
            {"turn": self.turn, "message": {"role": "tool", "source": {"callId": call_id}}},
        )
        return self


# -- pressure ---------------------------------------------------------------------------------


def test_pressure_is_input_plus_cache_read_plus_cache_write_against_the_logs_window() -> None:
    session = Session(128_000).start().step(10_000).step(64_000, cached=40_000, written=4_000)
    pressure = context_pressure(session.events, GraftSettings())
    assert (pressure.tokens, pressure.window, pressure.ratio) == (64_000, 128_000, 0.5)
    assert (pressure.source, pressure.window_source) == ("usage", "log")


def test_without_an_announced_window_the_configured_one_is_used_and_said_so() -> None:
    session = Session(window=None).start().step(50_000)
    pressure = context_pressure(session.events, GraftSettings(window_tokens=200_000))
    assert (pressure.ratio, pressure.source, pressure.window_source) == (
        0.25,
        "estimated",
        "config",
    )


def test_without_usage_the_figure_is_unavailable_and_nothing_is_decided_on_it() -> None:
    session = Session().start("很长的一段话" * 50_000)  # lots of text, but no provider usage
    decision = decide(session.events, FIXED, GraftState())
    assert decision.pressure.source == "unavailable" and decision.pressure.tokens is None
    assert decision.action == "none" and "unavailable" in decision.reason
    assert decision.as_json()["pressure"]["ratio"] is None


# -- the watermark ----------------------------------------------------------------------------


def cost(total: int) -> GraftCost:
    return GraftCost(total, 0, "config", 0)


def test_cost_model_adds_the_handoff_to_growth_per_turn_times_reserve_turns() -> None:
    settings = GraftSettings(handoff_tokens=10_000, reserve_turns=3, growth_tokens_per_turn=7_000)
    fresh = estimate_graft_cost(Session().start().step(5_000).events, settings)
    assert (fresh.tokens_per_turn, fresh.tokens_per_turn_source) == (7_000, "config")
    assert fresh.total == 10_000 + 3 * 7_000
    session = Session().start().step(1_000).step(2_000)  # a turn's last request counts
    session.start().step(4_000).start().step(9_000).start().step(8_000)  # shrinking counts 0
    grown = estimate_graft_cost(session.events, settings)
    assert (grown.tokens_per_turn, grown.tokens_per_turn_source) == (
        (2_000 + 5_000 + 0) // 3,
        "history",
    )
    assert grown.growth == 3 * grown.tokens_per_turn


def test_growth_is_read_from_the_recent_turns_only() -> None:
    session = Session().start().step(0)
    for level in (50_000, 50_100, 50_200, 50_300, 50_400, 50_500):  # one early jump, then slow
        session.start().step(level)
    assert estimate_graft_cost(session.events, GraftSettings()).tokens_per_turn == 100


def test_safe_watermark_is_monotonic_in_window_and_cost() -> None:
    windows = [20_000, 40_000, 64_000, 100_000, 128_000, 200_000, 1_000_000]
    by_window = [calculate_safe_watermark(w, cost(24_000))[0] for w in windows]
    assert by_window == sorted(by_window)
    costs = [0, 10_000, 30_000, 50_000, 70_000, 90_000]
    by_cost = [calculate_safe_watermark(128_000, cost(c))[0] for c in costs]
    assert by_cost == sorted(by_cost, reverse=True)
    assert len(set(by_window)) > 2 and len(set(by_cost)) > 2  # it really moves


def test_safe_watermark_is_clamped_and_says_when_a_handoff_cannot_fit() -> None:
    assert calculate_safe_watermark(1_000_000, cost(10_000)) == (CEILING, True)
    assert calculate_safe_watermark(100_000, cost(40_000)) == (0.6, True)
    assert calculate_safe_watermark(100_000, cost(50_000)) == (FLOOR, True)  # just fits
    assert calculate_safe_watermark(100_000, cost(50_001)) == (FLOOR, False)
    assert calculate_safe_watermark(10_000, cost(50_000)) == (FLOOR, False)
    with pytest.raises(ValueError, match="window_limit"):
        calculate_safe_watermark(0, cost(1))


def test_faster_growth_cuts_earlier() -> None:
    slow, fast = Session(), Session()
    for turn in range(6):  # both reach 70% of the window, at 1,000 and 8,000 tokens a turn
        slow.start().step(65_000 + turn * 1_000)
        fast.start().step(30_000 + turn * 8_000)
    settings = GraftSettings(handoff_tokens=8_000, reserve_turns=3)
    slow_mark = watermark(slow.events, settings, 100_000)
    fast_mark = watermark(fast.events, settings, 100_000)
    assert fast_mark.forced == pytest.approx(0.68)  # (100k - 8k - 3 × 8k) / 100k
    assert slow_mark.forced == CEILING  # 0.89 clamped
    assert fast_mark.warning == pytest.approx(0.63) and slow_mark.warning == pytest.approx(0.70)
    # end to end: at 70% the slow session is warned, the fast one already cut
    assert decide(slow.events, settings, GraftState()).action == "nudge"
    assert decide(fast.events, settings, GraftState()).action == "force"


def test_fixed_mode_keeps_the_old_constants_whatever_the_cost() -> None:
    session = Session().start().step(1_000)
    for window in (10_000, 100_000, 1_000_000):
        mark = watermark(session.events, FIXED, window)
        assert (mark.warning, mark.forced, mark.feasible, mark.cost) == (0.70, 0.75, True, None)
    dynamic = watermark(session.events, GraftSettings(), 30_000)  # differential: same session
    assert (dynamic.forced, dynamic.feasible) == (FLOOR, False)


def test_a_warning_at_or_above_the_forced_cut_is_a_configuration_error_not_a_clamp() -> None:
    settings = GraftSettings(mode="fixed", warning_ratio=0.80, forced_ratio=0.75)
    session = Session().start().step(77_000)
    mark = watermark(session.events, settings, 100_000)
    assert mark.warning is None and mark.forced == 0.75
    assert mark.config_error and "warning_ratio" in mark.config_error
    decision = decide(session.events, settings, GraftState())
    assert decision.action == "force" and decision.mark is None  # never warned, never marked
    below = decide(Session().start().step(74_000).events, settings, GraftState())
    assert below.action == "none"  # 74% is no warning window: nothing was clamped into one
    equal = watermark(session.events, replace(settings, warning_ratio=0.75), 100_000)
    assert equal.warning is None and equal.config_error
    dynamic = watermark(session.events, GraftSettings(warning_margin=0.0), 100_000)
    assert dynamic.warning is None and "warning_margin" in (dynamic.config_error or "")
    assert watermark(session.events, FIXED, 100_000).config_error is None


def test_without_a_forced_cut_the_warning_band_runs_to_the_full_window() -> None:
    settings = GraftSettings(mode="fixed", forced=False)
    session = Session().start().step(97_000)
    decision = decide(session.events, settings, GraftState())
    assert decision.watermark.forced is None and decision.action == "nudge"


# -- decisions --------------------------------------------------------------------------------


def test_below_the_warning_band_nothing_happens() -> None:
    decision = decide(Session().start().step(69_000).events, FIXED, GraftState())
    assert (decision.action, decision.text, decision.state) == ("none", None, GraftState())


def test_nudge_once_per_turn_escalate_once_on_the_next_step() -> None:
    session = Session().start().step(72_000)
    first = decide(session.events, FIXED, GraftState())
    assert first.action == "nudge" and first.text and "72%" in first.text
    assert "graft_prepare" in first.text and "graft_slice_and_inject" in first.text
    same_step = decide(session.events, FIXED, first.state)
    assert same_step.action == "none"  # never escalated in the step that was warned
    session.call("bash", {"command": "ls"}).step(73_000)  # the model went on
    escalated = decide(session.events, FIXED, same_step.state)
    assert escalated.action == "escalate" and escalated.text and "立刻" in escalated.text
    session.step(73_500)
    assert decide(session.events, FIXED, escalated.state).action == "none"  # only once
    session.start().step(74_000)  # a new turn: warned again
    again = decide(session.events, FIXED, escalated.state)
    assert again.action == "nudge" and again.state.nudge_turn == 2


@pytest.mark.parametrize("name", ["graft_prepare", "mcp__dshkit__graft_slice_and_inject"])
def test_a_handoff_tool_called_after_the_nudge_is_obedience(name: str) -> None:
    session = Session().start().step(72_000)
    nudged = decide(session.events, FIXED, GraftState())
    session.call(name).step(73_000)
    obeyed = decide(session.events, FIXED, nudged.state)
    assert obeyed.action == "none" and "handoff tool" in obeyed.reason


def test_a_handoff_tool_called_before_the_nudge_is_not_obedience() -> None:
    session = Session().start().step(60_000).call("graft_prepare").step(72_000)
    nudged = decide(session.events, FIXED, GraftState())
    session.call("bash").step(73_000)
    assert decide(session.events, FIXED, nudged.state).action == "escalate"


def test_an_ignored_nudge_leaves_a_forced_cut_mark_for_the_handoff() -> None:
    session = Session().start().step(71_000)
    nudged = decide(session.events, FIXED, GraftState())
    session.call("bash").step(76_000)
    forced = decide(session.events, FIXED, nudged.state)
    assert forced.action == "force"
    assert forced.mark == {"ratio": 0.76, "warning": 0.70, "nudgeTurn": 1}
    assert forced.state.forced_cut_marks == (forced.mark,)
    note = forced_cut_note(forced.mark)
    assert "模型拒绝提前切走" in note and "70%" in note and "76%" in note


def test_a_forced_cut_without_an_ignored_nudge_carries_no_mark() -> None:
    jumped = decide(Session().start().step(80_000).events, FIXED, GraftState())
    assert jumped.action == "force" and jumped.mark is None
    assert jumped.state.forced_cut_marks == ()
    session = Session().start().step(71_000)
    nudged = decide(session.events, FIXED, GraftState())
    session.call("graft_prepare").step(76_000)  # obeyed, but the window filled first
    assert decide(session.events, FIXED, nudged.state).mark is None


def identity_line(generation: int = 1) -> str:
    identity = {"sourceSessionId": "src-1", "boundarySeq": 42, "generation": generation}
    return f"<!-- graft-identity: {orjson.dumps(identity).decode()} -->"


def test_a_session_born_from_a_handoff_is_protected_for_two_turns_even_from_the_forced_cut() -> (
    None
):
    session = Session().start(f"{identity_line(2)}\n接着完成任务").step(90_000)
    assert session_identity(session.events) == Identity("src-1", 42, 2)
    assert decide(session.events, FIXED, GraftState()).action == "none"
    session.start().step(95_000)
    protected = decide(session.events, FIXED, GraftState())
    assert protected.action == "none" and "born from a handoff" in protected.reason
    session.start().step(95_000)
    assert decide(session.events, FIXED, GraftState()).action == "force"


def test_an_identity_line_later_in_the_session_does_not_protect_it() -> None:
    session = Session().start("写个脚本").step(1_000).start(identity_line()).step(90_000)
    assert session_identity(session.events) is None
    assert decide(session.events, FIXED, GraftState()).action == "force"


def test_an_already_migrated_source_is_refused_unless_reslicing_is_allowed() -> None:
    session = Session().start().step(90_000)
    refused = decide(session.events, FIXED, GraftState(migrated=True))
    assert refused.action == "none" and "allowReslice" in refused.reason
    allowed = decide(session.events, FIXED, GraftState(migrated=True, allow_reslice=True))
    assert allowed.action == "force"


# -- plan first -------------------------------------------------------------------------------


def todos(*items: str, done: int = 0) -> list[dict[str, str]]:
    listed = [{"content": text, "status": "pending"} for text in items]
    for item in listed[:done]:
        item["status"] = "completed"
    return listed


def test_more_than_three_open_todos_without_phases_get_one_plan_nudge() -> None:
    session = Session().start().step(10_000)
    session.call("todo_write", {"todos": todos("读代码", "写测试", "改实现", "跑测试")})
    decision = decide(session.events, FIXED, GraftState())
    assert decision.action == "plan" and decision.text and "阶段节点" in decision.text
    assert "完成标准" in decision.text
    assert decide(session.events, FIXED, decision.state).action == "none"  # once


def test_no_plan_nudge_with_phases_with_three_open_or_with_finished_items() -> None:
    phased = ["阶段 1: 读代码", "阶段 2：写测试", "改实现", "跑测试"]
    for items in (
        todos(*phased),
        todos("读代码", "写测试", "改实现"),
        todos("a", "b", "c", "d", "e", done=2),
        [{"content": "Phase 1: explore", "status": "pending"}, *todos("a", "b", "c")],
    ):
        session = Session().start().step(10_000).call("TodoWrite", {"todos": items})
        assert decide(session.events, FIXED, GraftState()).action == "none", items


def test_todos_are_read_from_each_harness_shape_and_the_latest_list_wins() -> None:
    session = Session().start().step(10_000)
    session.add("todo/write", {"todos": todos("a", "b", "c", "d")})
    assert open_todos(session.events) == ["a", "b", "c", "d"]
    plan = [{"step": s, "status": "in_progress" if s == "x" else "pending"} for s in "xyzw"]
    session.call("update_plan", {"plan": plan})
    assert open_todos(session.events) == ["x", "y", "z", "w"]
    session.call("TodoWrite", {"todos": todos("a", "b", "c", "d", done=4)})
    assert open_todos(session.events) == []
    session.call("bash", {"command": "echo todos"})  # other tools leave the list alone
    assert open_todos(session.events) == []


def test_the_warning_takes_precedence_over_the_plan_nudge() -> None:
    session = Session().start().call("todo_write", {"todos": todos("a", "b", "c", "d")})
    session.step(72_000)
    decision = decide(session.events, FIXED, GraftState())
    assert decision.action == "nudge" and not decision.state.plan_nudged


# -- state ------------------------------------------------------------------------------------


def test_state_round_trips_through_json_across_decisions() -> None:
    session = Session().start().step(71_000)
    nudged = decide(session.events, FIXED, GraftState.from_json({"allowReslice": True}))
    kept = orjson.loads(orjson.dumps(nudged.state.as_json()))
    assert kept["nudgeTurn"] == 1 and kept["allowReslice"] is True
    session.call("bash").step(76_000)
    forced = decide(session.events, FIXED, GraftState.from_json(kept))
    assert forced.mark is not None  # the nudge survived the trip
    assert GraftState.from_json(forced.state.as_json()) == forced.state
    with pytest.raises(ValueError, match="allow_reslice"):
        GraftState.from_json({"allow_reslice": True})


def test_a_forced_cut_in_a_window_too_small_for_a_handoff_says_so() -> None:
    session = Session(20_000).start().step(11_000)
    decision = decide(session.events, GraftSettings(), GraftState())
    assert decision.watermark.feasible is False and decision.watermark.forced == FLOOR
    assert decision.action == "force" and "cannot hold a handoff" in decision.reason


def test_the_config_section_and_the_settings_agree_key_for_key() -> None:
    defaults = check_section("graft", {}, "config.toml")
    assert GraftSettings.from_config(defaults) == GraftSettings()
    assert set(defaults) == set(GraftSettings.__slots__)


# -- per-model windows ([graft.windows]) --------------------------------------------------------


def test_a_logs_model_picks_its_configured_window_and_the_pressure_says_so(
    scanner: Scanner,
) -> None:
    scanner.scan([Source("claude", CLAUDE)])  # real Claude Code: usage, a model, no window
    events = scanner.catalog.events(("claude", "4f94642e-fa5c-495a-ad73-439b8225b50c"))
    assert session_model(events) == "claude-opus-4-8"
    tokens = context_pressure(events, GraftSettings()).tokens
    assert tokens is not None and tokens > 0
    settings = GraftSettings(windows={"claude-opus-4-8": 1_000_000, "other": 2_000})
    pressure = context_pressure(events, settings)
    assert (pressure.window, pressure.window_source, pressure.source) == (
        1_000_000,
        "model-config",
        "estimated",
    )
    assert pressure.as_json()["model"] == "claude-opus-4-8"
    assert pressure.ratio == tokens / 1_000_000
    unlisted = context_pressure(events, GraftSettings(windows={"claude-sonnet-4-5": 2_000}))
    assert (unlisted.window, unlisted.window_source, unlisted.source) == (
        200_000,
        "config",
        "estimated",
    )
    assert unlisted.model == "claude-opus-4-8"  # named even when no entry matched


def test_a_window_the_log_announces_wins_over_the_models_configured_one(
    scanner: Scanner,
) -> None:
    report = scanner.scan([Source("dsh", DSH_PLAIN)])  # real DSH: model and window announced
    (key,) = report.changed_sessions
    events = scanner.catalog.events(key)
    assert session_model(events) == "deepseek-v4-flash"
    pressure = context_pressure(events, GraftSettings(windows={"deepseek-v4-flash": 64_000}))
    assert (pressure.window, pressure.window_source, pressure.source) == (
        1_000_000,
        "log",
        "usage",
    )
    assert pressure.model == "deepseek-v4-flash"
    (codex,) = scanner.scan([Source("codex", CODEX)]).changed_sessions  # window on task_started
    codex_pressure = context_pressure(scanner.catalog.events(codex), GraftSettings())
    assert (codex_pressure.window, codex_pressure.window_source) == (258_400, "log")


def test_the_latest_named_model_is_the_sessions_model() -> None:
    session = Session(window=None).start()
    assert session_model(session.events) is None
    session.add("request/context", {"model": "deepseek-v4-flash"})
    assert session_model(session.events) == "deepseek-v4-flash"
    message = {
        "role": "assistant",
        "content": [],
        "source": {"kind": "model", "model": "claude-opus-4-1[1m]"},
    }
    session.add("assistant/message", {"turn": 1, "message": message})
    assert session_model(session.events) == "claude-opus-4-1[1m]"  # switched models mid-session
    synthetic = {**message, "source": {"kind": "model", "model": "<synthetic>"}}
    session.add("assistant/message", {"turn": 1, "message": synthetic})
    session.add("assistant/message", {"turn": 1, "message": {"role": "assistant"}})
    assert session_model(session.events) == "claude-opus-4-1[1m]"  # no model wrote those
    session.step(300_000)
    pressure = context_pressure(
        session.events, GraftSettings(windows={"claude-opus-4-1[1m]": 10**6})
    )
    assert (pressure.ratio, pressure.window_source) == (0.3, "model-config")


def test_configured_windows_reach_the_settings_read_only(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[graft]\nwindow_tokens = 50000\n\n[graft.windows]\n"claude-opus-4-1[1m]" = 1000000\n'
        "gpt-5 = 400000\n"
    )
    settings = GraftSettings.load(tmp_path)
    assert dict(settings.windows) == {"claude-opus-4-1[1m]": 1_000_000, "gpt-5": 400_000}
    assert settings.window_tokens == 50_000
    with pytest.raises(TypeError):
        settings.windows["gpt-5"] = 1  # type: ignore[index]
    given = {"m": 5_000}
    held = GraftSettings(windows=given)
    given["m"] = 1
    assert held.windows["m"] == 5_000 and hash(held) == hash(GraftSettings(windows={"m": 1}))
    assert GraftSettings.load(tmp_path / "absent").windows == {}


# -- the hot path's bound: below band_tokens no decision but the plan-first nudge ------------

BAND_SETTINGS = [
    FIXED,
    GraftSettings(),  # dynamic
    GraftSettings(handoff_tokens=60_000, growth_tokens_per_turn=20_000),  # forced at FLOOR
    GraftSettings(forced=False),
    GraftSettings(mode="fixed", warning_ratio=0.80, forced_ratio=0.75),  # no warning window
    GraftSettings(windows={"m": 50_000}),
]


@pytest.mark.parametrize("settings", BAND_SETTINGS)
@pytest.mark.parametrize("window", [None, 100_000, 1_000_000])
def test_below_the_band_tokens_the_watermark_says_nothing(
    settings: GraftSettings, window: int | None
) -> None:
    session = Session(window).start()
    digest = Digest.of(session.events)
    # The bound without its unlogged allowance, less one token: still no word.
    smallest = min(
        (settings.window_tokens, *settings.windows.values(), *([window] if window else []))
    )
    below = band_tokens(digest, settings) + int(UNLOGGED_SHARE * smallest) - 1
    for turns in range(1, 4):
        session.start().step(below)
        for state in (GraftState(), GraftState(nudge_turn=turns, nudge_at=1)):
            assert decide(session.events, settings, state).action == "none"


def test_at_the_band_the_watermark_speaks() -> None:
    session = Session(100_000).start()
    digest = Digest.of(session.events)
    at = band_tokens(digest, FIXED) + int(UNLOGGED_SHARE * 100_000)
    session.step(at)
    assert decide(session.events, FIXED, GraftState()).action == "nudge"


def test_the_room_is_counted_from_the_smallest_window_and_needs_usage() -> None:
    settings = GraftSettings(windows={"small": 32_000})
    empty = Digest.of(Session(1_000_000).start().events)
    assert room_bytes(empty, settings) is None  # no usage yet: nothing to measure from
    used = Digest.of(Session(1_000_000).start().step(1_000).events)
    # dynamic: 0.45 of the 32,000 window, less the unlogged tenth, less what is used
    assert band_tokens(used, settings) == int(0.45 * 32_000 - 3_200)
    assert room_bytes(used, settings) == int(0.45 * 32_000 - 3_200) - 1_000
    full = Digest.of(Session(100_000).start().step(70_000).events)
    assert room_bytes(full, FIXED) is None


def near_band(window: int | None, last: int) -> Session:
    """Two turns with usage, the open one's last request at `last` tokens."""
    return Session(window).start().step(20_000).start().step(24_000).step(last)


@pytest.mark.parametrize("settings", BAND_SETTINGS)
@pytest.mark.parametrize("window", [None, 100_000])
def test_the_usage_ceiling_is_the_first_context_the_watermark_speaks_at(
    settings: GraftSettings, window: int | None
) -> None:
    digest = Digest.of(near_band(window, 24_000).events)
    ceiling = usage_ceiling(digest, settings)
    assert ceiling is not None and ceiling > 24_000
    for state in (GraftState(), GraftState(nudge_turn=1, nudge_at=1)):
        below = decide(near_band(window, ceiling - 1).events, settings, state)
        assert below.action == "none" and below.state == state
        at = decide(near_band(window, ceiling).events, settings, state)
        assert at.action in ("nudge", "force")


def test_the_usage_ceiling_of_a_fixed_mark_and_in_the_band() -> None:
    assert usage_ceiling(Digest.of(near_band(None, 24_000).events), FIXED) == 140_000
    assert usage_ceiling(Digest.of(near_band(100_000, 70_000).events), FIXED) is None
    assert usage_ceiling(Digest(), FIXED) is None  # no usage yet


def test_after_the_escalation_only_the_forced_line_counts() -> None:
    digest = Digest.of(near_band(None, 145_000).events)
    escalated = GraftState(nudge_turn=2, nudge_at=1, escalated=True)
    assert usage_ceiling(digest, FIXED) is None  # in the band
    assert usage_ceiling(digest, FIXED, escalated) == 150_000
    assert usage_ceiling(digest, FIXED, replace(escalated, nudge_turn=1)) is None  # not this turn
    assert usage_ceiling(digest, FIXED, replace(escalated, escalated=False)) is None
    for last in (145_000, 149_999):
        below = decide(near_band(None, last).events, FIXED, escalated)
        assert (below.action, below.state) == ("none", escalated)
    assert decide(near_band(None, 150_000).events, FIXED, escalated).action == "force"


def test_model_driven_off_warns_and_escalates_never_but_still_cuts() -> None:
    quiet = replace(FIXED, model_driven=False)
    session = Session().start().step(72_000)
    warned = decide(session.events, quiet, GraftState())
    assert warned.action == "none" and warned.text is None
    assert "model_driven is off" in warned.reason
    session.call("bash").step(74_000)
    assert decide(session.events, quiet, warned.state).action == "none"
    session.call("bash").step(76_000)
    forced = decide(session.events, quiet, warned.state)
    assert forced.action == "force" and forced.mark is None  # nobody was warned to ignore it


def test_a_refused_value_takes_its_default_and_the_others_keep_theirs(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[graft]\nmode = "fixed"\nforced_ratio = 7.5\nwindow_tokens = 100000\nbogus = 1\n'
    )
    settings, problem = GraftSettings.resolve(tmp_path, {})
    assert settings.mode == "fixed" and settings.window_tokens == 100_000
    assert settings.forced_ratio == 0.75 and settings.forced  # the default, never "off"
    assert problem is not None
    assert "forced_ratio = 7.5" in problem and "at most 1" in problem and "bogus" in problem
    # An override that does not fit is refused the same way.
    (tmp_path / "config.toml").write_text("")
    fine, none = GraftSettings.resolve(tmp_path, {})
    assert (fine, none) == (GraftSettings(), None)
    # Another section's problem is that section's: [graft] is read as written.
    (tmp_path / "config.toml").write_text('[guard]\nmode = "loose"\n[graft]\ncard_chars = 900\n')
    other, nothing = GraftSettings.resolve(tmp_path, {})
    assert other.card_chars == 900 and nothing is None
