"""The resident hooks' endpoint (`POST /api/hooks/{event}`): the same answer as `dshkit hook
EVENT`, byte for byte, the same text injected; and only its own credential opens it.

The app runs on this (the main) thread's loop, as `dshkit serve` runs it: the handlers' budgets
are kept with SIGALRM, which only the main thread may set."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from dshkit.app import App
from dshkit.install import resident
from dshkit.store import Store
from dshkit.web.app import create_app

from ..support.cli import run_dshkit
from ..support.hooks import claude, context
from ..support.profile import PROFILE, store_version


def posted(app: Any, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """One request handed to `app` on this thread's loop, from a loopback client whose port is
    held bound (no connection: the guard's peer check finds none and lets it through)."""
    held = [socket.socket(), socket.socket()]
    for sock in held:
        sock.bind(("127.0.0.1", 0))
    client = ("127.0.0.1", held[1].getsockname()[1])
    port = held[0].getsockname()[1]

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{port}") as c:
            return await c.post(path, content=body, headers=headers)

    try:
        return asyncio.run(send())
    finally:
        for sock in held:
            sock.close()


def world(tmp_path: Path) -> tuple[Path, Any, str]:
    state = tmp_path / ".dsh" / "dshkit"
    with Store(state) as store:
        store_version(store, PROFILE)
    token = resident.hook_token(state, create=True)
    assert token is not None
    app = create_app(App(state, []), "service-token", mount=["hooks"])
    return state, app, token


def command_answer(home: Path, event: str, payload: dict[str, Any]) -> bytes:
    done = run_dshkit("hook", event, home=home, input=orjson.dumps(payload), text=False)
    assert done.returncode == 0, done.stderr
    return bytes(done.stdout)


@pytest.mark.process
def test_the_endpoint_answers_byte_for_byte_as_the_command_hook(tmp_path: Path) -> None:
    state, app, token = world(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    for event, extra in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "帮我把测试跑一遍"}),
        ("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": "a.txt"}}),
        ("Stop", {"stop_hook_active": False}),
    ):
        # Two sessions alike: what one injects once is not injected twice in the same one.
        by_command = command_answer(
            tmp_path,
            event,
            claude(f"cmd-{event}", hook_event_name=event, cwd=str(project), **extra),
        )
        payload = claude(f"http-{event}", hook_event_name=event, cwd=str(project), **extra)
        answer = posted(app, f"/api/hooks/{event}", orjson.dumps(payload), {"X-Dshkit-Hook": token})
        assert answer.status_code == 200, answer.text
        assert answer.content == by_command, (event, answer.content, by_command)
        if event == "SessionStart":  # the profile, injected the same both ways
            said = context(orjson.loads(answer.content))
            assert said is not None and "用中文沟通" in said, said
    log = state / "hooks.log"
    assert not log.exists() or "failed" not in log.read_text(), log.read_text()


def test_only_the_hook_credential_opens_only_the_hooks(tmp_path: Path) -> None:
    state, app, token = world(tmp_path)
    payload = orjson.dumps(claude("s", hook_event_name="Stop"))
    wrong = posted(app, "/api/hooks/Stop", payload, {"X-Dshkit-Hook": token + "x"})
    assert wrong.status_code == 401 and "X-Dshkit-Hook" in wrong.text.title()
    none = posted(app, "/api/hooks/Stop", payload, {})
    assert none.status_code == 401
    elsewhere = posted(app, "/api/status/", b"", {"X-Dshkit-Hook": token})
    assert elsewhere.status_code == 401
    guard = posted(app, "/api/hooks/PreToolUse", payload, {"X-Dshkit-Hook": token})
    assert guard.status_code == 404 and "no resident hook" in guard.text  # a command hook
    (state / resident.HOOK_TOKEN_FILE).unlink()
    gone = posted(app, "/api/hooks/Stop", payload, {"X-Dshkit-Hook": token})
    assert gone.status_code == 401


@pytest.mark.process
def test_a_held_hook_call_holds_neither_the_service_nor_another_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", "Stop=tests.support.hook_handlers:held")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))
    state, app, token = world(tmp_path)
    headers = {"X-Dshkit-Hook": token}
    held = [socket.socket(), socket.socket()]
    for sock in held:
        sock.bind(("127.0.0.1", 0))
    client = ("127.0.0.1", held[1].getsockname()[1])
    port = held[0].getsockname()[1]

    async def both() -> tuple[httpx.Response, bool, httpx.Response]:
        transport = httpx.ASGITransport(app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{port}") as c:
            stop = asyncio.ensure_future(
                c.post("/api/hooks/Stop", content=orjson.dumps(claude("a")), headers=headers)
            )
            while not (state / "held-started").exists():
                await asyncio.sleep(0.02)
            prompt = claude("b", hook_event_name="UserPromptSubmit", prompt="hi")
            other = await c.post(
                "/api/hooks/UserPromptSubmit", content=orjson.dumps(prompt), headers=headers
            )
            still_held = not stop.done()
            (state / "release").write_text("")
            return other, still_held, await stop

    try:
        other, still_held, stop = asyncio.run(asyncio.wait_for(both(), 120))
    finally:
        for sock in held:
            sock.close()
    assert other.status_code == 200 and still_held
    assert stop.status_code == 200
