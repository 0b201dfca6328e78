"""`dshkit capability`: its working directory is absolute, as the HTTP API takes it."""

from __future__ import annotations

from pathlib import Path

import orjson

from ..support.cli import invoke, state_of


def test_a_relative_cwd_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    out = invoke("capability", "--cwd", "work/app", "--json", home=tmp_path, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    said = orjson.loads(out.stdout)
    assert said["kind"] == "usage" and said["exitCode"] == 2
    assert "'--cwd'" in said["error"] and "'work/app' is relative" in said["error"]
    assert not state_of(tmp_path).exists()  # refused before anything was opened or probed
