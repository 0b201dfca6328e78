"""The `dshkit` command line run in process: scan and sessions, their exit codes, messages and
JSON."""

from __future__ import annotations

from pathlib import Path

import orjson

from ..support.cli import invoke
from ..support.corpus import Corpus
from ..support.logs import session_dir
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD

SCAN_KEYS = [
    "files",
    "sessions",
    "events",
    "humanMessages",
    "framesDecoded",
    "bytesRead",
    "errors",
    "elapsedMs",
]


def test_scan_json_contract_on_every_real_fixture(tmp_path: Path) -> None:
    roots = [f"--root={r}" for r in (DSH_ZSTD, DSH_PLAIN, CLAUDE, CODEX)]
    first = orjson.loads(invoke("scan", *roots, "--json", home=tmp_path).stdout)
    assert list(first) == SCAN_KEYS
    assert (first["files"], first["sessions"], first["humanMessages"]) == (6, 6, 6)
    assert first["framesDecoded"] == 6 and first["bytesRead"] > 0 and first["errors"] == []
    again = orjson.loads(invoke("scan", *roots, "--json", home=tmp_path).stdout)
    assert (again["framesDecoded"], again["bytesRead"]) == (0, 0)
    assert {k: again[k] for k in ("files", "sessions", "events", "humanMessages")} == {
        k: first[k] for k in ("files", "sessions", "events", "humanMessages")
    }
    assert (tmp_path / ".dsh" / "dshkit" / "dshkit.db").is_file()


def test_scan_on_a_fresh_machine_says_where_it_looked(tmp_path: Path) -> None:
    result = invoke("scan", home=tmp_path)
    for where in (".dsh/sessions", ".claude/projects", ".codex/sessions"):
        assert where in result.stdout
    assert "No session logs found yet" in result.stdout
    empty = orjson.loads(invoke("scan", "--json", home=tmp_path).stdout)
    assert empty == {**empty, "files": 0, "sessions": 0, "events": 0, "errors": []}


def test_bad_arguments_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    missing = invoke("scan", "--root", str(tmp_path / "nope"), home=tmp_path, check=False)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    harness = invoke("scan", "--harness", "vim", home=tmp_path, check=False)
    assert harness.returncode == 2 and "'vim' is not one of" in harness.stderr
    budget = invoke("scan", "--frame-budget", "0", home=tmp_path, check=False)
    assert budget.returncode == 2 and "--frame-budget" in budget.stderr


def test_problem_files_are_listed_and_the_scan_still_exits_0(tmp_path: Path) -> None:
    root = tmp_path / "root"
    Corpus(root, seed=9).generate(sessions=3, frames=30)
    (session_dir(root, "broken") / "session.v4.jsonl.zstd").write_bytes(b"garbage" * 10)
    result = invoke("scan", "--root", str(root), "--harness", "dsh", "--json", home=tmp_path)
    report = orjson.loads(result.stdout)
    assert report["sessions"] == 3 and len(report["errors"]) == 1
    assert report["errors"][0]["file"].endswith("broken/session.v4.jsonl.zstd")
    assert "do not start a zstd frame" in report["errors"][0]["error"]


def test_newer_state_database_is_an_error_not_a_crash(tmp_path: Path) -> None:
    invoke("scan", "--json", home=tmp_path)
    import sqlite3

    db = sqlite3.connect(tmp_path / ".dsh" / "dshkit" / "dshkit.db")
    db.execute("PRAGMA user_version=999")
    db.close()
    result = invoke("scan", home=tmp_path, check=False)
    assert result.returncode == 5 and "written by a newer dshkit" in result.stderr  # unavailable
    assert "Traceback" not in result.stderr


def test_sessions_list_and_show(tmp_path: Path) -> None:
    invoke("scan", f"--root={DSH_PLAIN}", f"--root={CODEX}", "--json", home=tmp_path)
    listed = orjson.loads(invoke("sessions", "list", "--json", home=tmp_path).stdout)
    assert {s["harness"] for s in listed} == {"dsh", "codex"}
    dsh_id = next(s["id"] for s in listed if s["harness"] == "dsh")
    shown = orjson.loads(invoke("sessions", "show", dsh_id[:16], "--json", home=tmp_path).stdout)
    assert shown["id"] == dsh_id and shown["cwd"] == "/home/dev/work"
    assert [m["text"] for m in shown["humanMessageTexts"]] == [
        "Read hello.txt and tell me what it says"
    ]
    assert shown["tools"] == {"read": {"calls": 1, "failed": 0}}
    assert shown["contextWindow"] == 1_000_000
    assert [(f["error"], f["skippedLines"]) for f in shown["logFiles"]] == [(None, 0)]
    assert shown["logFiles"][0]["path"].endswith("session.jsonl")
    text = invoke("sessions", "show", dsh_id, home=tmp_path).stdout
    assert "Read hello.txt" in text and "read" in text
    unknown = invoke("sessions", "show", "no-such-id", home=tmp_path, check=False)
    assert unknown.returncode == 2 and "no session 'no-such-id'" in unknown.stderr
