"""Quote verification: a quote is found in the person's own messages when only blank space,
width, case or punctuation (Chinese or English) differ, never when a word does; too short a
quote proves nothing; the span answered is what the person typed; and in sessions scanned from
real logs, words of the assistant, of a tool's output or of what the harness injected are not
the person's."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.provenance import MIN_QUOTE_WEIGHT, Message, PersonWords, fold, person_words
from dshkit.provenance.quotes import said_in, weight
from dshkit.sessions import Scanner, Source

from ..support.logs import Log, event, session_dir, write_log

SAID = "请用中文回答，不要改测试文件。Always run `make fast` before you commit!"


def words(*texts: str, times: list[int | None] | None = None) -> PersonWords:
    stamps = times or [1_000 * (n + 1) for n in range(len(texts))]
    return PersonWords(
        Message("dsh", f"s{n}", n, stamp, text)
        for n, (text, stamp) in enumerate(zip(texts, stamps, strict=True))
    )


def test_fold_drops_blank_space_width_case_and_punctuation_of_either_language() -> None:
    assert fold("Always  run\n`make fast`!") == "alwaysrunmakefast"  # backticks too
    assert fold("ＡＬＷＡＹＳ ｒｕｎ") == "alwaysrun"  # full-width letters are letters
    assert fold("「请用中文回答」，谢谢。") == "请用中文回答谢谢"
    assert fold("“quoted”, 'quoted' — (quoted)…") == "quotedquotedquoted"
    assert fold("zero\u200bwidth\u00a0space\u3000here") == "zerowidthspacehere"
    assert fold("数字 ４２ 和 42") == "数字42和42"


@pytest.mark.parametrize(
    "quote",
    [
        "请用中文回答，不要改测试文件。",  # as typed
        "请用中文回答不要改测试文件",  # punctuation dropped
        "「请用中文回答」，“不要改测试文件”",  # other punctuation, either language's
        "请用中文回答, 不要改测试文件.",  # English punctuation for Chinese
        "always run make fast before you commit",
        "ALWAYS RUN `MAKE FAST` BEFORE YOU COMMIT.",  # case
        "Always   run\n make fast\tbefore  you commit",  # blank space
        "ＡＬＷＡＹＳ ｒｕｎ ｍａｋｅ ｆａｓｔ",  # width
        "不要改测试文件。 Always run",  # across the person's two sentences
    ],
)
def test_a_quote_is_found_whatever_its_spacing_width_case_or_punctuation(quote: str) -> None:
    found = words(SAID).find(quote)
    assert found is not None, quote
    assert (found.harness, found.session_id, found.seq, found.time) == ("dsh", "s0", 0, 1_000)


@pytest.mark.parametrize(
    "quote",
    [
        "请用英文回答，不要改测试文件",  # a changed word
        "请用中文回答，不要改任何测试文件",  # an added word
        "请用中文回答，不改测试文件",  # a dropped word
        "always run make test before you commit",  # changed
        "always run make fast tests before you commit",  # added
        "always run fast before you commit",  # dropped
        "always run make fast before you push",
        "you should always run make fast before you commit",  # words before the quote
    ],
)
def test_a_changed_added_or_dropped_word_is_not_the_persons(quote: str) -> None:
    assert words(SAID).find(quote) is None


def test_a_quote_below_the_minimum_weight_proves_nothing() -> None:
    assert MIN_QUOTE_WEIGHT == 6
    person = words("ok, 中文 please: run it")
    # A Han character weighs two, any other letter or digit one; punctuation nothing.
    assert weight(fold("中文")) == 4 and person.find("中文") is None
    assert weight(fold("ok!!")) == 2 and person.find("ok!!") is None
    assert weight(fold("run it")) == 5 and person.find("run it") is None
    assert person.find("please: run it") is not None  # 11
    assert person.find("中文 please") is not None  # 4 + 6
    assert words("用中文回答").find("用中文") is not None  # three Han characters: 6
    assert person.find("") is None and person.find("，。！") is None


def test_the_span_answered_is_the_persons_own_characters() -> None:
    person = words("先跑测试。然后「请用中文」回答我，好吗？", "Ｕｓｅ   Tabs, not spaces!")
    found = person.find("请用中文回答我")
    assert found is not None and found.words == "请用中文」回答我"
    assert said_in(person.messages[0], "请用中文回答我") == found
    found = person.find("use tabs not spaces")
    assert found is not None and found.words == "Ｕｓｅ   Tabs, not spaces"
    assert found.session_id == "s1" and found.seq == 1


def test_the_newest_message_holding_a_quote_wins_and_times_counts_them() -> None:
    person = words(
        "please run the linter first",
        "ok so: please run the linter first.",
        "unrelated words here",
        "PLEASE RUN THE LINTER FIRST",
        times=[5_000, 9_000, 20_000, None],
    )
    found = person.find("please run the linter first")
    assert found is not None
    assert (found.session_id, found.time, found.times) == ("s1", 9_000, 3)
    assert found.words == "please run the linter first"
    assert (found.harness, found.seq) == ("dsh", 1)
    # Equal times (or none): the later message in the order given.
    tied = words("run the linter first", "Run the linter first!", times=[None, None])
    assert tied.find("run the linter first") == tied.find("run the linter first")
    found = tied.find("run the linter first")
    assert found is not None and found.session_id == "s1" and found.times == 2
    assert len(tied) == 2


# The person's words in the logs below, and words in them that are not the person's.
PERSON_DSH = "把超时改成三十秒，别动重试的逻辑"
PERSON_CLAUDE = "Keep the public API stable and never rename exported functions"
NOT_THE_PERSONS = {
    "assistant (DSH)": "I will always run the whole test suite before each commit",
    "tool output (DSH)": "Contributors must use tabs for indentation in every file",
    "plugin message (DSH)": "Remember to answer in formal English at all times",
    "assistant (Claude)": "Prefer small pure functions over classes in this codebase",
    "tool output (Claude)": "This project deploys from the release branch only",
    "system reminder (Claude)": "The user prefers verbose explanations with examples",
    "runtime context (Claude)": "Caveat the messages below were generated by local commands",
    "sub-agent prompt (Claude)": "Search the repository for every caller of parse_config",
}


def dsh_session(root: Path) -> None:
    log = Log()
    log.turn_start()
    log.human(PERSON_DSH)
    log.say(NOT_THE_PERSONS["assistant (DSH)"] + ".")
    log.call("bash", "c1", {"command": "cat CONTRIBUTING.md"})
    log.result("c1", 100, text="# Contributing\n" + NOT_THE_PERSONS["tool output (DSH)"] + ".")
    plugin = {
        "role": "user",
        "content": [{"type": "text", "text": NOT_THE_PERSONS["plugin message (DSH)"]}],
        "source": {"kind": "plugin"},
    }
    log.events.append(event("user/message", len(log.events), plugin, log.time + 1000))
    write_log(session_dir(root, "d-1") / "session.v4.jsonl.zstd", [log.events], session_id="d-1")


def claude_session(projects: Path) -> None:
    base = {"sessionId": "c-1", "cwd": "/home/dev/app", "version": "2.1.197"}
    lines: list[dict[str, object]] = []

    def put(kind: str, content: object, n: int, **extra: object) -> None:
        stamp = f"2026-11-30T04:{n:02d}:00.000Z"
        message = {"role": kind, "content": content}
        lines.append(
            {**base, **extra, "type": kind, "message": message, "uuid": f"u{n}", "timestamp": stamp}
        )

    reminder = f"<system-reminder>{NOT_THE_PERSONS['system reminder (Claude)']}</system-reminder>"
    put("user", [{"type": "text", "text": reminder}, {"type": "text", "text": PERSON_CLAUDE}], 0)
    put("assistant", [{"type": "text", "text": NOT_THE_PERSONS["assistant (Claude)"]}], 1)
    call = {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "README.md"}}
    put("assistant", [call], 2)
    result = {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "## Deploying\n" + NOT_THE_PERSONS["tool output (Claude)"],
    }
    put("user", [result], 3)
    put("user", NOT_THE_PERSONS["runtime context (Claude)"], 4, isMeta=True)
    put("user", NOT_THE_PERSONS["sub-agent prompt (Claude)"], 5, isSidechain=True)
    project = projects / "-home-dev-app"
    project.mkdir(parents=True)
    (project / "c-1.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


@pytest.fixture
def scanned(tmp_path: Path, scanner: Scanner) -> Scanner:
    dsh_session(tmp_path / "dsh")
    claude_session(tmp_path / "claude")
    scanner.scan([Source("dsh", tmp_path / "dsh"), Source("claude", tmp_path / "claude")])
    return scanner


def test_the_persons_words_in_scanned_sessions_are_found_where_they_were_said(
    scanned: Scanner,
) -> None:
    person = person_words(scanned.catalog)
    found = person.find("把超时改成三十秒, 别动重试的逻辑。")
    assert found is not None
    assert (found.harness, found.session_id) == ("dsh", "d-1")
    assert found.words == PERSON_DSH and found.seq is not None and found.time is not None
    found = person.find("keep the public API stable")
    assert found is not None
    assert (found.harness, found.session_id, found.times) == ("claude", "c-1", 1)
    # Only the sessions asked for.
    assert person_words(scanned.catalog, [("dsh", "d-1")]).find("keep the public API") is None
    assert person_words(scanned.catalog, [("claude", "c-1")]).find(PERSON_CLAUDE) is not None


@pytest.mark.parametrize("where", sorted(NOT_THE_PERSONS))
def test_words_of_the_assistant_a_tool_or_the_harness_are_not_the_persons(
    scanned: Scanner, where: str
) -> None:
    assert person_words(scanned.catalog).find(NOT_THE_PERSONS[where]) is None


def test_the_words_that_are_not_the_persons_were_read(scanned: Scanner) -> None:
    # In the scanned events, so "not found" is not "not read" (a system reminder excepted: the
    # Claude Code adapter drops it as it reads).
    seen = " ".join(
        str(e.get("data"))
        for key in (("dsh", "d-1"), ("claude", "c-1"))
        for e in scanned.catalog.events(key)
    )
    unread = [where for where, text in NOT_THE_PERSONS.items() if text not in seen]
    assert unread == ["system reminder (Claude)"]


@pytest.mark.parametrize(
    ("said", "quote"),
    [
        ("we always run make lint first", "ways run make"),  # starts inside a word
        ("we always run make lint first", "always run mak"),  # ends inside one
        ("the therapist said so", "the rapist said so"),  # splits a word the person did not
        ("run the notebook tests", "run then otebook tests"),
    ],
)
def test_a_quote_is_the_same_words_not_the_same_letters(said: str, quote: str) -> None:
    words = PersonWords([Message("dsh", "s", 1, 1, said)])
    assert words.find(quote) is None
    assert words.find(said) is not None  # the person's words themselves are found


def test_words_joined_by_a_hyphen_or_between_han_text_are_still_the_same_words() -> None:
    words = PersonWords([Message("dsh", "s", 1, 1, "先跑 make-lint，公共API保持稳定")])
    assert words.find("make lint") is not None
    assert words.find("公共 API 保持稳定") is not None
