"""The hook launcher: the command a user-scope hook starts, this interpreter without `site`
and with the import paths `site` gives it, so every hook call is spared `site`'s work.

A harness starts `dshkit hook EVENT` thousands of times a day, and a bare interpreter's start
includes `site`: the venv's configuration read, each site directory listed, every `.pth` file
read and its import lines run (setuptools' distutils shim alone costs ~0.5 ms), measured at
1.1 to 1.4 ms of a hook's 13 to 25 ms here
(docs/design/hooks.md#the-hook-launcher-starts-python-without-site). What `site` leaves
behind is a list of paths and the venv's prefixes: replayed, they need none of that work. So,
where that is all `site` does here, a hook runs

    <this interpreter> -SPc '<sys.prefix, sys.exec_prefix and sys.path as site sets them>;
    from dshkit.cli import main; …' hook EVENT --state-dir DIR

- `-S`: no `site`; its paths are set by the line itself, as `site.main()` set them when the
  hooks were installed (`replayed`), found without the person's `PYTHONPATH` (which the hook
  still honours when it runs, as a console script does);
- `-P`: the working directory (a person's project) is not put on the path, so a module of
  theirs named like one of ours is never imported in its place;
- where `site` does more than paths (an import hook of its own: an editable install's
  finder; not setuptools' or virtualenv's distutils shim, which only `import distutils`
  reaches) or the replayed line does not find this very dshkit, the hook runs the console
  script (`commands.dshkit_command`), as before;
- a line whose paths no longer find dshkit (its venv made again, for another Python, and the
  hooks not installed again) runs the console script in its place: slower, never broken.

The paths are checked by running the line's start once (`replayed`, once a process: at
install, at `doctor`), and `doctor` compares the installed line with the one this dshkit would
write (an older one: install again).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from typing import Any

FLAGS = "-SPc"  # no site, no working directory on the path, the program as a string
_START = "from dshkit.cli import main"  # (with FLAGS, how a launcher line is recognised)
# What `site` may add beside paths and still be replayed by paths alone: setuptools' shim
# and virtualenv's (uv's venvs carry it too) act on `distutils` and `setuptools.dist` only,
# which no hook imports.
_HARMLESS_FINDERS = frozenset({"_distutils_hack", "_virtualenv"})
# Prints what the interpreter's import system is before `site.main()` and after it, and where
# dshkit is found then (run with -S).
_PROBE = """
import json, sys
def seen():
    finders = sorted({(f if isinstance(f, type) else type(f)).__module__ for f in sys.meta_path})
    return {"path": list(sys.path), "prefix": sys.prefix, "exec_prefix": sys.exec_prefix,
            "finders": finders, "hooks": len(sys.path_hooks)}
before = seen()
if not {PRESET}:
    import site
    site.main()
after = seen()
import dshkit
print(json.dumps({"before": before, "after": after, "dshkit": dshkit.__file__}))
"""
_PROBE_S = 10.0  # an interpreter that does not answer a probe in this long gets no launcher


def launcher_code(prefix: str, exec_prefix: str, paths: list[str], fallback: list[str]) -> str:
    """The launcher's program: the prefixes and paths `site` would set, then the CLI. Where
    they no longer find dshkit (its venv made again, for another Python), `fallback` (the
    console script) runs in its place, with `site`: slower, never broken. One line (the
    `try` is compiled from a string), whatever shell or file the harness keeps it in."""
    script, argv = json.dumps(fallback[0]), json.dumps(fallback)
    again = f'__import__("os").execv({script},{argv}+sys.argv[1:])'
    return (
        _prelude(prefix, exec_prefix, paths)
        + f'exec("try:{_START}\\nexcept ImportError:main=None");main or {again};sys.exit(main())'
    )


def _prelude(prefix: str, exec_prefix: str, paths: list[str]) -> str:
    """What the line sets before it imports anything: what `site` would."""
    listed = json.dumps(paths, separators=(",", ":"))
    return (
        f"import sys;sys.prefix={json.dumps(prefix)};sys.exec_prefix={json.dumps(exec_prefix)};"
        f'sys.path+={listed};sys.argv[0]="dshkit";'
    )


def is_launcher(words: list[str]) -> bool:
    """Whether `words` (a command line's, up to its verb) start dshkit through a launcher."""
    return len(words) == 3 and words[1] == FLAGS and _START in words[2]


def program(dshkit_command: list[str]) -> list[str]:
    """What a user-scope hook runs dshkit with: this interpreter with its launcher line
    (`dshkit_command` its fallback), or `dshkit_command` where `site` cannot be replayed by
    paths (see the module docstring). Probed once per process (two runs of the interpreter,
    at install or `doctor`)."""
    found = replayed(sys.executable)
    if found is None:
        return dshkit_command
    return [sys.executable, FLAGS, launcher_code(*found, fallback=dshkit_command)]


@cache
def replayed(interpreter: str) -> tuple[str, str, list[str]] | None:
    """The prefix, exec prefix and paths `site` gives `interpreter` (None: it does more than
    paths there, or they do not find the dshkit `site` finds). The person's `PYTHONPATH` is
    kept out of them: the hook is given it when it runs."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    found = _probe([interpreter, "-SP", "-c", _PROBE.replace("{PRESET}", "False")], env)
    if found is None:
        return None
    before, after = found["before"], found["after"]
    if after["hooks"] != before["hooks"]:
        return None
    if set(after["finders"]) - set(before["finders"]) - _HARMLESS_FINDERS:
        return None
    paths = [path for path in after["path"] if path not in before["path"]]
    prelude = _prelude(after["prefix"], after["exec_prefix"], paths)
    # The line as a hook runs it: the same paths, and this very dshkit found.
    again = _probe([interpreter, "-SP", "-c", prelude + _PROBE.replace("{PRESET}", "True")], env)
    if again is None or again["after"]["path"] != after["path"]:
        return None
    if again["dshkit"] != found["dshkit"]:
        return None
    return after["prefix"], after["exec_prefix"], paths


def _probe(argv: list[str], env: dict[str, str]) -> dict[str, Any] | None:
    try:
        done = subprocess.run(
            argv, env=env, cwd="/", capture_output=True, timeout=_PROBE_S, check=False
        )
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return found if isinstance(found, dict) else None
