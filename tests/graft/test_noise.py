"""Host noise stripping (seed 004 v0.17): host-only paragraphs dropped, host tokens redacted in
mixed ones, machine-wide scan output folded, and everything else left byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.graft.noise import (
    FOLDED_MARKER,
    HOST_PATH_MARKER,
    NOISE_MARKER,
    Stripped,
    strip_host_noise,
)
from dshkit.sessions import Scanner, Source
from dshkit.sessions.events import message_text

from ..support.paths import CODEX, DSH_PLAIN

CWD = "/home/dev/work"  # a workspace inside a home directory, the usual case
WIN_CWD = "C:\\Users\\dev\\proj"


def test_prose_without_paths_is_returned_byte_for_byte() -> None:
    text = "先跑测试，再提交。\r\n\r\n  Then push it!  \n\n\n- 列表项 1/2\n- and/or 50%"
    assert strip_host_noise(text, CWD) == Stripped(text, 0, 0, 0)


@pytest.mark.parametrize(
    "paragraph",
    [
        "C:\\Users\\alice\\AppData\\Local\\Temp\\tmp1234.log",
        "C:/Users/alice/Desktop/notes.txt",
        "`C:\\\\Users\\\\alice\\\\.cache\\\\x`",  # JSON-escaped backslashes
        "%APPDATA%\\Code\\User\\settings.json",
        "$env:LOCALAPPDATA\\Temp",
        "/home/bob/.bashrc, /home/bob/.profile",
        "/Users/carol/Library/Caches/pip",
        "/tmp/pytest-of-dev/x.txt",
        "/var/folders/zz/abc/T/tmp.py",
        "~/.npmrc",
        "$HOME/.config/dsh",
        "- /root/.ssh/known_hosts\n- /tmp/a",
        "D:\\Users\\x\\AppData",
    ],
)
def test_a_paragraph_of_host_paths_only_becomes_the_marker(paragraph: str) -> None:
    text = f"读了配置。\n\n{paragraph}\n\n然后继续。"
    stripped = strip_host_noise(text, CWD)
    assert stripped.text == f"读了配置。\n\n{NOISE_MARKER}\n\n然后继续。"
    assert (stripped.paragraphs_dropped, stripped.tokens_redacted) == (1, 0)


def test_a_mixed_paragraph_keeps_words_and_workspace_paths_and_redacts_host_tokens() -> None:
    text = (
        "改了 /home/dev/work/src/a.py 和 src/b.py，日志在 /tmp/run.log，"
        "缓存在 ~/.cache/x；见 https://example.org/tmp/page。"
    )
    stripped = strip_host_noise(text, CWD)
    assert stripped.text == (
        f"改了 /home/dev/work/src/a.py 和 src/b.py，日志在 {HOST_PATH_MARKER}，"
        f"缓存在 {HOST_PATH_MARKER}；见 https://example.org/tmp/page。"
    )
    assert (stripped.paragraphs_dropped, stripped.tokens_redacted) == (0, 2)


def test_the_workspace_inside_a_home_directory_is_not_noise() -> None:
    for text in (
        "/home/dev/work/src/a.py",
        "/home/dev/work",
        "~/work/tests/test_a.py",  # the home is read from cwd
        "$HOME/work/README.md",
        "/home/dev/work/src/../tests/x.py",
    ):
        assert strip_host_noise(text, CWD) == Stripped(text, 0, 0, 0), text
    # …but a sibling of the workspace, or the home itself, is
    for text in ("/home/dev/work2/a.py", "/home/dev/.ssh/id_rsa", "/home/dev/work/../.aws"):
        assert strip_host_noise(text, CWD).text == NOISE_MARKER, text


def test_a_workspace_under_tmp_keeps_its_paths() -> None:
    cwd = "/tmp/pytest-of-dev/pytest-3/proj"
    kept = "wrote /tmp/pytest-of-dev/pytest-3/proj/out.txt"
    assert strip_host_noise(kept, cwd).text == kept
    assert strip_host_noise("wrote /tmp/other.txt", cwd).text == f"wrote {HOST_PATH_MARKER}"


def test_windows_workspace_paths_compare_case_insensitively_with_either_slash() -> None:
    for text in (
        "edited C:\\Users\\dev\\proj\\src\\a.py",
        "edited c:\\users\\DEV\\Proj\\src\\a.py",
        "edited C:/Users/dev/proj/src/a.py",
        "edited %USERPROFILE%\\proj\\a.py",
    ):
        assert strip_host_noise(text, WIN_CWD).text == text, text
    text = "edited C:\\Users\\dev\\proj\\a.py and C:\\Users\\dev\\AppData\\Roaming\\x.json"
    assert strip_host_noise(text, WIN_CWD).text == (
        f"edited C:\\Users\\dev\\proj\\a.py and {HOST_PATH_MARKER}"
    )
    # a project on another drive, or outside any profile, is not host noise
    for text in ("D:\\work\\proj\\a.py", "C:\\src\\proj\\main.c"):
        assert strip_host_noise(text, WIN_CWD).text == text


def test_system_paths_and_relative_paths_are_left_alone() -> None:
    text = "edit /etc/nginx/nginx.conf, then /usr/bin/python3 -m pytest tests/ and ../x"
    assert strip_host_noise(text, CWD) == Stripped(text, 0, 0, 0)


def test_a_search_inside_the_workspace_is_not_noise() -> None:
    output = "$ rg TODO src/\n" + "\n".join(f"src/mod{i}.py:{i}:    # TODO {i}" for i in range(9))
    absolute = "\n".join(f"/home/dev/work/src/mod{i}.py:{i}: TODO" for i in range(9))
    for text in (output, absolute):
        assert strip_host_noise(text, CWD) == Stripped(text, 0, 0, 0)


def test_whole_disk_scan_output_is_folded() -> None:
    lines = [
        "/usr/lib/python3/dist-packages/foo/config.py",
        "/etc/foo/config.yaml",
        "/home/bob/.config/foo/config",
        "/var/lib/foo/config.db",
        "/opt/foo/share/config.json",
        "find: '/proc/1/fd': Permission denied",
    ]
    text = "找一下 config：\n\n$ find / -name 'config*'\n" + "\n".join(lines) + "\n\n结果如上。"
    stripped = strip_host_noise(text, CWD)
    assert stripped.text == f"找一下 config：\n\n{FOLDED_MARKER}\n\n结果如上。"
    assert stripped.outputs_folded == 1 and stripped.paragraphs_dropped == 0
    pwsh = "\n".join(f"C:\\Users\\dev\\AppData\\Local\\pkg{i}\\config.json" for i in range(6))
    assert strip_host_noise(pwsh, WIN_CWD).text == FOLDED_MARKER


def test_a_short_or_single_tree_listing_is_not_folded() -> None:
    nginx = "\n".join(f"/etc/nginx/sites-enabled/site{i}.conf" for i in range(8))
    assert strip_host_noise(nginx, CWD).text == nginx  # one system tree: maybe the work itself
    commands = "/help\n/compact\n/clear\n/model\n/init"
    assert strip_host_noise(commands, CWD).text == commands
    few = "/usr/lib/a.so\n/etc/b.conf\n/var/lib/c"
    assert strip_host_noise(few, CWD).text == few
    with_project = nginx + "\n/home/dev/work/deploy/site.conf"
    assert strip_host_noise(with_project, CWD).text == with_project


def test_a_fenced_block_of_host_paths_keeps_its_fences() -> None:
    text = "```\n/home/bob/.bashrc\n/tmp/x\n```"
    assert strip_host_noise(text, CWD).text == f"```\n{NOISE_MARKER}\n```"
    split = "```text\n$ ls ~/Downloads\n\n/home/dev/Downloads/a.zip\n```"
    assert strip_host_noise(split, CWD).text == (
        f"```text\n$ ls {HOST_PATH_MARKER}\n\n{NOISE_MARKER}\n```"
    )


def test_paragraph_breaks_are_kept_exactly() -> None:
    text = "a\r\n\r\n/tmp/x\n \n\t\nb /tmp/y\n\n\n"
    assert (
        strip_host_noise(text, CWD).text
        == f"a\r\n\r\n{NOISE_MARKER}\n \n\t\nb {HOST_PATH_MARKER}\n\n\n"
    )


def test_without_a_cwd_every_host_path_is_noise() -> None:
    assert strip_host_noise("/home/dev/work/a.py", "").text == NOISE_MARKER


def _events(scanner: Scanner, harness: str, root: Path) -> list[dict]:
    report = scanner.scan([Source(harness, root)])
    (key,) = report.changed_sessions
    return scanner.catalog.events(key)


def test_real_dsh_tool_result_in_its_workspace_is_kept(scanner: Scanner) -> None:
    events = _events(scanner, "dsh", DSH_PLAIN)
    (result,) = [e for e in events if e["type"] == "tool/result"]
    text = message_text(result)
    assert "<path>/home/dev/work/hello.txt</path>" in text
    assert strip_host_noise(text, "/home/dev/work") == Stripped(text, 0, 0, 0)
    # the same output read from another workspace: only the host path goes
    moved = strip_host_noise(text, "/home/dev/other")
    assert f"<path>{HOST_PATH_MARKER}</path>" in moved.text and moved.tokens_redacted == 1
    assert "hello from dsh-study" in moved.text


def test_real_codex_context_keeps_its_workspace_and_drops_the_skills_home(
    scanner: Scanner,
) -> None:
    events = _events(scanner, "codex", CODEX)
    (developer,) = [e for e in events if e["type"] == "developer/message"]
    text = message_text(developer)
    assert "`/home/dev/.codex/skills/.system`" in text
    stripped = strip_host_noise(text, "/home/dev/proj3")
    assert "/home/dev/.codex" not in stripped.text and stripped.tokens_redacted >= 1
    assert "A skill is a set of local instructions" in stripped.text
    (context,) = [e for e in events if "<environment_context>" in message_text(e)]
    kept = message_text(context)
    assert strip_host_noise(kept, "/home/dev/proj3").text == kept  # every path is the project's
