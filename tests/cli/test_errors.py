"""The command line's one error mapping: exit codes by kind, a JSON error under --json,
options anywhere, and tables that keep whole ids when the output is not a terminal."""

from __future__ import annotations

from pathlib import Path

import orjson

from ..support.cli import invoke
from ..support.logs import human, session_dir, write_log


def test_a_name_that_matches_nothing_is_bad_input_with_a_json_error(tmp_path: Path) -> None:
    out = invoke("sessions", "show", "nope", "--json", home=tmp_path, check=False)
    assert out.returncode == 2
    said = orjson.loads(out.stdout)  # JSON, not prose, for a script
    assert said["exitCode"] == 2 and "no session 'nope'" in said["error"]
    assert "Traceback" not in out.stderr and "no session 'nope'" in out.stderr


def test_a_usage_error_is_a_json_error_too(tmp_path: Path) -> None:
    out = invoke("scan", "--frame-budget", "many", "--json", home=tmp_path, check=False)
    assert out.returncode == 2
    said = orjson.loads(out.stdout)
    assert said["kind"] == "usage" and "--frame-budget" in said["error"]


def test_a_broken_config_is_not_done_naming_the_key(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    (state / "config.toml").write_text("[optimizer]\ntier = 'max'\n")
    out = invoke("optimize", "settings", "--json", home=tmp_path, check=False)
    assert out.returncode == 1
    said = orjson.loads(out.stdout)
    assert said["kind"] == "invalid" and "[optimizer] tier" in said["error"]


def test_optimize_takes_its_options_before_the_words(tmp_path: Path) -> None:
    # No LLM is configured: the run stops there, but only once the options were parsed.
    out = invoke("optimize", "--tier", "basic", "修复 greet", home=tmp_path, check=False)
    assert "No such option" not in out.stderr and "no LLM API key" in out.stderr
    assert out.returncode == 1


def test_tables_keep_whole_ids_off_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    long_id = "session-" + "0123456789abcdef" * 6  # far wider than 80 columns with the rest
    write_log(
        session_dir(root, long_id, cwd="/home/dev/" + "deep/" * 12 + "project")
        / "session.v4.jsonl.zstd",
        [[human(1, "整理一下 README 的安装说明，" * 4)]],
        session_id=long_id,
    )
    invoke("scan", "--root", str(root), "--harness", "dsh", home=tmp_path)
    listed = invoke("sessions", "list", home=tmp_path)  # stdout is a pipe here
    assert long_id in listed.stdout
