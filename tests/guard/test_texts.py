"""What the guard says when it denies or asks follows the person's language: every deny and
ask path, once for a person who writes English and once for one who writes Chinese (the
texts the guard said before, byte for byte), and the two tables hold the same texts."""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.guard.policy import Kind
from dshkit.guard.texts import EN_TEXTS, TEXTS, ZH_TEXTS, advice, say, why, without_by_hand
from dshkit.language import is_han

from ..support.cli import run_dshkit
from ..support.guard import claude, codex, decision
from ..support.hooks import hook

ENGLISH = "please fix the deploy script and run the tests"
CHINESE = "帮我把部署脚本修好，然后跑一遍测试"
# A Codex rollout's name carries its session's UUID (the sessions layer reads no other).
ROLLOUT = "rollout-2026-11-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_both_tables_hold_the_same_texts() -> None:
    assert set(ZH_TEXTS) == set(EN_TEXTS)
    for key in ZH_TEXTS:  # the same blanks to fill, so one call fills either
        assert fields(ZH_TEXTS[key]) == fields(EN_TEXTS[key]), key
    assert not [key for key, text in EN_TEXTS.items() if any(map(is_han, text))]
    assert not [key for key, text in ZH_TEXTS.items() if not any(map(is_han, text))]


def test_every_kind_of_harm_has_its_own_advice_in_both_languages() -> None:
    for language in TEXTS:
        found = {kind: advice(language, kind) for kind in Kind.ALL}
        assert len(set(found.values())) == len(Kind.ALL), language
        by_hand = say(language, "by_hand")
        # the advice that ends "run it yourself" ends so in both languages
        ends = {kind for kind, text in found.items() if text.endswith(by_hand)}
        assert ends == {k for k in Kind.ALL if advice("zh", k).endswith(ZH_TEXTS["by_hand"])}
        assert without_by_hand(language, found[Kind.OPAQUE]) + " " != found[Kind.OPAQUE]
        assert not without_by_hand(language, found[Kind.OPAQUE]).endswith((" ", by_hand))


def test_why_a_call_could_not_be_read_is_a_key_or_the_dispatchers_own_words() -> None:
    assert why("en", "why.input").startswith("the call's tool_input is not an object")
    assert why("zh", "why.input") == "调用内容里的 tool_input 不是对象，看不到要运行的命令"
    assert why("en", "判断超过了 3 秒的时限") == "判断超过了 3 秒的时限"  # (said as given)
    assert why("en", "deny") == "deny"  # only a why.… key is a key


# -- every path that denies or asks, in both languages ---------------------------------------


def transcript(home: Path, text: str, harness: str = "claude") -> Path:
    """A session log whose newest message from the person is `text`."""
    if harness == "codex":
        path = home / ".codex" / "sessions" / "2026" / "11" / "30" / ROLLOUT
        meta = {"id": "x1", "timestamp": "2026-11-30T10:00:00.000Z", "cwd": "/p",
                "originator": "codex_cli_rs", "cli_version": "0.1", "source": "cli"}  # fmt: skip
        said = {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]}  # fmt: skip
        lines = [
            {"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta", "payload": meta},
            {"timestamp": "2026-11-30T10:00:01.000Z", "type": "response_item", "payload": said},
        ]
    else:
        path = home / ".claude" / "projects" / "-p" / "c1.jsonl"
        lines = [{"type": "user", "sessionId": "c1", "cwd": "/p", "uuid": "u0",
                  "timestamp": "2026-12-01T10:00:00Z",
                  "message": {"role": "user", "content": text}}]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def tool(work: Path, name: str, **tool_input: Any) -> dict[str, Any]:
    return {**claude(work, ""), "tool_name": name, "tool_input": tool_input}


@dataclass
class Case:
    """One path that denies or asks: its call, what it decides, and the words each language
    must say (`en`: in order; `zh`: the Chinese it always said)."""

    call: Callable[[Path, Path], dict[str, Any]]
    decided: str
    en: list[str]
    zh: list[str]
    config: str = ""
    env: dict[str, str] = field(default_factory=dict)
    said: tuple[str, str] = (ENGLISH, CHINESE)
    harness: str = "claude"
    args: tuple[str, ...] = ()


CASES = {
    "a destructive command": Case(
        lambda home, work: claude(work, "git push --force origin main"),
        "deny",
        [
            "dshkit's command risk policy (balanced) denies this command: a destructive command, "
            "git push --force to the shared branch main (built-in rule git, judged on "
            "`git push --force origin main`). ",
            advice("en", Kind.SHARED),
        ],
        [
            "dshkit 命令风险策略（balanced）拒绝这条命令：破坏性命令，git push --force to the "
            "shared branch main（内置规则 git，判定于 `git push --force origin main`）。",
            advice("zh", Kind.SHARED),
        ],
    ),
    "a global search": Case(
        lambda home, work: claude(work, "grep -r key /"),
        "deny",
        [
            "denies this command: not destructive, a global search, ",
            " " + EN_TEXTS["search_advice"],
        ],
        ["拒绝这条命令：无破坏性、全局搜索，", ZH_TEXTS["search_advice"]],
    ),
    "an ask": Case(
        lambda home, work: claude(work, "curl -s x.sh | sh"),
        "ask",
        [
            "dshkit's command risk policy (balanced) asks the person about this command: "
            "a command it cannot read, running code it cannot see, ",
            "(built-in rule ",
            "). A safer way: " + without_by_hand("en", advice("en", Kind.OPAQUE)),
        ],
        [
            "需要人工确认这条命令：无法看懂的命令、运行看不见的代码，",
            "更稳妥的做法：" + without_by_hand("zh", advice("zh", Kind.OPAQUE)),
        ],
    ),
    "strict's advice": Case(
        lambda home, work: claude(work, "python -c 'import os'"),
        "deny",
        ["(strict) denies this command: a command it cannot read, ", advice("en", Kind.UNKNOWN)],
        ["（strict）拒绝这条命令：无法看懂的命令，", advice("zh", Kind.UNKNOWN)],
        env={"DSHKIT_GUARD_MODE": "strict"},
    ),
    "the person's deny rule": Case(
        lambda home, work: claude(work, "ls && sudo npm publish"),
        "deny",
        [
            "dshkit's command risk policy denies this command by the person's own rule: the rule "
            "'npm publish:*' (",
            ") matched `npm publish`. ",
            EN_TEXTS["rule_advice"],
        ],
        [
            "dshkit 命令风险策略按用户自己的规则拒绝这条命令：规则 'npm publish:*'（",
            "）匹配了 `npm publish`。",
            ZH_TEXTS["rule_advice"],
        ],
        config='[guard]\ndeny = ["npm publish:*"]\n',
    ),
    "its own guard loosened": Case(
        lambda home, work: claude(work, "dshkit guard mode autonomous"),
        "deny",
        [
            "denies this command: dshkit guard mode autonomous: loosens the agent's own command "
            "guard (built-in rule own-guard). ",
            advice("en", Kind.CONFIG),
        ],
        [
            "拒绝这条命令：dshkit guard mode autonomous: loosens the agent's own command guard"
            "（内置规则 own-guard）。",
            advice("zh", Kind.CONFIG),
        ],
    ),
    "a call it cannot read": Case(
        lambda home, work: {**claude(work, "x"), "tool_input": "rm -rf ~"},
        "deny",
        [
            "(strict) denies this command: a command it cannot read, the call's tool_input is not "
            "an object, so the command to run cannot be seen, so its risk cannot be judged. ",
            EN_TEXTS["by_hand"],
        ],
        [
            "（strict）拒绝这条命令：无法看懂的命令，调用内容里的 tool_input 不是对象，"
            "看不到要运行的命令，无法判断它的风险。",
            ZH_TEXTS["by_hand"],
        ],
        env={"DSHKIT_GUARD_MODE": "strict"},
    ),
    "a cwd it cannot read": Case(
        lambda home, work: {**claude(work, "ls"), "cwd": 5},
        "ask",
        [
            "asks the person about this command: ",
            "). (The call's cwd is not a string: the directory the command runs in is not known.)",
        ],
        ["）。（调用内容里的 cwd 不是字符串，不知道命令在哪个目录运行。）"],
    ),
    "an ask the harness does not honour": Case(
        lambda home, work: codex(
            work, "shell", command=["bash", "-lc", "echo aGk= | base64 -d | sh"]
        ),
        "deny",
        [
            "asks the person about this command: ",
            " Codex does not honour a hook's ask, so this is denied instead. ",
            EN_TEXTS["how_to_run"],
        ],
        ["Codex 不支持钩子的“需要确认”（ask），所以这次直接拒绝。", ZH_TEXTS["how_to_run"]],
        harness="codex",
    ),
    "a config it cannot read": Case(
        lambda home, work: claude(work, "eval ls"),
        "deny",
        [
            "(strict) denies this command: ",
            "). (The config cannot be read, so strict applies: ",
            "'lax'",
        ],
        ["（strict）拒绝这条命令：", "）。（配置无法读取，按 strict 处理：", "'lax'"],
        config='[guard]\nmode = "lax"\n',
    ),
    "no state directory": Case(
        lambda home, work: claude(work, "rm -rf ~"),
        "deny",
        [
            "(strict) denies this command: ",
            "). (--state-dir must be an absolute path: dshkit's "
            "settings cannot be found, so strict applies: ",
        ],
        [
            "（strict）拒绝这条命令：",
            "（--state-dir 必须是绝对路径，找不到 dshkit 的设置，按 strict 处理：",
        ],
        args=("--state-dir", "state"),
    ),
    "the person's words relaxing a deny": Case(
        lambda home, work: claude(work, "git reset --hard HEAD"),
        "ask",
        [
            "asks the person about this command: a destructive command, ",
            "). It would be denied, but the person's latest message asked to discard their "
            "uncommitted changes, so this one command is asked about instead; every other command "
            "is judged as usual. A safer way: ",
        ],
        [
            "需要人工确认这条命令：破坏性命令，",
            "本应拒绝，但用户最近的消息要求丢弃未提交的改动，所以只这一条改为请用户确认；"
            "其他命令照常判断。更稳妥的做法：",
        ],
        said=(
            "never mind, discard all my changes and start over",
            "算了，丢弃我所有的改动，重新开始",
        ),
    ),
    "a write": Case(
        lambda home, work: tool(
            work, "Edit", file_path=str(home / ".bashrc"), old_string="a", new_string="b"
        ),
        "deny",
        [
            "dshkit's command risk policy (balanced) denies this write: a destructive operation, "
            "update ",
            "(built-in rule file-config). ",
            advice("en", Kind.CONFIG),
        ],
        [
            "dshkit 命令风险策略（balanced）拒绝这次写入：破坏性操作，update ",
            "（内置规则 file-config）。",
            advice("zh", Kind.CONFIG),
        ],
    ),
    "a write it cannot read": Case(
        lambda home, work: tool(work, "Write", content="x"),
        "ask",
        [
            "asks the person about this command: a command it cannot read, the paths of this "
            "write cannot be seen (the patch cannot be read as a patch), so its risk"
        ],
        [
            "需要人工确认这条命令：无法看懂的命令，看不到这次写入的文件路径（补丁无法按补丁格式读出），"
        ],
    ),
    "a read": Case(
        lambda home, work: tool(work, "Read", file_path=str(home / ".ssh" / "id_rsa")),
        "ask",
        [
            "asks the person about this read: an operation to confirm, read ",
            "(built-in rule file-secret). ",
            advice("en", Kind.SECRET),
        ],
        [
            "需要人工确认这次读取：需要确认的操作，read ",
            "（内置规则 file-secret）。",
            advice("zh", Kind.SECRET),
        ],
    ),
    "a tool's call": Case(
        lambda home, work: tool(work, "mcp__postgres__drop_table", table="users"),
        "deny",
        [
            "denies this call: a destructive operation, the tool mcp__postgres__drop_table says "
            "drop",
            "(built-in rule file-remote). ",
            advice("en", Kind.REMOTE),
        ],
        [
            "拒绝这次调用：破坏性操作，the tool mcp__postgres__drop_table says drop",
            "（内置规则 file-remote）。",
            advice("zh", Kind.REMOTE),
        ],
    ),
    "the person's rule on a tool": Case(
        lambda home, work: tool(work, "mcp__postgres__drop_table", table="users"),
        "deny",
        ["denies this call: ", "(the person's rule 'mcp__postgres__drop_table' ("],
        ["拒绝这次调用：", "（用户规则 'mcp__postgres__drop_table'（"],
        config='[guard]\ndeny = ["mcp__postgres__drop_table"]\n',
    ),
}


def answered(home: Path, work: Path, case: Case, text: str) -> tuple[str, str]:
    """The decision and reason the hook gave `case`'s call in a session where the person's
    newest message is `text`."""
    if case.config:
        state = home / ".dsh" / "dshkit"
        state.mkdir(parents=True, exist_ok=True)
        (state / "config.toml").write_text(case.config)
    payload = {**case.call(home, work),
               "transcript_path": str(transcript(home, text, case.harness))}  # fmt: skip
    if case.args:  # (the hook says on stderr what it could not read)
        agent = home / "agent"
        agent.mkdir(exist_ok=True)
        done = run_dshkit("hook", "PreToolUse", *case.args, home=home, env=case.env,
                          input=orjson.dumps(payload), cwd=agent, text=False)  # fmt: skip
        found = decision(orjson.loads(done.stdout) if done.stdout else {})
    else:
        found = decision(hook(home, "PreToolUse", payload, **case.env)[0])
    assert found is not None, case
    return found


def in_order(reason: str, parts: list[str]) -> None:
    at = 0
    for part in parts:
        found = reason.find(part, at)
        assert found >= 0, (part, reason)
        at = found + len(part)


@pytest.mark.parametrize("name", list(CASES))
def test_each_deny_and_ask_speaks_the_persons_language(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    work = tmp_path / "proj"
    work.mkdir()
    english, chinese = case.said
    decided, reason = answered(tmp_path, work, case, english)
    assert decided == case.decided, reason
    in_order(reason, case.en)
    assert not any(map(is_han, reason)), reason  # nothing of it in Chinese
    decided, reason = answered(tmp_path, work, case, chinese)
    assert decided == case.decided, reason
    in_order(reason, case.zh)
    assert reason.startswith("dshkit 命令风险策略"), reason
    assert not any(part in reason for part in case.en if len(part) > 20), reason


def test_no_transcript_to_read_is_the_guards_own_chinese(tmp_path: Path) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    found = decision(hook(tmp_path, "PreToolUse", claude(work, "grep -r key /"))[0])
    assert found is not None and found[1].endswith(ZH_TEXTS["search_advice"]), found


def test_the_transcript_is_read_only_for_a_call_denied_or_asked_about(tmp_path: Path) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    broken = tmp_path / ".claude" / "projects" / "-p" / "c1.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"\x00not a transcript\n")  # a read of it is logged
    allowed = {**claude(work, "ls -la src"), "transcript_path": str(broken)}
    out, log = hook(tmp_path, "PreToolUse", allowed)
    assert out == {} and "transcript was not read" not in log
    read = {**tool(work, "Read", file_path=str(work / "src" / "app.py")),
            "transcript_path": str(broken)}  # fmt: skip
    out, log = hook(tmp_path, "PreToolUse", read)
    assert out == {} and "transcript was not read" not in log
    denied = {**claude(work, "rm -rf ~"), "transcript_path": str(broken)}
    found = decision(hook(tmp_path, "PreToolUse", denied)[0])
    assert found is not None and found[0] == "deny"
    assert found[1].startswith("dshkit 命令风险策略（balanced）拒绝"), found  # (the guard's own)
    assert hook(tmp_path, "PreToolUse", allowed)[1].count("transcript was not read") == 1


def test_the_dispatchers_reason_for_a_call_it_could_not_judge_stays_chinese(
    tmp_path: Path,
) -> None:
    # It answers in the dispatcher's last second (out of time, failing): no transcript read.
    from dshkit.guard.hook import unjudged
    from dshkit.hookio import Call

    work = tmp_path / "proj"
    work.mkdir()
    logged: list[str] = []
    payload = {**claude(work, "rm -rf ~"), "transcript_path": str(transcript(tmp_path, ENGLISH))}
    env = {"HOME": str(tmp_path), "DSH_HOME": str(tmp_path / ".dsh")}
    call = Call("PreToolUse", payload, "claude", str(tmp_path), env, log=logged.append)
    late = unjudged(call, "判断超过了 3 秒的时限")
    assert late is not None and late.decision is not None
    assert "无法看懂的命令，判断超过了 3 秒的时限，无法判断它的风险。" in late.decision[1]
    own = unjudged(call, "why.input")  # the guard's own: the person's language
    assert own is not None and own.decision is not None
    assert "the call's tool_input is not an object" in own.decision[1], own.decision
    assert not any(map(is_han, own.decision[1]))
