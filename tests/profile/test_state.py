"""The injected text: byte-stable rendering (seed 001 §6.2) and exclusive modes (§7.3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from dshkit.harnesses import text_length
from dshkit.profile.model import MAX_CLAIM_CHARS, MAX_ENTRIES
from dshkit.profile.prompt import Material, build_messages
from dshkit.profile.state import (
    INJECT_LIMIT,
    MAX_CUSTOM_TEXT,
    MAX_EXTRA_TEXT,
    PROFILE_BUDGET,
    Mode,
    ProfileState,
    TextRejected,
    TextTooLong,
    fit_profile,
    render_profile,
)
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.profile import PROFILE, SOURCE, entry, many, store_version


@pytest.fixture
def state(tmp_path: Path) -> ProfileState:
    return ProfileState(Store(tmp_path))


def test_render_groups_by_category_and_holds_no_live_value(state: ProfileState) -> None:
    store_version(state.store, PROFILE)
    text = state.effective().text
    assert text.index("用中文沟通") < text.index("习惯一句话") < text.index("不要在他没要求")
    assert text.index("先给分析") < text.index("偏好哪种编辑器") and "不要当成事实" in text
    for live in ("v1", "1000", "2026", "version", "tokens"):
        assert live not in text
    assert render_profile(PROFILE) == render_profile([dict(e) for e in PROFILE])


def test_same_state_same_string_object_and_changes_show_at_once(state: ProfileState) -> None:
    assert state.effective().text == ""  # empty state injects nothing at all
    store_version(state.store, PROFILE)
    first = state.effective()
    assert state.effective().text is first.text  # no new system message in DSH
    state.set_auto_extra_text("另外：回答尽量简短。")
    changed = state.effective().text
    assert changed != first.text and changed.endswith("另外：回答尽量简短。")
    state.set_mode("custom")
    assert state.effective().text == ""  # no custom text yet


def test_modes_are_exclusive_and_switching_keeps_both_sides(state: ProfileState) -> None:
    store_version(state.store, PROFILE)
    state.set_custom_text("请始终用中文回答，不要用 emoji。")
    auto = state.effective()
    assert (auto.mode, auto.source) == (Mode.AUTO, "profile") and "emoji" not in auto.text
    state.set_mode("custom")
    custom = state.effective()
    assert (custom.source, custom.text) == ("customText", "请始终用中文回答，不要用 emoji。")
    state.set_mode("auto")
    assert state.effective().text == auto.text and state.custom_text.endswith("emoji。")
    with pytest.raises(TextRejected, match="mode must be 'auto' or 'custom'"):
        state.set_mode("both")
    state.store.set_meta("profile.mode", "both")  # a bad stored value falls back to auto
    assert state.mode is Mode.AUTO


def test_template_syntax_is_refused_from_people_and_escaped_from_the_model(
    state: ProfileState,
) -> None:
    with pytest.raises(TextRejected, match="template variable"):
        state.set_custom_text("Use {{name}} here")
    with pytest.raises(TextRejected, match=f"the limit is {MAX_CUSTOM_TEXT:,}"):
        state.set_custom_text("长" * (MAX_CUSTOM_TEXT + 1))
    with pytest.raises(TextRejected, match="must be a string"):
        state.set_custom_text(42)
    store_version(state.store, [entry("A1", "A", "喜欢用 {{var}} 写模板")])
    text = state.effective().text
    assert "{{" not in text and "}}" not in text and "{ {var} }" in text


def test_copied_snapshot_is_stamped_by_us(state: ProfileState) -> None:
    store_version(state.store, PROFILE, version=3)
    text = state.effective().text
    snapshot = state.mark_copied(text)
    assert snapshot["profileVersion"] == 3 and isinstance(snapshot["at"], int)
    assert snapshot["algorithmVersion"] == "entries-v1" and len(snapshot["entries"]) == 5
    assert set(snapshot["entries"][0]) == {"id", "category", "claim", "evidenceQuoteCount"}
    assert not state.stale_copy()
    store_version(state.store, [*PROFILE, entry("C2", "C", "新条目")], version=4)
    assert state.stale_copy()


def test_profile_show_is_byte_identical_for_an_unchanged_state(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store_version(store, PROFILE)
    state = ["--state-dir", str(tmp_path)]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return run_dshkit("profile", *args, *state, home=tmp_path, input=stdin, check=False)

    one, two = run("show", "--json").stdout, run("show", "--json").stdout
    assert one == two
    shown = orjson.loads(one)
    assert list(shown) == [
        "mode",
        "effectiveText",
        "effectiveSource",
        "withheld",
        "profile",
        "lastRun",
    ]
    assert shown["profile"]["version"] == 1 and "用中文沟通" in shown["effectiveText"]
    bad = run("custom", "--file", "-", stdin="{{oops}}")
    assert bad.returncode == 2 and "template variable" in bad.stderr
    assert run("extra", "--file", "-", stdin="回答尽量简短。").returncode == 0
    assert orjson.loads(run("show", "--json").stdout)["effectiveText"].endswith("回答尽量简短。")
    assert run("custom", "--file", "-", stdin="只用中文回答").returncode == 0
    assert run("mode", "custom").returncode == 0
    assert run("copy").stdout == "只用中文回答\n"
    assert orjson.loads(run("show", "--json").stdout)["effectiveSource"] == "customText"
    assert run("mode", "both").returncode == 2


def test_the_budget_fits_the_hook_cap_and_the_prompt_states_it() -> None:
    # The whole injected text fits in one hook answer, however it is split.
    assert PROFILE_BUDGET + len("\n\n") + MAX_EXTRA_TEXT == INJECT_LIMIT == MAX_CUSTOM_TEXT
    # By design: the most the prompt allows renders within the profile's budget, either language.
    for chinese in (True, False):
        full = many(MAX_ENTRIES, MAX_CLAIM_CHARS, chinese)
        assert text_length(render_profile(full)) <= PROFILE_BUDGET
        assert fit_profile(full).dropped == ()
    prompt = build_messages(
        None, None, [Material("dsh", "s", 1, None, "hi")], {"humanMessages": 1, "sessions": 1}, None
    )
    assert f"最多 {MAX_ENTRIES} 条" in prompt[1]["content"]
    assert f"不超过 {MAX_CLAIM_CHARS} 个字" in prompt[1]["content"]
    over = build_messages(many(40), 3, [], {"humanMessages": 1, "sessions": 1}, None)
    assert f"它有 40 条，超过了上限 {MAX_ENTRIES} 条" in over[1]["content"]
    within = build_messages(many(12), 3, [], {"humanMessages": 1, "sessions": 1}, None)
    assert "超过了上限" not in within[1]["content"]


def test_a_profile_over_its_budget_drops_whole_entries_and_lists_them(
    state: ProfileState,
) -> None:
    # The case: a 200-entry profile delivered 31 entries, the 32nd cut mid-text.
    entries = many(200, 60)
    store_version(state.store, entries)
    effective = state.effective()
    view = state.profile_view()
    assert view is not None and view["dropped"] == list(effective.dropped)
    assert view["budget"] == {"entries": MAX_ENTRIES, "characters": PROFILE_BUDGET}
    kept = [e for e in entries if e["id"] not in effective.dropped]
    assert len(kept) == MAX_ENTRIES and len(effective.dropped) == 200 - MAX_ENTRIES
    assert text_length(effective.text) <= PROFILE_BUDGET
    assert state.effective() is effective  # still byte-stable: the same string object
    assert ProfileState(state.store).effective().text == effective.text
    lines = [line for line in effective.text.splitlines() if line.startswith("- ")]
    assert lines == [f"- {e['claim']}" for c in "ABCD" for e in kept if e["category"] == c]
    # The kept ones have the most evidence: every dropped entry has no more than any kept.
    fewest_kept = min(len(e["evidence"]) for e in kept)
    assert all(len(e["evidence"]) <= fewest_kept for e in entries if e["id"] in effective.dropped)
    # Long claims: the character budget binds before the count does, and nothing is cut.
    long = many(20, 400)
    fitted = fit_profile(long)
    assert 0 < len(fitted.dropped) < 20 and text_length(fitted.text) <= PROFILE_BUDGET
    for e in long:
        assert (e["claim"] in fitted.text) != (e["id"] in fitted.dropped)
        assert str(e["claim"])[:30] not in fitted.text or e["claim"] in fitted.text


def test_dropping_order_is_evidence_then_confidence_then_recency_then_position() -> None:
    def made(
        n: int, evidence: int = 2, confidence: str = "high", seen: int = 5
    ) -> dict[str, object]:
        return {
            "id": f"x{n}",
            "category": "A",
            "claim": f"条目 {n}",
            "evidence": ["q"] * evidence,
            "sources": [SOURCE] * evidence,
            "confidence": confidence,
            "lastSeenAt": seen,
        }

    entries = [made(n) for n in range(MAX_ENTRIES + 4)]
    entries[3] = made(3, evidence=1)  # fewest evidence items: dropped first
    entries[7] = made(7, evidence=3, confidence="low")  # more evidence outweighs confidence
    entries[9] = made(9, confidence="medium")
    entries[11] = made(11, seen=1)  # seen longest ago
    fitted = fit_profile(entries)
    # The last in the version's order breaks the remaining tie.
    assert set(fitted.dropped) == {"x3", "x9", "x11", f"x{MAX_ENTRIES + 3}"}
    assert "条目 7" in fitted.text
    assert fitted == fit_profile([dict(e) for e in entries])  # deterministic


def test_the_wrapper_follows_the_profile_language(state: ProfileState) -> None:
    english = [
        entry("A1", "A", "Writes in English and prefers short answers"),
        entry("B1", "B", "Do not upgrade dependencies unasked"),
        entry("C1", "C", "Propose a plan, then wait for a go-ahead"),
    ]
    text = render_profile(english)
    assert text.startswith("## About this user") and "[Stable traits]" in text
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text)
    chinese = render_profile(PROFILE)
    assert chinese.startswith("## 关于这位用户") and "【他稳定的特点】" in chinese
    # Decided by the entries alone: a Chinese claim among mostly English ones changes nothing,
    # a tie goes to Chinese (what the prompt asks the model to write).
    assert render_profile([*english, entry("D1", "D", "偏好哪种编辑器尚不明确")]).startswith(
        "## About"
    )
    assert render_profile([english[0], entry("D1", "D", "用中文")]).startswith("## 关于")
    store_version(state.store, english)
    assert state.effective().text == text


def test_text_that_cannot_reach_the_agent_whole_is_refused(state: ProfileState) -> None:
    store_version(state.store, PROFILE)
    before = state.effective().text
    # The case: 15,190 characters were shown whole, but the agent got 9,987.
    with pytest.raises(TextTooLong, match=f"15,190 characters long; the limit is {INJECT_LIMIT:,}"):
        state.set_custom_text("用" * 15_190)
    with pytest.raises(TextTooLong, match=f"the limit is {MAX_EXTRA_TEXT:,}"):
        state.set_auto_extra_text("x" * (MAX_EXTRA_TEXT + 1))
    # Counted as the harnesses count: an emoji is two UTF-16 code units.
    with pytest.raises(TextTooLong, match=f"{INJECT_LIMIT + 2:,} characters long"):
        state.set_custom_text("\U0001f600" * (INJECT_LIMIT // 2 + 1))
    with pytest.raises(TextRejected, match="NUL character") as nul:
        state.set_custom_text("用中文\0回答")
    assert "position 3" in str(nul.value)
    with pytest.raises(TextRejected, match="must be a string") as not_text:
        state.set_auto_extra_text(["a list"])
    assert not isinstance(not_text.value, TextTooLong)  # a bad request, not a too-large one
    assert state.custom_text == "" and state.auto_extra_text == ""  # nothing was stored
    assert state.effective().text == before
    # At the limits, both are taken and delivered whole, within one hook answer.
    state.set_auto_extra_text("x" * MAX_EXTRA_TEXT + "\n")
    assert state.effective().text.endswith("x" * MAX_EXTRA_TEXT)
    assert text_length(state.effective().text) <= INJECT_LIMIT
    state.set_custom_text("用" * MAX_CUSTOM_TEXT)
    state.set_mode("custom")
    assert state.effective().text == "用" * MAX_CUSTOM_TEXT


def test_stored_text_over_its_limit_is_withheld_whole_and_said(state: ProfileState) -> None:
    # Kept by an older dshkit, before the limits: left out whole, never cut, and said.
    store_version(state.store, PROFILE)
    profile_only = state.effective().text
    state.store.set_meta("profile.autoExtraText", "多" * (MAX_EXTRA_TEXT + 10))
    auto = ProfileState(state.store).effective()
    assert auto.text == profile_only and "the limit is 3,998" in (auto.withheld or "")
    state.store.set_meta("profile.customText", "长" * 15_190)
    state.store.set_meta("profile.mode", "custom")
    custom = ProfileState(state.store).effective()
    assert custom.text == "" and "15,190 characters long" in (custom.withheld or "")
    assert "not injected" in (custom.withheld or "")
