"""Error signatures: each form of the list read from a realistic tool output, the telling line
chosen over the first that merely holds "error"."""

from __future__ import annotations

import pytest

from dshkit.memory import signatures
from dshkit.memory.signatures import SIGNATURES, exit_status, signature

from ..support.counting import CountedPattern

PYTEST = """\
============================= test session starts ==============================
collected 0 items / 1 error

==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_client.py ____________________
ImportError while importing test module '/home/dev/app/tests/test_client.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_client.py:3: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/test_client.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.08s ===============================
"""

NPM = """\
npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found
npm ERR! 404
npm ERR! 404  'left-padd@*' is not in this registry.

npm ERR! A complete log of this run can be found in:
npm ERR!     /home/dev/.npm/_logs/2026-12-01T10_00_00_000Z-debug-0.log
"""

NPM10 = """\
npm error code ERESOLVE
npm error ERESOLVE unable to resolve dependency tree
npm error
npm error While resolving: app@1.0.0
"""

CARGO = """\
   Compiling app v0.1.0 (/home/dev/app)
error[E0432]: unresolved import `serde_json`
 --> src/main.rs:1:5
  |
1 | use serde_json::Value;
  |     ^^^^^^^^^^ use of undeclared crate or module `serde_json`

For more information about this error, try `rustc --explain E0432`.
error: could not compile `app` (bin "app") due to 1 previous error
"""

GO = """\
main.go:6:2: no required module provides package github.com/google/uuid; to add it:
\tgo get github.com/google/uuid
"""

GO_BUILD = """\
# example.com/app
./main.go:12:9: undefined: parseConfig
"""

GO_TEST = """\
--- FAIL: TestParse (0.00s)
    parse_test.go:14: got 3, want 4
FAIL
exit status 1
FAIL\texample.com/app\t0.004s
"""

GIT_PUSH_SSH = """\
git@github.com: Permission denied (publickey).
fatal: Could not read from remote repository.

Please make sure you have the correct access rights
and the repository exists.
"""

GIT_PUSH_REJECTED = """\
To github.com:dev/app.git
 ! [rejected]        main -> main (fetch first)
error: failed to push some refs to 'github.com:dev/app.git'
hint: Updates were rejected because the remote contains work that you do not
hint: have locally.
"""

SSH_HOSTKEY = """\
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
Host key verification failed.
"""

DOCKER_DAEMON = (
    "Unable to find image 'app:latest' locally\n"
    "docker: Error response from daemon: pull access denied for app, repository does not exist "
    "or may require 'docker login'.\nSee 'docker run --help'.\n"
)

DOCKER_SOCKET = (
    "permission denied while trying to connect to the Docker daemon socket at "
    'unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json"'
    ": dial unix /var/run/docker.sock: connect: permission denied\n"
)

DOCKER_BUILD = """\
#5 [2/4] RUN pip install -r requirements.txt
#5 0.512 ERROR: Could not open requirements file
------
ERROR: failed to solve: process "/bin/sh -c pip install -r requirements.txt" did not \
complete successfully: exit code: 1
"""

NODE = """\
node:internal/modules/cjs/loader:1147
  throw err;
  ^

Error: Cannot find module 'left-pad'
Require stack:
- /home/dev/app/index.js
"""

TSC = (
    "src/api.ts(3,22): error TS2307: Cannot find module 'zod' or its corresponding type "
    "declarations.\n"
)

MAKE = """\
./scripts/deploy.sh
make: *** [Makefile:12: deploy] Error 2
"""

CASES = [
    ("pytest", PYTEST, "exception", "ModuleNotFoundError", "No module named 'requests'"),
    (
        "npm",
        NPM,
        "npm",
        "E404",
        "404 Not Found - GET https://registry.npmjs.org/left-padd - Not found",
    ),
    ("npm10", NPM10, "npm", "ERESOLVE", "ERESOLVE unable to resolve dependency tree"),
    ("cargo", CARGO, "rust", "error[E0432]", "unresolved import `serde_json`"),
    (
        "go-mod",
        GO,
        "go",
        "go: missing module",
        "no required module provides package github.com/google/uuid",
    ),
    ("go-build", GO_BUILD, "go", "go: compile error", "undefined: parseConfig"),
    ("go-test", GO_TEST, "go", "go test: FAIL", "TestParse"),
    ("git-ssh", GIT_PUSH_SSH, "ssh", "Permission denied (publickey)", ""),
    ("git-rejected", GIT_PUSH_REJECTED, "git", "rejected", "main -> main (fetch first)"),
    ("ssh-hostkey", SSH_HOSTKEY, "ssh", "Host key verification failed", ""),
    (
        "docker-daemon",
        DOCKER_DAEMON,
        "docker",
        "docker: daemon error",
        "pull access denied for app, repository does not exist or may require 'docker login'",
    ),
    ("docker-socket", DOCKER_SOCKET, "docker", "docker: permission denied", None),
    ("docker-build", DOCKER_BUILD, "docker", "docker build: failed to solve", None),
    ("node", NODE, "exception", "Error", "Cannot find module 'left-pad'"),
    (
        "tsc",
        TSC,
        "typescript",
        "TS2307",
        "Cannot find module 'zod' or its corresponding type declarations",
    ),
    ("bash", "bash: line 1: poetry: command not found\n", "shell", "command not found", "poetry"),
    ("zsh", "zsh: command not found: uv\n", "shell", "command not found", "uv"),
    (
        "eacces",
        "Error EACCES: permission denied, open '/usr/lib/node_modules/x'\n",
        "errno",
        "EACCES",
        None,
    ),
    ("enoent", "cat: config/local.toml: No such file or directory\n", "errno", "OSError", None),
    (
        "git-fatal",
        "fatal: not a git repository (or any of the parent directories): .git\n",
        "tool",
        "fatal",
        "not a git repository (or any of the parent directories): .git",
    ),
    (
        "apt",
        "Reading package lists...\nE: Unable to locate package libfoo-dev\n",
        "tool",
        "E",
        "Unable to locate package libfoo-dev",
    ),
    (
        "gcc",
        "src/a.c:3:10: fatal error: zlib.h: No such file or directory\n",
        "tool",
        "fatal error",
        None,
    ),
    ("tests", "..F.\n1 failed, 3 passed in 0.20s\n", "tests", "tests failed", None),
    (
        "jest-via-npm",
        "> app@1.0.0 test\n> jest\n\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n"
        "FAIL src/sum.test.js\n  ● sum › adds\n    ReferenceError: sum is not defined\n",
        "exception",
        "ReferenceError",
        "sum is not defined",
    ),
    (
        "lifecycle-only",
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! app@1.0.0 build: `webpack`\n",
        "npm",
        "ELIFECYCLE",
        "app@1.0.0 build: `webpack`",
    ),
    (
        "named-error",
        "ENV error: DATABASE_URL is not set\nmake: *** [Makefile:4: test] Error 1\n",
        "tool",
        "ENV error",
        "DATABASE_URL is not set",
    ),
    ("make", MAKE, "exit", "exit status 2", ""),
    ("go-exit", "exit status 3\n", "exit", "exit status 3", ""),
    ("codex", "Process exited with code 127\nOutput:\n", "exit", "exit status 127", ""),
]


@pytest.mark.parametrize(
    ("name", "output", "family", "cls", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_each_form_is_read_by_its_signature(
    name: str, output: str, family: str, cls: str, message: str | None
) -> None:
    found = signature(output)
    assert found is not None, name
    assert (found.family, found.cls) == (family, cls)
    if message is not None:
        assert found.message == message


def test_every_family_of_the_list_is_tested() -> None:
    assert {family for family, _pattern, _fixed in SIGNATURES} <= {c[2] for c in CASES}


def test_the_telling_line_wins_over_the_first_that_says_error() -> None:
    # pytest's output says "error" first in its banner and in "ERROR collecting".
    found = signature(PYTEST)
    assert found is not None and found.line == "E   ModuleNotFoundError: No module named 'requests'"
    # cargo's last line is an "error:" too, the code wins
    assert signature(CARGO).cls == "error[E0432]"  # type: ignore[union-attr]
    # git's "error: failed to push" is not why
    assert signature(GIT_PUSH_REJECTED).cls == "rejected"  # type: ignore[union-attr]
    assert signature(GIT_PUSH_SSH).short == "Permission denied (publickey)"  # type: ignore[union-attr]


def test_the_exit_status_is_kept_beside_the_class() -> None:
    found = signature(
        "Process exited with code 1\nOutput:\nModuleNotFoundError: No module named 'x'\n"
    )
    assert found is not None and found.cls == "ModuleNotFoundError" and found.exit_status == 1
    assert exit_status("all good\n") is None
    assert exit_status("Exit code: 0\n") is None


def test_output_with_no_error_shape_has_no_signature() -> None:
    assert signature("") is None
    assert signature("building...\ndone in 3s\n") is None
    assert signature("the error handling module was refactored\n") is None


def test_a_long_output_is_read_in_bounded_work_and_its_end_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Work, not wall-clock time: at most SCAN_LINES lines of at most MATCH_CHARS each reach
    # the patterns, from the output's start and end, however long it is.
    searched: list[int] = []

    compiled = tuple(
        (family, CountedPattern(p, searched.append), fixed)
        for family, p, fixed in signatures._COMPILED
    )
    monkeypatch.setattr(signatures, "_COMPILED", compiled)
    noisy = ("error " * 80 + "\n") * 4_000 + "E   KeyError: 'name'\n"
    found = signature(noisy)
    assert found is not None and found.cls == "KeyError"  # the end of a long output is read
    assert max(searched) <= signatures.MATCH_CHARS
    assert len(searched) <= signatures.SCAN_LINES * len(compiled)
