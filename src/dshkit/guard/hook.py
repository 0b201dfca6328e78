"""The command risk policy on PreToolUse, the guard's hook face: an agent's shell command that
is destructive, opaque or a global search is denied or sent for approval before it runs, per
`[guard] mode` and the person's own allow and deny rules.

It answers in every case: a call it cannot judge (a payload of the wrong shape, cut short or
unparsable: see `unjudged`) gets the decision for opaque code, never silence; settings it
cannot read (a broken config.toml, no state directory at all) are the strict mode. Where the
harness does not honour `ask` (the registry says), an ask goes out as a deny saying how to
run the command anyway. A deny ends with what can be done instead, by the kind of harm that
decided it. Every text follows the person's language (guard/texts.py), read from their newest
message only for a call denied or asked about.
"""

from __future__ import annotations

import os
import sys

from .. import harnesses
from ..hookio import Answer, Call
from .policy import DESTRUCTIVE, GLOBAL_SEARCH, OPAQUE, SAFE, TABLE, UNKNOWN, Kind, decide

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from typing import Any

    from ..hookio import Commit
    from ..store import Store
    from .rules import Rules
    from .service import Classification
    from .wire import RuleJson

    # What could not be read of the settings or the call: (texts.py key, its fields) each,
    # said in the person's language only once the call is denied or asked about.
    Notes = tuple[tuple[str, dict[str, str]], ...]

_STRICT = "strict"


def on_command(call: Call) -> Answer | None:
    """A shell command; a Codex patch run through the shell tool (`["apply_patch", patch]`,
    or `apply_patch <<EOF` in a line) is judged as the patch it is too, the stricter winning."""
    tool_input = call.payload.get("tool_input")
    given = (
        tool_input.get("command", tool_input.get("cmd")) if isinstance(tool_input, dict) else None
    )
    patch = _patch_run(given)
    if patch is None:
        return _on_shell(call)
    from .edits import patch_answer

    patched = patch_answer(call, patch)
    if isinstance(given, list):  # argv: the patch program and its patch, no shell at all
        return patched
    return max((patched, _on_shell(call)), key=_answer_strictness)


def _patch_run(given: object) -> str | None:
    """The patch a shell tool's command hands to Codex's apply_patch, or None."""
    programs = ("apply_patch", "applypatch")
    if isinstance(given, list) and len(given) == 2 and all(isinstance(g, str) for g in given):
        program, patch = given
        return str(patch) if program in programs and "*** Begin Patch" in patch else None
    if (
        isinstance(given, str)
        and given.lstrip().startswith(programs)
        and "*** Begin Patch" in given
    ):
        return given
    return None


def _answer_strictness(answer: Answer | None) -> int:
    return -1 if answer is None or answer.decision is None else _strictness(answer.decision[0])


def _on_shell(call: Call) -> Answer | None:
    from .service import classify_sent  # (the judge: not for a file tool's call)

    tool_input = call.payload.get("tool_input")
    if tool_input is None:
        return None  # no command: nothing runs
    if not isinstance(tool_input, dict):
        return unjudged(call, "why.input")
    command = harnesses.command_line(tool_input)
    if command is None:
        if tool_input.get("command", tool_input.get("cmd")) is None:
            return None
        return unjudged(call, "why.command")
    cwd = call.payload.get("cwd")
    workdir = tool_input.get("workdir")
    platform = call.payload.get("platform")  # the harness's, when it says; it runs here
    misshapen = cwd is not None and not isinstance(cwd, str)
    workspace = cwd if isinstance(cwd, str) and cwd else None
    mode, rules, problem = _settings(call, workspace)
    found = classify_sent(  # the shell: from the tool's name, the platform and the line
        command,
        call.tool_name,
        workspace,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
        platform=platform if isinstance(platform, str) else sys.platform,
        rules=rules,
    )
    decision = found.decision(mode)
    loosens = None
    if found.judge is not None and "dshkit" in command:
        from .own import loosening

        loosens = loosening(found.judge.seen)
    if (
        loosens is None
        and found.judge is not None
        and workspace
        and (">" in command or "tee" in command)
    ):
        from .edits import places_for
        from .own import shell_writes

        places = places_for(call)
        shell = "pwsh" if found.judge.seen and found.judge.seen[0].shell == "pwsh" else "bash"
        if places is not None:
            loosens = shell_writes(found, command, shell, places)
    if loosens is not None:  # the agent's own guard or start-up rewritten: as a file tool's
        decision = max(decision, decide(DESTRUCTIVE, False, mode), key=_strictness)
    if misshapen:  # where it runs is not known: never looser than a command it cannot see
        decision = max(decision, decide(UNKNOWN, False, mode, True), key=_strictness)
        problem = (("note.cwd", {}), *problem)
    if decision == "allow":
        return None
    traced = classify_sent(  # again, traced: the rule that decided (never for an allow)
        command,
        call.tool_name,
        workspace,
        platform=platform if isinstance(platform, str) else sys.platform,
        rules=rules,
        traced=True,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
    )
    rule = _rule(traced)
    from .intent import Person
    from .texts import join, say

    person = Person(call)  # the person's newest message: read only now, at most once
    relaxed = None
    if decision == "deny" and found.denied is None and not misshapen:
        from .intent import relaxing

        relaxed = relaxing(person, traced)  # the person's own latest words asked for it
        if relaxed is not None:
            decision = "ask"
    language = person.language()
    verb, noted = say(language, decision), _noted(language, problem)
    if loosens is not None and found.denied is None and decision != found.decision(mode):
        own = say(language, "own_guard", mode=mode, verb=verb, loosens=loosens)
        advice = _advice_of(language, Kind.CONFIG) if decision == "deny" else ""
        reason = join(language, [own, noted, advice])
        decision, reason = _delivered(call, decision, reason, language)
        commit = audited(call, decision, command, DESTRUCTIVE, mode, reason=loosens,
                         builtin="own-guard")  # fmt: skip
        return Answer("guard", decision=(decision, reason), commit=commit)
    if found.denied is not None:
        words = next(c for p, c in found.judge.denied if p is found.denied) if found.judge else None
        shown = " ".join([words.name, *(w.shown for w in words.args)]) if words else command
        denied = say(language, "person_rule", pattern=repr(found.denied.text),
                     origin=found.denied.origin, shown=shown)  # fmt: skip
        reason = join(language, [denied, noted, say(language, "rule_advice")])
    else:
        what = say(language, "what.leak" if found.leak is not None else f"risk.{found.risk}")
        what += say(language, "what.global_search") if found.global_search else ""
        what += say(language, "what.opaque") if found.opaque else ""
        said = say(language, "command", mode=mode, verb=verb, what=what, reason=found.reason,
                   rule=_rule_said(language, rule))  # fmt: skip
        parts = [said, noted]
        if relaxed is not None:
            asked = say(language, f"relaxed.{relaxed}")
            parts.append(say(language, "relaxed", asked=asked))
        if decision == "deny":
            parts.append(_advice(language, found, mode))
        elif found.kind in Kind.ALL and found.kind != Kind.UNKNOWN:  # (its advice is strict's)
            from .texts import without_by_hand

            safer = without_by_hand(language, _kind_advice(language, found))  # (for the one asked)
            parts.append(join(language, [say(language, "safer"), safer]))
        reason = join(language, parts)
    decision, reason = _delivered(call, decision, reason, language)
    commit = audited(
        call,
        decision,
        command,
        found.risk,
        mode,
        relaxed=relaxed is not None,
        reason=found.reason,
        rule=rule.get("pattern"),  # the person's rule that decided, else the built-in one
        builtin=None if "pattern" in rule else rule.get("name"),
        words=rule.get("command"),
        globalSearch=found.global_search,
        opaque=found.opaque,
    )
    return Answer("guard", decision=(decision, reason), commit=commit)


def audited(
    call: Call,
    decision: str,
    command: str,
    risk: str,
    mode: str,
    *,
    relaxed: bool = False,
    **detail: Any,
) -> Commit:
    """The commit that logs a decision once it reached the harness (guard/audit.py: redacted,
    per workspace, bounded)."""
    cwd = call.payload.get("cwd")

    def commit(store: Store) -> None:
        from .audit import kind_of, record

        record(
            store,
            kind_of(decision, relaxed),
            harness=call.harness,
            session_id=call.session_id or None,
            command=command,
            workspace=cwd if isinstance(cwd, str) and cwd else None,
            risk=risk,
            mode=mode,
            **detail,
        )

    return commit


def _rule(traced: Classification) -> RuleJson:
    """The rule that decided a traced classification (service.explain's)."""
    from .service import explain

    record = explain(traced)
    return record.get("rule") or {"kind": "builtin", "name": "none"}


def _rule_said(language: str, rule: RuleJson) -> str:
    """The rule named for the agent: the built-in rule and the command it judged."""
    from .texts import say

    if "pattern" in rule:
        said = say(language, "rule.person", pattern=repr(rule["pattern"]))
    else:
        said = say(language, "rule.builtin", name=rule.get("name") or "?")
    words = rule.get("command")
    return say(language, "rule.judged", rule=said, words=" ".join(words)) if words else said


def on_write(call: Call) -> Answer | None:
    """A write, an edit or a Codex patch: where it lands (guard/edits.py)."""
    from .edits import on_write as judged

    return judged(call)


def on_read(call: Call) -> Answer | None:
    """A read: whether it opens a credential file (guard/edits.py)."""
    from .edits import on_read as judged

    return judged(call)


def on_tool(call: Call) -> Answer | None:
    """Any other tool (MCP's): whether its name says it deletes (guard/edits.py)."""
    from .edits import on_tool as judged

    return judged(call)


def unjudged(call: Call, why: str) -> Answer | None:
    """The answer to a shell command the guard could not read (`why`: a `why.…` key of
    texts.py, or the dispatcher's sentence in Chinese): the mode's decision for code it
    cannot see, None only if that were allow. In the person's language for the guard's own
    keys; the dispatcher's (a payload it could not parse, a judge out of time or failing)
    stays Chinese: it answers within its last second, which a transcript read must not spend."""
    mode, _, problem = _settings(call, None)
    decision = decide(UNKNOWN, False, mode, True)
    if decision == "allow":
        return None
    from .intent import language as of
    from .texts import join, say
    from .texts import why as why_in

    language = of(call) if why.startswith("why.") else "zh"
    said = say(language, "unjudged", mode=mode, verb=say(language, decision),
               why=why_in(language, why))  # fmt: skip
    by_hand = say(language, "by_hand") if decision == "deny" else ""
    reason = join(language, [said, _noted(language, problem), by_hand])
    decision, reason = _delivered(call, decision, reason, language)
    return Answer("guard", decision=(decision, reason))


def _advice(language: str, found: Classification, mode: str) -> str:
    """What can be done instead, for each part of `found` whose row denies it under `mode`:
    its kind of harm, a global search, code it cannot see."""
    from .texts import join, say

    parts = []
    if found.risk != SAFE and TABLE[found.risk][mode] == "deny":
        parts.append(_kind_advice(language, found))
    if found.global_search and TABLE[GLOBAL_SEARCH][mode] == "deny":
        parts.append(say(language, "search_advice"))
    if found.opaque and TABLE[OPAQUE][mode] == "deny":
        parts.append(_advice_of(language, Kind.OPAQUE))
    joined = join(language, list(dict.fromkeys(parts)))
    return joined or say(language, "by_hand")  # (a deny for a cwd it cannot read)


def _kind_advice(language: str, found: Classification) -> str:
    """The advice of the deciding finding's kind; a leak's names what would leave and where
    to."""
    if found.leak is not None:
        from .leaks import said

        return said(*found.leak, language)
    return _advice_of(language, found.kind)


def _advice_of(language: str, kind: str) -> str:
    from .texts import advice

    return advice(language, kind)


def _noted(language: str, problem: Notes) -> str:
    """The notes of what could not be read, in `language`."""
    from .texts import join, say

    return join(language, [say(language, key, **values) for key, values in problem])


def _delivered(call: Call, decision: str, reason: str, language: str) -> tuple[str, str]:
    """The decision as this harness can take it: an ask where ask is not honoured (or the
    harness is not known) is a deny, whose reason says how to run the command anyway."""
    info = call.harness_info
    if decision != "ask" or (info is not None and info.honours_ask):
        return decision, reason
    from .texts import join, say

    if info is not None:
        said = say(language, "no_ask", label=info.label)
    else:
        said = say(language, "no_ask.unknown")
    return "deny", join(language, [reason, said, say(language, "how_to_run")])


def _strictness(decision: str) -> int:
    return ("allow", "ask", "deny").index(decision)


def _settings(call: Call, workspace: str | None) -> tuple[str, Rules | None, Notes]:
    """The mode (`guard.service.mode_state`, the one rule the CLI and the console show too),
    the person's rules for `workspace` and a note when what decides cannot be read. Without a
    config file or an override the config module (TOML, dataclasses) is never loaded: this
    runs on every shell command. No state directory (a relative DSH_HOME or --state-dir) is no
    settings: the strictest."""
    try:
        path = _config_file(call)
    except Exception as exc:  # Invalid, caught broadly: the hot path imports no error tree
        field = getattr(exc, "field", None)
        named = "--state-dir" if field == "state_dir" else field or "DSH_HOME"
        return _STRICT, None, (("note.relative", {"named": named, "error": str(exc)}),)
    from .service import mode_state

    state = mode_state(os.path.dirname(path), call.env)  # the one rule: what the CLI shows
    section, rules = state.section, None
    if section is not None and (section["allow"] or section["deny"] or section["projects"]):
        from .service import rules_for

        rules = rules_for(section, workspace, path) or None
    if state.problem:  # what was to decide the mode cannot be read: strict, and said why
        what = "note.config" if state.source == "unreadable" else "note.mode"
        return state.mode, rules, ((what, {"problem": state.problem}),)
    return state.mode, rules, ()


def _config_file(call: Call) -> str:
    """<state dir>/config.toml, the state directory spelled as the entry point spells it
    (`Call.state`): a string, since `call.state_dir` would load pathlib (milliseconds) for
    every command."""
    return os.path.join(call.state, "config.toml")
