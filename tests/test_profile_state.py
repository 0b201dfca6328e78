"""The injected text: byte-stable rendering (seed 001 §6.2) and exclusive modes (§7.3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from dshkit.profile.model import ParsedOutput, assemble
from dshkit.profile.state import (
    MAX_CUSTOM_TEXT,
    Mode,
    ProfileState,
    TextRejected,
    render_profile,
)
from dshkit.store import Store


def store_version(store: Store, entries: list[dict[str, object]], version: int = 1) -> None:
    built = assemble([], ParsedOutput(entries=entries), 1_000 * version, 10).entries
    with store.transaction() as db:
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "material_messages, reason) VALUES (?, ?, ?, '{}', 0, 0, 10, 'test')",
            (version, 1_000 * version, orjson.dumps(built).decode()),
        )


def entry(entry_id: str, category: str, claim: str) -> dict[str, object]:
    return {
        "id": entry_id,
        "category": category,
        "claim": claim,
        "evidence": ["x"],
        "confidence": "high",
    }


PROFILE = [
    entry("A1", "A", "用中文沟通"),
    entry("B1", "B", "不要在他没要求时升级依赖"),
    entry("C1", "C", "先给分析，再决定改哪一项"),
    entry("D1", "D", "偏好哪种编辑器尚不明确"),
    entry("A2", "A", "习惯一句话下达任务"),
]


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
    with pytest.raises(TextRejected, match=f"the limit is {MAX_CUSTOM_TEXT}"):
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
    base = [sys.executable, "-m", "dshkit", "profile"]
    state = ["--state-dir", str(tmp_path)]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args, *state], capture_output=True, text=True, input=stdin)

    one, two = run("show", "--json").stdout, run("show", "--json").stdout
    assert one == two
    shown = orjson.loads(one)
    assert list(shown) == ["mode", "effectiveText", "effectiveSource", "profile", "lastRun"]
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
