"""The resident service, opt-in: `dshkit serve` kept running for this user by the system's own
user-level supervisor, installed, taken out and looked at (`dshkit service`).

- Linux: a systemd user unit, `$XDG_CONFIG_HOME/systemd/user/dshkit.service` (default
  `~/.config/systemd/user`), enabled and started with `systemctl --user`. Whether a user
  manager runs here is asked of it (`systemctl --user show-environment` exits 0 only when it
  answers); a machine without one (a container, a login without a session bus) gets an error
  saying so and what to run instead, and nothing is written.
- macOS: a launchd agent, `~/Library/LaunchAgents/dev.dshkit.serve.plist`, loaded with
  `launchctl bootstrap gui/<uid>`.

No root: both live in the user's home and run as the user. The file is dshkit's alone
(written whole, owner-only), so uninstalling stops the service and removes it, leaving the
home as it was. The service runs this `dshkit` by absolute path with its state directory and
port, so it works whatever the supervisor's PATH is.

The resident hooks (`install-hooks --resident`) reach it with a credential of their own,
`<state dir>/hook-token` (0600, drawn once here and kept across restarts, unlike the
service's token): Claude Code sends it in a header read from `DSHKIT_HOOK_TOKEN`, which the
person exports from that file; it opens the hook endpoint and nothing else.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from ..paths import private_dir, replace_whole
from .model import InstallError

UNIT_NAME = "dshkit.service"
AGENT_LABEL = "dev.dshkit.serve"
HOOK_TOKEN_FILE = "hook-token"
HOOK_TOKEN_ENV = "DSHKIT_HOOK_TOKEN"  # what Claude Code interpolates into the hook's header
HOOK_HEADER = "X-Dshkit-Hook"
DEFAULT_PORT = 8765

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)


@dataclass
class Status:
    """What `dshkit service status` says."""

    system: str  # "systemd" or "launchd"
    path: Path  # the unit or agent file
    installed: bool  # the file is there
    active: bool | None  # the supervisor says it runs (None: could not ask)
    port: int | None  # the port the installed service serves (None: not installed)
    detail: str = ""


def system() -> str:
    """The supervisor this platform has: "launchd" on macOS, else "systemd"."""
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_path(home: Path | None = None) -> Path:
    """Where the unit (Linux) or agent (macOS) file goes for this user."""
    home = home or Path.home()
    if system() == "launchd":
        return home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(config) / "systemd" / "user" / UNIT_NAME


def program() -> str:
    """This `dshkit`, by absolute path (the one running now)."""
    found = shutil.which("dshkit", path=str(Path(sys.executable).parent))
    return found or str(Path(sys.executable).parent / "dshkit")


def command(state_dir: Path, port: int) -> list[str]:
    """What the supervisor runs."""
    return [program(), "serve", "--port", str(port), "--state-dir", str(state_dir)]


def unit_text(state_dir: Path, port: int) -> str:
    """The systemd user unit: restarted when it fails, started with the user's manager."""
    line = " ".join(_systemd_quoted(word) for word in command(state_dir, port))
    return (
        "# Written by `dshkit service install`; `dshkit service uninstall` removes it.\n"
        "[Unit]\n"
        "Description=dshkit service (console, API and resident hooks)\n"
        "\n"
        "[Service]\n"
        f"ExecStart={line}\n"
        "Restart=on-failure\n"
        "RestartSec=2\n"
        "UMask=0077\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def agent_text(state_dir: Path, port: int) -> str:
    """The launchd agent: started at login, kept alive."""
    arguments = "".join(
        f"    <string>{escape(word)}</string>\n" for word in command(state_dir, port)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
        '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        '<plist version="1.0">\n<dict>\n'
        f"  <key>Label</key>\n  <string>{AGENT_LABEL}</string>\n"
        f"  <key>ProgramArguments</key>\n  <array>\n{arguments}  </array>\n"
        "  <key>RunAtLoad</key>\n  <true/>\n"
        "  <key>KeepAlive</key>\n  <true/>\n"
        "  <key>Umask</key>\n  <integer>63</integer>\n"
        "</dict>\n</plist>\n"
    )


def _systemd_quoted(word: str) -> str:
    """A word of ExecStart as systemd reads it: quoted when it holds a blank or a quote,
    `%` doubled (a specifier otherwise)."""
    word = word.replace("%", "%%")
    if any(c in word for c in " \t\"'\\"):
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def installed_port(path: Path) -> int | None:
    """The port an installed unit or agent serves (None: no file, or none named)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    words = text.replace("<string>", " ").replace("</string>", " ").split()
    try:
        return int(words[words.index("--port") + 1])
    except (ValueError, IndexError):
        return None


def hook_token(state_dir: Path, create: bool = False) -> str | None:
    """The resident hooks' credential (`<state dir>/hook-token`); drawn once when `create`
    and it is missing, never anew (the person exported it to Claude Code's environment)."""
    path = Path(state_dir) / HOOK_TOKEN_FILE
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        if not create:
            return None
    private_dir(Path(state_dir))
    token = secrets.token_urlsafe(32)
    replace_whole(path, (token + "\n").encode())
    return token


def _usable(run: Runner) -> str:
    """ "" when this user's service manager answers, else why not."""
    if system() == "launchd":
        if shutil.which("launchctl") is None:
            return "launchctl is not on PATH"
        return ""
    if shutil.which("systemctl") is None:
        return "systemctl is not on PATH (no systemd here)"
    try:
        done = run(["systemctl", "--user", "show-environment"])
    except (OSError, subprocess.SubprocessError) as exc:
        return f"`systemctl --user` could not run: {exc}"
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        return "systemd's user manager does not answer here (`systemctl --user " + (
            f"show-environment`: {why[-1] if why else f'exit {done.returncode}'})"
        )
    return ""


def install(state_dir: Path, port: int = DEFAULT_PORT, run: Runner = _run) -> Status:
    """Write the unit (or agent) and start it; InstallError, with nothing written, where this
    user has no service manager that answers."""
    why = _usable(run)
    if why:
        raise InstallError(
            f"cannot install the service: {why}; run `dshkit serve --port {port}` yourself "
            "(in a terminal multiplexer or your own supervisor) instead"
        )
    path = unit_path()
    text = unit_text(state_dir, port) if system() == "systemd" else agent_text(state_dir, port)
    path.parent.mkdir(parents=True, exist_ok=True)  # the user's config: left as open as it is
    replace_whole(path, text.encode())
    hook_token(state_dir, create=True)
    if system() == "systemd":
        _must(run, ["systemctl", "--user", "daemon-reload"])
        _must(run, ["systemctl", "--user", "enable", "--now", UNIT_NAME])
    else:
        _must(run, ["launchctl", "bootstrap", f"gui/{os.getuid()}", str(path)])
    return status(run)


def uninstall(run: Runner = _run) -> Status:
    """Stop the service and remove its file (nothing to do when it is not installed)."""
    path = unit_path()
    if not path.exists():
        return status(run)
    if system() == "systemd":
        if shutil.which("systemctl") is not None:
            run(["systemctl", "--user", "disable", "--now", UNIT_NAME])  # stopped if it can be
        path.unlink()
        if shutil.which("systemctl") is not None:
            run(["systemctl", "--user", "daemon-reload"])
    else:
        run(["launchctl", "bootout", f"gui/{os.getuid()}/{AGENT_LABEL}"])
        path.unlink()
    return status(run)


def status(run: Runner = _run) -> Status:
    """Whether the service is installed and whether its supervisor says it runs."""
    path = unit_path()
    installed = path.exists()
    active: bool | None = None
    detail = ""
    why = _usable(run)
    if why:
        detail = why
    elif system() == "systemd":
        done = run(["systemctl", "--user", "is-active", UNIT_NAME])
        active = done.returncode == 0
        detail = done.stdout.strip()
    else:
        done = run(["launchctl", "print", f"gui/{os.getuid()}/{AGENT_LABEL}"])
        active = done.returncode == 0
    port = installed_port(path) if installed else None
    return Status(system(), path, installed, active, port, detail)


def _must(run: Runner, args: list[str]) -> None:
    done = run(args)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise InstallError(f"`{' '.join(args)}` failed (exit {done.returncode}): {said}")
