"""The person's language, read from their words, and the instruction's fixed parts in it.

The instruction the agent gets has a few fixed parts (the ask heading and its "nothing",
the self-check line, the words marking an unknown, the label the hook puts before it);
they follow the person: a prompt mostly in Chinese gets Chinese ones, any other gets
English ones. Both were written for dshkit with the same meaning. Imports nothing: the
prompt hook reads the label on its path.
"""

from __future__ import annotations

from ..language import language_of as _of

LANGUAGES = ("zh", "en")


class Fixed:
    """One language's fixed parts of an instruction."""

    __slots__ = ("ask_heading", "check_first", "label", "nothing", "pending", "self_check")

    def __init__(
        self,
        *,
        ask_heading: str,
        nothing: str,
        self_check: str,
        pending: str,
        check_first: str,
        label: str,
    ) -> None:
        self.ask_heading = ask_heading  # the ask section's heading (a colon follows it)
        self.nothing = nothing  # what it says when nothing is asked
        self.self_check = self_check  # how the closing self-check line starts
        self.pending = pending  # after X: a point only the person can settle
        self.check_first = check_first  # before X: a fact the agent can look up itself
        self.label = label  # opens the refined reading the hook gives the agent


FIXED = {
    "zh": Fixed(
        ask_heading="开工前先问用户",
        nothing="无",
        self_check="收尾自检：",
        pending="待确认",
        check_first="动手前先确认",
        label=(
            "【dshkit：对用户这条请求的细化理解——依据原话、会话与项目文件整理；"
            "与原话冲突时以原话为准】"
        ),
    ),
    "en": Fixed(
        ask_heading="Ask the user first",
        nothing="None",
        self_check="Final self-check:",
        pending="to be confirmed",
        check_first="Before starting, confirm",
        label=(
            "[dshkit: a refined reading of the user's request, drawn from their words, the "
            "session and the project's files; where it conflicts with their words, their "
            "words win]"
        ),
    ),
}


def language_of(words: str) -> str:
    """ "zh" when the words are mostly Chinese, else "en" (`dshkit.language`, the one rule;
    "en" when the words hold no letters: the optimizer speaks English by default)."""
    return _of(words, "en")
