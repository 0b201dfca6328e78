"""The hook launcher (`dshkit.install.launcher`): a hook started without `site` answers as the
console script does, keeps a project's modules off its path, and is written only where `site`
does nothing but set paths."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import dshkit
from dshkit.install import WARN, launcher
from dshkit.install.commands import dshkit_command, hook_line, inspect_command

from ..support.cli import SCRIPT, environment

pytestmark = pytest.mark.process

DENIED = {
    "session_id": "s-1",
    "transcript_path": "/nowhere/s-1.jsonl",
    "cwd": "/p",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf ~"},
}


def _hook(program: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*program, "hook", "PreToolUse"],
        input=json.dumps(DENIED).encode(),
        env=environment(home),
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_a_hook_through_the_launcher_answers_as_the_console_script(tmp_path: Path) -> None:
    program = launcher.program([SCRIPT])
    assert launcher.is_launcher(program) and program[0] == sys.executable
    by_script = _hook([SCRIPT], tmp_path, tmp_path)
    by_launcher = _hook(program, tmp_path, tmp_path)  # (the same home: its path is in the words)
    assert by_launcher.returncode == by_script.returncode == 0
    answer = json.loads(by_launcher.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert by_launcher.stdout == by_script.stdout
    # What `install-hooks` writes runs it, the launcher's line one word of the command.
    line = hook_line("PreToolUse", "user", tmp_path / "state")
    assert shlex.split(line)[:3] == program


def test_the_launcher_starts_python_without_site(tmp_path: Path) -> None:
    said = {}
    for name, program in (("script", [SCRIPT]), ("launcher", launcher.program([SCRIPT]))):
        home = tmp_path / name
        env = {"DSHKIT_HOOK_HANDLERS": "UserPromptSubmit=tests.support.hook_handlers:started"}
        done = subprocess.run(
            [*program, "hook", "UserPromptSubmit"],
            input=json.dumps({**DENIED, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
            env=environment(home, env),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        said[name] = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said == {"script": "site ran: True", "launcher": "site ran: False"}


def test_a_projects_module_named_like_ours_is_never_imported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for name in ("dshkit", "orjson"):  # (a package of the person's, in their working directory)
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text("raise SystemExit(7)\n")
    done = _hook(launcher.program([SCRIPT]), tmp_path / "home", project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _venv(where: Path) -> tuple[str, Path]:
    """A venv of this Python with nothing installed, dshkit found through a `.pth` path."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    (site,) = where.glob("lib/python3*/site-packages")
    (site / "dshkit-src.pth").write_text(str(Path(dshkit.__file__).parents[1]) + "\n")
    return str(where / "bin" / "python"), site


def test_site_is_replayed_where_it_only_sets_paths(tmp_path: Path) -> None:
    python, site = _venv(tmp_path / "venv")
    found = launcher.replayed(python)
    source = str(Path(dshkit.__file__).parents[1])
    assert found == (str(tmp_path / "venv"), str(tmp_path / "venv"), [str(site), source])
    # The line finds what `site` found: this dshkit, from the path the `.pth` file named.
    shown = launcher.launcher_code(*found, fallback=["/bin/false"]).split("exec(")[0]
    done = subprocess.run(
        [python, launcher.FLAGS, shown + "import dshkit;print(dshkit.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    assert done.stdout.strip() == dshkit.__file__


def test_a_line_that_no_longer_finds_dshkit_runs_the_console_script(tmp_path: Path) -> None:
    # As after the venv was made again for another Python: its old site-packages are gone.
    code = launcher.launcher_code(sys.prefix, sys.exec_prefix, ["/nowhere"], fallback=[SCRIPT])
    alone = code.split("exec(")[0] + "import dshkit"
    assert subprocess.run([sys.executable, "-SPc", alone], capture_output=True).returncode == 1
    done = _hook([sys.executable, launcher.FLAGS, code], tmp_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize(
    ("module", "replayable"),
    [("finder", False), ("_distutils_hack", True), ("_virtualenv", True)],
)
def test_site_that_installs_an_import_hook_gets_the_console_script(
    tmp_path: Path, module: str, replayable: bool
) -> None:
    # An import hook of its own (as an editable install's finder is) cannot be replayed by
    # paths; setuptools' and virtualenv's distutils shims act on `distutils` only.
    python, site = _venv(tmp_path / "venv")
    (site / f"{module}.py").write_text(
        "import sys\n"
        "class Finder:\n"
        "    def find_spec(self, *args):\n"
        "        return None\n"
        "sys.meta_path.append(Finder())\n"
    )
    (site / f"{module}.pth").write_text(f"import {module}\n")
    assert (launcher.replayed(python) is not None) is replayable


def test_doctor_warns_of_a_launcher_with_other_paths(tmp_path: Path) -> None:
    state = tmp_path / "state"
    line = hook_line("Stop", "user", state)
    assert inspect_command(line, state, "again") == []
    words = shlex.split(line)
    words[2] = launcher.launcher_code(sys.prefix, sys.exec_prefix, ["/elsewhere"], [SCRIPT])
    (problem,) = inspect_command(shlex.join(words), state, "again")
    assert problem.level == WARN and "other paths" in problem.message
    assert dshkit_command()[0] != words[0]  # (the interpreter, not the script, is checked)
    assert os.path.realpath(words[0]) == os.path.realpath(sys.executable)
    # Installed before the launcher: it works, and doctor says what installing again brings.
    console = shlex.join([SCRIPT, "hook", "Stop", "--state-dir", str(state)])
    (problem,) = inspect_command(console, state, "again")
    assert problem.level == WARN and "with `site`" in problem.message
    assert inspect_command(console, state, "again", scope="project") == []
