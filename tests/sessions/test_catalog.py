"""The sessions read side: listing and finding sessions, human messages kept as scanned,
forgetting what is gone, and the tail of one live transcript read apart from the scan."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from dshkit.optimizer.runs import Run, list_runs, save_run
from dshkit.sessions import Scanner, Source
from dshkit.sessions.catalog import Catalog, SessionAmbiguous, SessionNotFound
from dshkit.sessions.events import ToolCall
from dshkit.sessions.tail import Tail, read_tail
from dshkit.store import SCAN_LEASE, Store

from ..support.cli import run_dshkit
from ..support.logs import dsh, event, human, session_dir, write_lines, write_log
from ..support.paths import CLAUDE, CODEX, DSH_ZSTD
from ..support.readonly import is_write, recorded_opens


def test_recent_find_and_ambiguity(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    for session_id in ("abc-1", "abc-2", "xyz"):
        write_log(session_dir(root, session_id) / "session.v4.jsonl.zstd", [[human(0, "hi")]])
    scanner.scan(dsh(root))
    catalog = scanner.catalog
    assert {s.session_id for s in catalog.recent()} == {"abc-1", "abc-2", "xyz"}
    assert catalog.find("xy").session_id == "xyz"
    assert catalog.find("abc-2", "dsh").key == ("dsh", "abc-2")
    with pytest.raises(SessionAmbiguous, match=r"'abc' matches 2 sessions"):
        catalog.find("abc")
    with pytest.raises(SessionNotFound, match="no session 'nope'"):
        catalog.find("nope")
    assert catalog.recent(limit=1)[0].as_json()["id"] in {"abc-1", "abc-2", "xyz"}


def test_human_messages_are_kept_as_scanned_and_served_without_the_cache(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-1")
    write_log(directory / "session.v4.jsonl.zstd", [[human(0, "first"), human(1, "second")]])
    scanner.scan([*dsh(root), Source("claude", CLAUDE)])
    write_log(directory / "session.v4.jsonl.zstd", [[human(2, "third")]], mode="ab")
    scanner.scan(dsh(root))
    with recorded_opens() as opens:
        messages = scanner.catalog.human_messages([("dsh", "s-1")])
        newest = scanner.catalog.human_messages(newest=2)
    assert [m.text for m in messages] == ["first", "second", "third"]
    assert len(newest) == 2 and newest[-1].time == max(m.time or 0 for m in newest)
    assert not [p for p, _ in opens if "plain" in p]  # no cache was read again
    everything = scanner.catalog.human_messages()
    assert len(everything) == sum(s.human_messages for s in scanner.catalog.recent(limit=None))


def test_human_messages_follow_generation_unions_and_rewrites(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-1")
    shared = [human(0, "same in both"), event("turn/start", 1, {"turn": 1})]
    write_log(directory / "session.jsonl.zstd", [shared], version=0)
    write_log(directory / "session.v4.jsonl.zstd", [shared, [human(2, "only new")]])
    scanner.scan(dsh(root))
    texts = [m.text for m in scanner.catalog.human_messages()]
    assert texts == ["same in both", "only new"]  # twins across generations counted once
    write_log(directory / "session.v4.jsonl.zstd", [[human(0, "rewritten")]])  # replaced file
    scanner.scan(dsh(root))
    texts = sorted(m.text for m in scanner.catalog.human_messages())
    assert texts == sorted(m["data"]["content"][0]["text"] for m in _humans(scanner))


def _humans(scanner: Scanner) -> list[dict]:
    from dshkit.sessions.events import human_messages

    return human_messages(scanner.catalog.events(("dsh", "s-1")))


def test_a_store_scanned_before_the_table_existed_is_filled_once(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        scanner.scan([Source("claude", CLAUDE), Source("codex", CODEX)])
        expected = scanner.catalog.human_messages()
        assert expected
        store.db.execute("DELETE FROM human_messages")  # as an older dshkit left it
        store.db.execute("DELETE FROM meta WHERE key = 'scan.humansComplete'")
        scanner.scan([Source("claude", CLAUDE), Source("codex", CODEX)])
        assert scanner.catalog.human_messages() == expected


def test_sessions_whose_logs_are_gone_are_forgotten_whole(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE, root)
    scanner.scan([Source("claude", root)])
    gone = next(root.rglob("*.jsonl"))
    key = ("claude", gone.stem)
    cache = scanner.catalog.cache_path(scanner.catalog.files(key)[0])
    assert cache.exists() and "hunter2" not in cache.read_text()
    gone.unlink()
    report = scanner.scan([Source("claude", root)])
    assert report.forgotten == [key]
    assert scanner.catalog.get(key) is None and not cache.exists()
    assert not scanner.catalog.files(key) and not scanner.catalog.human_messages([key])
    for table in ("sessions", "log_files", "human_messages", "session_signals"):
        count = scanner.store.db.execute(
            f"SELECT count(*) FROM {table} WHERE session_id = ?", (key[1],)
        ).fetchone()[0]
        assert count == 0, table
    assert len(scanner.catalog.recent()) == 2  # the others stay


def test_a_missing_root_forgets_nothing(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE, root)
    scanner.scan([Source("claude", root)])
    root.rename(tmp_path / "unmounted")
    assert scanner.scan([Source("claude", root)]).forgotten == []
    assert len(scanner.catalog.recent()) == 3


def test_forget_one_session_for_good(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE, root)
    scanner.scan([Source("claude", root)])
    key = ("claude", scanner.catalog.recent()[0].session_id)
    caches = [scanner.catalog.cache_path(c) for c in scanner.catalog.files(key)]
    run = Run(tier="off", form="ptc", raw="我的密码是 hunter2", output="x")
    run.harness, run.session_id = key
    save_run(scanner.store, run)
    assert scanner.forget(key) is True
    assert list_runs(scanner.store) == []  # the optimizer's runs held the person's words too
    assert scanner.catalog.get(key) is None and not any(c.exists() for c in caches)
    again = scanner.scan([Source("claude", root)])  # the log is still there: stays forgotten
    assert key not in again.keys and scanner.catalog.get(key) is None
    assert scanner.forget(("claude", "never-seen")) is False


def test_forget_cli_and_sessions_list(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE, root)
    state = tmp_path / "state"
    run_dshkit("scan", "--root", str(root), "--state-dir", str(state), home=tmp_path)
    listed = run_dshkit("sessions", "list", "--json", "--state-dir", str(state), home=tmp_path)
    first = orjson.loads(listed.stdout)[0]["id"]
    done = run_dshkit("forget", first[:8], "--state-dir", str(state), home=tmp_path, check=False)
    assert done.returncode == 0 and "forgot claude:" in done.stdout
    listed = run_dshkit("sessions", "list", "--json", "--state-dir", str(state), home=tmp_path)
    assert first not in [s["id"] for s in orjson.loads(listed.stdout)]
    missing = run_dshkit("forget", "nope", "--state-dir", str(state), home=tmp_path, check=False)
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr


@pytest.mark.process
def test_tail_reads_only_new_events_without_the_scan_lease(tmp_path: Path) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "live") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "one")], [event("turn/start", 1, {"turn": 1})]], session_id="live")
    with Store(tmp_path / "state") as store:
        script = textwrap.dedent(
            f"""
            import sys, time
            from dshkit.store import Store
            with Store({str(tmp_path / "state")!r}) as store:
                with store.lease({SCAN_LEASE!r}):
                    print("held", flush=True)
                    sys.stdin.read()
            """
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
            assert store.lease_holder(SCAN_LEASE) == holder.pid
            first = _read_only_tail(store, log)
            assert (first.harness, first.session_id, first.reset) == ("dsh", "live", True)
            assert [e["seq"] for e in first.events] == [0, 1]
            assert _read_only_tail(store, log).events == []  # nothing new
            other = read_tail(store, str(log), consumer="another reader")
            assert [e["seq"] for e in other.events] == [0, 1]  # its own cursor
            write_log(log, [[human(2, "two")]], mode="ab", session_id="live")
            grown = _read_only_tail(store, log)
            assert [e["seq"] for e in grown.events] == [2] and not grown.reset
            assert grown.bytes_read < os.path.getsize(log) // 2 + 100
        finally:
            holder.communicate(b"", timeout=10)


def _read_only_tail(store: Store, log: Path) -> Tail:
    with recorded_opens() as opens:
        found = read_tail(store, str(log), consumer="t")
    modes = [mode for path, mode in opens if path == str(log)]
    assert not any(is_write(mode) for mode in modes)  # the log is only ever read
    return found


def test_tail_of_claude_and_codex_transcripts(tmp_path: Path) -> None:
    claude = next(CLAUDE.rglob("*.jsonl"))
    codex = next(CODEX.rglob("*.jsonl"))
    copy = tmp_path / ".claude" / "projects" / claude.parent.name / claude.name
    copy.parent.mkdir(parents=True)
    shutil.copy(claude, copy)
    with Store(tmp_path / "state") as store:
        tail = read_tail(store, str(copy), consumer="t")
        assert tail.harness == "claude" and tail.session_id == claude.stem and tail.events
        write_lines(copy, [{"type": "user", "message": {"role": "user", "content": "more"}}], "ab")
        assert [e["type"] for e in read_tail(store, str(copy), consumer="t").events] == [
            "turn/start",
            "user/message",
        ]
        assert read_tail(store, str(codex), "codex", consumer="t").session_id in codex.name
        with pytest.raises(ValueError, match="not named like a DSH session log"):
            read_tail(store, str(copy), "dsh", consumer="t")
        with pytest.raises(ValueError, match="cannot tell which harness"):
            read_tail(store, str(tmp_path / "x.log"), consumer="t")


def test_an_older_generation_of_any_supported_version_stays_in_the_session(
    tmp_path: Path, scanner: Scanner
) -> None:
    # DSH migrates by writing the next generation beside the old one (issue 8 item 14).
    root = tmp_path / "root"
    directory = session_dir(root, "s-1")
    write_log(directory / "session.v3.jsonl.zstd", [[human(0, "from v3")]], version=3)
    write_log(directory / "session.v4.jsonl.zstd", [[human(1, "from v4")]])
    report = scanner.scan(dsh(root))
    assert report.errors == [] and report.human_messages == 2


def test_tool_call_duration_without_times_is_unknown_not_an_error() -> None:
    call = {"type": "tool/call", "seq": 0, "data": {"callId": "c", "name": "bash"}}
    result = {"type": "tool/result", "seq": 1, "time": 5, "data": {}}
    assert ToolCall(call, 0, result, 1).duration_ms is None
    assert ToolCall({**call, "time": 2}, 0, result, 1).duration_ms == 3


def test_catalog_reads_the_real_fixtures_of_every_harness(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        Scanner(store).scan(
            [Source("dsh", DSH_ZSTD), Source("claude", CLAUDE), Source("codex", CODEX)]
        )
        catalog = Catalog(store)
        harnesses = {s.harness for s in catalog.recent(limit=None)}
        assert harnesses == {"dsh", "claude", "codex"}
        for info in catalog.recent(limit=None):
            assert len(catalog.events(info.key)) == info.events
