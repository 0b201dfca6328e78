"""Read-only grounding (seed 000 W1, §5, iron rule 1): the optimizer's read/glob/grep tools over a
real fake project, every safety rule and bound, the evidence ledger, and a round trip through the
real tool loop against the fake OpenAI server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMClient, LLMConfig, ToolLimits, run_tool_loop
from dshkit.optimizer.grounding import (
    SECRET_NAMES,
    TOOLS,
    Evidence,
    GroundingLimits,
    Workspace,
    WorkspaceUnavailable,
    _secret_name,
)

from ..support.fakes import FakeOpenAI, Reply, calls

APP = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(1, 11))  # 30 lines


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project beside a directory it must never reach."""
    write(tmp_path / "outside" / "private.txt", "OUTSIDE-MARKER\n")
    root = tmp_path / "proj"
    write(root / ".gitignore", "# build output\n*.log\n!keep.log\nbuild/\n/top.txt\n")
    write(root / "src" / "app.py", APP)
    write(root / "src" / "util" / "helpers.py", "import os\n\ndef helper():\n    return os.sep\n")
    write(root / "src" / "util" / ".gitignore", "generated.py\n")
    write(root / "src" / "util" / "generated.py", "GENERATED-MARKER = 1\n")
    write(root / "src" / "top.txt", "nested top\n")
    write(root / "top.txt", "IGNORED-MARKER anchored\n")
    write(root / "app.log", "IGNORED-MARKER log\n")
    write(root / "keep.log", "kept log\n")
    write(root / "build" / "out.txt", "IGNORED-MARKER build\n")
    write(root / "README.md", "# Demo\n\nA demo project.\n")
    write(root / ".env", "API_KEY=SECRET-MARKER\n")
    write(root / ".env.local", "API_KEY=SECRET-MARKER\n")
    write(root / "config" / "id_rsa", "SECRET-MARKER\n")
    write(root / "certs" / "server.pem", "SECRET-MARKER\n")
    write(root / "credentials.json", '{"token": "SECRET-MARKER"}\n')
    write(root / ".ssh" / "config", "SECRET-MARKER\n")
    write(root / ".git" / "config", "GIT-MARKER\n")
    write(root / "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0BINARY-MARKER\n")
    write(root / "big.txt", "BIG-MARKER\n" + "x" * 5000 + "\n")
    (root / "link_out").symlink_to(tmp_path / "outside" / "private.txt")
    (root / "dir_out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "link_in").symlink_to("src/app.py")
    (root / "link_env").symlink_to(".env")
    os.mkfifo(root / "pipe")
    return root


LIMITS = GroundingLimits(file_bytes=4000)


@pytest.fixture
def ws(project: Path) -> Workspace:
    return Workspace(project, LIMITS)


# -- the schemas ------------------------------------------------------------------------------


def test_the_tools_are_exactly_read_glob_grep_with_their_arguments() -> None:
    schemas = {t["function"]["name"]: t for t in TOOLS}
    assert list(schemas) == ["read", "glob", "grep"]
    assert all(t["type"] == "function" for t in TOOLS)
    shapes = {
        name: (
            list(t["function"]["parameters"]["properties"]),
            t["function"]["parameters"]["required"],
        )
        for name, t in schemas.items()
    }
    assert shapes == {
        "read": (["path", "offset", "limit"], ["path"]),
        "glob": (["pattern"], ["pattern"]),
        "grep": (["pattern", "path"], ["pattern"]),
    }
    # The optimizer model reads the descriptions: Chinese, brief.
    for tool in TOOLS:
        description = tool["function"]["description"]
        assert re.search(r"[\u4e00-\u9fff]", description) and len(description) < 120
        for spec in tool["function"]["parameters"]["properties"].values():
            assert re.search(r"[\u4e00-\u9fff]", spec["description"])


# -- an unusable working directory ----------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "reason"),
    [
        (None, "no working directory"),
        ("", "no working directory"),
        ("relative/dir", "is not an absolute path"),
        ("{tmp}/missing", "does not exist"),
        ("{tmp}/file.txt", "is not a directory"),
    ],
)
def test_an_unusable_working_directory_is_reported(
    tmp_path: Path, root: str | None, reason: str
) -> None:
    write(tmp_path / "file.txt", "x")
    with pytest.raises(WorkspaceUnavailable, match=reason):
        Workspace(root.format(tmp=tmp_path) if root else root)


def test_limits_are_checked_and_give_the_loop_the_same_numbers() -> None:
    limits = GroundingLimits(max_steps=5, result_bytes=1000, budget_bytes=3000)
    assert limits.tool_limits() == ToolLimits(5, 1000, 3000)
    with pytest.raises(ValueError, match=r"GroundingLimits\.read_lines must be an integer ≥ 1"):
        GroundingLimits(read_lines=0)
    with pytest.raises(ValueError, match=r"GroundingLimits\.result_bytes must be an integer ≥ 800"):
        GroundingLimits(result_bytes=100)


# -- no path escapes the root ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "refusal"),
    [
        ("../outside/private.txt", "[拒绝：路径不得含 ..（不能离开工作目录）。]"),
        ("src/../../outside/private.txt", "[拒绝：路径不得含 ..（不能离开工作目录）。]"),
        ("/etc/passwd", "[拒绝：只接受相对于工作目录的路径。]"),
        ("~/.bashrc", "[拒绝：只接受相对于工作目录的路径。]"),
        ("link_out", "[拒绝：link_out 指向工作目录之外。]"),
        ("dir_out/private.txt", "[拒绝：dir_out/private.txt 指向工作目录之外。]"),
    ],
)
def test_no_path_escapes_the_root(ws: Workspace, path: str, refusal: str) -> None:
    assert ws.dispatch("read", {"path": path}) == refusal
    assert ws.ledger == []


def test_an_absolute_path_inside_the_root_is_refused_with_its_relative_form(
    ws: Workspace, project: Path
) -> None:
    assert ws.dispatch("read", {"path": str(project / "src" / "app.py")}) == (
        "[拒绝：只接受相对于工作目录的路径；可改用 src/app.py。]"
    )


def test_a_symlink_inside_pointing_inside_is_read_under_its_own_name(ws: Workspace) -> None:
    out = ws.dispatch("read", {"path": "link_in", "limit": 2})
    assert out.startswith("     1\tdef f1():\n     2\t    return 1\n")
    assert ws.ledger == [Evidence("read", "link_in", 1, 2, "def f1():")]
    assert ws.dispatch("read", {"path": "./src//app.py", "limit": 1}).startswith("     1\tdef f1")
    assert ws.ledger[-1].path == "src/app.py"  # normalized


def test_walks_never_leave_the_root(ws: Workspace) -> None:
    listed = ws.dispatch("glob", {"pattern": "**"})
    assert "link_out" not in listed and "dir_out" not in listed and "private.txt" not in listed
    assert "link_in" in listed  # a file symlink resolving inside counts
    assert "OUTSIDE-MARKER" not in ws.dispatch("grep", {"pattern": "MARKER"})
    assert ws.dispatch("grep", {"pattern": "x", "path": "dir_out"}) == (
        "[拒绝：dir_out 指向工作目录之外。]"
    )
    assert ws.dispatch("glob", {"pattern": "../outside/*"}) == (
        "[拒绝：pattern 不得含 ..（不能离开工作目录）。]"
    )
    assert ws.dispatch("glob", {"pattern": "/etc/*"}) == (
        "[拒绝：pattern 必须相对于工作目录，不能以 / 开头。]"
    )


# -- .gitignore, .git, binary, secrets, size, non-regular files ------------------------------


def test_gitignored_files_are_skipped_everywhere(ws: Workspace) -> None:
    for path in ("app.log", "top.txt", "build/out.txt", "build", "src/util/generated.py"):
        assert ws.dispatch("read", {"path": path}) == f"[拒绝：{path} 被 .gitignore 忽略。]"
    assert ws.dispatch("read", {"path": "keep.log"}) == "     1\tkept log\n"  # negation
    assert ws.dispatch("read", {"path": "src/top.txt"}) == "     1\tnested top\n"  # anchored /
    listed = ws.dispatch("glob", {"pattern": "**"}).splitlines()
    assert not {"app.log", "top.txt", "build/out.txt", "src/util/generated.py"} & set(listed)
    grep = ws.dispatch("grep", {"pattern": "IGNORED-MARKER|GENERATED-MARKER"})
    assert grep.startswith("[无匹配：")


def test_dot_git_is_never_walked_or_read(ws: Workspace) -> None:
    assert (
        ws.dispatch("read", {"path": ".git/config"}) == "[拒绝：.git/config 位于 .git 内，不读。]"
    )
    assert ".git/" not in ws.dispatch("glob", {"pattern": "**"})
    assert ws.dispatch("glob", {"pattern": ".git/*"}) == "[拒绝：.git 位于 .git 内，不读。]"
    assert ws.dispatch("grep", {"pattern": "GIT-MARKER"}).startswith("[无匹配：")
    assert ws.dispatch("grep", {"pattern": "x", "path": ".git"}).startswith("[拒绝：.git 位于")


def test_binary_files_are_refused_and_skipped(ws: Workspace) -> None:
    assert ws.dispatch("read", {"path": "logo.png"}) == "[拒绝：logo.png 是二进制文件，不读。]"
    out = ws.dispatch("grep", {"pattern": "BINARY-MARKER"})
    assert out.startswith("[无匹配：") and "二进制文件 1 个" in out


@pytest.mark.parametrize(
    "path", [".env", ".env.local", "config/id_rsa", "certs/server.pem", "credentials.json"]
)
def test_secrets_looking_files_are_never_read(ws: Workspace, path: str) -> None:
    assert ws.dispatch("read", {"path": path}) == f"[拒绝：{path} 疑似密钥/凭据，不读。]"


def test_secrets_are_not_searched_nor_listed_and_links_to_them_are_refused(
    ws: Workspace,
) -> None:
    assert (
        ws.dispatch("read", {"path": ".ssh/config"}) == "[拒绝：.ssh/config 疑似密钥/凭据，不读。]"
    )
    assert ws.dispatch("read", {"path": "link_env"}) == (
        "[拒绝：link_env 指向的文件疑似密钥/凭据，不读。]"
    )
    grep = ws.dispatch("grep", {"pattern": "SECRET-MARKER"})
    assert "SECRET-MARKER" not in grep and grep.startswith("[无匹配：")
    assert "疑似密钥/凭据的文件或目录 6 个" in grep  # .env, .env.local, id_rsa, pem, creds, .ssh
    listed = ws.dispatch("glob", {"pattern": "**"})
    for name in (".env", "id_rsa", "server.pem", "credentials.json", ".ssh", "link_env"):
        assert name not in listed
    assert "[另有 6 个疑似密钥/凭据的文件或目录未列出，也不可读。]" in listed
    assert ws.ledger == []


def test_the_secret_list_covers_the_usual_suspects() -> None:
    names = [".env", ".env.production", "prod.env", "key.pem", "tls.key", "store.p12", "id_rsa"]
    names += ["id_ed25519.pub", "credentials", ".netrc", ".npmrc", "secrets.yaml", "auth.json"]
    assert all(_secret_name(name) for name in names)
    assert not any(_secret_name(n) for n in ("app.py", "README.md", "keys.py", "environment.ts"))
    assert all(p == p.lower() for p in SECRET_NAMES)  # matched against the lowercased name


def test_files_over_the_size_limit_are_refused_by_name(ws: Workspace, project: Path) -> None:
    size = (project / "big.txt").stat().st_size
    assert ws.dispatch("read", {"path": "big.txt"}) == (
        f"[拒绝：big.txt 有 {size} 字节，超过 4000 字节的上限，不读；可用 grep 定位。]"
    )
    out = ws.dispatch("grep", {"pattern": "BIG-MARKER"})
    assert out.startswith("[无匹配：") and f"超过 4000 字节的文件 big.txt（{size} 字节）" in out


def test_a_fifo_is_neither_read_nor_opened(ws: Workspace) -> None:
    # Opening a FIFO with no writer would block: a hang here is the failure.
    assert ws.dispatch("read", {"path": "pipe"}) == "[拒绝：pipe 不是普通文件。]"
    assert "pipe" not in ws.dispatch("glob", {"pattern": "*"})
    assert ws.dispatch("grep", {"pattern": "zzz"}).startswith("[无匹配：")


# -- read -----------------------------------------------------------------------------------


def test_read_returns_numbered_lines_and_records_what_it_returned(ws: Workspace) -> None:
    out = ws.dispatch("read", {"path": "src/app.py", "offset": 4, "limit": 3})
    assert out == (
        "     4\tdef f2():\n     5\t    return 2\n     6\t\n"
        "[第 4–6 行，共 30 行；继续读请用 offset=7。]\n"
    )
    assert ws.dispatch("read", {"path": "README.md"}) == (
        "     1\t# Demo\n     2\t\n     3\tA demo project.\n"
    )
    assert ws.ledger == [
        Evidence("read", "src/app.py", 4, 6, "def f2():"),
        Evidence("read", "README.md", 1, 3, "# Demo"),
    ]


def test_read_is_bounded_in_lines_and_bytes_and_says_so(project: Path) -> None:
    write(project / "long.txt", "".join(f"line {n}\n" for n in range(1, 501)))
    ws = Workspace(project, GroundingLimits(read_lines=100))
    out = ws.dispatch("read", {"path": "long.txt", "limit": 300})
    assert out.endswith("[第 1–100 行，共 500 行，已达单次最多 100 行；继续读请用 offset=101。]\n")
    assert ws.ledger[-1] == Evidence("read", "long.txt", 1, 100, "line 1")
    # Bytes: a result never passes result_bytes, the cut is at a line, and it says so.
    ws = Workspace(project, GroundingLimits(result_bytes=1000))
    out = ws.dispatch("read", {"path": "long.txt"})
    last = int(re.findall(r"^ +(\d+)\t", out, re.M)[-1])
    assert len(out.encode()) <= 1000 and 20 < last < 100
    assert out.endswith(f"已达本次结果的字节上限；继续读请用 offset={last + 1}。]\n")
    assert ws.ledger == [Evidence("read", "long.txt", 1, last, "line 1")]


def test_a_long_line_is_cut_and_says_so(project: Path) -> None:
    write(project / "min.js", "a" * 900 + "\nok\n")
    out = Workspace(project, GroundingLimits(line_chars=100)).dispatch("read", {"path": "min.js"})
    assert out == f"     1\t{'a' * 100}…[该行共 900 字符，只显示前 100 个]\n     2\tok\n"


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        ({}, "[拒绝：缺少参数 path。]"),
        ({"path": 3}, "[拒绝：path 必须是字符串。]"),
        ({"path": ""}, "[拒绝：path 为空；请给出文件路径。]"),
        ({"path": "src"}, "[拒绝：src 是目录；列目录请用 glob。]"),
        ({"path": "nope.py"}, "[拒绝：nope.py 不存在。]"),
        ({"path": "src/app.py", "offset": 0}, "[拒绝：offset 必须是正整数（行），收到 0。]"),
        ({"path": "src/app.py", "limit": True}, "[拒绝：limit 必须是正整数（行），收到 True。]"),
        ({"path": "src/app.py", "offset": 31}, "[拒绝：src/app.py 共 30 行，offset=31 超出范围。]"),
        ({"path": "a\0b"}, "[拒绝：path 含空字符。]"),
        ({"path": "x", "mode": "w"}, "[错误：read 没有参数 mode；可用参数：path、offset、limit。]"),
    ],
)
def test_bad_read_arguments_are_refused_in_words(
    ws: Workspace, arguments: dict[str, Any], refusal: str
) -> None:
    assert ws.dispatch("read", arguments) == refusal
    assert ws.ledger == []


def test_numbers_as_digit_strings_are_accepted(ws: Workspace) -> None:
    assert ws.dispatch("read", {"path": "src/app.py", "offset": "2", "limit": "1"}).startswith(
        "     2\t    return 1\n"
    )


def test_nothing_raises_out_of_dispatch(ws: Workspace, project: Path) -> None:
    (project / "loop_a").symlink_to("loop_b")
    (project / "loop_b").symlink_to("loop_a")
    (project / "dangling").symlink_to("gone.txt")
    outcomes = [
        ws.dispatch("read", {"path": "loop_a"}),
        ws.dispatch("read", {"path": "dangling"}),
        ws.dispatch("read", {"path": "src/app.py/x"}),
        ws.dispatch("read", {"path": "n" * 5000}),
        ws.dispatch("grep", {"pattern": "x", "path": "loop_a"}),
        ws.dispatch("glob", {"pattern": "loop_a/*"}),
        ws.dispatch("write", {"path": "x"}),
        ws.dispatch("read", ["not", "a", "dict"]),  # type: ignore[arg-type]
    ]
    assert all(out.startswith(("[拒绝：", "[错误：")) for out in outcomes), outcomes
    assert outcomes[1] == "[拒绝：dangling 不存在。]"
    assert outcomes[6] == "[错误：没有名为 'write' 的工具；可用的工具：read、glob、grep。]"
    # The walks pass the loop and the dangling link by.
    assert ws.dispatch("grep", {"pattern": "def f1"}).startswith("link_in:1: def f1():\n")


# -- glob -----------------------------------------------------------------------------------


def test_glob_lists_sorted_paths_and_records_nothing(ws: Workspace) -> None:
    assert ws.dispatch("glob", {"pattern": "**/*.py"}) == "src/app.py\nsrc/util/helpers.py\n"
    assert ws.dispatch("glob", {"pattern": "*.md"}) == "README.md\n"  # * stays at the top
    assert ws.dispatch("glob", {"pattern": "src/*.{py,txt}"}) == "src/app.py\nsrc/top.txt\n"
    assert ws.dispatch("glob", {"pattern": "src/**"}) == (
        "src/app.py\nsrc/top.txt\nsrc/util/.gitignore\nsrc/util/helpers.py\n"
    )
    assert ws.dispatch("glob", {"pattern": "**/*.rs"}) == "[无匹配：**/*.rs]\n"
    assert ws.dispatch("glob", {"pattern": "nowhere/*.py"}) == "[拒绝：nowhere 不存在。]"
    assert ws.ledger == []  # a listed name is not known content


def test_glob_is_bounded_and_says_so(project: Path) -> None:
    for n in range(30):
        write(project / "many" / f"f{n:02}.txt", "x\n")
    out = Workspace(project, GroundingLimits(glob_paths=10)).dispatch("glob", {"pattern": "many/*"})
    assert out.splitlines()[:10] == [f"many/f{n:02}.txt" for n in range(10)]
    assert out.splitlines()[10:] == [
        "[共 30 个匹配，按路径排序只列出前 10 个（单次最多 10 个）；请缩小 pattern。]"
    ]
    out = Workspace(project, GroundingLimits(walk_entries=10)).dispatch(
        "glob", {"pattern": "many/*"}
    )
    assert len(out.splitlines()) == 11 and out.endswith(
        "[已停止：遍历了 10 个目录项（上限），其余未遍历，结果可能不全；请用更具体的目录前缀。]\n"
    )


# -- grep -----------------------------------------------------------------------------------


def test_grep_prints_hits_and_records_each_one(ws: Workspace) -> None:
    out = ws.dispatch("grep", {"pattern": r"def f(1|10)\b", "path": "src"})
    assert out == (
        "src/app.py:1: def f1():\nsrc/app.py:28: def f10():\n[在 4 个文件中找到 2 处匹配。]\n"
    )
    assert ws.dispatch("grep", {"pattern": "return os", "path": "src/util/helpers.py"}) == (
        "src/util/helpers.py:4: return os.sep\n[在 1 个文件中找到 1 处匹配。]\n"
    )
    assert ws.ledger == [
        Evidence("grep", "src/app.py", 1, 1, "def f1():"),
        Evidence("grep", "src/app.py", 28, 28, "def f10():"),
        Evidence("grep", "src/util/helpers.py", 4, 4, "return os.sep"),
    ]


@pytest.mark.parametrize(
    ("pattern", "refusal"),
    [
        ("(", "[拒绝：正则表达式无效：missing ), unterminated subpattern at position 0]"),
        ("[a-", "[拒绝：正则表达式无效："),
        ("(a+)+$", "[拒绝：正则里有被重复的分组又含重复（如 (a+)+），可能回溯爆炸；请改写。]"),
        (r"(\w*\s)*x", "[拒绝：正则里有被重复的分组又含重复"),
        ("(?:a{2,})+", "[拒绝：正则里有被重复的分组又含重复"),
        ("", "[拒绝：缺少参数 pattern（非空字符串）。]"),
        ("a" * 501, "[拒绝：pattern 有 501 个字符，超过 500 的上限。]"),
    ],
)
def test_bad_or_dangerous_regexes_are_refused(ws: Workspace, pattern: str, refusal: str) -> None:
    assert ws.dispatch("grep", {"pattern": pattern}).startswith(refusal)


@pytest.mark.parametrize("pattern", [r"(ab)+", r"(a|b)*c", r"x+(y)?", r"[(+]+", r"\(a+\)+"])
def test_ordinary_regexes_are_not_mistaken_for_dangerous_ones(ws: Workspace, pattern: str) -> None:
    assert "回溯" not in ws.dispatch("grep", {"pattern": pattern})


def test_grep_stops_at_its_bounds_and_says_so(project: Path) -> None:
    for n in range(6):
        write(project / "many" / f"f{n}.txt", "hit\n" * 10)
    root = {"pattern": "hit", "path": "many"}
    out = Workspace(project, GroundingLimits(grep_hits=15)).dispatch("grep", root)
    assert out.count("\n") == 15 + 2
    assert out.endswith(
        "[已停止：已达 15 处匹配（上限），其后未再搜索；请缩小 path 或 pattern。]\n"
    )
    out = Workspace(project, GroundingLimits(grep_files=2)).dispatch("grep", root)
    assert out.count(": hit\n") == 20
    assert "[已停止：已搜索 2 个文件（上限），其余文件未搜索；请缩小 path 或 pattern。]" in out
    out = Workspace(project, GroundingLimits(grep_bytes=100)).dispatch("grep", root)
    assert out.count(": hit\n") == 20
    assert "[已停止：已读 80 字节（上限 100），其余文件未搜索；" in out
    ws = Workspace(project, GroundingLimits(result_bytes=1000))
    out = ws.dispatch("grep", root)
    shown = re.findall(r"^(many/f\d\.txt):(\d+): hit$", out, re.M)
    assert len(out.encode()) <= 1000 and 10 < len(shown) < 50
    assert out.startswith("many/f0.txt:1: hit\n")
    assert f"[只列出前 {len(shown)} 处匹配（本次结果的字节上限）；请缩小 path 或 pattern。]" in out
    assert [(e.path, e.first_line) for e in ws.ledger] == [(p, int(n)) for p, n in shown]


def test_grep_is_bounded_in_walked_entries(project: Path) -> None:
    for n in range(30):
        write(project / "many" / f"f{n:02}.txt", "hit\n")
    out = Workspace(project, GroundingLimits(walk_entries=5)).dispatch(
        "grep", {"pattern": "hit", "path": "many"}
    )
    assert out.count(": hit\n") == 5
    assert "[已停止：遍历了 5 个目录项（上限），其余未遍历；请缩小 path 或 pattern。]" in out


# -- the ledger -----------------------------------------------------------------------------


def test_the_ledger_is_ordered_deduplicated_indexed_and_merged(ws: Workspace) -> None:
    ws.dispatch("read", {"path": "src/app.py", "offset": 1, "limit": 5})
    ws.dispatch("glob", {"pattern": "**/*.py"})
    ws.dispatch("grep", {"pattern": "def f3", "path": "src"})
    ws.dispatch("read", {"path": "src/app.py", "offset": 1, "limit": 5})  # again: once
    ws.dispatch("read", {"path": "src/app.py", "offset": 3, "limit": 2})  # blank first line
    ws.dispatch("read", {"path": ".env"})  # refused: nothing
    write(ws.root / "wide.md", "  " + "宽" * 120 + "\n")
    ws.dispatch("read", {"path": "wide.md"})
    assert ws.ledger == [
        Evidence("read", "src/app.py", 1, 5, "def f1():"),
        Evidence("grep", "src/app.py", 7, 7, "def f3():"),
        Evidence("read", "src/app.py", 3, 4, "def f2():"),
        Evidence("read", "wide.md", 1, 1, "宽" * 120),
    ]
    index = ws.evidence_index()
    assert index[:3] == [
        {"path": "src/app.py", "line": 1, "note": "读过第 1–5 行：def f1():"},
        {"path": "src/app.py", "line": 7, "note": "def f3():"},
        {"path": "src/app.py", "line": 3, "note": "读过第 3–4 行：def f2():"},
    ]
    assert index[3]["note"] == ("读过第 1 行：" + "宽" * 120)[:79] + "…"
    assert all(len(entry["note"]) <= 80 for entry in index)
    assert ws.ranges() == [("src/app.py", 1, 5), ("src/app.py", 7, 7), ("wide.md", 1, 1)]
    assert Workspace(ws.root).evidence_index() == []


# -- .gitignore semantics, checked against git itself ---------------------------------------


GITIGNORE_TREE = {
    ".gitignore": (
        "*.log\n!keep.log\nbuild/\n!build/back.txt\n/top.txt\ndocs/**/draft.md\n**/cache\n"
        "tmp*/\na?c.txt\n[bx]y.txt\n\\#hash.txt\nspaced.txt   \nvendor/**\n*.tmp\n!*.tmp\n"
        "onlydir/\n"
    ),
    "a.log": "",
    "keep.log": "",
    "sub/keep.log": "",
    "sub/deep.log": "",
    "build/x.txt": "",
    "build/back.txt": "",
    "sub/build/y.txt": "",
    "top.txt": "",
    "sub/top.txt": "",
    "docs/draft.md": "",
    "docs/a/b/draft.md": "",
    "docs/readme.md": "",
    "other/draft.md": "",
    "x/cache/c.txt": "",
    "cache": "",
    "tmp1/t.txt": "",
    "tmpfile": "",
    "abc.txt": "",
    "abbc.txt": "",
    "by.txt": "",
    "cy.txt": "",
    "#hash.txt": "",
    "spaced.txt": "",
    "vendor/v/w.txt": "",
    "vendored.txt": "",
    "z.tmp": "",
    "onlydir": "",
    # `!logs/` re-includes the directory, not the *.log files the root ignores inside it.
    "pkg/.gitignore": "generated.py\n/local.txt\n!important.log\ndeep/*.md\n!logs/\n",
    "pkg/generated.py": "",
    "pkg/inner/generated.py": "",
    "pkg/local.txt": "",
    "pkg/inner/local.txt": "",
    "pkg/important.log": "",
    "pkg/deep/a.md": "",
    "pkg/deep/more/b.md": "",
    "pkg/keep.py": "",
    "pkg/logs/a.log": "",
    "pkg/logs/b.txt": "",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.process
def test_gitignore_rules_match_git_itself(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name, text in GITIGNORE_TREE.items():
        write(repo / name, text)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    def untracked(where: Path) -> list[str]:
        listing = subprocess.run(
            ["git", "ls-files", "-o", "--exclude-standard"],
            cwd=where,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return sorted(listing.splitlines())

    expected = untracked(repo)
    assert "a.log" not in expected and "keep.log" in expected  # the tree exercises both ways
    assert Workspace(repo).dispatch("glob", {"pattern": "**"}).splitlines() == expected
    # Rooted below the repository's top, the .gitignore above the root still counts.
    assert Workspace(repo / "pkg").dispatch("glob", {"pattern": "**"}).splitlines() == (
        untracked(repo / "pkg")
    )
    # A path named directly is judged the same way, its parent directories included.
    ws = Workspace(repo)
    for name in GITIGNORE_TREE:
        readable = not ws.dispatch("read", {"path": name}).startswith("[拒绝：")
        assert readable == (name in expected or name.endswith(".gitignore")), name


# -- through the real tool loop -------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def llm(fake: FakeOpenAI) -> LLMClient:
    return LLMClient(LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m1"))


def test_a_tool_loop_round_trip_ends_with_exactly_what_was_read(
    fake: FakeOpenAI, ws: Workspace
) -> None:
    fake.replies.extend(
        [
            calls(
                ("glob", '{"pattern": "**/*.py"}'),
                ("grep", '{"pattern": "def f2", "path": "src"}'),
            ),
            calls(
                ("read", '{"path": "src/app.py", "offset": 4, "limit": 3}'),
                ("read", '{"path": "../outside/private.txt"}'),
                ("read", '{"path": ".env"}'),
                ("grep", '{"pattern": "API_KEY|MARKER"}'),
            ),
            Reply(deltas=["src/app.py:4 定义了 f2"]),
        ]
    )
    messages = [{"role": "system", "content": "优化器"}, {"role": "user", "content": "改 f2"}]
    with llm(fake) as client:
        result = run_tool_loop(client, messages, TOOLS, ws.dispatch, limits=ws.limits.tool_limits())
    assert (result.outcome, result.completion.text) == ("ok", "src/app.py:4 定义了 f2")
    assert fake.requests[0].body["tools"] == TOOLS
    shown = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert shown == [
        "src/app.py\nsrc/util/helpers.py\n",
        "src/app.py:4: def f2():\n[在 4 个文件中找到 1 处匹配。]\n",
        "     4\tdef f2():\n     5\t    return 2\n     6\t\n"
        "[第 4–6 行，共 30 行；继续读请用 offset=7。]\n",
        "[拒绝：路径不得含 ..（不能离开工作目录）。]",
        "[拒绝：.env 疑似密钥/凭据，不读。]",
        "[无匹配：在 8 个文件中未找到。]\n"
        "[跳过：二进制文件 1 个；超过 4000 字节的文件 big.txt（5012 字节）；"
        "疑似密钥/凭据的文件或目录 6 个。]\n",
    ]
    assert ws.ledger == [
        Evidence("grep", "src/app.py", 4, 4, "def f2():"),
        Evidence("read", "src/app.py", 4, 6, "def f2():"),
    ]
    assert ws.evidence_index() == [
        {"path": "src/app.py", "line": 4, "note": "def f2():"},
        {"path": "src/app.py", "line": 4, "note": "读过第 4–6 行：def f2():"},
    ]
    sent = b"".join(orjson.dumps(r.body) for r in fake.requests)
    assert b"SECRET-MARKER" not in sent and b"OUTSIDE-MARKER" not in sent


def test_the_ledger_stays_exact_when_the_loop_budget_runs_out(
    fake: FakeOpenAI, project: Path
) -> None:
    write(project / "long.txt", "".join(f"line {n}\n" for n in range(1, 1001)))
    ws = Workspace(project, GroundingLimits(result_bytes=1000, budget_bytes=2500))
    reads = [("read", f'{{"path": "long.txt", "offset": {n}}}') for n in (1, 101, 201, 301, 401)]
    fake.replies.extend([calls(*reads[:2]), calls(*reads[2:]), Reply(deltas=["答"])])
    with llm(fake) as client:
        result = run_tool_loop(
            client,
            [{"role": "user", "content": "读"}],
            TOOLS,
            ws.dispatch,
            limits=ws.limits.tool_limits(),
        )
    assert result.outcome == "ok"
    # The workspace kept each result within what the loop would show: the loop cut nothing.
    assert not any(step.truncated for step in result.steps)
    assert sum(step.shown_bytes for step in result.steps) <= 2500
    texts = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert "已达本次结果的字节上限；继续读请用 offset=" in texts[3]  # cut short by the budget
    assert texts[4] == "[未执行：工具结果总预算已基本用完。请根据已有信息作答。]"
    shown = {int(n) for text in texts for n in re.findall(r"^ +(\d+)\t", text, re.M)}
    recorded = {n for _, first, last in ws.ranges() for n in range(first, last + 1)}
    assert recorded == shown and len(ws.ledger) == 4


def test_the_text_of_every_line_shown_is_kept_for_the_audit(ws: Workspace) -> None:
    ws.dispatch("read", {"path": "src/app.py", "offset": 4, "limit": 2})
    ws.dispatch("grep", {"pattern": "helper", "path": "src/util"})
    shown = ws.shown_lines()
    assert shown["src/app.py"] == {4: "def f2():", 5: "    return 2"}
    assert shown["src/util/helpers.py"][3] == "def helper():"
    assert 1 not in shown["src/app.py"]  # only what the model was shown
