"""A person's changes to one profile entry (edit, pin, unpin, remove) through ProfileService,
and how a regeneration against the fake model treats them: a pinned entry is told to the
model as pinned and kept as the person wrote it, whatever the delta says of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dshkit.errors import Invalid, NotFound, TooLarge
from dshkit.profile.generate import generate
from dshkit.profile.service import ProfileService
from dshkit.profile.state import latest_version
from dshkit.store import Store

from ..support.profile import A1, B1, answer, generated


@pytest.fixture
def world(tmp_path: Path) -> Any:
    yield from generated(tmp_path)


def entries_of(store: Store) -> dict[str, dict[str, Any]]:
    found = latest_version(store)
    assert found is not None
    return {e["id"]: e for e in found[1]}


def test_an_edit_pins_the_entry_and_survives_a_delta_that_rewrites_it(world: Any) -> None:
    fake, scanner, keys, llm, service = world
    changed = service.change_entry("A1", "edit", claim="  只用中文回答，代码注释也用中文 ")
    assert changed.version == 2 and changed.action == "edit"
    assert changed.entry["claim"] == "只用中文回答，代码注释也用中文"
    assert changed.entry["pinned"] is True
    # The model rewrites the pinned entry and deletes it; both are ignored.
    fake.replies.append(
        answer({"entries": [{**A1, "claim": "用英文交流"}], "unchangedIds": ["B1"]})
    )
    again = generate(scanner, keys, llm, force=True)
    # Nothing else changed: no version is stored for an answer that changes nothing.
    assert again.outcome == "unchanged" and again.version is None
    assert any("pinned" in w for w in again.warnings)
    prompt = fake.requests[-1].body["messages"][1]["content"]
    assert '"pinned": true' in prompt and "只用中文回答，代码注释也用中文" in prompt
    kept = entries_of(scanner.store)
    assert kept["A1"]["claim"] == "只用中文回答，代码注释也用中文" and kept["A1"]["pinned"]
    fake.replies.append(answer({"entries": [], "deletedIds": ["A1"], "unchangedIds": ["B1"]}))
    assert generate(scanner, keys, llm, force=True).outcome == "unchanged"
    assert entries_of(scanner.store)["A1"]["claim"] == "只用中文回答，代码注释也用中文"


def test_pin_keeps_the_models_words_and_unpin_lets_the_model_change_them(world: Any) -> None:
    fake, scanner, keys, llm, service = world
    pinned = service.change_entry("B1", "pin")
    assert pinned.entry["pinned"] is True
    same = ("id", "category", "claim", "confidence")  # the evidence is the traced words of B1's
    assert {f: pinned.entry[f] for f in same} == {f: B1[f] for f in same}
    fake.replies.append(answer({"entries": [], "deletedIds": ["B1"], "unchangedIds": ["A1"]}))
    assert generate(scanner, keys, llm, force=True).outcome == "unchanged"
    assert "B1" in entries_of(scanner.store)
    unpinned = service.change_entry("B1", "unpin")
    assert "pinned" not in unpinned.entry
    fake.replies.append(answer({"entries": [], "deletedIds": ["B1"], "unchangedIds": ["A1"]}))
    assert generate(scanner, keys, llm, force=True).ok
    assert "B1" not in entries_of(scanner.store)


def test_remove_stores_a_version_without_the_entry(world: Any) -> None:
    _, scanner, _, _, service = world
    removed = service.change_entry("B1", "remove")
    assert removed.entry is None and removed.as_json()["id"] == "B1"
    assert set(entries_of(scanner.store)) == {"A1"}
    versions = service.versions(5).as_json()
    assert versions["versions"][0]["reason"] == "remove B1 by the person"


def test_bad_changes_are_refused_naming_the_input(world: Any) -> None:
    _, _, _, _, service = world
    with pytest.raises(NotFound) as missing:
        service.change_entry("Z9", "pin")
    assert missing.value.field == "id"
    with pytest.raises(Invalid) as action:
        service.change_entry("A1", "rewrite")
    assert action.value.field == "action"
    with pytest.raises(Invalid):
        service.change_entry("A1", "edit")
    with pytest.raises(Invalid):
        service.change_entry("A1", "edit", claim="   ")
    with pytest.raises(TooLarge):
        service.change_entry("A1", "edit", claim="长" * 101)
    with pytest.raises(Invalid) as category:
        service.change_entry("A1", "edit", category="E")
    assert category.value.field == "category"


def test_no_profile_yet_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no profile yet"):
        ProfileService(tmp_path / "empty", sources=[]).change_entry("A1", "pin")
