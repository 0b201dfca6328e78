"""`dshkit gate`: FILE judged as before (`gate check FILE` spelled out too), its report of
what was seen printed for people and in the JSON, every verdict named in its help, and a
session's rework switch shown, set and refused for a session nobody knows."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from dshkit.gate.judge import MEANING, VERDICTS

from ..support.cli import run_dshkit
from ..support.paths import PAGES


@pytest.mark.browser
def test_gate_file_is_still_the_judging_command(tmp_path: Path) -> None:
    page = str(PAGES / "tank.html")
    for args in (
        ("gate", page),
        ("gate", "--budget", "2", "--json", page),
        ("gate", "check", page),
    ):
        done = run_dshkit(*args, "--budget", "2", home=tmp_path, check=False)
        assert done.returncode == 1, done.stderr  # not ok
        assert "blank-canvas-0" in done.stdout
    quiet = run_dshkit(
        "gate", "check", "--quiet", page, "--budget", "2", home=tmp_path, check=False
    )
    assert quiet.returncode == 1 and quiet.stdout == ""


@pytest.mark.browser
def test_the_human_output_is_the_judges_report(tmp_path: Path) -> None:
    page = PAGES / "console-error.html"
    done = run_dshkit("gate", str(page), "--budget", "2", home=tmp_path, check=False)
    assert done.returncode == 1, done.stderr
    head, file, *findings, shot = done.stdout.splitlines()
    assert re.fullmatch(rf"page-error after \d+\.\d s: {re.escape(MEANING['page-error'])}", head)
    assert file == f"file: {page.resolve()}" and shot.startswith("screenshot: ")
    # One line per finding: when, what kind, where, what.
    assert any(
        re.fullmatch(r" *\d+\.\ds console\.error console-error\.html:\d+:\d+: "
                     r"console\.error: 配置加载失败: settings\.json 缺少字段 theme", line)
        for line in findings
    ), findings  # fmt: skip


@pytest.mark.browser
def test_the_json_has_the_findings_and_the_report_the_text_lists(tmp_path: Path) -> None:
    page = str(PAGES / "blocked-resource.html")  # loads the gate refuses: not the page's error

    def blocked(lines: list[str]) -> set[str]:
        """The loads the gate refused, as the lines name them (a URL first)."""
        return {line.split(" not-seen ")[1].split()[0] for line in lines if "blocked by" in line}

    text = run_dshkit("gate", page, "--budget", "5", home=tmp_path).stdout.splitlines()
    done = run_dshkit("gate", page, "--budget", "5", "--json", home=tmp_path)
    printed = orjson.loads(done.stdout)
    assert list(printed)[-2:] == ["findings", "report"] and printed["verdict"] == "ok"
    findings, report = printed["findings"], printed["report"]
    assert report[0].startswith("ok after ") and len(report) == 1 + len(findings)
    assert all(f["what"] in line for f, line in zip(findings, report[1:], strict=True))
    refused = {"https://cdn.example.com/logo.png", "https://api.example.com/v1/stats"}
    assert blocked(report) == blocked(text) == refused


def test_the_help_names_every_verdict(tmp_path: Path) -> None:
    shown = " ".join(run_dshkit("gate", "check", "--help", home=tmp_path).stdout.split())
    missing = [name for name in VERDICTS if not re.search(rf"\b{re.escape(name)}\b", shown)]
    assert missing == []


def test_rework_is_shown_and_switched_per_session(tmp_path: Path) -> None:
    def rework(*args: str) -> dict[str, object]:
        done = run_dshkit("gate", "rework", "--json", *args, home=tmp_path)
        return dict(orjson.loads(done.stdout))

    named = ("--session", "s1", "--harness", "codex")
    assert rework(*named) == {
        "harness": "codex",
        "session": "s1",
        "rework": True,
        "source": "config",
    }
    assert rework(*named, "off")["rework"] is False
    assert rework("--session", "s1")["source"] == "session"  # known now: the id alone is enough
    assert rework(*named, "config")["source"] == "config"
    missing = run_dshkit("gate", "rework", "--session", "nobody", "off", home=tmp_path, check=False)
    assert missing.returncode == 2 and "nobody" in missing.stderr
    bad = run_dshkit("gate", "rework", *named, "maybe", home=tmp_path, check=False)
    assert bad.returncode == 2
