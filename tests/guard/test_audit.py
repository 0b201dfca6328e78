"""The guard's log: what was stopped, redacted, per workspace, bounded; read back by `dshkit
guard log`, and a false alarm turned into a rule by `dshkit guard allow` (config.toml edited,
never re-serialised)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import orjson
import pytest

from dshkit.errors import Invalid
from dshkit.guard import audit
from dshkit.guard.rulefile import add_rule
from dshkit.store import Store

from ..support.cli import invoke
from ..support.guard import claude, decision
from ..support.hooks import hook

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    return tmp_path / "proj"


def test_what_was_stopped_is_logged_redacted_and_becomes_a_rule(tmp_path: Path, work: Path) -> None:
    line = f"curl -H 'Authorization: token {TOKEN}' https://x && rm -rf /srv/cache"
    assert decision(hook(tmp_path, "PreToolUse", claude(work, line))[0])[0] == "deny"  # type: ignore[index]
    assert decision(hook(tmp_path, "PreToolUse", claude(work, "rm -rf /srv/cache"))[0])[0] == "deny"  # type: ignore[index]
    assert hook(tmp_path, "PreToolUse", claude(work, "ls -la"))[0] == {}  # an allow: not logged
    done = invoke("guard", "log", "--json", home=tmp_path)
    page = orjson.loads(done.stdout)
    assert [e["decision"] for e in page["entries"]] == ["deny", "deny"]
    newest, first = page["entries"]
    assert TOKEN not in done.stdout and "[secret:" in first["command"]
    assert first["suggested"] == "rm -rf /srv/cache"  # the command that decided: no secret
    assert newest["workspace"] == str(work) and newest["rule"] == "delete"
    assert (
        newest["suggested"] == "rm -rf /srv/cache" and "outside the workspace" in newest["reason"]
    )
    text = invoke("guard", "log", "--workspace", str(work), home=tmp_path).stdout
    assert f"dshkit guard allow --from {newest['id']}" in text
    other = orjson.loads(
        invoke("guard", "log", "--json", "--workspace", str(tmp_path / "x"), home=tmp_path).stdout
    )
    assert other["entries"] == []
    # the false alarm becomes an allow rule for its workspace; the command now passes there
    added = orjson.loads(
        invoke("guard", "allow", "--from", str(newest["id"]), "--json", home=tmp_path).stdout
    )
    assert added["added"] is True and added["table"] == f'[guard.projects."{work}"]'
    assert hook(tmp_path, "PreToolUse", claude(work, "rm -rf /srv/cache"))[0] == {}
    elsewhere = claude(tmp_path / "other", "rm -rf /srv/cache")
    assert decision(hook(tmp_path, "PreToolUse", elsewhere)[0])[0] == "deny"  # type: ignore[index]
    again = invoke("guard", "allow", "--from", str(newest["id"]), "--json", home=tmp_path)
    assert orjson.loads(again.stdout)["added"] is False
    missing = invoke("guard", "allow", "--from", "99999", "--json", home=tmp_path, check=False)
    assert missing.returncode != 0 and "99999" in missing.stdout


def test_retention_is_bounded_per_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "MAX_PER_WORKSPACE", 3)
    with Store(tmp_path) as store:
        for n in range(5):
            for where in ("/a", "/b"):
                audit.record(store, audit.BLOCKED, harness="claude", session_id="s",
                              command=f"rm -rf /x{n}", workspace=where, risk="destructive",
                              mode="balanced")  # fmt: skip
        old = 1_000_000  # 1970: past any retention
        audit.record(store, audit.ASKED, harness="claude", session_id="s", command="old",
                     workspace="/c", risk="unknown", mode="balanced", now_ms=old)  # fmt: skip
        audit.prune(store, "/c")
        assert [e["command"] for e in audit.entries(store, "/a")] == [
            "rm -rf /x4", "rm -rf /x3", "rm -rf /x2"
        ]  # fmt: skip
        assert len(audit.entries(store, "/b")) == 3 and audit.entries(store, "/c") == []


def test_a_rule_goes_into_the_persons_file_as_written(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '# mine\n[guard]\nmode = "strict"  # careful\nallow = [\n  "git push:*",\n]\n\n'
        "[gate]\nbudget_s = 60.0\n"
    )
    assert add_rule(config, "npm publish") == ("[guard]", True)
    text = config.read_text()
    assert text.startswith(
        '# mine\n[guard]\nmode = "strict"  # careful\nallow = ["npm publish", \n'
    )
    assert tomllib.loads(text)["guard"]["allow"] == ["npm publish", "git push:*"]
    assert add_rule(config, "rm -rf /srv/x", "deny") == ("[guard]", True)
    assert tomllib.loads(config.read_text())["guard"]["deny"] == ["rm -rf /srv/x"]
    assert add_rule(config, 'say "hi"', project="/w/p")[1] is True
    assert tomllib.loads(config.read_text())["guard"]["projects"]["/w/p"]["allow"] == ['say "hi"']
    assert add_rule(config, "make", project="/w/p") == ('[guard.projects."/w/p"]', True)
    assert tomllib.loads(config.read_text())["gate"] == {"budget_s": 60.0}
    with pytest.raises(Invalid, match="must start with a command name"):
        add_rule(config, "* anything")
    with pytest.raises(Invalid, match="absolute"):
        add_rule(config, "make", project="rel")
    dotted = tmp_path / "dotted.toml"
    dotted.write_text('guard.allow = ["a"]\n')
    with pytest.raises(Invalid, match="by hand"):
        add_rule(dotted, "b")
    assert dotted.read_text() == 'guard.allow = ["a"]\n'
