"""The hook protocol's JSON: read and written as the `json` package would, without it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.hooks.protocol import HookInput, dumps, loads
from dshkit.store import Store

VALUES: list[Any] = [
    {},
    {"a": 1, "b": [1, 2.5, -3e-7, True, False, None], "c": {"d": "e"}},
    {"text": '中文 \u2028 tab\t quote" back\\ nul\x00 emoji 😀', "n": 10**20},
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}},
    [],
    "just a string",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_same_bytes_as_json(value: Any) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False).encode()
    raw = json.dumps(value).encode()
    assert loads(raw) == json.loads(raw)
    assert loads(b"  \n" + raw + b"\r\n ") == value


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b'{"a": 1} x', b"{'a': 1}", b'{"a": 1,}', b"\xff\xfe{}", b"[1, 2", b'"\x01"'],
)
def test_what_is_not_json_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises(ValueError):
        loads(raw)


@pytest.mark.process
def test_reading_and_writing_import_neither_json_nor_re() -> None:
    probe = (
        "import sys\n"
        "from dshkit.hooks.protocol import dumps, loads\n"
        "assert loads(b'{\"a\": [1, \"x\"]}') == {'a': [1, 'x']}\n"
        "dumps({'a': 'b'})\n"
        "print(sorted({'json', 're'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_a_call_opens_its_store_once_and_an_interrupted_block_leaves_nothing_open(
    tmp_path: Path,
) -> None:
    # One connection for every handler of a call (the last one of a process to close a WAL
    # database checkpoints it and removes its WAL, which the next open makes again).
    hook = HookInput("UserPromptSubmit", {"session_id": "s"}, "claude", str(tmp_path))
    with hook.open_store() as first:
        first.set_meta("test.first", "1")
    with hook.open_store() as second:
        assert second is first and second.get_meta("test.first") == "1"
    # A block interrupted inside a transaction (a handler out of time): rolled back, and
    # the next block starts clean on the same connection.
    with pytest.raises(KeyboardInterrupt), hook.open_store() as store:
        store.db.execute("BEGIN IMMEDIATE")
        store.db.execute("INSERT INTO meta (key, value) VALUES ('test.lost', '1')")
        raise KeyboardInterrupt
    with hook.open_store() as store:
        assert not store.db.in_transaction and store.get_meta("test.lost") is None
        with store.transaction():
            store.set_meta("test.kept", "1")
    hook.close()
    with Store(tmp_path) as other:  # written, and the call's connection is gone
        assert other.get_meta("test.kept") == "1"
    with pytest.raises(sqlite3.ProgrammingError):
        first.db.execute("SELECT 1")
    hook.close()  # (twice: nothing left to close)
