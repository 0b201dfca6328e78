"""Read-back over a handoff's source session: one conversation per session with unique seqs
(no subagent side files), exact text by seq with paging, bounded search, and no write to any
session directory."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft.readback import (
    MAX_READ_LIMIT,
    SEARCH_CHAR_BUDGET,
    ReadBackError,
    read_result,
    search_history,
)
from dshkit.sessions import Scanner, Source
from dshkit.sessions.catalog import Catalog
from dshkit.sessions.events import message_text

from ..support.logs import dsh, event, human, session_dir, write_lines, write_log
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD
from ..support.readonly import is_write, recorded_opens, snapshot

PROJECT = "-home-dev-proj1"
MAIN = "cc34c54b-1db8-4032-8579-28682745ff2f"  # real Claude Code transcripts
OTHER = "4f94642e-fa5c-495a-ad73-439b8225b50c"
DSH_SESSION = "session-68aca4c0-6253-4648-b1e8-3f36e75c7111"  # real DSH v0 log


def _claude_tree(tmp_path: Path) -> Path:
    """The real Claude fixture, with a real transcript also filed as a subagent side file of
    MAIN (`<project>/<session>/subagents/`), whose per-file seqs collide with MAIN's."""
    root = tmp_path / "claude"
    shutil.copytree(CLAUDE, root)
    subagents = root / PROJECT / MAIN / "subagents"
    subagents.mkdir(parents=True)
    shutil.copyfile(root / PROJECT / f"{OTHER}.jsonl", subagents / "agent-a1.jsonl")
    return root


def _line(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": "2026-11-30T04:13:07.724Z", "cwd": "/home/dev/p", **fields}


def _prompt(text: str) -> dict[str, Any]:
    return _line("user", message={"role": "user", "content": text})


def _say(request: str, text: str, *calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return _line("assistant", requestId=request, message={"id": request, "content": content})


def _result(call_id: str, text: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return _line("user", message={"role": "user", "content": [block]})


LONG = "".join(f"line {n:05d} of the build log\n" for n in range(2_000))


def _work_session(root: Path) -> None:
    """A Claude Code transcript with tool calls, a long result and a subagent side file."""
    project = root / "-home-dev-p"
    project.mkdir(parents=True)
    write_lines(
        project / "w-1.jsonl",
        [
            _prompt("Fix the FLAKY test in tests/test_io.py"),  # seq 0, 1 (turn/start first)
            _say("r1", "Running the suite.", ("t1", "Bash", {"command": "pytest -q"})),  # 2, 3
            _result("t1", LONG),  # 4
            _say("r2", "The flaky test is test_read; fixing it."),  # 5
            _prompt("never push to main"),  # 6, 7
            _say(
                "r3", "Understood.", ("t2", "Bash", {"command": "git commit -m 'fix flaky test'"})
            ),  # 8, 9
            _result("t2", "[main 1a2b3c4] fix flaky test"),  # 10
        ],
    )
    subagents = project / "w-1" / "subagents"
    subagents.mkdir(parents=True)
    side = _line("user", isSidechain=True, message={"role": "user", "content": "side FLAKY"})
    write_lines(subagents / "agent-x.jsonl", [side, _say("s1", "side answer flaky")])


@pytest.fixture
def work(tmp_path: Path, scanner: Scanner) -> Catalog:
    root = tmp_path / "projects"
    _work_session(root)
    assert scanner.scan([Source("claude", root)]).errors == []
    return scanner.catalog


# -- the conversation -------------------------------------------------------------------------


def test_claude_conversation_leaves_out_subagent_files_and_has_unique_seqs(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = _claude_tree(tmp_path)
    report = scanner.scan([Source("claude", root)])
    assert report.errors == [] and report.files == 4
    catalog = scanner.catalog
    key = ("claude", MAIN)
    everything = [e["seq"] for e in catalog.events(key)]
    assert len(set(everything)) < len(everything)  # the side file's seqs collide with MAIN's
    conversation = catalog.conversation(key)
    seqs = [e["seq"] for e in conversation]
    assert len(seqs) == len(set(seqs))
    main_file = [c for c in catalog.files(key) if "subagents" not in c.path]
    assert len(main_file) == 1 and len(catalog.files(key)) == 2
    assert conversation == catalog.file_events(main_file[0])  # all of MAIN's events, in order
    texts = [(e["type"], message_text(e)) for e in conversation if e["type"].endswith("message")]
    assert texts == [("user/message", "say hi"), ("assistant/message", "hi from fake anthropic")]
    # A session without side files: its conversation is its events.
    assert catalog.conversation(("claude", OTHER)) == catalog.events(("claude", OTHER))


def test_codex_and_dsh_conversations_are_their_events(tmp_path: Path, scanner: Scanner) -> None:
    assert scanner.scan([Source("codex", CODEX), *dsh(DSH_ZSTD), *dsh(DSH_PLAIN)]).errors == []
    catalog = scanner.catalog
    for info in catalog.recent(limit=None):
        conversation = catalog.conversation(info.key)
        seqs = [e["seq"] for e in conversation]
        assert conversation == catalog.events(info.key) and len(seqs) == len(set(seqs)) > 5


def test_dsh_generations_give_one_event_per_seq_the_newest(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-gen")
    shared = [human(0, "same in both"), event("turn/start", 1, {"turn": 1})]
    write_log(directory / "session.jsonl.zstd", [[*shared, human(2, "old wording")]], version=0)
    write_log(directory / "session.v4.jsonl.zstd", [[*shared, human(2, "new wording")]])
    assert scanner.scan(dsh(root)).errors == []
    catalog = scanner.catalog
    key = ("dsh", "s-gen")
    assert [e["seq"] for e in catalog.events(key)] == [0, 1, 2, 2]  # the union keeps both
    conversation = catalog.conversation(key)
    assert [e["seq"] for e in conversation] == [0, 1, 2]
    assert read_result(catalog, "s-gen", 2)["text"] == "new wording"


# -- read_result ------------------------------------------------------------------------------


def test_read_result_gives_exact_text_of_calls_results_and_messages(work: Catalog) -> None:
    call = read_result(work, "w-1", 3)
    assert call == {
        "sourceSessionId": "w-1",
        "harness": "claude",
        "seq": 3,
        "type": "tool/call",
        "tool": "Bash",
        "text": 'Bash\n{"command":"pytest -q"}',
        "offset": 0,
        "totalChars": 28,
        "nextOffset": None,
    }
    short = read_result(work, "w-1", 10)
    assert (short["type"], short["tool"], short["text"]) == (
        "tool/result",
        "Bash",
        "[main 1a2b3c4] fix flaky test",
    )
    message = read_result(work, "w-1", 7)
    assert (message["type"], message["text"]) == ("user/message", "never push to main")
    assert "tool" not in message
    assert read_result(work, "w-1", 5)["text"] == "The flaky test is test_read; fixing it."
    turn = read_result(work, "w-1", 6)  # any other event: its data as JSON
    assert (turn["type"], orjson.loads(turn["text"])) == ("turn/start", {"turn": 2})


def test_read_result_pages_a_long_result_without_losing_a_character(work: Catalog) -> None:
    pages, offset = [], 0
    while offset is not None:
        page = read_result(work, "w-1", 4, offset=offset, limit=10_000)
        assert page["totalChars"] == len(LONG) and len(page["text"]) <= 10_000
        pages.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == LONG and len(pages) == 6
    first = read_result(work, "w-1", 4)  # the default page says where the rest starts
    assert first["nextOffset"] == 20_000 and first["text"] == LONG[:20_000]
    assert read_result(work, "w-1", 4, offset=len(LONG))["text"] == ""


def test_read_result_on_a_real_dsh_log(tmp_path: Path, scanner: Scanner) -> None:
    assert scanner.scan(dsh(DSH_PLAIN)).errors == []
    call = read_result(scanner.catalog, "session-68aca4c0", 27)  # a unique prefix resolves
    assert (call["sourceSessionId"], call["harness"]) == (DSH_SESSION, "dsh")
    assert call["text"] == 'read\n{"file_path":"hello.txt"}'
    result = read_result(scanner.catalog, DSH_SESSION, 29)
    assert result["tool"] == "read" and "1: hello from dsh-study" in result["text"]


def test_read_result_errors_say_what_is_there(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "projects"
    _work_session(root)
    write_lines(root / "-home-dev-p" / "w-2.jsonl", [_prompt("another")])
    scanner.scan([Source("claude", root)])
    catalog = scanner.catalog
    with pytest.raises(ReadBackError, match="no session 'nope'"):
        read_result(catalog, "nope", 0)
    with pytest.raises(ReadBackError, match=r"'w-' matches 2 sessions \(claude:w-1, claude:w-2"):
        read_result(catalog, "w-", 0)
    with pytest.raises(ReadBackError, match=r"seq 99 is not in session claude:w-1: .* 0 to 10"):
        read_result(catalog, "w-1", 99)
    assert isinstance(ReadBackError("x"), LookupError)
    with pytest.raises(
        ValueError, match=f"limit must be an integer between 1 and {MAX_READ_LIMIT:,}"
    ):
        read_result(catalog, "w-1", 4, limit=0)
    with pytest.raises(ValueError, match="limit must be an integer between"):
        read_result(catalog, "w-1", 4, limit=MAX_READ_LIMIT + 1)
    with pytest.raises(ValueError, match="offset must be an integer at least 0, got -1"):
        read_result(catalog, "w-1", 4, offset=-1)
    with pytest.raises(
        ValueError, match=rf"offset {len(LONG) + 1} is past the end .*\({len(LONG)} char"
    ):
        read_result(catalog, "w-1", 4, offset=len(LONG) + 1)
    with pytest.raises(ValueError, match="seq must be an integer at least 0, got '4'"):
        read_result(catalog, "w-1", "4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="source_session_id must be a non-empty"):
        read_result(catalog, " ", 4)


# -- search_history ---------------------------------------------------------------------------


def test_search_is_case_insensitive_newest_first_and_names_tools(work: Catalog) -> None:
    found = search_history(work, "w-1", "flaky")
    assert found["totalHits"] == 4 and found["truncated"] is False
    assert [(h["seq"], h["type"], h.get("tool")) for h in found["hits"]] == [
        (10, "tool/result", "Bash"),
        (9, "tool/call", "Bash"),
        (5, "assistant/message", None),
        (1, "user/message", None),
    ]
    assert found["hits"][-1]["snippet"] == "Fix the FLAKY test in tests/test_io.py"
    assert all("side" not in h["snippet"] for h in found["hits"])  # not the subagent's
    assert (found["sourceSessionId"], found["query"]) == ("w-1", "flaky")


def test_search_matches_all_terms_when_the_phrase_is_absent(work: Catalog) -> None:
    found = search_history(work, "w-1", "test_io  FIX")
    assert [h["seq"] for h in found["hits"]] == [1]
    assert search_history(work, "w-1", "fix deploy")["totalHits"] == 0


def test_search_snippets_are_marked_where_cut(work: Catalog) -> None:
    found = search_history(work, "w-1", "line 01000 of", context_chars=10)
    (hit,) = found["hits"]
    assert hit["snippet"] == "…build log\nline 01000 of the build…"
    assert hit["seq"] == 4 and hit["tool"] == "Bash"


def test_search_output_is_bounded_and_counts_everything(work: Catalog) -> None:
    found = search_history(work, "w-1", "flaky", limit=2)
    assert [h["seq"] for h in found["hits"]] == [10, 9]
    assert (found["totalHits"], found["truncated"]) == (4, True)


def test_search_respects_the_character_budget(tmp_path: Path, scanner: Scanner) -> None:
    project = tmp_path / "projects" / "-home-dev-p"
    project.mkdir(parents=True)
    write_lines(project / "b-1.jsonl", [_prompt(f"{'x' * 900} needle {n}") for n in range(30)])
    scanner.scan([Source("claude", tmp_path / "projects")])
    found = search_history(scanner.catalog, "b-1", "needle", limit=100, context_chars=1_000)
    assert found["totalHits"] == 30 and found["truncated"] is True
    assert sum(len(h["snippet"]) for h in found["hits"]) <= SEARCH_CHAR_BUDGET
    assert 0 < len(found["hits"]) < 30
    assert found["hits"][0]["snippet"].endswith("needle 29")  # newest first


def test_search_refuses_bad_arguments(work: Catalog) -> None:
    with pytest.raises(ValueError, match="query must be a non-empty string"):
        search_history(work, "w-1", "  ")
    with pytest.raises(ValueError, match=r"limit must be an integer between 1 and 100, got 0"):
        search_history(work, "w-1", "x", limit=0)
    with pytest.raises(ValueError, match=r"limit must be an integer between 1 and 100, got 101"):
        search_history(work, "w-1", "x", limit=101)
    with pytest.raises(ValueError, match="context_chars must be an integer between 0 and 1,000"):
        search_history(work, "w-1", "x", context_chars=-1)
    with pytest.raises(ValueError, match="query must be at most 500 characters"):
        search_history(work, "w-1", "x" * 501)
    with pytest.raises(ReadBackError, match="no session 'nope'"):
        search_history(work, "nope", "x")


# -- read-only --------------------------------------------------------------------------------


def test_read_back_reads_the_cache_and_leaves_session_directories_untouched(
    tmp_path: Path, scanner: Scanner
) -> None:
    claude = _claude_tree(tmp_path)
    dsh_root = tmp_path / "dsh"
    shutil.copytree(DSH_ZSTD, dsh_root)
    assert scanner.scan([Source("claude", claude), *dsh(dsh_root)]).errors == []
    before = snapshot(claude, dsh_root)
    dsh_id = scanner.catalog.recent("dsh")[0].session_id
    with recorded_opens() as opens:
        assert read_result(scanner.catalog, MAIN, 1)["text"] == "say hi"
        assert search_history(scanner.catalog, MAIN, "hi")["totalHits"] >= 2
        assert read_result(scanner.catalog, dsh_id, 0)["seq"] == 0
        assert search_history(scanner.catalog, dsh_id, "hello")["totalHits"] >= 1
    assert snapshot(claude, dsh_root) == before
    assert not [p for p, _ in opens if p.startswith((str(claude), str(dsh_root)))]
    assert not [p for p, mode in opens if is_write(mode) and "plain" in p]
