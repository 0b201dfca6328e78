"""What a session leaves for the next one, read from its events alone (no model): negative
paths, facts, experiences and skill drafts.

The events are fed one at a time (a session of 64 MiB is never held): what is kept between
them is bounded — the open tool calls (the pairing rule of `sessions.events.Pairer`), the
failures not yet covered, the current turn's requests, proofs and commands, and the drafts,
each list capped and each text clipped once it was scanned whole.

- A **negative path** is a failed tool call and the success that covered it later in the same
  session: the same call again, or a call of the same command (its program and first word)
  or the same file; with the error, what was edited in between, and what finally worked.
- A **fact** has evidence: the person's words asking to remember something (grade person), or
  a command the tools proved (the test command that passed; grade tool). A fact of the same
  subject later supersedes it.
- An **experience** is a turn that reached a proven result (a commit, a push, passing tests):
  the request it answered (the situation) and what worked.
- A **skill** is a procedure the person asked to keep, or a sequence of commands that
  recurred in two turns or more, drafted as a SKILL.md (`skills.draft`).
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Iterable
from functools import partial

import orjson

from .. import harnesses
from ..harnesses import COMMAND, WRITE
from ..sessions.events import (
    Event,
    Pairer,
    is_failed_result,
    is_human_message,
    message_text,
)
from . import templates
from .records import EXPERIENCE, FACT, NEGATIVE, PERSON, SKILL, TOOL, Draft
from .signatures import signature
from .skills import draft_skill
from .topics import is_project_change, topic, unscoped

ERROR_CHARS = 600  # the error as a negative path's text quotes it
DETAIL_CHARS = 2_000  # the error and commands as the record's detail keeps them
COMMAND_CHARS = 300
REQUEST_CHARS = 120
MAX_PENDING = 256  # failures waiting for a covering success
MAX_DRAFTS = {NEGATIVE: 60, FACT: 40, EXPERIENCE: 30, SKILL: 10}
MAX_TURN_COMMANDS = 40
MAX_EDITS = 6
MAX_REMEDY = 8  # the steps between a failure and its fix kept (the newest)
MAX_REQUESTS = 60  # the newest requests kept for the model pass
ARGUMENT_BYTES = 64 << 10  # a call's arguments read for its command or path (beyond: ignored)

_TESTS_PASSED = (
    re.compile(r"\b(\d+) passed\b"),
    re.compile(r"^# pass (\d+)\s*$", re.M),
    re.compile(r"test result: ok\. (\d+) passed"),
    re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*\n+OK\b", re.M),
)
_TESTS_FAILED = re.compile(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|^# fail [1-9]|test result: FAILED", re.M
)
# A command's exit status as Codex and DSH report it in the output (the result is not marked
# failed): Codex's forms, and DSH bash's "[exit code: N]", which ends a long output.
_EXIT_STATUS = re.compile(
    r"^Process exited with code [1-9]\d*\s*$|\"exit_code\":\s*[1-9]|^Exit code: [1-9]|"
    r"^\[exit code: [1-9]\d*\]",
    re.M,
)
_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest)\b|"
    r"\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|\b(?:cargo|go|mix|dotnet|deno)\s+test\b|"
    r"\bmake\s+(?:test|check)\b|\bpython3?\s+-m\s+(?:pytest|unittest)\b"
)
# Commands whose success is a fact about the workspace: how it is checked and built.
_FACT_COMMANDS = (
    (
        "command:lint",
        re.compile(
            r"(?:^|[\s;&|/])(?:ruff\s+check|ruff|flake8|pylint|mypy|pyright|eslint|tsc\s+--noEmit|"
            r"golangci-lint|cargo\s+clippy|prettier\s+--check|black\s+--check)\b"
        ),
    ),
    (
        "command:build",
        re.compile(
            r"\b(?:(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?build|cargo\s+build|go\s+build|"
            r"make(?:\s+(?:build|all))?$|mvn\s+\S*package|gradle\w*\s+build|python3?\s+-m\s+build)\b"
        ),
    ),
)
_COMMIT = re.compile(r"^\[(?P<branch>[^\]\s]+)(?: \([^)]*\))? (?P<sha>[0-9a-f]{7,40})\]", re.M)
_PUSH = re.compile(r"^\s*(?:\+\s*)?[0-9a-f]{7,40}\.\.+[0-9a-f]{7,40}\s+\S+\s+->\s+(\S+)", re.M)
_REMEMBER = re.compile(
    r"^\s*(?:请)?(?:记住|记下|记一下|牢记|以后都|以后请|今后)[:：,，\s]*(?P<zh>.+)|"
    r"^\s*(?:please\s+)?(?:remember|note|keep\s+in\s+mind)(?:\s+that)?[:,\s]+(?P<en>.+)",
    re.IGNORECASE | re.DOTALL,
)
_KEEP_SKILL = re.compile(
    r"(?:保存|记|存|做|写|整理)(?:成|为|下来作为|作)?(?:一个)?\s*(?:技能|skill)|"
    r"\b(?:save|keep|make|turn)\s+(?:this|that|it|these\s+steps)\s+(?:as\s+|into\s+)?(?:a\s+)?skill\b",
    re.IGNORECASE,
)
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "notebook_path")
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.M)


# What a harness appends to a tool's output or a message for the model (Claude Code's
# reminders), or what pretends to be that: never part of a record, whoever wrote it.
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL | re.IGNORECASE)


def without_reminders(text: str) -> str:
    return _REMINDER.sub("", text) if "<system-reminder>" in text.casefold() else text


def clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


# Lines a harness wraps a command's output in (Codex): never the error worth quoting.
_WRAPPER = re.compile(
    r"^(?:Process exited with code -?\d+|Exit code: -?\d+|Wall time: .*|Output:|Chunk ID: .*|"
    r"Original token count: .*)$"
)
_ERRORISH = re.compile(
    r"error|exception|failed|failure|traceback|not found|no such|denied|invalid|cannot|"
    r"错误|失败|异常|找不到|不存在",
    re.IGNORECASE,
)


def error_line(text: str, limit: int = 20_000) -> str:
    """The line of a failed call's output that says what went wrong: the line of its error
    signature (`signatures.signature`), else the first that reads like an error, else the
    first that is not the harness's wrapper."""
    found = signature(text[:limit])
    if found is not None and found.family != "exit":
        return found.line
    lines = [line.strip() for line in text[:limit].splitlines()]
    lines = [line for line in lines if line and not _WRAPPER.match(line)]
    fallback = found.line if found is not None else (lines[0] if lines else "")
    return next((line for line in lines if _ERRORISH.search(line)), fallback)


# Commands that look and change nothing: between a failure and its fix they are the search
# for the remedy, not the remedy.
_INSPECTION = re.compile(
    r"^(?:sudo\s+)?(?:ls|ll|cat|less|more|head|tail|grep|rg|ag|find|fd|pwd|echo|printf|which|"
    r"type|whereis|env|printenv|stat|file|wc|tree|du|df|ps|id|whoami|uname|date|sed\s+-n|"
    r"jq|diff|"
    r"git\s+(?:status|log|diff|show|branch|remote(?:\s+-v)?|config\s+--get|rev-parse|blame)|"
    r"(?:npm|pnpm|yarn)\s+(?:ls|list|view|why|outdated)|pip3?\s+(?:show|list|freeze)|"
    r"go\s+(?:env|list|version)|cargo\s+tree|docker\s+(?:ps|images|inspect|logs)|"
    r"ssh-add\s+-[lL]|\S+\s+--version|\S+\s+--help)(?:\s|$)"
)


def is_inspection(command: str) -> bool:
    """Whether `command` only looks (lists, reads, searches, shows a status or a version)."""
    return bool(_INSPECTION.match(command.strip()))


class _Call:
    """What is kept of an open tool call."""

    __slots__ = ("command", "name", "paths", "seq")

    def __init__(self, name: str, command: str | None, paths: tuple[str, ...], seq: int) -> None:
        self.name = name
        self.command = command
        self.paths = paths
        self.seq = seq

    @property
    def signature(self) -> str:
        return (
            self.name + "\0" + (self.command if self.command is not None else "|".join(self.paths))
        )

    @property
    def head(self) -> str:
        """What a covering success must share with the failure: the command's program and
        first word (`pytest tests/a.py` covers `pytest tests/a.py -x`), or the file."""
        if self.command is not None:
            words = self.command.split()
            return self.name + "\0" + " ".join(words[:2])
        return self.name + "\0" + "|".join(self.paths)


class _Failure:
    __slots__ = ("call", "edits", "error", "full_error", "omitted", "remedy", "time")

    def __init__(self, call: _Call, error: str, full_error: str, time: int) -> None:
        self.call = call
        self.error = error
        self.full_error = full_error  # scanned whole when the record is made, then dropped
        self.edits: list[str] = []
        # what worked in between, in order: ("command", line) or ("edit", path)
        self.remedy: list[tuple[str, str]] = []
        self.omitted = 0  # remedy steps dropped past MAX_REMEDY (the oldest)
        self.time = time

    def step(self, kind: str, text: str) -> None:
        if (kind, text) in self.remedy:
            return
        self.remedy.append((kind, text))
        if len(self.remedy) > MAX_REMEDY:
            self.remedy.pop(0)
            self.omitted += 1


class Harvester:
    """Feed it a session's events in order (`feed`), then take the drafts (`finish`)."""

    def __init__(self, harness: str) -> None:
        self.harness = harnesses.HARNESSES.get(harness)
        self.pairer: Pairer[_Call] = Pairer()
        self.pending: OrderedDict[str, _Failure] = OrderedDict()
        self.drafts: dict[str, list[Draft]] = {kind: [] for kind in MAX_DRAFTS}
        self.dropped = dict.fromkeys(MAX_DRAFTS, 0)
        self.facts: dict[str, Draft] = {}  # the last of each subject in this session
        self.events = 0
        self.last_time = 0
        # the current turn: the person's request, what it proved, the commands that worked
        self.request: tuple[str, int] | None = None
        self.proofs: list[dict[str, object]] = []
        self.commands: list[str] = []
        self.proof_seq: int | None = None
        self.turns: dict[tuple[str, ...], int] = {}  # command heads of a turn → turns seen
        self.recurring: dict[tuple[str, ...], tuple[list[str], int, str]] = {}
        self.previous_commands: list[str] = []
        self.previous_request = ""  # the request the previous commands served
        self.keep_skill: tuple[str, int] | None = None
        # the newest requests (seq, text clipped), for the optional model pass
        self.requests: deque[tuple[int, str]] = deque(maxlen=MAX_REQUESTS)
        # the person's words, for the language dshkit's templates are written in
        self.tally = templates.Tally()

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        self.events += 1
        kind = event.get("type")
        seq = event.get("seq")
        seq = seq if isinstance(seq, int) else self.events
        when = event.get("time")
        if isinstance(when, int):
            self.last_time = max(self.last_time, when)
        if kind == "tool/call":
            self.pairer.call(event, self._open(event, seq))
        elif kind == "tool/result":
            call = self.pairer.result(event)
            if call is not None:
                self._result(call, event, seq)
        elif is_human_message(event):
            self._human(without_reminders(message_text(event)), seq)

    def feed_all(self, events: Iterable[Event]) -> Harvester:
        for event in events:
            self.feed(event)
        return self

    def _open(self, event: Event, seq: int) -> _Call:
        data = event.get("data") or {}
        name = str(data.get("name", ""))
        raw = data.get("arguments") or "{}"
        raw = raw if isinstance(raw, str) else orjson.dumps(raw).decode()
        arguments: dict[str, object] | str = raw
        if len(raw) <= ARGUMENT_BYTES:
            try:
                value = orjson.loads(raw)
                arguments = value if isinstance(value, dict) else raw
            except orjson.JSONDecodeError:
                pass
        command = None
        if (
            self.harness is not None
            and self.harness.is_tool(COMMAND, name)
            and isinstance(arguments, dict)
        ):
            line = harnesses.command_line(arguments)
            command = None if line is None else clip(" ".join(line.split()), COMMAND_CHARS)
        return _Call(name, command, _paths(arguments), seq)

    def _is_write(self, call: _Call) -> bool:
        return self.harness is not None and self.harness.is_tool(WRITE, call.name)

    def _result(self, call: _Call, event: Event, seq: int) -> None:
        output = without_reminders(message_text(event))
        failed = is_failed_result(event) or (
            call.command is not None
            and bool(
                _TESTS_FAILED.search(output)
                or _EXIT_STATUS.search(output[:2_000])
                or _EXIT_STATUS.search(output[-2_000:])
            )
        )
        when = int(event.get("time") or self.last_time or 0)
        if failed:
            error = output or str((event.get("data") or {}).get("error") or "")
            failure = _Failure(call, clip(error, DETAIL_CHARS), error, when)
            earlier = self.pending.get(call.signature)
            if earlier is not None:  # failed again: what was tried since the first still counts
                failure.edits, failure.remedy = earlier.edits, earlier.remedy
                failure.omitted = earlier.omitted
            self.pending[call.signature] = failure
            self.pending.move_to_end(call.signature)
            while len(self.pending) > MAX_PENDING:
                self.pending.popitem(last=False)
            return
        self._covered(call, seq, when)
        if self._is_write(call):
            for failure in self.pending.values():
                for path in call.paths:
                    if path not in failure.edits and len(failure.edits) < MAX_EDITS:
                        failure.edits.append(path)
                    failure.step("edit", path)
        elif call.command is not None and not is_inspection(call.command):
            for failure in self.pending.values():
                failure.step("command", call.command)
        if call.command is None:
            return
        if len(self.commands) < MAX_TURN_COMMANDS:
            self.commands.append(call.command)
        self._proofs(call, output, seq, when)

    def _covered(self, call: _Call, seq: int, when: int) -> None:
        found = self.pending.pop(call.signature, None)
        if found is None:
            head = call.head
            key = next((k for k, f in reversed(self.pending.items()) if f.call.head == head), None)
            found = None if key is None else self.pending.pop(key)
        if found is None:
            return
        failed = found.call
        what = failed.command or f"{failed.name} {', '.join(failed.paths)}".strip()
        fix = call.command or f"{call.name} {', '.join(call.paths)}".strip()
        found_signature = signature(found.full_error)
        if found_signature is not None and found_signature.family != "exit":
            line = found_signature.line
        else:
            line = error_line(found.full_error) or "（无输出）"
        shown = found_signature.short if found_signature is not None else line
        remedy = [{"kind": kind, "text": text} for kind, text in found.remedy]
        say = partial(
            templates.negative,
            f"`{clip(what, 160)}`",
            clip(shown, ERROR_CHARS),
            [
                (kind, f"`{clip(text, 120)}`" if kind == "command" else clip(text, 120))
                for kind, text in found.remedy
            ],
            f"`{clip(fix, 160)}`",
            seq,
        )
        detail: dict[str, object] = {
            "failed": clip(what, DETAIL_CHARS),
            "error": found.error,
            "errorLine": clip(line, ERROR_CHARS),
            "signature": None if found_signature is None else found_signature.as_json(),
            "remedy": remedy,
            "edits": found.edits,
            "fix": clip(fix, DETAIL_CHARS),
            "failedSeq": failed.seq,
            "fixedSeq": seq,
        }
        if found.omitted:
            detail["remedyOmitted"] = found.omitted
        self._add(
            Draft(
                NEGATIVE,
                say(templates.ZH),
                grade=TOOL,
                seq=failed.seq,
                valid_from=found.time or when,
                detail=detail,
                scanned=(found.full_error,),
                say=say,
            )
        )

    def _proofs(self, call: _Call, output: str, seq: int, when: int) -> None:
        command = call.command or ""
        proofs: list[dict[str, object]] = []
        if re.search(r"\bgit\b.*\bcommit\b", command) and (match := _COMMIT.search(output)):
            proofs.append({"kind": "commit", "sha": match["sha"][:7], "branch": match["branch"]})
        if re.search(r"\bgit\b.*\bpush\b", command) and (match := _PUSH.search(output)):
            proofs.append({"kind": "push", "to": match[1]})
        passed = next((m for p in _TESTS_PASSED if (m := p.search(output))), None)
        if passed is not None:
            proofs.append(
                {"kind": "tests", "passed": int(passed[1]), "command": f"`{clip(command, 80)}`"}
            )
            if _TEST_COMMAND.search(command):
                say = partial(templates.proven, "command:test", f"`{command}`", seq, int(passed[1]))
                self.facts["command:test"] = Draft(
                    FACT,
                    say(templates.ZH),
                    grade=TOOL,
                    seq=seq,
                    valid_from=when,
                    subject="command:test",
                    detail={"command": command, "passed": int(passed[1])},
                    scanned=(command,),
                    say=say,
                )
        for subject, pattern in _FACT_COMMANDS:
            if pattern.search(command) and not _TEST_COMMAND.search(command):
                say = partial(templates.proven, subject, f"`{command}`", seq, None)
                self.facts[subject] = Draft(
                    FACT,
                    say(templates.ZH),
                    grade=TOOL,
                    seq=seq,
                    valid_from=when,
                    subject=subject,
                    detail={"command": command},
                    scanned=(command,),
                    say=say,
                )
        if proofs:
            self.proofs.extend(p for p in proofs if p not in self.proofs)
            self.proof_seq = seq

    def _human(self, text: str, seq: int) -> None:
        self._end_turn()
        self.tally.add(text)
        when = self.last_time
        if match := _REMEMBER.match(text):
            said = (match["zh"] or match["en"] or "").strip()
            if said:
                about = topic(said)
                self._add(
                    Draft(
                        FACT,
                        clip(unscoped(said) or said, 400),
                        grade=PERSON,
                        seq=seq,
                        valid_from=when,
                        subject=about.subject,
                        detail=about.detail(),
                        scanned=(text,),
                    )
                )
        elif (changed := is_project_change(text)) is not None:
            # Not asked to be remembered, but a value of the project changed: the stale one
            # must not be given to the next session.
            self._add(
                Draft(
                    FACT,
                    clip(" ".join(text.split()), 400),
                    grade=PERSON,
                    seq=seq,
                    valid_from=when,
                    subject=changed.subject,
                    detail=changed.detail(),
                    scanned=(text,),
                )
            )
        if _KEEP_SKILL.search(text):
            self.keep_skill = (text, seq)
        self.request = (text, seq)
        self.requests.append((seq, clip(text, 400)))

    def _end_turn(self) -> None:
        """Close the current turn: its experience, its commands' recurrence, a skill asked for."""
        if self.request is not None and self.proofs:
            request, seq = self.request
            situation = clip(" ".join(first_line(request).split()), REQUEST_CHARS)
            proofs = self.proofs[:4]
            used = [f"`{clip(c, 80)}`" for c in _distinct(self.commands)[-3:]]

            def say(language: str, situation: str = situation) -> str:
                shown = [templates.proof(p, language) for p in proofs]
                return templates.experience(situation, shown, used, language)

            self._add(
                Draft(
                    EXPERIENCE,
                    say(templates.ZH),
                    grade=TOOL,
                    seq=self.proof_seq if self.proof_seq is not None else seq,
                    valid_from=self.last_time,
                    detail={
                        "requestSeq": seq,
                        "situation": situation,
                        "proofs": self.proofs[:8],
                        "commands": _distinct(self.commands)[-3:],
                    },
                    scanned=(request,),
                    say=say,
                )
            )
        heads = tuple(_distinct(" ".join(c.split()[:2]) for c in self.commands))
        if len(heads) >= 2:
            seen = self.turns.get(heads, 0) + 1
            if seen <= 1 and len(self.turns) >= 500:
                pass  # bounded: new sequences past this many are not tracked
            else:
                self.turns[heads] = seen
                if seen == 2 and len(self.recurring) < MAX_DRAFTS[SKILL]:
                    self.recurring[heads] = (
                        list(self.commands),
                        self.request[1] if self.request else 0,
                        self.request[0] if self.request else "",
                    )
        if self.keep_skill is not None:
            commands = self.commands or self.previous_commands
            if commands:
                text, seq = self.keep_skill
                served = text if self.commands else self.previous_request
                self._skill(commands, seq, requested=text, request=served)
                self.keep_skill = None
        if self.commands:
            self.previous_commands = self.commands
            self.previous_request = self.request[0] if self.request else ""
        self.request, self.proofs, self.commands, self.proof_seq = None, [], [], None

    def _skill(
        self, commands: list[str], seq: int, requested: str | None = None, request: str = ""
    ) -> None:
        made = draft_skill(_distinct(commands), requested=requested, request=request or requested)
        self._add(
            Draft(
                SKILL,
                made.summary,
                grade=PERSON if requested else TOOL,
                seq=seq,
                valid_from=self.last_time,
                subject="skill:" + made.name,
                detail={
                    "name": made.name,
                    "draft": made.text,
                    "commands": made.commands,
                    "evals": made.evals,
                },
                scanned=(requested or "", request, made.text),
            )
        )

    def _add(self, draft: Draft) -> None:
        kept = self.drafts[draft.kind]
        if any(d.text == draft.text for d in kept):
            return
        if len(kept) >= MAX_DRAFTS[draft.kind]:
            kept.pop(0)  # the newest are kept
            self.dropped[draft.kind] += 1
        kept.append(draft)

    # -- the end -------------------------------------------------------------------------

    def finish(self) -> list[Draft]:
        self._end_turn()
        for heads, (commands, seq, request) in self.recurring.items():
            if self.turns.get(heads, 0) >= 2:
                self._skill(commands, seq, request=request)
        for fact in self.facts.values():
            self._add(fact)
        found = [draft for kind in MAX_DRAFTS for draft in self.drafts[kind]]
        language = self.tally.language  # the session's, now that all its words were read
        for draft in found:
            if draft.say is not None:
                draft.text = draft.say(language)
                draft.detail["language"] = language
        return found


def _distinct(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _paths(arguments: dict[str, object] | str) -> tuple[str, ...]:
    if isinstance(arguments, str):
        return tuple(p.strip() for p in _PATCHED_FILE.findall(arguments))[:MAX_EDITS]
    found = [str(arguments[key]) for key in _PATH_KEYS if arguments.get(key)]
    patch = arguments.get("input") or arguments.get("patch")
    if not found and isinstance(patch, str):
        found = [p.strip() for p in _PATCHED_FILE.findall(patch)]
    return tuple(found[:MAX_EDITS])
