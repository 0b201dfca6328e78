"""Memory over HTTP, through the one guard: records per workspace, a record's supersessions,
the injection preview, the quarantine and the skill proposals; a GET changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dshkit.jobs import JobRunner
from dshkit.memory.service import MemoryService
from dshkit.store import Store
from dshkit.web.security import TOKEN_HEADER

from ..support.logs import Log
from ..support.memory import fix_session, make_repo, scan, write_session
from ..support.web import Running


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        return {"memory": MemoryService(state)}

    server = Running(tmp_path, capabilities=capabilities)
    yield server
    server.close()


def url(running: Running, path: str) -> str:
    return f"http://127.0.0.1:{running.port}/api/memory{path}"


def get(running: Running, path: str, **params: str) -> httpx.Response:
    return running.http.get(url(running, path), params=params)


def post(running: Running, path: str, body: object = None) -> httpx.Response:
    return running.http.post(url(running, path), json=body, headers={TOKEN_HEADER: running.token})


def harvested(running: Running, tmp_path: Path) -> tuple[Path, Path]:
    one, two = make_repo(tmp_path / "a" / "app"), make_repo(tmp_path / "b" / "app")
    root = tmp_path / "mine"
    early, late, there = Log(), Log(), Log()
    early.human("记住：部署命令是 make deploy")
    late.time += 60_000
    late.human("记住：部署命令是 make ship")
    for n in (1, 2):
        late.human(f"发布第 {n} 版")
        for i, command in enumerate(("make lint", "make test")):
            late.call("bash", f"c{n}{i}", {"command": command})
            late.result(f"c{n}{i}", 100, text="ok")
    there.human("记住：two 用 cargo test")
    write_session(root, "s-early", one, early)
    write_session(root, "s-late", one, late)
    write_session(root, "s-two", two, there)
    with Store(running.state_dir) as store:
        scan(store, root)
    MemoryService(running.state_dir).harvest(every=True)
    return one, two


def test_records_timeline_and_preview(running: Running, tmp_path: Path) -> None:
    one, two = harvested(running, tmp_path)
    current = get(running, "/records", cwd=str(one)).json()["records"]
    texts = [r["text"] for r in current if r["kind"] == "fact"]
    assert texts == ["部署命令是 make ship"]
    history = get(running, "/records", cwd=str(one), history="1", kind="fact").json()
    old = next(r for r in history["records"] if r["text"] == "部署命令是 make deploy")
    assert old["current"] is False
    newer = get(running, f"/records/{old['supersededBy']}").json()
    assert [r["id"] for r in newer["supersedes"]] == [old["id"]]
    shown = get(running, "/inject", cwd=str(one)).json()
    assert "make ship" in shown["text"] and "cargo" not in shown["text"]
    assert get(running, "/inject").status_code == 400
    found = get(running, "/search", q="cargo", cwd=str(two)).json()["records"]
    assert [r["source"]["sessionId"] for r in found] == ["s-two"]
    counts = get(running, "/counts", cwd=str(one)).json()
    assert counts["workspace"]["same"] >= 2 and counts["workspace"]["cross"] == 1


def test_quarantine_and_skill_review(running: Running, tmp_path: Path) -> None:
    one, _ = harvested(running, tmp_path)
    fact = get(running, "/records", cwd=str(one), kind="fact").json()["records"][0]
    assert post(running, f"/records/{fact['id']}/quarantine", {"reason": "wrong"}).json()[
        "quarantined"
    ]
    assert [r["id"] for r in get(running, "/quarantine").json()["records"]] == [fact["id"]]
    assert "make ship" not in get(running, "/inject", cwd=str(one)).json()["text"]
    assert not post(running, f"/records/{fact['id']}/release").json()["quarantined"]
    (skill,) = get(running, "/skills", cwd=str(one)).json()["records"]
    assert skill["state"] == "proposed"
    refused = post(running, f"/records/{skill['id']}/accept", {"harness": "dsh", "scope": "user"})
    assert refused.status_code == 409 and "NO_SKILLS_FOLDER" in refused.text
    accepted = post(running, f"/records/{skill['id']}/accept", {"harness": "claude"}).json()
    written = Path(accepted["path"])
    assert written == one.resolve() / ".claude" / "skills" / skill["detail"]["name"] / "SKILL.md"
    assert written.read_text() == skill["detail"]["draft"]
    evals = json.loads((written.parent / "evals" / "evals.json").read_text())
    assert evals["skill_name"] == skill["detail"]["name"]
    assert evals["evals"][0]["prompt"] == "发布第 2 版"  # the request the steps served
    assert get(running, f"/records/{skill['id']}").json()["state"] == "accepted"


@pytest.mark.parametrize(
    ("harness", "folder"),
    [("claude", ".claude/skills"), ("codex", ".agents/skills"), ("dsh", ".agents/skills")],
)
def test_a_skill_is_written_where_its_harness_reads_skills(
    running: Running, tmp_path: Path, harness: str, folder: str
) -> None:
    one, _ = harvested(running, tmp_path)
    (skill,) = get(running, "/skills", cwd=str(one)).json()["records"]
    name = skill["detail"]["name"]
    assert name.startswith("release-")  # from "发布第 n 版", never workspace-make
    accepted = post(running, f"/records/{skill['id']}/accept", {"harness": harness}).json()
    assert Path(accepted["path"]) == one.resolve() / folder / name / "SKILL.md"
    assert (one.resolve() / folder / name / "evals" / "evals.json").is_file()


def test_a_record_that_is_not_there_is_404(running: Running) -> None:
    assert get(running, "/records/4242").status_code == 404


def test_workspaces_and_the_supersession_timeline(running: Running, tmp_path: Path) -> None:
    one, two = harvested(running, tmp_path)
    listed = get(running, "/workspaces").json()["workspaces"]
    by_root = {w["root"]: w for w in listed}
    mine = by_root[str(one.resolve())]
    assert mine["kinds"]["fact"] == 1 and mine["kinds"]["skill"] == 1
    assert mine["superseded"] == 1 and mine["pending"] == 0
    assert by_root[str(two.resolve())]["kinds"]["fact"] == 1
    (chain,) = get(running, "/timeline", cwd=str(one)).json()["chains"]
    old, new = chain["records"]
    assert (old["text"], new["text"]) == ("部署命令是 make deploy", "部署命令是 make ship")
    assert old["supersededBy"] == new["id"] and old["validTo"] == new["validFrom"]
    assert old["current"] is False and new["current"] is True and old["expiredAt"]
    assert get(running, "/timeline", cwd=str(two)).json()["chains"] == []


def test_pending_records_are_reviewed_over_http(running: Running, tmp_path: Path) -> None:
    (running.state_dir / "config.toml").write_text("[memory]\nconfirm = true\n")
    one, _ = harvested(running, tmp_path)
    write_session(tmp_path / "mine", "s-fix", one, fix_session())
    with Store(running.state_dir) as store:
        scan(store, tmp_path / "mine")
    MemoryService(running.state_dir).harvest(["s-fix"])
    waiting = get(running, "/pending", cwd=str(one)).json()["records"]
    assert waiting and all(r["state"] == "pending" for r in waiting)
    assert get(running, "/counts").json()["pending"] == len(waiting)
    assert get(running, "/workspaces").json()["workspaces"][0]["pending"] >= 1
    first, second = waiting[0], waiting[1]
    assert post(running, f"/records/{first['id']}/review", {"verdict": "nope"}).status_code == 400
    done = post(running, f"/records/{first['id']}/review", {"verdict": "accept"}).json()
    assert done["state"] == "accepted"
    assert (
        post(running, f"/records/{second['id']}/review", {"verdict": "reject"}).json()["state"]
        == "rejected"
    )
    left = {r["id"] for r in get(running, "/pending", cwd=str(one)).json()["records"]}
    assert first["id"] not in left and second["id"] not in left
    shown = get(running, "/pending", cwd=str(one), rejected="1").json()["records"]
    assert second["id"] in {r["id"] for r in shown}
    refused = post(running, f"/records/{first['id']}/review", {"verdict": "reject"})
    assert refused.status_code == 409 and "MEMORY_NOT_PENDING" in refused.text


def test_status_over_http_says_what_the_cli_says(running: Running, tmp_path: Path) -> None:
    one, two = harvested(running, tmp_path)
    whole = get(running, "/status").json()
    assert whole == MemoryService(running.state_dir).status(None).as_json()
    assert whole["injection"] is None
    assert {w["root"] for w in whole["workspaces"]} == {str(one.resolve()), str(two.resolve())}
    assert all(len(w["id"]) == 12 for w in whole["workspaces"])
    mine = get(running, "/status", cwd=str(one)).json()
    assert mine["injection"]["records"] >= 1 and "unverified" in mine["injection"]["leftOut"]
    assert get(running, "/status", cwd="relative").status_code == 400


def test_rekey_over_http_moves_a_workspace_and_settles_its_facts(
    running: Running, tmp_path: Path
) -> None:
    one, two = harvested(running, tmp_path)
    # `two` knew only cargo test; `one` (moved into it) knows the deploy command.
    entries = {w["root"]: w["id"] for w in get(running, "/status").json()["workspaces"]}
    body = {"old": entries[str(one.resolve())], "new": str(two)}
    assert post(running, "/rekey", {"old": "", "new": str(two)}).status_code == 400
    assert post(running, "/rekey", {"old": "relative", "new": str(two)}).status_code == 400
    missing = post(running, "/rekey", {"old": str(tmp_path / "never"), "new": str(two)})
    assert missing.status_code == 404
    moved = post(running, "/rekey", body).json()
    assert moved["from"]["root"] == str(one.resolve()) and moved["to"]["root"] == str(two.resolve())
    assert moved["records"] >= 3 and moved["superseded"] == 0  # no subject in common
    shown = get(running, "/inject", cwd=str(two)).json()["text"]
    assert "make ship" in shown and "cargo test" in shown
    assert get(running, "/records", cwd=str(one)).json()["records"] == []


def test_rekey_is_the_owners_alone(running: Running, tmp_path: Path) -> None:
    one, two = harvested(running, tmp_path)
    body = {"old": str(one), "new": str(two)}
    stranger = running.bare("POST", "/api/memory/rekey", json=body)
    assert stranger.status_code in (401, 403)
    forged = running.http.post(
        url(running, "/rekey"),
        json=body,
        headers={TOKEN_HEADER: running.token, "origin": "http://evil.example"},
    )
    assert forged.status_code == 403
    assert running.bare("GET", "/api/memory/status").status_code in (401, 403)
    # Nothing moved.
    assert [
        r["text"] for r in get(running, "/records", cwd=str(one), kind="fact").json()["records"]
    ] == ["部署命令是 make ship"]
