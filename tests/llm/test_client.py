"""The LLM client against a real fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import DEFAULT_MODEL, LLMClient, LLMConfig, LLMConfigError, ToolCall
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply, calls

MESSAGES = [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "hi"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, store: Store | None = None, **config: Any) -> LLMClient:
    settings = {"base_url": fake.base_url, "api_key": "sk-test-secret", "model": "m1", **config}
    return LLMClient(LLMConfig(**settings), store)


def test_streamed_reply_and_the_request_it_made(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=["你", "好", "!"]))
    seen: list[str] = []
    with client(fake) as llm:
        result = llm.complete(MESSAGES, on_delta=seen.append)
    assert (result.outcome, result.text, result.finish_reason) == ("ok", "你好!", "stop")
    assert seen == ["你", "好", "!"] and result.usage == {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "total_tokens": 12,
    }
    (request,) = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test-secret"
    assert request.body["model"] == "m1" and request.body["stream"] is True
    assert request.body["messages"] == MESSAGES and request.body["max_tokens"] == 8192
    assert "tools" not in request.body  # a tool list would invite tool calls, not JSON


def test_http_error_is_named_with_its_status_and_message(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(status=401, error_body={"error": {"message": "invalid api key"}}))
    with client(fake) as llm:
        result = llm.complete(MESSAGES)
    assert result.outcome == "http-error" and result.text == ""
    assert "HTTP 401" in (result.error or "") and "invalid api key" in (result.error or "")


def test_cut_at_max_tokens_is_its_own_outcome(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=['{"entries": [', '{"id"'], finish="length"))
    with client(fake, max_tokens=5) as llm:
        result = llm.complete(MESSAGES)
    assert result.outcome == "max-tokens" and result.text == '{"entries": [{"id"'
    assert "max_tokens=5" in (result.error or "")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(deltas=["par"], error_event="overloaded"), "reported an error: overloaded"),
        (Reply(deltas=["par"], cut=True), "RemoteProtocolError"),
        (Reply(deltas=["par"], finish=None, usage=None, done=False), "ended before the model"),
        (Reply(deltas=["par"], finish="content_filter"), "finish_reason 'content_filter'"),
    ],
)
def test_broken_streams_are_stream_errors_not_empty_outputs(
    fake: FakeOpenAI, reply: Reply, message: str
) -> None:
    fake.replies.append(reply)
    with client(fake) as llm:
        result = llm.complete(MESSAGES)
    assert result.outcome == "stream-error" and message in (result.error or "")
    assert result.text == "par"  # what did arrive is kept for the record, but not as success


def test_abort_stops_the_stream(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=["a", "b", "c", "d"], delay_s=0.2))
    abort = threading.Event()

    def stop_after_first(delta: str) -> None:
        abort.set()

    with client(fake) as llm:
        result = llm.complete(MESSAGES, on_delta=stop_after_first, abort=abort)
    assert result.outcome == "aborted" and result.text == "a"


def test_nothing_listening_is_a_network_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", timeout_s=2)
    with LLMClient(config) as llm:
        result = llm.complete(MESSAGES)
    assert result.outcome == "network-error" and "Connect" in (result.error or "")


def test_every_call_is_recorded_and_the_key_never_is(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.replies.extend([Reply(deltas=["ok"]), Reply(status=500)])
    with Store(tmp_path) as store, client(fake, store) as llm:
        llm.complete(MESSAGES, purpose="profile")
        llm.complete(MESSAGES, purpose="profile")
        rows = store.db.execute("SELECT purpose, outcome, response FROM llm_calls").fetchall()
    assert [tuple(r) for r in rows] == [("profile", "ok", "ok"), ("profile", "http-error", "")]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-test-secret" not in path.read_bytes(), path


def test_configuration_file_environment_and_what_is_missing(tmp_path: Path) -> None:
    assert LLMConfig.load(tmp_path, {}).model == DEFAULT_MODEL
    assert LLMConfig.load(tmp_path, {}).deadline_s == 300.0
    with pytest.raises(LLMConfigError, match="set DSHKIT_LLM_API_KEY"):
        LLMClient(LLMConfig.load(tmp_path, {}))
    (tmp_path / "config.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "file-model"\nmax_tokens = 100\n'
        "deadline_s = 30\n"
    )
    env = {"DSHKIT_LLM_MODEL": "env-model", "DSHKIT_LLM_API_KEY": "sk-from-env"}
    config = LLMConfig.load(tmp_path, env)
    assert (config.model, config.max_tokens, config.api_key) == ("env-model", 100, "sk-from-env")
    assert config.deadline_s == 30.0 and isinstance(config.deadline_s, float)
    assert "sk-from-env" not in repr(config)
    (tmp_path / "config.toml").write_text("[llm]\nmodle = 'typo'\n")
    with pytest.raises(LLMConfigError, match=r"unknown keys \['modle'\]"):
        LLMConfig.load(tmp_path, {})
    (tmp_path / "config.toml").write_text("[llm\n")
    with pytest.raises(LLMConfigError, match="not valid TOML"):
        LLMConfig.load(tmp_path, {})


def test_a_config_built_in_code_is_checked_by_the_same_rules() -> None:
    with pytest.raises(LLMConfigError, match=r"\[llm\] timeout_s = -5 .*above 0"):
        LLMClient(LLMConfig(api_key="k", timeout_s=-5))
    with pytest.raises(LLMConfigError, match=r"\[llm\] base_url = 'ftp://x'.*http"):
        LLMClient(LLMConfig(api_key="k", base_url="ftp://x"))


def test_a_keepalive_only_stream_ends_at_the_deadline(fake: FakeOpenAI, tmp_path: Path) -> None:
    # Each read gets a byte long before timeout_s; only the one deadline can end this call.
    fake.replies.append(Reply(deltas=["par"], keepalive_s=0.05))
    with Store(tmp_path) as store, client(fake, store, timeout_s=60, deadline_s=0.5) as llm:
        result = llm.complete(MESSAGES, purpose="t")
        (row,) = store.db.execute("SELECT outcome, error, response FROM llm_calls").fetchall()
    assert result.outcome == "deadline" and result.text == "par"
    assert "deadline of 0.5 s" in (result.error or "")
    assert tuple(row) == ("deadline", result.error, "par")


def test_a_silent_server_ends_at_the_deadline_not_at_timeout_s(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=[], silent=True))
    with client(fake, timeout_s=600) as llm:
        result = llm.complete(MESSAGES, deadline_s=0.3)  # the per-call override
    assert result.outcome == "deadline" and "deadline of 0.3 s" in (result.error or "")


def test_a_deadline_must_be_positive(fake: FakeOpenAI) -> None:
    with client(fake) as llm, pytest.raises(ValueError, match="deadline_s must be above 0"):
        llm.complete(MESSAGES, deadline_s=0)
    assert fake.requests == []


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "读文件",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def test_streamed_tool_calls_are_put_together_and_recorded(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.replies.append(
        calls(("read", '{"path": "src/a.py"}'), ("grep", '{"pattern": "def"}'), pieces=4)
    )
    with Store(tmp_path) as store, client(fake, store) as llm:
        result = llm.complete(MESSAGES, tools=TOOLS, tool_choice="auto", purpose="t")
        row = store.db.execute(
            "SELECT outcome, finish_reason, tool_calls FROM llm_calls"
        ).fetchone()
    assert (result.outcome, result.finish_reason, result.text) == ("ok", "tool_calls", "")
    assert result.tool_calls == [
        ToolCall("call_1_0", "read", '{"path": "src/a.py"}'),
        ToolCall("call_1_1", "grep", '{"pattern": "def"}'),
    ]
    (request,) = fake.requests
    assert request.body["tools"] == TOOLS and request.body["tool_choice"] == "auto"
    assert result.message() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1_0",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "src/a.py"}'},
            },
            {
                "id": "call_1_1",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"pattern": "def"}'},
            },
        ],
    }
    assert (row[0], row[1]) == ("ok", "tool_calls")
    assert orjson.loads(row[2]) == result.message()["tool_calls"]


def test_messages_of_every_role_are_sent_as_given(fake: FakeOpenAI) -> None:
    conversation: list[dict[str, Any]] = [
        *MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "文件内容"},
    ]
    with client(fake) as llm:
        assert llm.complete(conversation, tools=TOOLS).ok
    assert fake.requests[0].body["messages"] == conversation


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "messages is empty"),
        ([{"role": "robot", "content": "x"}], "messages[0] has role 'robot'"),
        ([*MESSAGES, {"role": "tool", "content": "x"}], "messages[2]: a tool message"),
        ([*MESSAGES, {"role": "assistant", "content": None}], "messages[2]: an assistant"),
    ],
)
def test_a_malformed_conversation_is_refused_before_any_request(
    fake: FakeOpenAI, messages: list[dict[str, object]], message: str
) -> None:
    with client(fake) as llm, pytest.raises(ValueError) as raised:
        llm.complete(messages)
    assert message in str(raised.value) and fake.requests == []


def test_tool_calls_finish_without_calls_is_a_stream_error(fake: FakeOpenAI) -> None:
    fake.replies.append(Reply(deltas=[], finish="tool_calls"))
    with client(fake) as llm:
        result = llm.complete(MESSAGES, tools=TOOLS)
    assert result.outcome == "stream-error" and "sent none" in (result.error or "")


def test_an_abort_ends_a_silent_stream_at_once(fake: FakeOpenAI) -> None:
    # Headers, then nothing: no byte arrives to carry the abort, so the read loop must see it.
    fake.replies.append(Reply(deltas=[], silent=True, hold_s=10.0))
    abort = threading.Event()
    threading.Timer(0.3, abort.set).start()
    with client(fake, timeout_s=60) as llm:
        result = llm.complete(MESSAGES, abort=abort, deadline_s=10.0)
    assert result.outcome == "aborted" and result.elapsed_ms < 1500


def test_an_abort_ends_a_keepalive_only_stream(fake: FakeOpenAI) -> None:
    # The abort comes while only keep-alive comments arrive: once the text did (a timer from
    # the call's start once fired first on a loaded machine, before any text came).
    fake.replies.append(Reply(deltas=["par"], keepalive_s=0.05))
    abort = threading.Event()

    def arrived(text: str) -> None:
        threading.Timer(0.3, abort.set).start()

    with client(fake, timeout_s=60) as llm:
        result = llm.complete(MESSAGES, abort=abort, deadline_s=10.0, on_delta=arrived)
    assert result.outcome == "aborted" and result.text == "par" and result.elapsed_ms < 1500


@pytest.mark.parametrize("for_good", [True, False])
def test_a_session_forgotten_while_its_call_runs_leaves_no_words_in_the_record(
    fake: FakeOpenAI, tmp_path: Path, for_good: bool
) -> None:
    # The call's prompt and reply carry the sessions' words: a forget that lands while the
    # model answers (after the call's links were known, before it is recorded) must not leave
    # them behind in llm_calls, which forgetting had nothing yet to delete from.
    gone, kept = ("dsh", "s-gone"), ("dsh", "s-kept")
    fake.replies.append(Reply(deltas=["记住口令", "黄鹤楼"], delay_s=0.05))
    said = [{"role": "user", "content": "口令是黄鹤楼"}]
    with Store(tmp_path) as store:
        for harness, session_id in (gone, kept):
            store.db.execute(
                "INSERT INTO sessions (harness, session_id) VALUES (?, ?)", (harness, session_id)
            )
        store.db.commit()

        def forget_once(delta: str) -> None:
            if delta == "记住口令":  # the first delta: the call is under way
                with Store(tmp_path) as other:
                    other.forget_sessions([gone], for_good=for_good)

        config = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m1")
        with LLMClient(config, store, sessions=[gone, kept]) as llm:
            result = llm.complete(said, purpose="optimizer", on_delta=forget_once)
        assert result.text == "记住口令黄鹤楼"  # the caller still gets its answer
        row = store.db.execute("SELECT prompt, response, error, id FROM llm_calls").fetchone()
        assert (row[0], row[1]) == ("[]", "")
        assert "forgotten" in row[2]
        links = store.db.execute("SELECT harness, session_id FROM llm_call_sessions").fetchall()
        assert [tuple(link) for link in links] == [kept]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "黄鹤楼".encode() not in path.read_bytes(), path


def test_a_call_whose_sessions_all_stay_is_recorded_whole(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.replies.append(Reply(deltas=["好"]))
    with Store(tmp_path) as store:
        store.db.execute("INSERT INTO sessions (harness, session_id) VALUES ('dsh', 's1')")
        store.db.commit()
        config = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m1")
        with LLMClient(config, store, sessions=[("dsh", "s1"), ("dsh", "not-scanned")]) as llm:
            llm.complete(MESSAGES, purpose="optimizer")
        row = store.db.execute("SELECT prompt, response, error FROM llm_calls").fetchone()
    assert orjson.loads(row[0]) == MESSAGES and row[1] == "好" and row[2] is None


def test_a_whole_json_reply_is_named_not_a_stream_that_ended_early(fake: FakeOpenAI) -> None:
    """An endpoint that ignores `stream` answers one JSON body: said as such."""
    whole = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
    fake.replies.append(Reply(whole=orjson.dumps(whole)))
    with client(fake) as llm:
        result = llm.complete(MESSAGES)
    error = result.error or ""
    assert result.outcome == "stream-error" and "ended before" not in error
    assert "HTTP 200" in error and "one JSON reply (application/json)" in error
    assert "not the event stream" in error and '"finish_reason":"stop"' in error


def test_an_html_page_is_named_as_one(fake: FakeOpenAI) -> None:
    page = b"<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>"
    fake.replies.append(Reply(whole=page, content_type="text/html; charset=utf-8"))
    with client(fake) as llm:
        result = llm.complete(MESSAGES)
    error = result.error or ""
    assert result.outcome == "stream-error" and "ended before" not in error
    assert "is an HTML page titled 'Welcome to nginx!'" in error and "base_url" in error


def test_a_reasoning_effort_is_sent_only_when_set(fake: FakeOpenAI) -> None:
    with client(fake) as llm:
        llm.complete(MESSAGES)
    with client(fake, reasoning_effort="low") as llm:
        llm.complete(MESSAGES)
    first, second = fake.requests
    assert "reasoning_effort" not in first.body and second.body["reasoning_effort"] == "low"


def test_a_body_with_no_events_is_named_by_what_it_began_with(fake: FakeOpenAI) -> None:
    """A stream content type, or none known, with no `data:` line in it."""
    fake.replies.append(Reply(whole=b"upstream busy, try later", content_type="text/plain"))
    with client(fake) as llm:
        result = llm.complete(MESSAGES)
    assert result.outcome == "stream-error"
    assert (
        result.error
        == "the server's 200 answer held no event stream; it began: 'upstream busy, try later'"
    )
