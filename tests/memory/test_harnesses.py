"""A failure and its fix, as each harness logs them, reach the next session of the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.memory.service import MemoryService
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.memory import (
    claude_fix_session,
    codex_fix_session,
    fix_session,
    make_repo,
    write_session,
)

ERROR = "E   KeyError: 'harness-specific'\n1 failed in 0.10s"


@pytest.mark.parametrize("harness", ["claude", "codex", "dsh"])
def test_each_harness_hands_a_failure_and_its_fix_on(tmp_path: Path, harness: str) -> None:
    repo = make_repo(tmp_path / "work" / "app")
    root = tmp_path / "logs"
    session = "0199aa00-1111-7222-8333-444455556666"  # Codex names its rollouts by a UUID
    if harness == "claude":
        claude_fix_session(root, session, repo, ERROR)
    elif harness == "codex":
        codex_fix_session(root, session, repo, ERROR)
    else:
        write_session(root, session, repo, fix_session(error=ERROR))
    state = tmp_path / "state"
    with Store(state) as store:
        assert Scanner(store).scan([Source(harness, root)]).errors == []
    service = MemoryService(state)
    report = service.harvest([session])
    assert report.added["negative"] == 1, report.as_json()
    given = service.inject(service.workspace(str(repo)), "修复测试").chosen.text
    # The error by its signature, never the output's line; the command as the agent ran it.
    assert "KeyError" in given and "pytest -q tests/test_app.py" in given
    assert "harness-specific" not in given
    assert f"{harness}:{session}#" in given
