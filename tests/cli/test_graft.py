"""`dshkit graft status` on a generated DSH session: the watermark, its source, the decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft import ledger
from dshkit.graft.lifecycle import begin, handoff
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.cli import invoke, run_dshkit
from ..support.graft_driver import FAST, Transcript, World, plan_for
from ..support.logs import event, human, session_dir, write_log
from ..support.readonly import snapshot


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # tables unwrapped, so lines can be asserted whole


def assistant(seq: int, turn: int, tokens: int, cached: int) -> dict[str, Any]:
    usage = {"inputTokens": tokens - cached, "outputTokens": 20, "cacheReadTokens": cached}
    message = {"role": "assistant", "content": [{"type": "text", "text": "好的"}]}
    return event("assistant/message", seq, {"turn": turn, "message": message, "usage": usage})


def scanned(tmp_path: Path, tokens: int | None, window: int | None = 128_000) -> Path:
    root = tmp_path / "sessions"
    records = [event("turn/start", 1, {"turn": 1}), human(2, "把测试补齐")]
    if window:
        records.insert(0, event("request/context", 0, {"provider": "d", "contextWindow": window}))
    if tokens is not None:
        records.append(assistant(3, 1, tokens, cached=tokens // 2))
    write_log(session_dir(root, "graft-status-1") / "session.jsonl.zstd", [records])
    invoke("scan", "--root", str(root), "--harness", "dsh", home=tmp_path)
    return root


def status(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = invoke("graft", "status", "--session", "graft-st", "--json", *args, home=tmp_path)
    value: dict[str, Any] = orjson.loads(out.stdout)
    return value


def test_status_reports_usage_against_the_logs_window_and_the_decision(tmp_path: Path) -> None:
    root = scanned(tmp_path, tokens=92_160)  # 72% of 128,000
    before = snapshot(root)
    shown = status(tmp_path)
    assert (shown["harness"], shown["session"]) == ("dsh", "graft-status-1")
    assert shown["pressure"] == {
        "tokens": 92_160,
        "window": 128_000,
        "windowSource": "log",
        "ratio": 0.72,
        "source": "usage",
        "model": None,
    }
    mark = shown["watermark"]
    assert mark["mode"] == "dynamic" and mark["feasible"] is True
    assert mark["forced"] == 0.75 and mark["warning"] == 0.70
    assert mark["cost"]["tokensPerTurnSource"] == "config" and mark["configError"] is None
    assert shown["action"] == "nudge" and "72%" in shown["text"]
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "source: usage" in text and "nudge: at 72%" in text
    assert snapshot(root) == before  # read-only
    again = status(tmp_path)  # and records nothing: the same answer again
    assert again["action"] == "nudge"


def test_status_says_unavailable_without_usage(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=None)
    shown = status(tmp_path)
    assert shown["pressure"]["source"] == "unavailable" and shown["pressure"]["tokens"] is None
    assert shown["action"] == "none"
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "unavailable (no usage reported yet)" in text


def test_status_follows_the_graft_config_and_reports_its_error(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=40_000, window=None)
    state = tmp_path / ".dsh" / "dshkit"
    (state / "config.toml").write_text(
        "[graft]\nmode = 'fixed'\nwarning_ratio = 0.8\nforced_ratio = 0.75\nwindow_tokens = 50000\n"
    )
    shown = status(tmp_path)
    assert shown["pressure"]["source"] == "estimated"
    assert shown["pressure"]["windowSource"] == "config"
    assert shown["watermark"]["warning"] is None and shown["action"] == "force"
    assert "warning_ratio" in shown["watermark"]["configError"]
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "configuration error" in text and "no warning window" in text
    (state / "config.toml").write_text("[graft]\nmode = 'sliding'\n")
    # A value that does not fit is refused, said, and its default used: the decision shown is
    # the one the hooks make (dynamic), never none at all.
    bad = invoke("graft", "status", "--session", "graft-st", home=tmp_path, check=False)
    assert bad.returncode == 0 and "settings refused" in bad.stdout
    assert "[graft] mode" in bad.stdout and "'dynamic'" in bad.stdout
    assert "the default is used instead" in bad.stdout and "watermark mode  dynamic" in bad.stdout
    refused = status(tmp_path)
    assert refused["watermark"]["mode"] == "dynamic" and "[graft] mode" in refused["settingsError"]


def test_status_uses_and_names_the_window_configured_for_the_sessions_model(
    tmp_path: Path,
) -> None:
    root = tmp_path / "sessions"
    message = {"role": "assistant", "content": [], "source": {"kind": "model", "model": "m-1"}}
    usage = {"inputTokens": 30_000, "outputTokens": 20}
    records = [
        event("turn/start", 1, {"turn": 1}),
        human(2, "继续"),
        event("assistant/message", 3, {"turn": 1, "message": message, "usage": usage}),
    ]
    write_log(session_dir(root, "graft-status-1") / "session.jsonl.zstd", [records])
    invoke("scan", "--root", str(root), "--harness", "dsh", home=tmp_path)
    state = tmp_path / ".dsh" / "dshkit"
    (state / "config.toml").write_text("[graft.windows]\nm-1 = 60000\n")
    pressure = status(tmp_path)["pressure"]
    assert (pressure["window"], pressure["windowSource"], pressure["model"]) == (
        60_000,
        "model-config",
        "m-1",
    )
    assert pressure["ratio"] == 0.5 and pressure["source"] == "estimated"
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "60,000 tokens ([graft.windows] for m-1)" in text
    (state / "config.toml").write_text("[graft.windows]\nm-2 = 60000\n")
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "200,000 tokens ([graft] window_tokens, m-1 not in [graft.windows])" in text


def test_status_names_an_unknown_session(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=1_000)
    missing = invoke("graft", "status", "--session", "nope", home=tmp_path, check=False)
    assert missing.returncode == 2 and "--session" in missing.stderr


def tool_pair(seq: int, command: str, output: str, error: bool = False) -> list[dict[str, Any]]:
    call = {
        "turn": 1,
        "callId": f"c{seq}",
        "name": "bash",
        "arguments": orjson.dumps({"command": command}).decode(),
    }
    message: dict[str, Any] = {
        "role": "tool",
        "source": {"kind": "tool", "callId": f"c{seq}"},
        "content": [{"type": "text", "text": output}],
    }
    if error:
        message["isError"] = True
    return [
        event("tool/call", seq, call),
        event("tool/result", seq + 1, {"turn": 1, "message": message}),
    ]


def test_prepare_prints_the_handoff_contract_and_leaves_the_session_untouched(
    tmp_path: Path,
) -> None:
    root = tmp_path / "sessions"
    records = [
        event("turn/start", 0, {"turn": 1}),
        human(1, "给项目加上 CI，以后不要直接推 main"),
        *tool_pair(2, "git commit -m ci", "[dev 89abcde] ci"),
        event("turn/end", 4, {"turn": 1, "reason": {"kind": "completed"}}),
        event("turn/start", 5, {"turn": 2}),
        human(6, "再把徽章加进 README"),
    ]
    write_log(session_dir(root, "graft-prep-1") / "session.v4.jsonl.zstd", [records])
    before = snapshot(root)
    out = invoke(
        "graft", "prepare", "--root", str(root), "--harness", "dsh",
        "--session", "graft-prep", "--json", home=tmp_path,
    )  # fmt: skip
    shown = orjson.loads(out.stdout)
    assert snapshot(root) == before
    assert shown["board"] == {
        "request": "给项目加上 CI，以后不要直接推 main",
        "done": [{"text": "git commit 89abcde 成功（dev）", "seq": 3}],
        "inProgress": [{"text": "再把徽章加进 README（尚未回答）", "seq": 6}],
        "todo": [],
        "blocker": None,
    }
    assert shown["constraints"] == [
        {"text": "给项目加上 CI，以后不要直接推 main", "seq": 1, "generation": 0}
    ]
    assert shown["boundarySeq"] == 4
    assert shown["card"] in shown["firstMessage"]
    assert shown["identity"] == {
        "sourceSessionId": "graft-prep-1",
        "boundarySeq": 4,
        "generation": 1,
    }
    text = invoke("graft", "prepare", "--session", "graft-prep", home=tmp_path).stdout
    assert text.startswith("<!-- graft-identity: ")


def test_prepare_aborts_when_the_constraints_do_not_fit(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    rules = [
        human(n, f"以后第 {n} 条规则都不要违反，" + "务必逐字遵守，" * 40) for n in range(1, 9)
    ]
    write_log(session_dir(root, "graft-prep-2") / "session.v4.jsonl.zstd", [rules])
    (tmp_path / ".dsh" / "dshkit").mkdir(parents=True)
    (tmp_path / ".dsh" / "dshkit" / "config.toml").write_text(
        "[graft]\nconstraint_budget_chars = 1000\n"
    )
    out = invoke(
        "graft", "prepare", "--root", str(root), "--harness", "dsh",
        "--session", "graft-prep", "--json", home=tmp_path, check=False,
    )  # fmt: skip
    assert out.returncode == 1
    assert "GRAFT_ABORTED: constraints truncated" in out.stderr
    report = orjson.loads(out.stdout)["detail"]  # the JSON error shape: detail beside code
    assert report["count"] == 8 and report["budgetChars"] == 1000 and report["notFitting"]


# -- what a person sees and does after a handoff (a graft world: the fake Claude Code CLI) ----


def graft(world: World, *args: str, check: bool = True) -> Any:
    return run_dshkit("graft", *args, "--state-dir", str(world.state), home=world.cwd, check=check)


def scanned_source(world: World, store: Store) -> str:
    transcript = Transcript(world, "c-src").prompt("把 README 翻译成英文")
    transcript.step(20_000)
    Scanner(store).scan([Source("claude", world.claude / "projects")])
    return transcript.session


@pytest.mark.process
def test_status_says_where_the_work_went_and_how_to_go_on(world: World) -> None:
    with Store(world.state) as store:
        source = scanned_source(world, store)
        txn = handoff(store, plan_for(source, str(world.cwd)), ignition=FAST)
    command = f"cd {world.cwd} && claude --resume {txn.target_id}"

    shown = orjson.loads(graft(world, "status", "--session", source, "--json").stdout)
    outcome = shown["handoff"]
    assert (outcome["txnId"], outcome["state"]) == (txn.id, "COMMITTED")
    assert outcome["targetSessionId"] == txn.target_id and outcome["continueCommand"] == command
    # The hooks' decision: this session handed off, so no nudge is due (not a fresh state).
    assert shown["action"] == "none" and "already handed off" in shown["reason"]
    text = graft(world, "status", "--session", source).stdout
    assert f"handoff #{txn.id} COMMITTED: handed off to claude session {txn.target_id}" in text
    assert f"continue it with: {command}" in text


def test_status_shows_a_failing_forced_cut(world: World) -> None:
    with Store(world.state) as store:
        source = scanned_source(world, store)
        ledger.record_force_failure(store, "claude", source, "GRAFT_ABORTED: constraints truncated")
    shown = orjson.loads(graft(world, "status", "--session", source, "--json").stdout)
    failed = shown["forcedCutFailure"]
    assert failed["failures"] == 1 and "constraints truncated" in failed["error"]
    assert failed["told"] is False and failed["retryAt"] - failed["at"] == 120_000
    text = graft(world, "status", "--session", source).stdout
    assert "forced cut failed 1 time(s) in a row" in text and "has not been told yet" in text


@pytest.mark.process
def test_cancel_and_release_are_audited_with_json(world: World) -> None:
    with Store(world.state) as store:
        waiting = begin(store, plan_for("c-waiting", str(world.cwd)), ignite=False)
        done = handoff(store, plan_for("c-done", str(world.cwd)), ignition=FAST)

    cancelled = orjson.loads(
        graft(world, "cancel", "--txn", str(waiting.id), "--reason", "not now", "--json").stdout
    )
    assert cancelled["state"] == "ROLLED_BACK" and cancelled["lastError"] == "not now"
    again = graft(world, "cancel", "--txn", str(waiting.id), "--json", check=False)
    assert again.returncode != 0 and orjson.loads(again.stdout)["code"] == "NOT_CANCELLABLE"

    released = orjson.loads(graft(world, "release", "--session", "c-done", "--json").stdout)
    assert released["id"] == done.id and released["state"] == "COMMITTED"
    text = graft(world, "release", "--session", "c-done", check=False)
    assert text.returncode != 0 and "only a retired source can be released" in text.stderr

    with Store(world.state) as store:
        assert ledger.retirement(store, "claude", "c-waiting") is None
        assert ledger.retirement(store, "claude", "c-done") is None
        records = {r.kind: r.detail for r in ledger.audit_records(store)}
    assert records["handoff-cancelled"]["by"] == "cli"
    assert records["source-released"]["by"] == "cli"


def test_a_session_is_kept_from_the_forced_cut_and_given_back(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=120_000)  # 94% of 128,000: past the forced cut
    assert status(tmp_path)["action"] == "force"
    kept = invoke(
        "graft", "exclude", "--session", "graft-st", "--reason", "长重构", "--json", home=tmp_path
    )
    [shown] = orjson.loads(kept.stdout)
    assert (shown["sessionId"], shown["by"], shown["reason"]) == ("graft-status-1", "cli", "长重构")
    now = status(tmp_path)
    assert now["excludedFromForcedCut"] is True and now["action"] == "nudge"  # warned, not cut
    assert now["watermark"]["forced"] is None
    listed = invoke("graft", "exclusions", home=tmp_path).stdout
    assert "dsh graft-status-1" in listed and "长重构" in listed
    text = invoke("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "excluded by a person" in text
    back = invoke("graft", "include", "graft-st", "--json", home=tmp_path)  # as an argument
    assert orjson.loads(back.stdout) == [] and status(tmp_path)["action"] == "force"
    missing = invoke("graft", "exclude", "nope", home=tmp_path, check=False)
    assert missing.returncode != 0 and "nope" in missing.stderr
    twice = invoke("graft", "exclude", "a", "--session", "b", home=tmp_path, check=False)
    assert twice.returncode == 2 and "name the session once" in twice.stderr


def test_the_ignition_switch_from_the_command_line(tmp_path: Path) -> None:
    def ignition(*args: str) -> dict[str, Any]:
        out = invoke("graft", "ignition", *args, "--json", home=tmp_path).stdout
        value: dict[str, Any] = orjson.loads(out)
        return value

    assert ignition() == {"ignite": True, "chosen": None, "config": True}
    assert ignition("--set", "off") == {"ignite": False, "chosen": False, "config": True}
    said = invoke("graft", "ignition", home=tmp_path).stdout
    assert "waits for the next session" in said and "your choice" in said
    assert ignition("config")["chosen"] is None  # as an argument
