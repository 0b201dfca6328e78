"""The graft tests' world (a fake Claude Code CLI, its sessions root, a working directory, a
transcript written step by step there), and a script that runs one handoff in its own process
for the crash and concurrency tests: it prints the handoff as JSON, or `{"error": CODE}` when it
is refused.

Usage: graft_driver.py STATE_DIR SOURCE_SESSION CWD TIMEOUT [--no-ignite]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from dshkit.graft import ledger
from dshkit.graft.identity import IGNITION_MARK, Identity, parse_identity
from dshkit.graft.lifecycle import GraftError, Ignition, Plan, handoff
from dshkit.store import Store

FAST = Ignition(timeout=30, poll=0.05)  # success comes long before the timeout


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] == b"Z"
    except FileNotFoundError:
        return True


def take_notice(store: Store, harness: str, session_id: str) -> str | None:
    """The notices owed to a session, taken as a hook takes them once delivered."""
    owed = ledger.owed_notices(store, harness, session_id)
    if owed is None:
        return None
    ledger.mark_shown(store, harness, session_id, owed.txn_ids)
    return owed.text


def plan_for(source: str, cwd: str, boundary: int = 42) -> Plan:
    """The handoff the tests carry out for `source` (a Claude Code session)."""
    identity = Identity(source, boundary, 1)
    card = f"## 交接任务看板\n原始用户要求：继续 {source} 的工作"
    message = f"{identity.render()}\n{IGNITION_MARK} 请直接接着下面的任务继续。\n\n{card}"
    return Plan("claude", source, cwd, message, identity, card)


@dataclass
class World:
    """Where a test's handoffs happen: `env()` points Claude Code's CLI and sessions root at
    the fake and at `claude`."""

    state: Path
    cwd: Path
    claude: Path
    fake: Path
    cli: Path

    def env(self) -> dict[str, str]:
        return {
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "CLAUDE_BIN": str(self.cli),
            "FAKE_CLI_DIR": str(self.fake),
        }

    def script(self, *steps: str) -> None:
        """What the fake CLI's successive calls do (`ok`, `slow`, `fail`, `hang`)."""
        (self.fake / "plan").write_text(",".join(steps))

    def calls(self) -> list[tuple[int, str]]:
        """(pid, what it did) of each fake CLI call so far, in order."""
        found = []
        for number in range(1, 1000):
            path = self.fake / f"call-{number}"
            if not path.exists():
                break
            pid, _, step = path.read_text().partition(" ")
            if not pid:
                break  # a call being recorded: its number is taken, the rest not yet written
            found.append((int(pid), step))
        return found

    def call_args(self) -> list[dict[str, Any]]:
        """Each fake CLI call's options (`--model`, `--permission-mode`) and when it began."""
        found = []
        for number in range(1, len(self.calls()) + 1):
            path = self.fake / f"args-{number}"
            found.append(json.loads(path.read_text()) if path.exists() else {})
        return found

    def run_cli(self, message: str, cwd: Path) -> None:
        """One call of the fake CLI, as a person (or an earlier handoff) would have made it."""
        subprocess.run(
            [str(self.cli), "-p", message], cwd=cwd, env={**os.environ, **self.env()}, check=True
        )

    def targets(self, identity: Identity) -> list[str]:
        """Ids of the sessions in `cwd` whose first typed prompt carries `identity`, read from
        the transcripts directly (not through the code under test)."""
        found = []
        for path in sorted(self.claude.glob("projects/*/*.jsonl")):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if record.get("type") == "user":
                    content = record["message"]["content"]
                    if parse_identity(content) == identity and record["cwd"] == str(self.cwd):
                        found.append(path.stem)
                    break
        return found


def make_world(tmp: Path) -> World:
    fake = tmp / "fake"
    fake.mkdir()
    cli = tmp / "claude-cli"
    script = Path(__file__).with_name("graft_fake_cli.py")
    cli.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    cli.chmod(0o755)
    cwd = tmp / "work"
    cwd.mkdir()
    return World(tmp / "state", cwd, tmp / "claude", fake, cli)


class Transcript:
    """A Claude Code transcript in the sessions root, appended step by step."""

    def __init__(self, world: World, session: str) -> None:
        self.world, self.session = world, session
        project = world.claude / "projects" / str(world.cwd).replace("/", "-")
        project.mkdir(parents=True, exist_ok=True)
        self.path = project / f"{session}.jsonl"
        self.steps = 0

    def write(self, *records: dict[str, Any]) -> None:
        base = {"sessionId": self.session, "cwd": str(self.world.cwd), "version": "2.0.0"}
        stamp = "2026-12-01T10:00:00.000Z"
        with open(self.path, "ab") as handle:
            for record in records:
                handle.write(orjson.dumps({**base, "timestamp": stamp, **record}) + b"\n")

    def prompt(self, text: str) -> Transcript:
        self.write({"type": "user", "message": {"role": "user", "content": text}})
        return self

    def request(
        self, tokens: int, tool: str = "Bash", tool_input: Any = None, call: str = ""
    ) -> dict[str, Any]:
        """The next model request's line, at `tokens` of context, calling `tool` (its call id
        `call`, or t<step>): not written (see `step`)."""
        self.steps += 1
        use = {
            "type": "tool_use",
            "id": call or f"t{self.steps}",
            "name": tool,
            "input": tool_input or {},
        }
        message = {
            "id": f"m{self.steps}",
            "role": "assistant",
            "model": "claude-test",
            "content": [use],
            "usage": {"input_tokens": tokens, "output_tokens": 10},
        }
        return {"type": "assistant", "message": message, "requestId": f"r{self.steps}"}

    def step(self, tokens: int, tool: str = "Bash", tool_input: Any = None) -> Transcript:
        """The model's request at `tokens` of context, calling `tool`, and its result."""
        request = self.request(tokens, tool, tool_input)
        result = {"type": "tool_result", "tool_use_id": f"t{self.steps}", "content": "ok"}
        self.write(request, {"type": "user", "message": {"role": "user", "content": [result]}})
        return self

    def payload(self, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": self.session,
            "transcript_path": str(self.path),
            "cwd": str(self.world.cwd),
            **extra,
        }


def main(argv: list[str]) -> int:
    state_dir, source, cwd, timeout = argv[:4]
    with Store(Path(state_dir)) as store:
        try:
            txn = handoff(
                store,
                plan_for(source, cwd),
                ignite="--no-ignite" not in argv,
                ignition=Ignition(timeout=float(timeout), poll=0.05),
            )
        except GraftError as exc:
            print(orjson.dumps({"error": exc.code}).decode())
            return 0
    print(orjson.dumps(txn.as_json()).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
