"""`dshkit install-hooks` registers dshkit's MCP server with each harness (keeping everyone
else's servers and settings), `uninstall-hooks` takes it out, `doctor` checks it."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.harnesses.config_files import configured

from ..support.cli import SCRIPT, run_at_home
from ..support.install import fake_dsh


def state(home: Path) -> str:
    return str(home / ".dsh" / "dshkit")


def ours(home: Path, harness: str = "claude") -> list[str]:
    return [SCRIPT, "mcp", "--harness", harness, "--no-profile", "--state-dir", state(home)]


def doctor(home: Path, **env: str) -> dict[str, Any]:
    done = run_at_home(home, "doctor", "--json", "--port", "1", check=False, **env)
    report: dict[str, Any] = orjson.loads(done.stdout)
    assert done.returncode == (0 if report["ok"] else 1)
    return report


def mcp_checks(report: dict[str, Any], harness: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["check"] == "mcpServer" and c["harness"] == harness]


CLAUDE_USER = {
    "numStartups": 3,
    "oauthAccount": {"emailAddress": "dev@example.com"},
    "mcpServers": {"search": {"type": "stdio", "command": "/opt/search", "args": [], "env": {}}},
    "projects": {"/w": {"allowedTools": [], "mcpServers": {}}},
}


def test_claude_user_file_gets_the_server_and_keeps_everything_else(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    original = json.dumps(CLAUDE_USER, indent=2) + "\n"
    path.write_text(original)
    path.chmod(0o600)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    written = json.loads(path.read_text())
    server = written["mcpServers"].pop("dshkit")
    assert written == CLAUDE_USER  # nobody else's key changed
    assert server == {"type": "stdio", "command": ours(tmp_path)[0], "args": ours(tmp_path)[1:]}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The capability layer reads it back as Claude Code would.
    (found,) = [s for s in configured([(str(path), "claude-user")], "/w", []) if s.name == "dshkit"]
    assert [found.command, *found.args] == ours(tmp_path)
    installed = path.read_text()
    again = run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert "already installed" in again.stdout and path.read_text() == installed
    report = doctor(tmp_path)
    (check,) = mcp_checks(report, "claude")[:1]
    assert check["status"] == "ok" and check["scope"] == "user"
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert path.read_text() == original  # byte for byte
    assert sorted(p.name for p in tmp_path.glob(".claude.json*")) == [".claude.json"]


def test_claude_rewrote_its_file_since_so_only_our_entry_goes(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text(json.dumps(CLAUDE_USER))
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    changed = json.loads(path.read_text())
    changed["numStartups"] = 4  # Claude Code writes this file all the time
    path.write_text(json.dumps(changed))
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert json.loads(path.read_text()) == {**CLAUDE_USER, "numStartups": 4}


def test_claude_config_dir_and_project_scope(tmp_path: Path) -> None:
    config = tmp_path / "cc"
    config.mkdir()  # Claude Code is here, configured there
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", CLAUDE_CONFIG_DIR=str(config))
    user = json.loads((config / ".claude.json").read_text())
    assert user == {"mcpServers": {"dshkit": {"type": "stdio", "command": ours(tmp_path)[0],
                                              "args": ours(tmp_path)[1:]}}}  # fmt: skip
    assert not (tmp_path / ".claude.json").exists()
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text('{"mcpServers": {"db": {"command": "db-mcp"}}}')
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--scope", "project", "--project",
        str(project))  # fmt: skip
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers == {
        "db": {"command": "db-mcp"},
        "dshkit": {
            "type": "stdio",
            "command": "dshkit",
            "args": ["mcp", "--harness", "claude", "--no-profile"],
        },
    }


def test_a_foreign_server_named_dshkit_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    text = json.dumps({"mcpServers": {"dshkit": {"command": "/opt/other-tool"}}})
    path.write_text(text)
    done = run_at_home(tmp_path, "install-hooks", "--harness", "claude", check=False)
    assert done.returncode == 1 and "already has an MCP server named 'dshkit'" in done.stderr
    assert path.read_text() == text
    assert not (tmp_path / ".claude" / "settings.json").exists()  # nothing half-done


CODEX = """model = "gpt-fake"
approval_policy = "never"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]

[features]
plugins = false
"""


def test_codex_config_gets_a_marked_table_and_gets_its_bytes_back(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX)
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    text = path.read_text()
    assert text.startswith(CODEX) and "# >>> dshkit MCP server" in text
    config = tomllib.loads(text)
    assert config["features"] == {"plugins": False} and config["model"] == "gpt-fake"
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--stdio"]}
    served = config["mcp_servers"]["dshkit"]
    served.pop("env_vars")
    served.pop("tools")
    assert served == {
        "command": SCRIPT,
        "args": ours(tmp_path, "codex")[1:],
    }
    again = run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    assert "already installed" in again.stdout and path.read_text() == text
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "codex")
    assert path.read_text() == CODEX  # byte for byte
    # Someone appends a table after the block: taking it out keeps theirs.
    added = '\n[profiles.fast]\nmodel = "gpt-fast"\n'
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    path.write_text(path.read_text() + added)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "codex")
    assert path.read_text() == CODEX + added
    # Another state directory renews the block where it is.
    path.write_text(CODEX)
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    path.write_text(path.read_text() + added)
    other = str(tmp_path / "elsewhere")
    run_at_home(tmp_path, "install-hooks", "--harness", "codex", "--state-dir", other)
    renewed = tomllib.loads(path.read_text())
    assert renewed["mcp_servers"]["dshkit"]["args"] == [
        "mcp",
        "--harness",
        "codex",
        "--no-profile",
        "--state-dir",
        other,
    ]
    assert renewed["profiles"] == {"fast": {"model": "gpt-fast"}}
    assert path.read_text().count("[mcp_servers.dshkit]") == 1


def test_codex_passes_the_server_what_dshkit_reads_and_asks_before_a_handoff(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    provider = '[model_providers.fake]\nbase_url = "http://127.0.0.1:9/v1"\nenv_key = "FAKE_KEY"\n'
    path.write_text(CODEX + provider)
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    served = tomllib.loads(path.read_text())["mcp_servers"]["dshkit"]
    # Codex's home and CLI, dshkit's own settings, the network's; the key of the provider the
    # file configures, without which the CLI a handoff starts cannot reach its model.
    forwarded = set(served["env_vars"])
    assert {"CODEX_HOME", "CODEX_BIN", "DSHKIT_LLM_API_KEY", "DSHKIT_CHROMIUM"} <= forwarded
    assert {"HTTPS_PROXY", "no_proxy", "FAKE_KEY"} <= forwarded
    assert "OPENAI_API_KEY" not in forwarded  # the server never uses Codex's own key
    others = {n for n in forwarded if not n.startswith(("CODEX_", "DSHKIT_", "http", "HTTP"))}
    assert others == {"FAKE_KEY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"}
    # `codex exec` never asks for approval: the read-only handoff tools are approved in
    # dshkit's block; the one that starts a new agent is left for Codex to ask about.
    assert served["tools"] == {
        tool: {"approval_mode": "approve"}
        for tool in ("graft_prepare", "graft_read_result", "graft_search_history")
    }


def test_codex_config_dshkit_cannot_extend_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    cases = {
        "not valid TOML": "model = \n",
        "already configures [mcp_servers.dshkit] outside dshkit's block":
            '[mcp_servers.dshkit]\ncommand = "x"\n',
        "cannot take a [mcp_servers.dshkit] table": 'mcp_servers = { docs = { command = "d" } }\n',
    }  # fmt: skip
    for message, text in cases.items():
        path.write_text(text)
        done = run_at_home(tmp_path, "install-hooks", "--harness", "codex", check=False)
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert path.read_text() == text
        assert not (tmp_path / ".codex" / "hooks.json").exists()


@pytest.mark.process
def test_dsh_profile_layer_gets_an_mcp_client_entry_and_the_empty_list_back(
    tmp_path: Path,
) -> None:
    patch = tmp_path / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    patch.write_text("[]\n")  # as `dsh plugin add` leaves a profile
    run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=fake_dsh(tmp_path / "bin"))
    text = patch.read_text()
    assert "id: hooks-claude-code" in text and "id: mcp-dshkit" in text
    assert "name: '@deepseek-ai/dsh-mcp-client'" in text and "serverName: dshkit" in text
    (server,) = configured([(str(patch), "dsh-patch")], "/w", [])
    assert server.name == "dshkit" and server.transport == "stdio"
    assert [server.command, *server.args] == ours(tmp_path, "dsh")
    patch.write_text(text + "# a note of the person's\n")  # edited since: no byte restore
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "dsh")
    assert patch.read_text() == "[]\n# a note of the person's\n"


def test_doctor_reports_a_missing_and_a_stale_registration(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    assert all(c["status"] == "absent" for c in mcp_checks(doctor(tmp_path), "codex"))
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    path = tmp_path / ".codex" / "config.toml"
    installed = path.read_text()
    path.write_text("")  # the registration is gone, the hooks are still there
    (missing,) = mcp_checks(doctor(tmp_path), "codex")
    assert missing["status"] == "warn" and "is not registered in" in missing["message"]
    assert "run `dshkit install-hooks --harness codex --scope user` again" in missing["message"]
    path.write_text(installed.replace(state(tmp_path), str(tmp_path / "old")))
    report = doctor(tmp_path)
    (stale,) = mcp_checks(report, "codex")
    assert report["ok"] is False and stale["status"] == "broken"
    assert "feeds another state directory" in stale["message"]
    assert report["harnesses"]["codex"]["mcpServer"][0]["installed"] is True
    path.write_text(installed.replace(SCRIPT, "/gone/dshkit"))
    (gone,) = mcp_checks(doctor(tmp_path), "codex")
    assert (
        gone["status"] == "broken"
        and "runs /gone/dshkit, which does not exist" in (gone["message"])
    )
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")  # renews it
    assert path.read_text() == installed
    assert [c["status"] for c in mcp_checks(doctor(tmp_path), "codex")] == ["ok"]


def test_registration_follows_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "cx"
    home.mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "codex", CODEX_HOME=str(home))
    assert "dshkit" in tomllib.loads((home / "config.toml").read_text())["mcp_servers"]
    assert not (tmp_path / ".codex").exists()
    assert os.access(home / "hooks.json", os.R_OK)
