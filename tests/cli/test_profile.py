"""`dshkit profile …` as real processes: exit codes and named outcomes, one generation at a
time across processes, what is shown is what the hooks inject, input that cannot be used."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from dshkit.cli.profile import retry_words
from dshkit.profile.state import INJECT_LIMIT, MAX_EXTRA_TEXT, ProfileState
from dshkit.store import Store

from ..support.cli import COMMAND, environment, run_dshkit
from ..support.corpus import Corpus
from ..support.fakes import FakeOpenAI, Reply
from ..support.profile import A1, B1, Gated, answer, many, store_version


def run(
    home: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    done = run_dshkit(*args, home=home, env=env, input=stdin, text=False, check=False)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def llm_env(fake: FakeOpenAI) -> dict[str, str]:
    return {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "sk-test"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    Corpus(sessions, seed=22).generate(sessions=2, frames=200)
    return sessions


def state_of(home: Path) -> Path:
    return home / ".dsh" / "dshkit"


def test_generate_exits_non_zero_with_the_named_outcome(tmp_path: Path, root: Path) -> None:
    generate = ("profile", "generate", "--root", str(root))
    keyless = run(tmp_path, *generate)
    assert keyless.returncode == 1, keyless.stderr
    # The message names the outcome and keeps its "[llm]" (rich markup used to swallow it).
    assert "profile generation failed (config-error)" in keyless.stderr
    assert "api_key under [llm] in" in keyless.stderr and "Traceback" not in keyless.stderr
    status = run(tmp_path, "profile", "status")
    assert "not updated (config-error)" in status.stdout and "[llm]" in status.stdout
    broken = tmp_path / ".dsh" / "dshkit" / "config.toml"
    broken.write_text("[llm]\nmax_tokens = 'lots'\n")
    bad_config = run(tmp_path, *generate, "--json")
    assert bad_config.returncode == 1
    assert orjson.loads(bad_config.stdout)["outcome"] == "config-error"
    broken.unlink()

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    refused = run(
        tmp_path,
        *generate,
        "--json",
        env={"DSHKIT_LLM_BASE_URL": f"http://127.0.0.1:{closed}/v1", "DSHKIT_LLM_API_KEY": "k"},
    )
    assert refused.returncode == 1 and orjson.loads(refused.stdout)["outcome"] == "network-error"

    with FakeOpenAI() as fake:
        fake.replies.append(Reply(status=500, error_body={"error": {"message": "boom"}}))
        fake.replies.append(Reply(deltas=["Sorry, I cannot help with that."]))
        fake.replies.append(answer({"entries": [A1, B1]}))
        http = run(tmp_path, *generate, env=llm_env(fake))
        assert http.returncode == 1 and "profile generation failed (http-error)" in http.stderr
        assert "boom" in http.stderr
        prose = run(tmp_path, *generate, "--json", env=llm_env(fake))
        assert prose.returncode == 1
        shown = orjson.loads(prose.stdout)
        assert shown["outcome"] == "unusable-reply" and "no usable JSON" in shown["error"]
        made = run(tmp_path, *generate, env=llm_env(fake))
        assert made.returncode == 0 and "profile v1: 2 entries" in made.stdout
        # Too little new is not a failure: the trigger simply did not fire.
        idle = run(tmp_path, *generate, "--json", env=llm_env(fake))
        assert idle.returncode == 0 and orjson.loads(idle.stdout)["outcome"] == "not-triggered"
        assert len(fake.requests) == 3
    assert "Exit status" in run(tmp_path, *generate, "--help").stdout


def test_status_says_what_the_last_run_refused_and_when_the_hooks_try_again(
    tmp_path: Path, root: Path
) -> None:
    generate = ("profile", "generate", "--root", str(root))
    made_up = {**B1, "evidence": ["a sentence the person never said anywhere"]}
    echo = {**A1, "id": "new1", "claim": "真人发言共 3 条，会话共 2 个"}
    with FakeOpenAI() as fake:
        env = llm_env(fake)
        fake.replies.append(answer({"entries": [A1, made_up, echo]}))
        assert run(tmp_path, *generate, env=env).returncode == 0
        status = run(tmp_path, "profile", "status", env=env)
        shown = orjson.loads(run(tmp_path, "profile", "status", "--json", env=env).stdout)
        kinds = sorted(r["kind"] for r in shown["lastRun"]["refused"])
        assert kinds == ["echo", "unsupported"] and shown["retry"] is None
        assert "refused 2 entries of its answer: unsupported 1, echo 1" in status.stdout
        assert "next automatic try" not in status.stdout  # a good run: no wait

        fake.replies.append(Reply(status=500, error_body={"error": {"message": "boom"}}))
        assert run(tmp_path, *generate, "--force", env=env).returncode == 1
        status = run(tmp_path, "profile", "status", env=env)
        shown = orjson.loads(run(tmp_path, "profile", "status", "--json", env=env).stdout)
    retry = shown["retry"]
    assert retry is not None and retry["failures"] == 1 and shown["lastRun"]["refused"] == []
    local = datetime.fromtimestamp(retry["notBefore"] / 1000)  # the wait is in local time
    said = status.stdout.replace("\n", " ")
    today = f"after 1 failed run in a row: next automatic try after {local:%H:%M}, or when"
    dated = f"after 1 failed run in a row: next automatic try after {local:%Y-%m-%d %H:%M},"
    assert today in said or dated in said, status.stdout  # dated past midnight
    assert "or when you say something new" in said
    assert "refused" not in status.stdout


def test_the_wait_in_words() -> None:
    now = datetime(2026, 12, 6, 10, 0, tzinfo=UTC).timestamp() * 1000
    soon = retry_words(3, int(now + 4 * 60_000), int(now))
    assert soon.startswith("after 3 failed runs in a row: next automatic try after ")
    assert soon.endswith("or when you say something new (dshkit profile generate asks now)")
    later = retry_words(9, int(now + 3 * 86_400_000), int(now))
    when = datetime.fromtimestamp(now / 1000 + 3 * 86_400).astimezone()
    assert f"next automatic try after {when:%Y-%m-%d %H:%M}," in later  # another day: dated
    assert retry_words(1, int(now - 1), int(now)) == (
        "after 1 failed run in a row, the wait is over: the next automatic refresh tries again"
    )


@pytest.mark.process
def test_one_generation_at_a_time_across_processes(tmp_path: Path, root: Path) -> None:
    release = threading.Event()
    reply = orjson.dumps({"entries": [A1, B1]}).decode()
    with FakeOpenAI() as fake:
        fake.replies.append(Reply(deltas=Gated([reply[:20], reply[20:]], release)))
        env = environment(tmp_path, llm_env(fake))
        command = [*COMMAND, "profile", "generate", "--root", str(root)]
        first = subprocess.Popen(
            [*command, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        try:
            deadline = time.monotonic() + 60
            while not fake.requests:  # the first holds the lease and is asking the model
                assert first.poll() is None and time.monotonic() < deadline, first.stderr
                time.sleep(0.05)
            # What the Stop hooks and the service's background runs do: skipped at once.
            refresh = run(tmp_path, "refresh", "--root", str(root), "--json", env=llm_env(fake))
            skipped = orjson.loads(refresh.stdout)
            assert skipped["outcome"] == "skipped" and not skipped["ok"] and not skipped["error"]
            assert f"(dshkit process {first.pid}) was running" in skipped["reason"]
            with Store(state_of(tmp_path)) as store:
                during = orjson.loads(store.get_meta("profile.lastRun") or "null")
            assert during["outcome"] == "skipped"
            # A second command waits its turn, and says so.
            second = subprocess.Popen(
                [*command, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
            )
            assert second.stderr is not None
            told = second.stderr.readline().decode()
            assert f"waiting: another profile generation (dshkit process {first.pid})" in told
        finally:
            release.set()
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        second_out, second_err = second.communicate(timeout=120)
        assert second.returncode == 0, second_err
        assert len(fake.requests) == 1  # the loser never called the model
    made = orjson.loads(out)
    assert made["ok"] and made["version"] == 1
    # Its turn came after the first had stored v1: nothing new, so no model call.
    after = orjson.loads(second_out)
    assert after["outcome"] == "not-triggered" and "0/12 new human messages" in after["reason"]
    with Store(state_of(tmp_path)) as store:
        versions = store.db.execute("SELECT version FROM profile_versions").fetchall()
        calls = store.db.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
        final = orjson.loads(store.get_meta("profile.lastRun") or "null")
    assert [v[0] for v in versions] == [1] and calls == 1
    assert final["outcome"] == "not-triggered" and final["reason"] == after["reason"]


def test_show_is_exactly_what_the_hook_injects(tmp_path: Path) -> None:
    state = state_of(tmp_path)
    with Store(state) as store:
        store_version(store, many(200, 60))
        ProfileState(store).set_auto_extra_text("另" * MAX_EXTRA_TEXT)
    shown = orjson.loads(run(tmp_path, "profile", "show", "--json").stdout)
    payload = {
        "session_id": "c1",
        "transcript_path": f"{tmp_path}/.claude/projects/-p/c1.jsonl",
        "cwd": "/p",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    hooked = run(tmp_path, "hook", "SessionStart", stdin=orjson.dumps(payload))
    injected = orjson.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert injected == shown["effectiveText"] and len(injected) <= INJECT_LIMIT
    assert injected.endswith("另" * MAX_EXTRA_TEXT)  # the extra text arrives whole
    dropped = shown["profile"]["dropped"]
    assert len(dropped) == 170 and all(f"- {d}:" not in injected for d in dropped)
    human = run(tmp_path, "profile", "show").stdout
    assert f"\n{injected}\n" in human and "170 entries left out" in human
    assert f"  {dropped[0]}  {dropped[0]}:" in human


def test_text_input_that_cannot_be_used_is_a_clear_error(tmp_path: Path) -> None:
    bad = run(tmp_path, "profile", "custom", "--file", "-", stdin=b"ok \xff\xfe not utf-8")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "standard input is not UTF-8 text: byte 0xff at offset 3" in bad.stderr
    path = tmp_path / "latin1.txt"
    path.write_bytes("café".encode("latin-1"))
    from_file = run(tmp_path, "profile", "extra", "--file", str(path))
    assert from_file.returncode == 2 and f"{path} is not UTF-8 text" in from_file.stderr
    nul = run(tmp_path, "profile", "custom", "--file", "-", stdin=b"a\0b")
    assert nul.returncode == 2 and "NUL character" in nul.stderr
    long = run(tmp_path, "profile", "custom", "--file", "-", stdin=("用" * 15_190).encode())
    assert long.returncode == 2 and "the limit is 10,000" in long.stderr
    with Store(state_of(tmp_path)) as store:
        assert ProfileState(store).custom_text == ""  # nothing was stored
    ok = run(tmp_path, "profile", "custom", "--file", "-", stdin="只用中文回答\n".encode())
    assert ok.returncode == 0 and "custom text set (6 characters)" in ok.stdout
    bad_json = run(tmp_path, "profile", "extra", "--file", str(path), "--json")
    assert bad_json.returncode == 2 and orjson.loads(bad_json.stdout)["kind"] == "usage"


def test_the_text_commands_answer_json(tmp_path: Path) -> None:
    text = "只用中文回答\n".encode()
    custom = run(tmp_path, "profile", "custom", "--file", "-", "--json", stdin=text)
    assert orjson.loads(custom.stdout) == {"text": "只用中文回答\n", "characters": 6}
    extra = run(tmp_path, "profile", "extra", "--file", "-", "--json", stdin=b"")
    assert orjson.loads(extra.stdout)["characters"] == 0
    assert orjson.loads(run(tmp_path, "profile", "mode", "custom", "--json").stdout) == {
        "mode": "custom"
    }
    copied = orjson.loads(run(tmp_path, "profile", "copy", "--json").stdout)
    assert copied["text"] == "只用中文回答" and isinstance(copied["copiedSnapshot"], dict)


def test_entry_edit_pin_unpin_remove(tmp_path: Path) -> None:
    state = state_of(tmp_path)
    with Store(state) as store:
        store_version(store, [dict[str, object](A1), dict[str, object](B1)])
    edited = run(tmp_path, "profile", "entry", "edit", "A1", "--claim", "只用中文", "--json")
    assert edited.returncode == 0, edited.stderr
    body = orjson.loads(edited.stdout)
    assert body["version"] == 2 and body["entry"]["claim"] == "只用中文"
    assert body["entry"]["pinned"] is True
    human = run(tmp_path, "profile", "entry", "unpin", "A1")
    assert human.returncode == 0 and "entry A1 unpinned: profile v3" in human.stdout
    pinned = orjson.loads(run(tmp_path, "profile", "entry", "pin", "B1", "--json").stdout)
    assert pinned["entry"]["pinned"] is True and pinned["entry"]["claim"] == B1["claim"]
    removed = orjson.loads(run(tmp_path, "profile", "entry", "remove", "B1", "--json").stdout)
    assert removed["entry"] is None and removed["version"] == 5
    with Store(state) as store:
        ids = [e["id"] for e in ProfileState(store).latest()[1]]  # type: ignore[index]
    assert ids == ["A1"]
    missing = run(tmp_path, "profile", "entry", "pin", "Z9", "--json")
    assert missing.returncode != 0
    refused = orjson.loads(missing.stdout)
    assert refused["kind"] == "not-found" and "Z9" in refused["error"]
    empty = run(tmp_path, "profile", "entry", "edit", "A1")
    assert empty.returncode != 0 and "claim or a category" in empty.stderr + empty.stdout
