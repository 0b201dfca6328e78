"""The Makefile's targets for a person: `make run` ends without an error when the service is
stopped, and `make install-user` / `make uninstall-user` say what they did and give the home
back as they found it. Run on a PATH of the few system programs the recipes use (no pipx, no
uv: those branches are theirs), with stand-ins for Python and for the service, so nothing is
installed and nothing listens."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .support.paths import REPO

pytestmark = pytest.mark.process

# What the recipes run besides the shell's builtins.
TOOLS = ("cat", "chmod", "dirname", "ln", "mkdir", "readlink", "rm", "rmdir", "sleep", "sort")
# A Python whose `-m venv DIR` makes a venv of stand-ins: a pip that installs nothing and a
# dshkit that does nothing.
FAKE_PYTHON = """[ "$1 $2" = "-m venv" ] || exit 1
mkdir -p "$3/bin"
printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/pip"
printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/dshkit"
chmod 755 "$3/bin/pip" "$3/bin/dshkit"
"""


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """HOME an empty directory; PATH the system programs the recipes need, nothing else."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in TOOLS:
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "PATH": str(tools)}


def make(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    command = [shutil.which("make") or "make", "--no-print-directory", "-C", str(REPO), *args]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finished(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = make(env, *args)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_install_user_is_undone_and_said(tmp_path: Path, env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    python = script(tmp_path / "python", FAKE_PYTHON)
    code, out, _ = finished(env, "uninstall-user")
    assert code == 0 and "nothing to remove" in out
    code, out, err = finished(env, "install-user", f"PY={python}")
    assert code == 0, err
    assert f"linked {home}/.local/bin/dshkit" in out
    link = home / ".local" / "bin" / "dshkit"
    assert os.readlink(link) == f"{home}/.local/share/dshkit/venv/bin/dshkit"
    code, out, err = finished(env, "uninstall-user")
    assert code == 0, err
    assert out.splitlines() == [
        f"removed {home}/.local/bin/dshkit",
        f"removed {home}/.local/share/dshkit/venv",
        f"removed {home}/.local/share/dshkit (empty)",
        f"removed {home}/.local/share (empty)",
        f"removed {home}/.local/bin (empty)",
        f"removed {home}/.local (empty)",
    ]
    assert tree(home) == []  # every directory install-user made is gone again


def test_uninstall_user_keeps_what_was_there_before(tmp_path: Path, env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    python = script(tmp_path / "python", FAKE_PYTHON)
    script(home / ".local" / "bin" / "other-tool", "exit 0\n")  # someone else's program
    (home / ".local" / "share").mkdir()  # there before, empty
    code, _, err = finished(env, "install-user", f"PY={python}")
    assert code == 0, err
    code, out, err = finished(env, "uninstall-user")
    assert code == 0, err
    assert f"removed {home}/.local/share/dshkit (empty)" in out
    assert tree(home) == [".local", ".local/bin", ".local/bin/other-tool", ".local/share"]
    # A dshkit in ~/.local/bin that is not the one install-user linked is not taken away.
    script(home / ".local" / "bin" / "dshkit", "exit 0\n")
    code, out, _ = finished(env, "uninstall-user")
    assert code == 0 and "nothing to remove" in out
    assert (home / ".local" / "bin" / "dshkit").exists()
