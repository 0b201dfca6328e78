"""A stand-in for `claude -p MESSAGE …` (or `claude -p …` with the message on stdin, as
Claude Code reads it when no prompt argument is given): writes a Claude Code transcript, or
fails, or hangs.

Run through a small executable wrapper named by `$CLAUDE_BIN` (see `fake_cli` in the graft
tests). `$FAKE_CLI_DIR` holds its script: `plan` lists what successive calls do, comma
separated (`ok`, `slow`, `fail`, `hang`, `mute`: the transcript shows the first message but
the model never answers, and it fails; calls past the list do `ok`), and each call leaves
`call-<n>` (its pid and what it did) there, and `args-<n>` (its options and when it began,
where its message came from and its own /proc/self/cmdline, as JSON). The transcript goes
where Claude Code keeps it:
`$CLAUDE_CONFIG_DIR/projects/<cwd with every non-alphanumeric as '-'>/<session>.jsonl`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from datetime import UTC, datetime


def _call_number(directory: str) -> int:
    number = 1
    while True:
        try:
            fd = os.open(
                os.path.join(directory, f"call-{number}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY
            )
        except FileExistsError:
            number += 1
            continue
        os.close(fd)
        return number


def _write_transcript(message: str, *, answered: bool = True) -> str:
    cwd = os.getcwd()
    session = str(uuid.uuid4())
    project = os.path.join(
        os.environ["CLAUDE_CONFIG_DIR"], "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd)
    )
    os.makedirs(project, exist_ok=True)
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    common = {"cwd": cwd, "sessionId": session, "timestamp": stamp, "version": "2.1.197"}
    prompt_id = str(uuid.uuid4())
    lines = [
        {"type": "queue-operation", "operation": "enqueue", "content": message, **common},
        {
            "parentUuid": None,
            "isSidechain": False,
            "promptId": prompt_id,
            "type": "user",
            "message": {"role": "user", "content": message},
            "uuid": prompt_id,
            "userType": "external",
            "entrypoint": "sdk-cli",
            **common,
        },
        {
            "parentUuid": prompt_id,
            "isSidechain": False,
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "fake",
                "content": [{"type": "text", "text": "好的，继续。"}],
                "usage": {"input_tokens": 10, "output_tokens": 3},
            },
            "requestId": "req_1",
            "uuid": str(uuid.uuid4()),
            **common,
        },
    ]
    if not answered:
        lines = lines[:2]
    with open(os.path.join(project, f"{session}.jsonl"), "w") as handle:
        handle.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return session


def main(argv: list[str]) -> int:
    began = time.time()
    if not argv or argv[0] != "-p":
        print(f"fake cli: expected -p [OPTIONS] MESSAGE, got {argv!r}", file=sys.stderr)
        return 2
    options: dict[str, str] = {}
    rest = argv[1:]
    while len(rest) > 1 and rest[0] in ("--model", "--permission-mode"):
        options[rest[0]] = rest[1]
        rest = rest[2:]
    if rest and not rest[0].startswith("--"):
        message, source = rest[0], "argv"
    else:  # no prompt argument: Claude Code reads it from stdin
        message, source = sys.stdin.read(), "stdin"
    directory = os.environ["FAKE_CLI_DIR"]
    number = _call_number(directory)
    with open("/proc/self/cmdline", "rb") as handle:
        cmdline = handle.read().decode(errors="replace").split("\0")
    with open(os.path.join(directory, f"args-{number}"), "w") as handle:
        json.dump(
            {"options": options, "began": began, "message": source, "cmdline": cmdline}, handle
        )
    try:
        with open(os.path.join(directory, "plan")) as handle:
            plan = [step.strip() for step in handle.read().split(",") if step.strip()]
    except FileNotFoundError:
        plan = []
    step = plan[number - 1] if number <= len(plan) else "ok"
    with open(os.path.join(directory, f"call-{number}"), "w") as handle:
        handle.write(f"{os.getpid()} {step}")
    if step == "fail":
        print("fake cli: the API is unreachable", file=sys.stderr)
        return 1
    if step == "hang":
        time.sleep(3600)
        return 1
    if step == "mute":  # its first turn never reaches the model
        _write_transcript(message, answered=False)
        time.sleep(0.5)
        print("fake cli: no credentials for the API", file=sys.stderr)
        return 1
    session = _write_transcript(message)
    if step == "slow":  # a headless turn still running after its prompt was logged
        time.sleep(3)
    print(json.dumps({"type": "result", "session_id": session}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
