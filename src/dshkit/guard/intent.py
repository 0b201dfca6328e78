"""The person's own words as the one thing that relaxes a verdict: where their latest message
asks to discard their uncommitted changes or to force-push, that command is asked about
instead of denied (the hook says so). Nothing else relaxes anything.

Only for a line whose every destruction is of that one family (`git reset --hard`, `git
checkout -- f`, `git clean -f`…: throws away uncommitted work; `git push --force` to a shared
branch), with no global search, no code the guard cannot see and no rule of the person's
denying it. The message is the person's as the sessions layer tells it (its adapter's
`user/message` of source `user`: never tool output, a file, an injected context or the
agent's own text), the newest one in the last MiB of the session's transcript, read at most
once per call and only for a call denied or asked about (`Person`: the same message says the
language the guard answers in, guard/texts.py); an allowed call reads nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .policy import DESTRUCTIVE, Kind

if TYPE_CHECKING:
    from ..hookio import Call
    from .service import Classification

DISCARD, FORCE_PUSH = "discard", "force-push"  # (what each asks for: texts.py, relaxed.*)
TAIL_BYTES = 1 << 20
# What asks for each family, in English or Chinese (the person's words, folded to lower case).
_ASKS = {
    DISCARD: re.compile(
        r"discard|throw (?:away|out)|get rid of (?:my|the|all|these|those|local) |"
        r"revert (?:my|the|all|these|those|local|everything)|undo (?:my|the|all|these|those|local)"
        r"|reset --hard|hard reset|reset (?:it |everything |the repo |the branch )?hard|"
        r"git (?:reset|checkout --|restore|clean)|start over|wipe (?:my|the|all|local) |"
        r"丢弃|丢掉|放弃(?:所有|全部|本地|这些|我的)?(?:的)?(?:修改|改动|更改|变更)|"
        r"撤销(?:所有|全部|本地|这些|我的)?(?:的)?(?:修改|改动|更改|变更)|不要(?:这些|我的)?(?:修改|改动)了"
        r"|还原(?:所有|全部|本地)?(?:的)?(?:修改|改动|文件)|重置到|硬重置|清掉(?:修改|改动)"
        r"|(?:修改|改动|更改|变更)[^，。,.；;]{0,4}(?:撤销|撤回|丢弃|丢掉|还原|扔掉|不要了)"
    ),
    FORCE_PUSH: re.compile(
        r"force[- ]?push|push (?:--force|-f\b|with --force|--force-with-lease)|"
        r"push (?:it )?forcefully|强推|强制推送|强制 push|force 推|push -f|push --force"
    ),
}
_NEGATED = re.compile(
    r"(?:don'?t|do not|never|no need to|without|avoid|stop|不要|别|不许|禁止|不能|不用|无需|切勿)"
    r"\W{0,3}(?:\w+\W{1,3}){0,2}$"
)


def family(found: Classification) -> str | None:
    """The one family of every destruction in a traced classification, or None when it has
    another, a global search, code the guard cannot see, or a rule of the person's deny."""
    judge = found.judge
    if found.risk != DESTRUCTIVE or found.global_search or found.opaque or judge is None:
        return None
    if found.denied is not None:
        return None
    kinds = set()
    for risk, reason, kind in judge.findings.found:
        if risk != DESTRUCTIVE:
            continue
        if kind == Kind.SHARED:
            kinds.add(FORCE_PUSH)
        elif kind == Kind.WORK and ("uncommitted" in reason or "untracked" in reason):
            kinds.add(DISCARD)
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def asks_for(text: str, wanted: str) -> bool:
    """Whether `text` (the person's message) asks for the family `wanted`, not negated."""
    lowered = text.lower()
    for match in _ASKS[wanted].finditer(lowered):
        if not _NEGATED.search(lowered[max(0, match.start() - 40) : match.start()]):
            return True
    return False


class Person:
    """The person's newest message in a call's session, read at most once and only when
    asked (a deny or an ask: never on an allowed call); None when there is none or it cannot
    be read (the reason logged)."""

    __slots__ = ("_call", "_read", "_text")
    _text: str | None

    def __init__(self, call: Call) -> None:
        self._call, self._read, self._text = call, False, None

    def text(self) -> str | None:
        if not self._read:
            self._read, self._text = True, self._newest()
        return self._text

    def language(self) -> str:
        """The person's language ("zh" or "en", leaks.language); "zh", the guard's own, when
        there is no message or it cannot be read."""
        text = self.text()
        if text is None:
            return "zh"
        from .leaks import language as of

        return of(text)

    def _newest(self) -> str | None:
        call = self._call
        path = call.payload.get("transcript_path")
        info = call.harness_info
        if not isinstance(path, str) or not path or info is None:
            return None
        try:
            return latest_message(path, info.name)
        except Exception as exc:  # an unreadable transcript: nothing relaxed, the guard's own
            call.log(f"guard: the transcript was not read for the person's words: {exc}")
            return None


def relaxing(person: Person, found: Classification) -> str | None:
    """The family (DISCARD or FORCE_PUSH) the person's latest message asked for when it is
    this line's one family; None otherwise (and whenever it cannot be read)."""
    wanted = family(found)
    if wanted is None:
        return None
    text = person.text()
    if text is None or not asks_for(text, wanted):
        return None
    return wanted


def language(call: Call) -> str:
    """The person's language ("zh" or "en") from their newest message in the session's
    transcript; "zh", the guard's own, when there is none or it cannot be read."""
    return Person(call).language()


def latest_message(path: str, harness: str) -> str | None:
    """The text of the person's newest message in the last MiB of a transcript, as the
    sessions layer reads that harness's log from its end (`read_last`: a DSH log's last zstd
    frames only, however long the session), None when there is none. ValueError when the
    log cannot be read whole there: an older message is never taken for the newest."""
    from ..sessions.events import human_messages, message_text
    from ..sessions.reader import read_last

    last = read_last(harness, path, TAIL_BYTES)
    if last.errors:
        raise ValueError(last.errors[0])
    humans = human_messages(last.events)
    return message_text(humans[-1]) if humans else None
