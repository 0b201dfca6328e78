"""The hook protocol's JSON: read and written as the `json` package would, without it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from dshkit.hooks.protocol import dumps, loads

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
