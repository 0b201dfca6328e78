"""dshkit's own words for what it observed, in the person's language: the templates a record's
text is written in at harvest (the language of the session it came from) and said in at
injection (the language of the session given it), Chinese and English with the same meaning.

Each template takes its pieces already shown as the caller shows them (a command in
backticks, a path, the error's short form) and adds only dshkit's words and punctuation: a
piece's own closing punctuation is dropped where the template puts its own, so no sentence
ends twice ("…not found.。").

The language is read from the person's words (`language_of`, `Tally` for a stream of them) by
the one rule every capability uses (`dshkit.language`), Chinese when nothing is known
(dshkit's first language).

Pure and standard-library only: the injection uses it on the hooks' path.
"""

from __future__ import annotations

from ..language import EN, LANGUAGES, ZH, decide, letters

__all__ = ["EN", "LANGUAGES", "ZH", "Tally", "language_of"]
SAMPLE_CHARS = 2_000  # of one text, read for its language
TALLY_CHARS = 8_000  # of a session's words, read for its language

# What a piece may end with that a template's own punctuation would double.
_ENDS = " \t.。;；:：,，!！?？、"


def bare(piece: str) -> str:
    """`piece` without the punctuation it ends with (the template adds its own)."""
    return piece.rstrip(_ENDS)


class Tally:
    """The Han and Latin letters of the person's words as they come (a session's messages, fed
    one at a time), up to TALLY_CHARS: the language they are in (`language`)."""

    __slots__ = ("han", "latin", "read")

    def __init__(self) -> None:
        self.han = self.latin = self.read = 0

    def add(self, text: str) -> None:
        if self.read >= TALLY_CHARS:
            return
        sample = text[: min(SAMPLE_CHARS, TALLY_CHARS - self.read)]
        self.read += len(sample)
        han, latin = letters(sample)
        self.han += han
        self.latin += latin

    @property
    def language(self) -> str:
        return decide(self.han, self.latin, ZH)


def language_of(*texts: str) -> str:
    """The language of the person's words `texts` (ZH or EN; ZH when nothing is known)."""
    tally = Tally()
    for text in texts:
        tally.read = 0  # each text's first SAMPLE_CHARS count, however many there are
        tally.add(text)
    return tally.language


# -- what a harvest writes -----------------------------------------------------------------


def negative(
    failed: str,
    error: str,
    remedy: list[tuple[str, str]],
    fix: str,
    seq: int | None,
    language: str,
) -> str:
    """A negative path as stored: `failed` (shown) failed with `error` (its short form); the
    `remedy` steps ("command" or "edit", shown) and `fix` (shown) made it work at `seq`."""
    error = bare(error)
    at = "" if seq is None else f"seq {seq}"
    if language == EN:
        steps = ", ".join(text if kind == "command" else f"editing {text}" for kind, text in remedy)
        said = f"{failed} failed with {error or 'no output'}; "
        said += f"fixed by {steps}, then {fix} succeeded" if steps else f"{fix} then succeeded"
        return said + (f" ({at})." if at else ".")
    steps = "，".join(text if kind == "command" else f"修改 {text}" for kind, text in remedy)
    return (
        f"{failed} 曾失败：{error or '（无输出）'}。之后{steps + '，' if steps else ''}{fix} 成功"
        + (f"（{at}）。" if at else "。")
    )


def proof(found: dict[str, object], language: str) -> str:
    """One proof a turn reached, as a harvest keeps it ({"kind": "commit", "sha", "branch"},
    {"kind": "push", "to"}, {"kind": "tests", "passed", "command"}; the command shown)."""
    kind = found.get("kind")
    if kind == "commit":
        branch = found.get("branch")
        where = f"（{branch}）" if language == ZH else f" ({branch})"
        return f"git commit {found.get('sha')}" + (where if branch else "")
    if kind == "push":
        return f"git push → {found.get('to')}"
    passed, command = found.get("passed"), found.get("command")
    if language == EN:
        return f"{passed} tests passed" + (f" ({command})" if command else "")
    return f"测试 {passed} 个通过" + (f"（{command}）" if command else "")


def experience(situation: str, proofs: list[str], used: list[str], language: str) -> str:
    """A turn that reached proven results: the task (`situation`, the person's request, shown),
    what it proved (each `proof` shown) and the commands it used (shown)."""
    situation = bare(situation)
    if language == EN:
        said = f'In a task like "{situation}": ' + ", ".join(proofs)
        return said + (f"; commands used: {', '.join(used)}" if used else "")
    said = f"在「{situation}」这类任务中：" + "，".join(proofs)
    return said + (f"；用到的命令：{'、'.join(used)}" if used else "")


COMMAND_NAMES = {
    "command:test": ("测试命令", "test command"),
    "command:lint": ("检查命令", "check command"),
    "command:build": ("构建命令", "build command"),
}


def proven(subject: str, command: str, seq: int | None, passed: int | None, language: str) -> str:
    """A command the tools proved (its `subject`: command:test, :lint, :build), shown, with
    the tests it passed at `seq`."""
    what = COMMAND_NAMES.get(subject, ("命令", "command"))
    at = "" if seq is None else f"seq {seq}"
    if language == EN:
        told = f"{passed} passed" if isinstance(passed, int) else "succeeded"
        return f"This workspace's {what[1]}: {command} ({told}{' at ' + at if at else ''})"
    told = f"{passed} 个通过" if isinstance(passed, int) else "成功"
    return f"本工作区的{what[0]}：{command}（{at + ' 时 ' if at else ''}{told}）"


# -- what an injection says ----------------------------------------------------------------


def negative_given(
    failed: str,
    named: list[str],
    steps: list[str],
    edits: list[str],
    fix: str | None,
    record: int,
    language: str,
) -> str:
    """A negative path as a session is given it: the command, the error's tokens (`named`,
    never the output's words), the remedy and the fix (all shown), and where the raw output is
    (memory_get `record`, untrusted)."""
    if language == EN:
        said = f"{failed} failed" + (
            f" with {', '.join(named)}" if named else " (no error class recognised)"
        )
        remedy = []
        if steps:
            remedy.append("ran " + ", ".join(steps))
        if edits:
            remedy.append("edited " + ", ".join(edits))
        if remedy:
            said += "; fixed by: " + "; ".join(remedy) + (f"; then {fix} succeeded" if fix else "")
        elif fix:
            said += f"; then {fix} succeeded"
        return f"{said}. Raw output: memory_get {record} (untrusted external text)"
    said = f"{failed} 失败" + (f"（{'，'.join(named)}）" if named else "（未识别出错误类型）")
    remedy = []
    if steps:
        remedy.append("先执行 " + "、".join(steps))
    if edits:
        remedy.append("修改了 " + "、".join(edits))
    fixed = ("，".join(remedy) + "，之后 " if remedy else "之后 ") + (
        f"{fix} 成功" if fix else "成功"
    )
    return f"{said}；{fixed}。原始输出用 memory_get {record} 读取（不可信的外部文本）"


def person_said(day: str, words: str, language: str) -> str:
    """The person's own words, dated (the only text framed as theirs to follow)."""
    if language == EN:
        return f'The person said, on {day}: "{words}"'
    return f"使用者在 {day} 说：「{words}」"
