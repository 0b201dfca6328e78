"""What each hook event would inject, previewed (`dshkit inject show`, `GET /api/inject/`):
byte for byte what a real `dshkit hook` then answers, with each part's handler, order,
sources and length, what the cap would drop, and nothing delivered, recorded or started."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import hookspec
from dshkit.capability import read_facts
from dshkit.capability.service import cache_key
from dshkit.capability.text import HEADING
from dshkit.graft import ledger, marker
from dshkit.inject import InjectService
from dshkit.inject.service import NOT_PREVIEWED, RULES
from dshkit.profile.state import ProfileState
from dshkit.store import CAPABILITY_DELIVERY, PROFILE_DELIVERY, Store
from dshkit.web.security import TOKEN_HEADER

from ..support.cli import adopt_environment, run_dshkit
from ..support.hooks import claude, context, hook, hook_log
from ..support.profile import PROFILE, effective, store_version
from ..support.web import Running

ON = {"DSHKIT_CAPABILITY": "on"}
EXTRA = "另外：回答尽量简短。"


def state(home: Path) -> Path:
    return home / ".dsh" / "dshkit"


def fresh_facts(directory: Path, payload: dict[str, Any], cwd: Path) -> None:
    """Fresh capability results for the session's modes in `cwd`: the hooks start no probe."""
    with Store(directory) as store:
        key = cache_key(read_facts(store, "claude", payload, []), str(cwd))
        store.db.execute(
            "INSERT OR REPLACE INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
            (key, int(time.time() * 1000), orjson.dumps(channels()).decode()),
        )


def channels() -> list[dict[str, Any]]:
    return [
        {"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"},
        {"channel": "screenshot", "ok": False, "reason": "chromium: not found"},
        {"channel": "toolServers", "ok": None, "reason": "no server configured"},
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A profile (generated, with extra text) and fresh capability results for session c1."""
    adopt_environment(monkeypatch, tmp_path)
    (tmp_path / "p").mkdir()
    with Store(state(tmp_path)) as store:
        store_version(store, PROFILE)
        ProfileState(store).set_auto_extra_text(EXTRA)
    fresh_facts(state(tmp_path), start(tmp_path), tmp_path / "p")
    return tmp_path


def start(home: Path, session: str = "c1", **extra: Any) -> dict[str, Any]:
    payload = claude(session, source="startup", permission_mode="default")
    return {**payload, "cwd": str(home / "p"), **extra}


def prompt(home: Path, session: str = "c1") -> dict[str, Any]:
    payload = {**start(home, session), "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    payload.pop("source")
    return payload


def preview(home: Path, *args: str, **env: str) -> dict[str, Any]:
    """`dshkit inject show … --json`, as a person runs it."""
    done = run_dshkit("inject", "show", *args, "--json", home=home, env=env, timeout=60)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def session_args(home: Path, session: str = "c1") -> list[str]:
    return [
        "--session",
        session,
        "--harness",
        "claude",
        "--cwd",
        str(home / "p"),
        "--permission-mode",
        "default",
    ]


def event(found: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in found["events"] if e["event"] == name)


def part(found: dict[str, Any], handler: str) -> dict[str, Any]:
    return next(p for p in found["parts"] if handler in p["handler"])


def ledger_rows(home: Path) -> list[tuple[Any, ...]]:
    with Store(state(home)) as store:
        deliveries = store.db.execute("SELECT * FROM deliveries").fetchall()
        probes = store.db.execute("SELECT key, started FROM capability_probes").fetchall()
        return [tuple(row) for row in (*deliveries, *probes)]


def test_a_starts_preview_is_byte_for_byte_what_the_hook_then_injects(home: Path) -> None:
    before = ledger_rows(home)
    shown = preview(home, *session_args(home), "--event", "SessionStart", **ON)
    assert shown["harness"] == "claude" and shown["sessionId"] == "c1"
    assert not shown["catalogued"] and shown["source"] == "startup"
    assert ledger_rows(home) == before  # nothing recorded, no probe claimed
    assert preview(home, *session_args(home), "--event", "SessionStart", **ON) == shown
    start_event = event(shown, "SessionStart")
    # The hook, run now for the same session, answers exactly the previewed text.
    out, _ = hook(home, "SessionStart", start(home), **ON)
    injected = context(out)
    assert injected is not None
    assert start_event["text"].encode() == injected.encode()
    # Its parts: each handler in its order, with the sources of its text.
    assert [(p["order"], p["handler"]) for p in start_event["parts"]] == [
        (10, "dshkit.profile.hook:on_session_start"),
        (12, "dshkit.graft.hook:on_session_start"),
        (15, "dshkit.capability.hook:on_session_start"),
        (18, "dshkit.memory.hook:on_session_start"),
    ]
    profile = part(start_event, "profile.hook:on_session_start")
    assert profile["text"] == effective(home) and profile["delivered"]
    assert [p["source"] for p in profile["pieces"]] == ["profile:auto", "profile:extra"]
    assert profile["pieces"][1]["text"] == EXTRA
    assert "\n\n".join(p["text"] for p in profile["pieces"]) == profile["text"]
    facts = part(start_event, "capability.hook:on_session_start")
    assert facts["source"] == "capability" and facts["text"].startswith(HEADING)
    assert "- 权限模式：default" in facts["text"] and facts["effects"] == []
    assert "- 子进程：✓（sh -c echo: exit 0）" in facts["text"]
    assert start_event["text"] == profile["text"] + "\n\n" + facts["text"]
    assert start_event["chars"] == profile["chars"] + 2 + facts["chars"]
    graft = part(start_event, "graft.hook:on_session_start")
    assert graft["text"] == "" and "no handoff waits" in graft["why"]
    # Delivered now, so the next start has nothing to bring.
    after = event(
        preview(home, *session_args(home), "--event", "SessionStart", **ON), "SessionStart"
    )
    assert after["text"] == "" and "had it already" in part(after, "profile.hook:")["why"]
    assert "unchanged" in part(after, "capability.hook:")["why"]
    # A compaction drops what was injected: previewed, and injected, again.
    compact = preview(
        home, *session_args(home), "--event", "SessionStart", "--source", "compact", **ON
    )
    again, _ = hook(home, "SessionStart", start(home, source="compact"), **ON)
    assert event(compact, "SessionStart")["text"] == context(again) == injected


def test_a_part_the_cap_would_drop_is_marked_and_the_hook_drops_it(home: Path) -> None:
    with Store(state(home)) as store:
        profile = ProfileState(store)
        profile.set_custom_text("长" * 9_900)
        profile.set_mode("custom")
    shown = event(
        preview(home, *session_args(home), "--event", "SessionStart", **ON), "SessionStart"
    )
    custom, facts = part(shown, "profile.hook:"), part(shown, "capability.hook:")
    assert [p["source"] for p in custom["pieces"]] == ["profile:custom"]
    assert custom["delivered"] and not custom["dropped"] and custom["chars"] == 9_900
    assert facts["dropped"] and not facts["delivered"] and facts["text"].startswith(HEADING)
    assert shown["text"] == custom["text"] and shown["limit"] == 10_000
    assert "dropped the context of dshkit.capability.hook:on_session_start" in shown["notes"][0]
    out, log = hook(home, "SessionStart", start(home), **ON)
    assert context(out) == shown["text"]
    assert shown["notes"][0] in log  # the hook logs the very same note
    with Store(state(home)) as store:  # what was dropped was not delivered
        assert store.delivered(("claude", "c1"), PROFILE_DELIVERY)
        assert not store.delivered(("claude", "c1"), CAPABILITY_DELIVERY)


def test_a_prompts_preview_holds_what_the_session_is_owed(home: Path) -> None:
    # The start was never delivered (its answer lost, say) and a handoff's notice waits.
    with Store(state(home)) as store:
        marker.mark(str(state(home)))  # as a handoff's begin does, before its ledger row
        assert ledger.queue_notice(store, "claude", "c1", 7, "交接 #7 已回滚，请继续工作。")
    shown = event(
        preview(home, *session_args(home), "--event", "UserPromptSubmit", **ON), "UserPromptSubmit"
    )
    graft = part(shown, "graft.hook:on_prompt")
    assert [p["source"] for p in graft["pieces"]] == ["graft:notice"]
    assert graft["text"] == "交接 #7 已回滚，请继续工作。"
    assert part(shown, "profile.hook:on_prompt")["text"] == effective(home)
    optimizer = part(shown, "optimizer.hook:on_prompt")
    assert not optimizer["previewed"] and "prompt optimizer" in optimizer["why"]
    out, _ = hook(home, "UserPromptSubmit", prompt(home), **ON)
    assert context(out) == shown["text"]
    assert shown["text"].startswith(graft["text"] + "\n\n" + effective(home) + "\n\n")
    later = event(
        preview(home, *session_args(home), "--event", "UserPromptSubmit", **ON), "UserPromptSubmit"
    )
    assert later["text"] == ""
    assert "no handoff, notice" in part(later, "graft.hook:on_prompt")["why"]


def test_the_preview_starts_no_probe_and_says_the_hook_would(home: Path) -> None:
    with Store(state(home)) as store:
        store.db.execute("DELETE FROM capability_probes")
    shown = event(
        preview(home, *session_args(home), "--event", "SessionStart", **ON), "SessionStart"
    )
    facts = part(shown, "capability.hook:")
    assert facts["effects"] and facts["effects"][0].startswith("starts a background probe of ")
    assert "通道实测正在后台进行" in facts["text"]  # pending, as the hook would say
    assert ledger_rows(home) == []  # no probe claimed, none started
    stopped = event(preview(home, *session_args(home), "--event", "Stop"), "Stop")
    assert part(stopped, "sessions.hook:")["effects"] == ["starts a detached `dshkit refresh`"]
    time.sleep(0.5)
    with Store(state(home)) as store:
        assert store.get_meta("profile.lastRun") is None  # no refresh ran


def test_a_new_sessions_preview_and_the_readable_text(home: Path) -> None:
    new = preview(home, "--harness", "dsh", "--cwd", str(home / "p"))
    assert new["new"] and new["sessionId"] is None and new["harness"] == "dsh"
    # DSH's bridge brings SessionStart context late: its first prompt carries the profile.
    assert event(new, "SessionStart")["text"] == ""
    assert event(new, "UserPromptSubmit")["text"] == effective(home)
    assert [e["event"] for e in new["events"]] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ]
    printed = run_dshkit(
        "inject", "show", *session_args(home), "--event", "SessionStart",
        home=home, env=ON, timeout=60,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    assert "10 dshkit.profile.hook:on_session_start  profile," in printed.stdout
    assert "from profile:auto" in printed.stdout and "profile:extra" in printed.stdout
    assert effective(home) in printed.stdout
    unknown = run_dshkit(
        "inject", "show", "--session", "nope", "--json", home=home, timeout=60, check=False
    )
    assert unknown.returncode != 0 and "nope" in (unknown.stdout + unknown.stderr)
    assert hook_log(home) == ""  # nothing went wrong behind anyone's back


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = Running(tmp_path, capabilities=lambda state, jobs: {"inject": InjectService(state)})
    yield server
    server.close()


def test_the_api_serves_the_same_preview(running: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    home = running.state_dir.parent
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSHKIT_CAPABILITY", "on")
    with Store(running.state_dir) as store:
        store_version(store, PROFILE)
    payload = {"session_id": "c1", "permission_mode": "default", "cwd": str(home)}
    fresh_facts(running.state_dir, payload, home)
    expected = InjectService(running.state_dir).preview(
        "c1", "claude", cwd=str(home), permission_mode="default"
    )
    with running.client(
        base_url=f"{running.url}/api/inject",
        headers={TOKEN_HEADER: running.token},
    ) as client:
        query = {"session": "c1", "harness": "claude", "cwd": str(home), "permission": "default"}
        answer = client.get("/", params=query)
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        assert answer.json() == expected.as_json()
        with Store(running.state_dir) as store:
            text = ProfileState(store).effective().text
        assert answer.json()["events"][0]["text"].startswith(text + "\n\n" + HEADING)
        one = client.get("/", params={**query, "event": ["SessionStart", "Stop"]}).json()
        assert [e["event"] for e in one["events"]] == ["SessionStart", "Stop"]
        for params, status, message in (
            ({"harness": "nope"}, 400, "harness must be one of"),
            ({"session": "c1", "harness": "claude", "event": "Nope"}, 400, "event must be"),
            ({"session": "c1", "harness": "claude", "cwd": "rel"}, 400, "absolute"),
            ({"session": "gone"}, 404, "gone"),
            ({}, 400, "needs its harness"),
        ):
            refused = client.get("/", params=params)
            assert refused.status_code == status and message in refused.json()["error"], params
    with Store(running.state_dir) as store:
        assert store.db.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0] == 0


def test_every_handler_is_previewed_or_says_why() -> None:
    for entry in hookspec.HANDLERS:
        assert (entry.handler in RULES) != (entry.handler in NOT_PREVIEWED), entry
