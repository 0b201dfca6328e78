"""What a session has achieved and what is left, read from its evidence
(docs/design/graft.md#the-state-is-read-from-evidence).

A handoff carries results, not history. This module reads a session's events and returns its
*semantic state*: the results proven by the log, each with the `seq` that proves it (a `git
commit` with its sha, a `git push`, a test run with N passed, a file written); the one failure
no later success covered (the blocker); the artifacts written, for reuse; the open turn's
instructions not yet finished; the next steps the model planned; and true counts of what was
left out. Rendering it as a board is `board.py`'s job; nothing here is free text for the model.

The rules that decide the hard cases:
- The boundary is the end of the last finished turn (`turn/end`, or a turn followed by another
  or closed by the model's final answer). The turn after it is open: its instructions are in
  progress — including one the model has not answered yet, which is otherwise lost and makes
  the new session take the previous turn for the task (v7.4c).
- Failures are judged newest first: a failure followed by any proven result, or by a later
  success of the same call, was dealt with (`resolved`, dropped, counted); only the newest
  failure after the last success stays, as one line (the blocker). Older failures that
  nothing covered either are not carried but counted apart (`unresolved`): the disclosure
  never calls a failure covered that no success followed.
- Everything taken from the log passes `Extraction.text`, the one choke point for host noise
  (`noise.strip_host_noise`) and secrets (`provenance.secrets.redact`: a token in a command
  line becomes `[secret: <kind>]`), so no column can forget them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import harnesses
from ..harnesses import COMMAND, WRITE
from ..provenance.secrets import redact
from ..sessions.events import (
    Event,
    ToolCall,
    is_human_message,
    is_model_message,
    message_text,
    pair_tool_calls,
    todo_items,
)
from .constraints import split_sentences
from .identity import is_handoff_message, is_plugin_card, parse_identity
from .noise import strip_host_noise
from .wire import ItemJson, SlimmingJson

# The blocker is one line of at most this many characters
# (docs/design/graft.md#one-line-for-the-blocker).
BLOCKER_CHARS = 160
ITEM_CHARS = 200  # any other board item; longer ones point to their seq for the rest
REQUEST_LABEL = "**原始用户要求**："  # also how a target's card hands the request on
WROTE = "写入 "  # a done line proving a file was written

_COMMIT = re.compile(r"^\[(?P<branch>[^\]\s]+)(?: \([^)]*\))? (?P<sha>[0-9a-f]{7,40})\]", re.M)
_PUSH = re.compile(r"^\s*(?:\+\s*)?[0-9a-f]{7,40}\.\.+[0-9a-f]{7,40}\s+\S+\s+->\s+(\S+)", re.M)
_NEW_BRANCH = re.compile(r"^\s*\*\s+\[new branch\]\s+\S+\s+->\s+(\S+)", re.M)
_TESTS_PASSED = (  # test runners' own summary lines, with the count they passed
    re.compile(r"\b(\d+) passed\b"),  # pytest, jest/vitest "Tests: N passed"
    re.compile(r"^# pass (\d+)\s*$", re.M),  # node --test, TAP
    re.compile(r"test result: ok\. (\d+) passed"),  # cargo
    re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*\n+OK\b", re.M),  # unittest
    re.compile(r"\b(\d+)/\1 (?:全绿|通过|passed)"),
)
_TESTS_FAILED = re.compile(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|^# fail [1-9]|test result: FAILED",
    re.M,
)
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.M)
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "notebook_path")
# Sentences where the model says what it will do next (moved to the to-do column).
_NEXT_STEP = re.compile(
    r"(接下来|下一步|然后我|之后我|随后|稍后我|next,? i(?:'ll| will| need| should)|"
    r"then i(?:'ll| will)|i(?:'ll| will) (?:now |next )?(?:run|add|write|fix|update|commit))",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Item:
    """One line of the board and the seq of the event that proves or states it (None for a
    line with no single source, such as a todo's planned step)."""

    text: str
    seq: int | None

    def as_json(self) -> ItemJson:
        return {"text": self.text, "seq": self.seq}


@dataclass(slots=True)
class Slimming:
    """What the handoff left out, counted honestly (the disclosure line reads these)."""

    resolved_errors: int = 0  # failures a later success covered
    unresolved_errors: int = 0  # failures older than the blocker that nothing covered
    error_bodies: int = 0  # failure texts reduced to one line
    narration_chars: int = 0  # the model's own prose not carried over
    noise_paragraphs: int = 0  # host-only paragraphs replaced by a marker
    noise_tokens: int = 0  # host paths redacted inside project paragraphs
    outputs_folded: int = 0  # whole-disk scan output folded

    def as_json(self) -> SlimmingJson:
        return {
            "resolvedErrors": self.resolved_errors,
            "unresolvedErrors": self.unresolved_errors,
            "errorBodies": self.error_bodies,
            "narrationChars": self.narration_chars,
            "noiseParagraphs": self.noise_paragraphs,
            "noiseTokens": self.noise_tokens,
            "outputsFolded": self.outputs_folded,
        }


@dataclass(slots=True)
class SemanticState:
    """A session's results, work in progress and plan, with what proves each."""

    request: Item | None
    done: list[Item] = field(default_factory=list)  # newest first
    in_progress: list[Item] = field(default_factory=list)
    todo: list[Item] = field(default_factory=list)
    blocker: Item | None = None
    artifacts: list[Item] = field(default_factory=list)  # files written, newest first
    boundary_seq: int = -1  # the last event of the last finished turn (-1: none finished)
    turn: int = 0  # the harness's number of the last finished turn (0: none)
    open_turn_answered: bool = True  # False: the open turn's instruction has no reply yet
    slimming: Slimming = field(default_factory=Slimming)

    def pointers(self) -> int:
        """How many seqs the board cites (what can be read back)."""
        items = [self.request, self.blocker, *self.done, *self.in_progress, *self.todo]
        return len({item.seq for item in items if item is not None and item.seq is not None})


def boundary(events: Sequence[Event]) -> int:
    """The index of the last event of the last finished turn, or -1 when none finished.

    A turn is finished by its `turn/end`, by the start of the next turn, or — in logs that
    record no turn ends — by the model's final answer: an assistant message that is the last
    event and calls no tool. DSH writes what opens a turn (the inbox splice carrying its
    input) before that turn's `turn/start`: such events belong to the open turn, so the cut
    is the last `turn/end`, never the splice after it."""
    last_start = None
    for index in range(len(events) - 1, -1, -1):
        kind = events[index].get("type")
        if kind == "turn/end":
            return index
        if kind == "turn/start":
            if last_start is not None:  # an earlier turn, closed by no end: the next start
                break
            last_start = index
    tail = events[-1] if events else None
    if (
        tail is not None
        and tail.get("type") == "assistant/message"
        and not any(
            isinstance(block, dict) and block.get("type") == "tool-call"
            for block in ((tail.get("data") or {}).get("message") or {}).get("content") or ()
        )
        and last_start is not None
    ):
        return len(events) - 1
    return -1 if last_start is None else _before_opening(events, last_start)


_OPENS_TURN = frozenset({"agent/inbox/spliced"})  # written before the turn/start they open


def _before_opening(events: Sequence[Event], start: int) -> int:
    """The index of the last event before the turn starting at `start` and what opened it."""
    index = start - 1
    while index >= 0 and events[index].get("type") in _OPENS_TURN:
        index -= 1
    return index


class Extraction:
    """One pass over a session's events (see the module docstring for the rules)."""

    def __init__(self, events: Sequence[Event], harness: str, cwd: str) -> None:
        self.events = events
        self.harness = harnesses.get(harness)
        self.cwd = cwd
        self.slimming = Slimming()
        self.carried_prose = 0  # characters of the model's prose moved to the to-do column
        self._paths: dict[str, str] = {}  # a written path as the board shows it, stripped once

    def text(self, raw: str, limit: int = ITEM_CHARS, seq: int | None = None) -> str:
        """Text from the log, fit for the board: host noise stripped, whitespace folded to
        one line, and at most `limit` characters — a longer one says where the rest is."""
        stripped = strip_host_noise(raw, self.cwd)
        self.slimming.noise_paragraphs += stripped.paragraphs_dropped
        self.slimming.noise_tokens += stripped.tokens_redacted
        self.slimming.outputs_folded += stripped.outputs_folded
        # Before the fold and the clip: a secret cut in half is no longer found.
        line = " ".join(redact(stripped.text).text.split())
        if len(line) <= limit:
            return line
        more = f"…（全文见 seq={seq}）" if seq is not None else "…"
        return line[: max(0, limit - len(more))].rstrip() + more

    def run(self) -> SemanticState:
        events = self.events
        cut = boundary(events)
        pairing = pair_tool_calls(events)
        state = SemanticState(request=self._request())
        if cut >= 0:
            state.boundary_seq = int(events[cut].get("seq", cut))
            state.turn = _turn_number(events, cut)
        self._results(pairing.calls, state)
        self._open_turn(events[cut + 1 :], state)
        self._plan(events, state)
        self.slimming.narration_chars = max(0, _prose_chars(events) - self.carried_prose)
        state.slimming = self.slimming
        return state

    # -- the request ------------------------------------------------------------------------

    def _request(self) -> Item | None:
        """The person's first request; a target session's is the one its card handed on
        (dshkit's card, or the card DSH's handoff plugin seeded it with). An ignition prompt
        is handoff words, never the request."""
        for event in self.events:
            plugin_card = is_plugin_card(event)
            if not (plugin_card or is_human_message(event)):
                continue
            text = message_text(event)
            seq = event.get("seq")
            if plugin_card or parse_identity(text) is not None:  # the source's words, as given
                for line in text.splitlines():
                    line = line.strip()
                    if line.startswith(REQUEST_LABEL):
                        return Item(redact(line[len(REQUEST_LABEL) :].strip()).text, None)
                if plugin_card:
                    continue
                return None
            if is_handoff_message(text):
                continue
            if text.strip():
                return Item(self.text(text, seq=seq), seq)
        return None

    # -- results and failures, newest first -------------------------------------------------

    def _results(self, calls: list[ToolCall], state: SemanticState) -> None:
        succeeded: set[str] = set()  # calls (name + arguments) that succeeded later on
        proven_later = False
        paths: set[str] = set()  # files already listed (by a newer write)
        written: set[str] = set()  # their "written" lines, listed once too
        for call in reversed(calls):
            if call.result is None:
                continue
            signature = call.name + "\0" + str(call.call["data"].get("arguments", ""))
            seq = int(call.result.get("seq", call.result_index or 0))
            if self._failed(call):
                if proven_later or signature in succeeded:
                    self.slimming.resolved_errors += 1  # a later success covered it
                    continue
                if state.blocker is not None:
                    # Older than the blocker and nothing after it succeeded: not resolved,
                    # only not carried (one blocker line); counted apart, never as covered.
                    self.slimming.unresolved_errors += 1
                    continue
                state.blocker = Item(self._failure_line(call, seq), seq)
                self.slimming.error_bodies += 1
                continue
            succeeded.add(signature)
            found = self._proofs(call, seq)
            if found:
                proven_later = True
                state.done.extend(item for item in found if item.text not in written)
            for path in self._written(call):
                if path not in paths:  # written again later: the newest write is listed
                    paths.add(path)
                    state.artifacts.append(Item(path, seq))
            written.update(item.text for item in found if item.text.startswith(WROTE))

    def _failed(self, call: ToolCall) -> bool:
        if call.failed:
            return True
        if self.harness.is_tool(COMMAND, call.name) and call.result is not None:
            return bool(_TESTS_FAILED.search(message_text(call.result)))
        return False

    def _failure_line(self, call: ToolCall, seq: int) -> str:
        body = message_text(call.result) if call.result is not None else ""
        what = self._command(call) or call.name
        return self.text(f"{what} 失败：{failure_line(body)}", BLOCKER_CHARS, seq)

    def _arguments(self, call: ToolCall) -> dict[str, Any] | str:
        raw = call.call["data"].get("arguments") or "{}"
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return str(raw)  # a custom tool's raw input (Codex's apply_patch)
        return value if isinstance(value, dict) else str(raw)

    def _command(self, call: ToolCall) -> str | None:
        if not self.harness.is_tool(COMMAND, call.name):
            return None
        arguments = self._arguments(call)
        return harnesses.command_line(arguments) if isinstance(arguments, dict) else None

    def _proofs(self, call: ToolCall, seq: int) -> list[Item]:
        """The results a successful call proves, each as one board line."""
        command = self._command(call)
        if command is None or call.result is None:
            return [Item(f"{WROTE}{path}", seq) for path in self._written(call)]
        output = message_text(call.result)
        found = []
        if re.search(r"\bgit\b.*\bcommit\b", command) and (match := _COMMIT.search(output)):
            found.append(Item(f"git commit {match['sha'][:7]} 成功（{match['branch']}）", seq))
        if re.search(r"\bgit\b.*\bpush\b", command):
            target = _PUSH.search(output) or _NEW_BRANCH.search(output)
            if target:
                found.append(Item(f"git push 成功（→ {target[1]}）", seq))
            elif "Everything up-to-date" in output:
                found.append(Item("git push：远端已是最新", seq))
        for pattern in _TESTS_PASSED:
            if match := pattern.search(output):
                found.append(Item(f"测试 {match[1]} 个通过（{self.text(command, 80)}）", seq))
                break
        return found

    def _written(self, call: ToolCall) -> list[str]:
        """Files a successful write or edit call produced (workspace paths, noise-stripped)."""
        if not self.harness.is_tool(WRITE, call.name) or call.failed:
            return []
        arguments = self._arguments(call)
        if isinstance(arguments, str):
            paths = _PATCHED_FILE.findall(arguments)
        else:
            paths = [str(arguments[key]) for key in _PATH_KEYS if arguments.get(key)]
            patch = arguments.get("input") or arguments.get("patch")
            if not paths and isinstance(patch, str):
                paths = _PATCHED_FILE.findall(patch)
        return [self._path(path.strip()) for path in paths]

    def _path(self, raw: str) -> str:
        """A written path fit for the board; its host noise is counted once however often
        the path was written (the board lists it once)."""
        if raw not in self._paths:
            self._paths[raw] = self.text(raw)
        return self._paths[raw]

    # -- the open turn and the plan ---------------------------------------------------------

    def _open_turn(self, tail: Sequence[Event], state: SemanticState) -> None:
        """The open turn's own instructions: in progress (carried over, never dropped)."""
        answered = any(e.get("type") in ("assistant/message", "tool/call") for e in tail)
        for event in tail:
            if not is_human_message(event):
                continue
            text = message_text(event)
            if not text.strip() or is_handoff_message(text):
                continue
            seq = event.get("seq")
            line = self.text(text, seq=seq)
            state.in_progress.append(Item(line if answered else f"{line}（尚未回答）", seq))
            state.open_turn_answered = answered

    def _plan(self, events: Sequence[Event], state: SemanticState) -> None:
        """The latest todo list (its unfinished items) and, where the model wrote none, the
        next steps it announced in its last words."""
        todos, todo_seq = _latest_todos(events)
        known = {item.text for item in state.in_progress}
        for item in todos:
            text = self.text(str(item.get("content", item.get("step", ""))))
            if not text or text in known:
                continue
            status = item.get("status")
            if status == "in_progress":
                state.in_progress.append(Item(text, todo_seq))
            elif status != "completed":
                state.todo.append(Item(text, todo_seq))
            known.add(text)
        if todos:
            return
        cut = boundary(events)
        # Only what a model wrote: a harness's stand-in ("No response requested.") is nobody's
        # last words, and taking it for them loses the step the model announced before it.
        said = [e for e in events[cut + 1 :] if is_model_message(e)]
        if not any(_NEXT_STEP.search(message_text(e)) for e in said):
            # the open turn announced nothing: the model's last words before it
            last = next(
                (
                    e
                    for e in reversed(events[: cut + 1])
                    if is_model_message(e) and message_text(e).strip()
                ),
                None,
            )
            said = [] if last is None else [last]
        seen: set[str] = set()
        for event in said:
            seq = event.get("seq")
            for sentence in split_sentences(message_text(event)):
                if not _NEXT_STEP.search(sentence):
                    continue
                self.carried_prose += len(sentence)
                line = self.text(sentence, seq=seq)
                if line not in seen:
                    seen.add(line)
                    state.todo.append(Item(line, seq))


def failure_line(output: str) -> str:
    """The line of a failed command's output that says what failed: the first naming an
    error (`vitepress: not found`, `ModuleNotFoundError: …`), else the first one that merely
    says it failed, else the first line that is not a runner's banner (npm's `> app@1.4.0
    build`, a shell's echo of the command)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in _FAILURE_LINES:
        found = next((line for line in lines if pattern.search(line)), None)
        if found is not None:
            return found
    plain = next((line for line in lines if not _BANNER.match(line)), None)
    return plain or (lines[0] if lines else "（无输出）")


# What says what failed, strongest first.
_FAILURE_LINES = (
    re.compile(
        r"not found|No such file|cannot find|can't find|Cannot find module|not recognized|"
        r"Permission denied|\b\w*(?:Error|Exception)\b|\bERR!|\berror\b|\bfatal\b|"
        r"错误|找不到|无法|不存在",
        re.IGNORECASE,
    ),
    re.compile(r"\bfail(?:ed|ing|ure)?\b|失败|exit (?:code|status) [1-9]", re.IGNORECASE),
)
_BANNER = re.compile(r"^(?:> \S+@\S+ \S+|> |\$ |\+ )")


def _prose_chars(events: Sequence[Event]) -> int:
    return sum(len(message_text(e)) for e in events if e.get("type") == "assistant/message")


def _turn_number(events: Sequence[Event], index: int) -> int:
    """The harness's number of the turn the event at `index` belongs to (0 before any)."""
    for event in reversed(events[: index + 1]):
        number = (event.get("data") or {}).get("turn")
        if isinstance(number, int):
            return number
    return 0


def _latest_todos(events: Sequence[Event]) -> tuple[list[dict[str, Any]], int | None]:
    """The newest todo list and its seq."""
    for event in reversed(events):
        items = todo_items(event)
        if items is not None:
            return items, event.get("seq")
    return [], None


def extract_semantic_state(events: Sequence[Event], harness: str, cwd: str) -> SemanticState:
    """The session's semantic state (see the module docstring)."""
    return Extraction(events, harness, cwd).run()
