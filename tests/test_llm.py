"""The LLM client against a real fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from dshkit.llm import DEFAULT_MODEL, LLMClient, LLMConfig, LLMConfigError
from dshkit.store import Store

from .fakes import FakeOpenAI, Reply

MESSAGES = [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "hi"}]


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, store: Store | None = None, **config: object) -> LLMClient:
    settings = {"base_url": fake.base_url, "api_key": "sk-test-secret", "model": "m1", **config}
    return LLMClient(LLMConfig(**settings), store)  # type: ignore[arg-type]


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
    with pytest.raises(LLMConfigError, match="set DSHKIT_LLM_API_KEY"):
        LLMClient(LLMConfig.load(tmp_path, {}))
    (tmp_path / "config.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "file-model"\nmax_tokens = 100\n'
    )
    env = {"DSHKIT_LLM_MODEL": "env-model", "DSHKIT_LLM_API_KEY": "sk-from-env"}
    config = LLMConfig.load(tmp_path, env)
    assert (config.model, config.max_tokens, config.api_key) == ("env-model", 100, "sk-from-env")
    assert "sk-from-env" not in repr(config)
    (tmp_path / "config.toml").write_text("[llm]\nmodle = 'typo'\n")
    with pytest.raises(LLMConfigError, match=r"unknown keys \['modle'\]"):
        LLMConfig.load(tmp_path, {})
    (tmp_path / "config.toml").write_text("[llm\n")
    with pytest.raises(LLMConfigError, match="not valid TOML"):
        LLMConfig.load(tmp_path, {})
