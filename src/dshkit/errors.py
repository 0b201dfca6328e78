"""The one error tree: what can go wrong in dshkit, as the surfaces need to tell it apart.

Every error dshkit raises on purpose is a `DshkitError`; its message is written for a person
(it names the input, the limit, or what to do). The core raises these and never knows which
surface asked; each surface maps the tree once (`cli`: exit codes and usage errors, `mcp`:
tool errors, `web`: HTTP statuses, `hooks`: a log line and no opinion, or the guard's
fail-closed answer), by the class alone, so a new error needs no change in any surface.

`field` names the input that was wrong in the core's own words (`session`, `path`,
`budget`, …); a surface translates it to its spelling (`--session`, `sessionId`).
"""

from __future__ import annotations

# An id or prefix longer than any id is (a session's, a record's, a handoff's) names nothing:
# every surface refuses it as bad input rather than look it up and echo it back whole.
MAX_ID = 1000


class DshkitError(Exception):
    """Something dshkit could not do, said so a person can act on it."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Invalid(DshkitError):
    """The input is wrong: a value out of range, of the wrong type, too long, malformed."""


class TooLarge(Invalid):
    """The input is over a size limit (the message names the limit)."""


class NotFound(DshkitError):
    """What the input names does not exist (a session, a run, a verdict, a record)."""


class Ambiguous(DshkitError):
    """What the input names matches more than one thing: the caller must say which."""


class Busy(DshkitError):
    """Another process holds what this needs for longer than the caller may wait."""


class Unavailable(DshkitError):
    """Something dshkit needs cannot be used as it is: the state database, the LLM
    configuration, Chromium, a harness's CLI."""


class Refused(DshkitError):
    """A rule of dshkit's refuses the operation; `code` names the rule for scripts
    (e.g. SOURCE_ALREADY_MIGRATED) and `detail` carries what a script may want to read."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        detail: dict[str, object] | None = None,
    ) -> None:
        super().__init__(message, field=field)
        self.code = code
        self.detail = detail or {}


class Failed(DshkitError):
    """The operation ran and did not succeed (a generation, a handoff, a page judged bad);
    `detail` carries its result."""

    def __init__(
        self, message: str, *, code: str = "failed", detail: dict[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.detail = detail or {}
