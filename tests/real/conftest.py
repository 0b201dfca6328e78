"""Fixtures of the real-harness tests."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy
from ..support.real import CACHE, NODE24, PNPM, binary

# DSH's Claude-Code hook bridge, added to its headless profile from the npm registry.
BRIDGE = [
    "@deepseek-ai/dsh-hooks-claude-code@0.0.1-rc.5",
    "@deepseek-ai/dsh-hook-protocol@0.0.1-rc.1",
]


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """The proxy the real harnesses are pointed at: it refuses and records every attempt to
    reach another host, and the test fails if there was one."""
    with RefusingProxy() as refusing:
        yield refusing
    assert refusing.attempts == [], f"a harness tried to leave 127.0.0.1: {refusing.attempts}"


@pytest.fixture(scope="session")
def dsh_profile_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DSH home whose headless profile has the hook bridge added (a registry install, done
    once, before any harness runs behind the refusing proxy); every DSH test asks for it,
    so none depends on another test having run first."""
    template = CACHE / "dsh-home-template"
    # Built once for every worker of `pytest -n`: the first to take the lock builds it.
    with open(CACHE / "dsh-home-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (template / ".dsh" / "profiles" / "headless" / "node_modules").is_dir():
            _build_template(template, tmp_path_factory.mktemp("p"))
    return template / ".dsh"


def _build_template(template: Path, cwd: Path) -> None:
    """DSH's home with the hook bridge added to its headless profile, at `template`."""
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
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
