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
longer than the optimizer's timeout, and never given half an instruction.

Where the harness asks before every model step (DSH's bridge), only a person's new prompt
is one: a step of the turn under way (`Call.is_step`) is left alone, no run recorded,
no model asked, no mark read.
"""

from __future__ import annotations

import time

from ..errors import NotFound
from ..hookio import STORE_BUSY_TIMEOUT_S, Answer, Call
from .service import OptimizerService

# The optimization's own deadline in a hook, whatever the settings say: inside the handler's
# budget in the registry, with room to store the run and answer.
HOOK_DEADLINE_S = 13.0
# Opens the context the agent gets (the model reads it, hence Chinese). A prompt carrying it
# is a step's contexts so far, never the person speaking, whatever the turn's record says.
LABEL = "【dshkit：对用户这条请求的细化理解——依据原话、会话与项目文件整理；与原话冲突时以原话为准】"


def on_prompt(call: Call) -> Answer | None:
    started = time.monotonic()
    prompt = call.payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or LABEL in prompt:
        return None
    if call.is_step:
        return None
    key = (call.harness, call.session_id) if call.harness_info and call.session_id else None
    harness = call.harness if call.harness_info else None
    service = OptimizerService(call.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)
    given_cwd = call.payload.get("cwd")
    cwd = given_cwd if isinstance(given_cwd, str) and given_cwd else None
    # A bad config (a prefix this harness gives a meaning to, too) raises: the runtime logs it.
    settings = service.settings(typed_in=key, project=cwd)
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
    run = service.optimize(
        prompt,
        typed_in=key,
        cwd=cwd,
        refresh=Refresh.TRY,
        deadline_s=HOOK_DEADLINE_S,
        started=started,
    )
    if run.fallback or run.output == prompt:
        return None  # the raw words pass untouched
    if settings.permission == "review":
        return Answer("optimizer", decision=("block", _review(run.id, run.output, prefix)))
    return Answer("optimizer", f"{LABEL}\n{run.output}")


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
