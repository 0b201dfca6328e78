"""A relative state location is refused, never taken relative to wherever dshkit runs: the
command line exits 2 naming the variable (or option) and its value, the hook gives no opinion
and says why on stderr (but the command guard, which judges at its strictest: its tests are
tests/guard/test_hook.py), and neither creates anything in its working directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dshkit import harnesses, paths
from dshkit.errors import Invalid

from .support.cli import run_dshkit


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """An empty working directory to run in, and a home of the test's own."""
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return cwd, home


def run(
    places: tuple[Path, Path], *args: str, stdin: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    cwd, home = places
    return run_dshkit(*args, home=home, env=env, input=stdin, cwd=cwd, timeout=60, check=False)


def refused(result: subprocess.CompletedProcess[str], *named: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    for text in named:
        assert text in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["scan"], ["sessions", "list"], ["forget", "abc"]])
def test_a_relative_dsh_home_is_refused_by_every_command(
    places: tuple[Path, Path], command: list[str]
) -> None:
    result = run(places, *command, DSH_HOME="rel")
    refused(result, "DSH_HOME", "'rel'", "absolute")
    assert list(places[0].iterdir()) == []


def test_a_relative_state_dir_option_is_refused(places: tuple[Path, Path]) -> None:
    result = run(places, "sessions", "list", "--state-dir", "rel")
    refused(result, "--state-dir", "'rel'")
    assert list(places[0].iterdir()) == []


@pytest.mark.parametrize("variable", ["CLAUDE_CONFIG_DIR", "CODEX_HOME"])
def test_a_relative_harness_home_is_refused_where_paths_come_from_it(
    places: tuple[Path, Path], variable: str
) -> None:
    refused(run(places, "scan", **{variable: "rel"}), variable, "'rel'")
    assert list(places[0].iterdir()) == []


def test_install_writes_no_settings_into_the_working_directory(places: tuple[Path, Path]) -> None:
    state = str(places[1] / "state")
    result = run(
        places,
        "install-hooks",
        "--harness",
        "claude",
        "--state-dir",
        state,
        CLAUDE_CONFIG_DIR="rel",
    )
    refused(result, "CLAUDE_CONFIG_DIR", "'rel'")
    assert list(places[0].iterdir()) == []


def test_a_relative_home_is_named_when_the_default_comes_from_it(places: tuple[Path, Path]) -> None:
    cwd, home = places
    result = run_dshkit(
        "sessions", "list",
        home=home, env={"HOME": "relhome", "DSH_HOME": None}, cwd=cwd, timeout=60, check=False,
    )  # fmt: skip
    refused(result, "HOME", "'relhome'")
    assert list(places[0].iterdir()) == []


PROMPT = '{"hook_event_name": "UserPromptSubmit", "prompt": "hi", "session_id": "s", "cwd": "."}'


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["UserPromptSubmit"], {"DSH_HOME": "rel"}, "DSH_HOME"),
        (["Stop"], {"DSH_HOME": "rel"}, "DSH_HOME"),
        (["UserPromptSubmit", "--state-dir", "rel"], {}, "rel"),
        (["Stop", "--state-dir", "rel"], {}, "rel"),
    ],
)
def test_the_hook_gives_no_opinion_and_creates_nothing_here(
    places: tuple[Path, Path], args: list[str], env: dict[str, str], named: str
) -> None:
    result = run(places, "hook", *args, stdin=PROMPT, **env)
    assert (result.returncode, result.stdout) == (0, "")
    assert named in result.stderr and "absolute" in result.stderr
    assert list(places[0].iterdir()) == []


def test_the_core_names_what_is_relative(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(Invalid) as given:
        paths.state_dir("rel/state")
    assert given.value.field == "state_dir" and "'rel/state'" in given.value.message
    monkeypatch.setenv("DSH_HOME", "rel")
    with pytest.raises(Invalid) as home:
        paths.state_dir()
    assert home.value.field == "DSH_HOME" and "'rel'" in home.value.message
    for variable, harness in (("CLAUDE_CONFIG_DIR", "claude"), ("CODEX_HOME", "codex")):
        monkeypatch.setenv(variable, "rel")
        with pytest.raises(Invalid) as found:
            harnesses.get(harness).sessions_root()
        assert found.value.field == variable
    # What is absolute once `~` is expanded stays as it was.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", "~/dsh")
    assert paths.state_dir() == tmp_path / "dsh" / "dshkit"
    assert paths.state_dir("~/s") == tmp_path / "s"
