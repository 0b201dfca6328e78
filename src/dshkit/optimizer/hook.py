"""The prompt optimizer on UserPromptSubmit, the optimizer's hook face: the person's words,
refined, before the agent starts.

`auto`: the refined instruction reaches the agent as context clearly labelled as the refined
reading of the request (the harnesses cannot rewrite a prompt). `review`: the prompt is held
(blocked) and the person is shown the refined text and how to send it, or their own words.
dshkit's prefix (`》` unless configured, never one the harness gives a meaning to) sends a
prompt untouched; the prefix and `ok` or `rework` alone marks the session's last run and
reaches no agent. Every prompt is recorded as a run, those that asked no model too (tier
off, the prefix, a bare continuation or a harness command, which need none). A prompt whose
optimization fails or runs out of time goes on as typed: the agent is never kept waiting
longer than the optimizer's timeout or the prompt's wall budget (`[optimizer] budget_s`),
and never given half an instruction.

Every prompt a model was asked about gets one line for the person, through the harness's
visible channel (`Answer.notice`, the dialect's `notice`): that the prompt was refined (the
tier, the time, how to mark a miss, where the whole text is), or that it went on as typed
and why (the model stalled, the budget ran out, …). The agent's context, label included,
follows the person's language (`language`).

Where the harness asks before every model step (DSH's bridge), only a person's new prompt
is one: a step of the turn under way (`Call.is_step`) is left alone, no run recorded,
no model asked, no mark read.
"""

from __future__ import annotations

import time

from ..errors import NotFound
from ..hookio import STORE_BUSY_TIMEOUT_S, Answer, Call
from .language import FIXED, language_of
from .service import OptimizerService

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .runs import Run
    from .settings import Settings

# The optimization's own deadline in a hook, whatever the settings say: inside the handler's
# budget in the registry, with room to store the run and answer.
HOOK_DEADLINE_S = 13.0
# Opens the context the agent gets, in the person's language (LABEL: the Chinese one). A
# prompt carrying one is a step's contexts so far, never the person speaking, whatever the
# turn's record says.
LABEL = FIXED["zh"].label
LABELS = tuple(fixed.label for fixed in FIXED.values())
# Where the whole refined text is, for the person.
SHOW = "dshkit runs show last"


def on_prompt(call: Call) -> Answer | None:
    started = time.monotonic()
    prompt = call.payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or any(x in prompt for x in LABELS):
        return None
    if call.is_step:
        return None
    # A bad config (a prefix this harness gives a meaning to, too) raises: the runtime logs it.
    key, harness, cwd, service, settings = _session_settings(call)
    prefix = settings.skip_prefix_for(harness)
    if prompt.startswith(prefix):
        told = prompt[len(prefix) :].strip().lower()
        if told in MARKS:
            return _mark(service, key, MARKS[told], prefix)
        sent = service.prefixed(prompt[len(prefix) :], key)
        service.record_passed(prompt, settings, sent, typed_in=key, cwd=cwd, started=started)
        return None
    why = service.passes(prompt, settings, harness)
    if why is not None:
        service.record_passed(prompt, settings, why, typed_in=key, cwd=cwd, started=started)
        return None
    from ..sessions import Refresh, default_sources  # (the scanner: only for a model call)

    # The harness's own sessions root is read for what is new (the session's latest
    # exchanges); a scan already running is not waited for: the agent is waiting.
    sources = default_sources(call.harness) if key else None
    service = OptimizerService(call.state_dir, sources=sources, busy_timeout=STORE_BUSY_TIMEOUT_S)
    budget = min(HOOK_DEADLINE_S, settings.budget_s)
    run = service.optimize(
        prompt, typed_in=key, cwd=cwd, refresh=Refresh.TRY, deadline_s=budget, started=started
    )
    took = f"{run.timings.get('totalMs', 0) / 1000:.1f} s"
    if run.fallback:  # the raw words pass untouched
        limit = min(budget, settings.timeout_s)
        return Answer(
            "optimizer",
            notice=f"dshkit sent your prompt as typed: {_why(run, limit, settings.stall_s)}",
        )
    if run.output == prompt:
        said = f"dshkit left your prompt as typed: the model had nothing to add ({took})"
        return Answer("optimizer", notice=said)
    if settings.permission == "review":
        return Answer("optimizer", decision=("block", _review(run.id, run.output, prefix)))
    label = FIXED[run.language or language_of(prompt)].label
    notice = (
        f"dshkit refined your prompt ({run.tier}, {took}) · `{prefix}rework` if it missed · "
        f"the whole text: {SHOW}"
    )
    return Answer("optimizer", f"{label}\n{run.output}", notice=notice)


def words_free(call: Call) -> list[str] | None:
    """For the lean foreground (`dshkit.hooks.lean`): when `on_prompt`'s answer to this
    session's prompts does not depend on their words, the prefixes of the words it would
    still answer (its marks, after dshkit's prefix); None when the words matter (a tier that
    may ask a model). With the tier off every other prompt goes on as typed: no answer."""
    from .strategies import PASSTHROUGH_TIER

    _, harness, _, _, settings = _session_settings(call)
    if settings.tier != PASSTHROUGH_TIER:
        return None
    return [settings.skip_prefix_for(harness)]


def _session_settings(
    call: Call,
) -> tuple[tuple[str, str] | None, str | None, str | None, OptimizerService, Settings]:
    """What both `on_prompt` and `words_free` read of a call: the session's key (None: no
    known harness or session), its harness, its working directory, the service, and the
    settings in force for that session and project."""
    key = (call.harness, call.session_id) if call.harness_info and call.session_id else None
    harness = call.harness if call.harness_info else None
    service = OptimizerService(call.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)
    given_cwd = call.payload.get("cwd")
    cwd = given_cwd if isinstance(given_cwd, str) and given_cwd else None
    return key, harness, cwd, service, service.settings(typed_in=key, project=cwd)


def _why(run: Run, limit: float, stall_s: float) -> str:
    """Why the raw words went on, for the person, with how long they waited (`limit`: the
    seconds the prompt could wait, the budget or the timeout, whichever is shorter)."""
    took = run.timings.get("totalMs", 0) / 1000
    outcome, _, detail = (run.fallback or "").partition(": ")
    if outcome == "stall":
        return f"the model stalled: nothing for {stall_s:g} s (waited {took:.1f} s)"
    if outcome == "deadline":
        return f"the model did not finish within the {limit:g} s budget (waited {took:.1f} s)"
    if outcome == "no-llm":
        return "no model is configured (dshkit doctor says what to set)"
    if outcome == "empty":
        return f"the model's answer held nothing for the agent (waited {took:.1f} s)"
    failed = _short(detail, 80)[1:-1]
    return f"the model call failed, {outcome}: {failed} (waited {took:.1f} s) · {SHOW}"


# What may follow the prefix to mark the last run (the whole prompt).
MARKS = {"ok": "ok", "成": "ok", "好": "ok", "rework": "rework", "返工": "rework"}


def _mark(
    service: OptimizerService, key: tuple[str, str] | None, outcome: str, prefix: str
) -> Answer:
    """Mark the session's last run; the prompt is held (it was meant for dshkit)."""
    if key is None:
        said = "dshkit cannot tell which session this is, so no run was marked."
    else:
        try:
            run = service.mark_last(key, outcome)
        except NotFound as exc:
            said = f"dshkit marked nothing: {exc}."
        else:
            said = (
                f"dshkit marked optimizer run {run.id} ({run.tier}: {_short(run.raw)}) "
                f"{outcome}. Marking again replaces it: {prefix}ok or {prefix}rework."
            )
    return Answer("optimizer", decision=("block", f"{said} This prompt was not sent to the agent."))


def _short(text: str, most: int = 40) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= most else line[: most - 1] + "…")


def _review(run_id: int | None, output: str, prefix: str) -> str:
    return (
        f"dshkit held this prompt for review (optimizer run {run_id}). The refined instruction:"
        f"\n\n{output}\n\n"
        f"To send it, paste it back prefixed with {prefix!r}. To send your own words instead, "
        f"resend them prefixed with {prefix!r}. "
        f"When the agent is done, mark how it went: {prefix}ok (right in one pass) or "
        f"{prefix}rework, or dshkit outcome {run_id} ok|rework."
    )
