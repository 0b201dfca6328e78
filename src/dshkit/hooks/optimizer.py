"""The prompt optimizer on UserPromptSubmit: the person's words, refined, before the agent starts.

`auto`: the refined instruction reaches the agent as context clearly labelled as the refined
reading of the request (the harnesses cannot rewrite a prompt). `review`: the prompt is held
(blocked) and the person is shown the refined text and how to send it, or their own words.
A prompt starting with the skip prefix (`!` by default) goes on untouched, and so does any
prompt whose optimization fails or runs out of time: the agent is never kept waiting longer
than the optimizer's timeout, and never given half an instruction.
"""

from __future__ import annotations

from typing import Any

from ..optimizer import OptimizerService
from ..sessions import Refresh, default_sources
from .protocol import STORE_BUSY_TIMEOUT_S, HookInput

# The optimization's own deadline in a hook, whatever the settings say: inside the handler's
# budget in the registry, with room to store the run and answer.
HOOK_DEADLINE_S = 13.0
# Opens the context the agent gets (the model reads it, hence Chinese). DSH's bridge fires
# UserPromptSubmit again before each model step with the contexts so far as its prompt: a
# prompt carrying this label is such a firing, not the person speaking.
LABEL = "【dshkit：对用户这条请求的细化理解——依据原话、会话与项目文件整理；与原话冲突时以原话为准】"


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    prompt = hook.payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or LABEL in prompt:
        return None
    key = (hook.harness, hook.session_id) if hook.harness_info and hook.session_id else None
    # The harness's own sessions root is read for what is new (the session's latest
    # exchanges); a scan already running is not waited for: the agent is waiting.
    service = OptimizerService(
        hook.state_dir,
        sources=default_sources(hook.harness) if key else None,
        busy_timeout=STORE_BUSY_TIMEOUT_S,
    )
    given_cwd = hook.payload.get("cwd")
    cwd = given_cwd if isinstance(given_cwd, str) and given_cwd else None
    # A bad config raises: the runtime logs it.
    settings = service.settings(typed_in=key, project=cwd)
    if settings.tier == "off":
        return None
    if settings.skip_prefix and prompt.startswith(settings.skip_prefix):
        return None
    run = service.optimize(
        prompt,
        typed_in=key,
        cwd=cwd,
        refresh=Refresh.TRY,
        deadline_s=HOOK_DEADLINE_S,
    )
    if run.fallback or run.output == prompt:
        return None  # the raw words pass untouched
    if settings.permission == "review":
        return {"decision": "block", "reason": _review(run.id, run.output, settings.skip_prefix)}
    return {"additionalContext": f"{LABEL}\n{run.output}"}


def _review(run_id: int | None, output: str, prefix: str) -> str:
    send = f"paste it back prefixed with {prefix!r}" if prefix else "paste it back"
    return (
        f"dshkit held this prompt for review (optimizer run {run_id}). The refined instruction:"
        f"\n\n{output}\n\n"
        f"To send it, {send}. To send your own words instead, resend them"
        f"{f' prefixed with {prefix!r}' if prefix else ''}. "
        f"Afterwards: dshkit outcome {run_id} ok|rework."
    )
