"""`dshkit optimize`, `dshkit runs`, `dshkit outcome` as a person runs them."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ..support.cli import invoke
from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import human, session_dir, write_log

REFINED = "开工前先问用户：无\n把登录按钮改成蓝色。\n收尾自检：打开登录页看按钮。"
CONTRACT = ["runId", "tier", "form", "raw", "output", "fallback", "lengthGate", "askGate",
            "evidence", "audit"]  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def dshkit(home: Path, fake: FakeOpenAI, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "sk-t"}
    return invoke(*args, home=home, env=env, check=False)


def test_optimize_json_runs_and_outcome(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=[REFINED]))
    done = dshkit(tmp_path, fake, "optimize", "把按钮改蓝", "--tier", "basic", "--json")
    assert done.returncode == 0, done.stderr
    result = orjson.loads(done.stdout)
    assert list(result) == CONTRACT
    assert result["output"] == REFINED and result["fallback"] is None
    assert set(result["audit"]) == {"sentences", "traced", "freedom", "untraced"}
    plain = dshkit(tmp_path, fake, "optimize", "把按钮改蓝", "--tier", "off")
    assert plain.stdout == "把按钮改蓝\n" and len(fake.requests) == 1  # off: no model call
    assert dshkit(tmp_path, fake, "outcome", "1", "ok").stdout.strip() == "run 1: ok"
    listed = orjson.loads(dshkit(tmp_path, fake, "runs", "list", "--json").stdout)
    assert [r["runId"] for r in listed["runs"]] == [2, 1]
    assert listed["rates"]["basic"]["ok"] == 1 and listed["rates"]["basic"]["successRate"] is None
    shown = orjson.loads(dshkit(tmp_path, fake, "runs", "show", "1").stdout)
    assert shown["outcome"] == "ok" and shown["sentences"]
    assert orjson.loads(dshkit(tmp_path, fake, "runs", "show", "1", "--json").stdout) == shown
    marked = orjson.loads(dshkit(tmp_path, fake, "outcome", "2", "rework", "--json").stdout)
    assert marked["runId"] == 2 and marked["outcome"] == "rework"
    missing = dshkit(tmp_path, fake, "outcome", "99", "ok")
    assert missing.returncode == 2 and "no optimizer run 99" in missing.stderr
    said = orjson.loads(dshkit(tmp_path, fake, "runs", "show", "99", "--json").stdout)
    assert said == {**said, "kind": "not-found", "exitCode": 2, "field": "run"}


def test_a_fallback_prints_the_raw_words_and_says_why(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    done = dshkit(tmp_path, fake, "optimize", "把按钮改蓝", "--tier", "basic")
    assert done.returncode == 0 and done.stdout == "把按钮改蓝\n"
    assert "the raw words were passed on: http-error" in done.stderr


def test_clear_errors(tmp_path: Path, fake: FakeOpenAI) -> None:
    empty = dshkit(tmp_path, fake, "optimize", "  ")
    assert empty.returncode == 2 and "the raw words are empty" in empty.stderr
    nosession = dshkit(
        tmp_path, fake, "optimize", "x", "--session", "nope", "--root", str(tmp_path)
    )
    assert nosession.returncode == 2 and "no single session matches 'nope'" in nosession.stderr
    change = dshkit(tmp_path, fake, "optimize", "settings", "--tier", "basic")
    assert change.returncode == 2 and "give --session" in change.stderr
    (tmp_path / ".dsh" / "dshkit").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".dsh" / "dshkit" / "config.toml").write_text('[optimizer]\ntier = "max"\n')
    bad = dshkit(tmp_path, fake, "optimize", "x")
    assert (
        bad.returncode == 1 and "[optimizer] tier" in bad.stderr and "Traceback" not in bad.stderr
    )


def test_an_ambiguous_session_prefix_is_a_usage_error_naming_the_matches(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    root = tmp_path / "dsh-sessions"
    for session_id in ("dup-1", "dup-2"):
        write_log(session_dir(root, session_id) / "session.v4.jsonl.zstd", [[human(0, "hi")]])
    where = ("--session", "dup", "--root", str(root), "--harness", "dsh")
    done = dshkit(tmp_path, fake, "optimize", "x", "--tier", "basic", *where)
    assert done.returncode == 2, done.stderr
    assert "'dup' matches 2 sessions" in done.stderr
    assert "dsh:dup-1" in done.stderr and "dsh:dup-2" in done.stderr
    assert fake.requests == []  # refused before any model was asked
    settings = dshkit(tmp_path, fake, "optimize", "settings", "--session", "dup")
    assert settings.returncode == 2 and "dsh:dup-2" in settings.stderr


def test_eval_prints_the_live_verification_table(tmp_path: Path, fake: FakeOpenAI) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"raw": "把按钮改蓝", "clear": true}\n')
    fake.replies.extend([Reply(deltas=[REFINED])] * 3)
    done = dshkit(tmp_path, fake, "optimize", "eval", "--cases", str(cases), "--json")
    assert done.returncode == 0, done.stderr
    rows = orjson.loads(done.stdout)
    assert [r["tier"] for r in rows] == ["basic", "advanced", "extreme"]
    assert all(r["nothingOnClear"] is True and r["askGate"]["hasSection"] for r in rows)
    cases.write_text("not json\n")
    bad = dshkit(tmp_path, fake, "optimize", "eval", "--cases", str(cases))
    assert bad.returncode == 2 and "cases.jsonl:1 is not JSON" in bad.stderr


def test_a_setting_changes_only_the_key_given(tmp_path: Path, fake: FakeOpenAI) -> None:
    root = tmp_path / "dsh-sessions"
    write_log(session_dir(root, "keep-1") / "session.v4.jsonl.zstd", [[human(0, "hi")]])
    where = ("--session", "keep-1", "--root", str(root), "--harness", "dsh")
    assert dshkit(tmp_path, fake, "optimize", "x", "--tier", "off", *where).returncode == 0
    for change in (("--tier", "advanced"), ("--turns", "7"), ("--permission", "review")):
        done = dshkit(tmp_path, fake, "optimize", "settings", "--session", "keep-1", *change)
        assert done.returncode == 0, done.stderr
    shown = dshkit(tmp_path, fake, "optimize", "settings", "--session", "keep-1", "--json")
    settings = orjson.loads(shown.stdout)
    assert (settings["tier"], settings["turns"], settings["permission"]) == (
        "advanced",
        7,
        "review",
    )


def test_a_project_setting_is_where_its_sessions_start(tmp_path: Path, fake: FakeOpenAI) -> None:
    project = tmp_path / "work"
    project.mkdir()
    root = tmp_path / "dsh-sessions"
    for session_id in ("proj-1", "proj-2"):
        log = session_dir(root, session_id, cwd=str(project)) / "session.v4.jsonl.zstd"
        write_log(log, [[human(0, "hi")]], session_id=session_id, cwd=str(project))
    scan = ("--root", str(root), "--harness", "dsh", "--tier", "off")
    assert dshkit(tmp_path, fake, "optimize", "x", "--session", "proj-1", *scan).returncode == 0
    # A symlink to the project is the same project.
    (tmp_path / "link").symlink_to(project)
    done = dshkit(
        tmp_path, fake, "optimize", "settings", "--project", str(tmp_path / "link"),
        "--tier", "basic", "--turns", "5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    own = dshkit(tmp_path, fake, "optimize", "settings", "--session", "proj-2", "--tier", "extreme")
    assert own.returncode == 0, own.stderr

    def shown(*which: str) -> dict[str, object]:
        done = dshkit(tmp_path, fake, "optimize", "settings", *which, "--json")
        assert done.returncode == 0, done.stderr
        return dict(orjson.loads(done.stdout))

    assert (shown("--project", str(project))["tier"], shown()["tier"]) == ("basic", "off")
    first = shown("--session", "proj-1")
    assert (first["tier"], first["turns"]) == ("basic", 5)  # the project's choice
    second = shown("--session", "proj-2")
    assert (second["tier"], second["turns"]) == ("extreme", 5)  # its own over the project's
    both = dshkit(tmp_path, fake, "optimize", "settings", "--session", "proj-1",
                  "--project", str(project), "--tier", "basic")  # fmt: skip
    assert both.returncode == 2 and "not both" in both.stderr


def test_runs_stats_show_each_tiers_latency_and_rate_against_the_raw_words(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.replies.append(Reply(deltas=[REFINED]))
    dshkit(tmp_path, fake, "optimize", "把按钮改蓝", "--tier", "basic")
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    dshkit(tmp_path, fake, "optimize", "把按钮改红", "--tier", "basic")
    dshkit(tmp_path, fake, "outcome", "1", "ok")
    dshkit(tmp_path, fake, "outcome", "2", "rework")  # fell back: the raw words' rework
    stats = orjson.loads(dshkit(tmp_path, fake, "runs", "stats", "--json").stdout)["rates"]
    assert stats["basic"]["latency"]["prompts"] == 2 and stats["basic"]["latency"]["fallbacks"] == 1
    # One judged run on each side: the counts, no rate and no difference (under the minimum).
    assert stats["basic"]["vsRawWords"] is None and stats["basic"]["successRate"] is None
    assert (stats["basic"]["comparable"], stats["basic"]["rawComparable"]) == (1, 1)
    table = dshkit(tmp_path, fake, "runs", "stats").stdout
    assert "p95 ms" in table and "off (raw words)" in table and "100%" not in table
    assert "1 / 1" in table and "- (under 10 judged)" in table and "- (1 / 1)" in table
    listed = dshkit(tmp_path, fake, "runs", "list").stdout
    assert "http-error" in listed and "ms" in listed


def test_a_prefix_a_harness_uses_is_refused_in_the_config(tmp_path: Path, fake: FakeOpenAI) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    (state / "config.toml").write_text('[optimizer]\nskip_prefix = "!"\n')
    done = dshkit(tmp_path, fake, "optimize", "settings")
    assert done.returncode != 0 and "[optimizer] skip_prefix = '!'" in done.stderr


def test_skipping_what_needs_no_model_is_a_setting_of_a_project(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    project = tmp_path / "work"
    project.mkdir()
    done = dshkit(
        tmp_path, fake, "optimize", "settings", "--project", str(project), "--no-skip-trivial",
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = orjson.loads(done.stdout)
    assert shown["skipTrivial"] is False and shown["skipPrefix"] == "》"


def test_runs_show_last_is_the_whole_text_of_the_newest_run(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    none = dshkit(tmp_path, fake, "runs", "show", "last", "--json")
    assert none.returncode != 0 and "no optimizer run yet" in none.stdout + none.stderr
    fake.replies.append(Reply(deltas=[REFINED]))
    dshkit(tmp_path, fake, "optimize", "把按钮改蓝", "--tier", "basic")
    shown = orjson.loads(dshkit(tmp_path, fake, "runs", "show", "last").stdout)
    assert shown["runId"] == 1 and shown["output"] == REFINED and shown["language"] == "zh"
    assert orjson.loads(dshkit(tmp_path, fake, "runs", "show", "1").stdout) == shown


def test_the_optimizers_own_settings_are_set_per_project(tmp_path: Path, fake: FakeOpenAI) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    args = ["--strategy", "v5", "--model", "m-opt", "--reasoning-effort", "low", "--budget-s", "4"]
    done = dshkit(
        tmp_path, fake, "optimize", "settings", "--project", str(project), *args, "--json"
    )
    assert done.returncode == 0, done.stderr
    shown = orjson.loads(done.stdout)
    assert (shown["strategy"], shown["model"], shown["reasoningEffort"]) == ("v5", "m-opt", "low")
    assert shown["budgetS"] == 4.0
    defaults = orjson.loads(dshkit(tmp_path, fake, "optimize", "settings", "--json").stdout)
    assert (defaults["strategy"], defaults["model"], defaults["budgetS"]) == ("v6", "", 10.0)
