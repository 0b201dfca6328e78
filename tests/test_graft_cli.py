"""`dshkit graft status` on a generated DSH session: the watermark, its source, the decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from .conftest import event, human, session_dir, snapshot, write_log
from .test_cli import dshkit


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
    dshkit("scan", "--root", str(root), "--harness", "dsh", home=tmp_path)
    return root


def status(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = dshkit("graft", "status", "--session", "graft-st", "--json", *args, home=tmp_path)
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
    }
    mark = shown["watermark"]
    assert mark["mode"] == "dynamic" and mark["feasible"] is True
    assert mark["forced"] == 0.75 and mark["warning"] == 0.70
    assert mark["cost"]["tokensPerTurnSource"] == "config" and mark["configError"] is None
    assert shown["action"] == "nudge" and "72%" in shown["text"]
    text = dshkit("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "source: usage" in text and "nudge: at 72%" in text
    assert snapshot(root) == before  # read-only
    again = status(tmp_path)  # and records nothing: the same answer again
    assert again["action"] == "nudge"


def test_status_says_unavailable_without_usage(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=None)
    shown = status(tmp_path)
    assert shown["pressure"]["source"] == "unavailable" and shown["pressure"]["tokens"] is None
    assert shown["action"] == "none"
    text = dshkit("graft", "status", "--session", "graft-st", home=tmp_path).stdout
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
    text = dshkit("graft", "status", "--session", "graft-st", home=tmp_path).stdout
    assert "configuration error" in text and "no warning window" in text
    (state / "config.toml").write_text("[graft]\nmode = 'sliding'\n")
    bad = dshkit("graft", "status", "--session", "graft-st", home=tmp_path, check=False)
    assert bad.returncode == 1 and "[graft] mode" in bad.stderr and "'dynamic'" in bad.stderr


def test_status_names_an_unknown_session(tmp_path: Path) -> None:
    scanned(tmp_path, tokens=1_000)
    missing = dshkit("graft", "status", "--session", "nope", home=tmp_path, check=False)
    assert missing.returncode == 2 and "--session" in missing.stderr
