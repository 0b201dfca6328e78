"""The prompt optimizer on UserPromptSubmit: the person's words, refined, before the agent starts.

`auto`: the refined instruction reaches the agent as context clearly labelled as the refined
reading of the request (the harnesses cannot rewrite a prompt). `review`: the prompt is held
(blocked) and the person is shown the refined text and how to send it, or their own words.
A prompt starting with the skip prefix (`!` by default) goes on untouched, and so does any
prompt whose optimization fails or runs out of time: the agent is never kept waiting longer
than the optimizer's timeout, and never given half an instruction.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from typing import Any

from ..llm import LLMConfig
from ..optimizer.pipeline import optimize
from ..optimizer.settings import settings_for
from ..sessions import Catalog, Scanner, default_sources
from ..store import LeaseBusy
from .protocol import HookInput

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
    with hook.open_store() as store:
        key = (hook.harness, hook.session_id) if hook.harness_info and hook.session_id else None
        settings = settings_for(store, key)  # a bad config raises: the runtime logs it
        if settings.tier == "off":
            return None
        if settings.skip_prefix and prompt.startswith(settings.skip_prefix):
            return None
        llm = LLMConfig.load(store.state_dir)
        llm.check()
        if key is not None:
            _catch_up(store, key[0])
        known = key if key is not None and Catalog(store).get(key) else None
        cwd = hook.payload.get("cwd")
        run = optimize(
            store,
            prompt,
            replace(settings, timeout_s=min(settings.timeout_s, HOOK_DEADLINE_S)),
            llm,
            session=known,
            cwd=cwd if isinstance(cwd, str) else None,
        )
    if run.fallback or run.output == prompt:
        return None  # the raw words pass untouched
    if settings.permission == "review":
        return {"decision": "block", "reason": _review(run.id, run.output, settings.skip_prefix)}
    return {"additionalContext": f"{LABEL}\n{run.output}"}


def _catch_up(store: Any, harness: str) -> None:
    """Read what is new in the harness's own sessions root, so the session's latest
    exchanges are there; a scan already running is not waited for."""
    with suppress(LeaseBusy):
        Scanner(store).scan(default_sources(harness), wait=0)


def _review(run_id: int | None, output: str, prefix: str) -> str:
    send = f"paste it back prefixed with {prefix!r}" if prefix else "paste it back"
    return (
        f"dshkit held this prompt for review (optimizer run {run_id}). The refined instruction:"
        f"\n\n{output}\n\n"
        f"To send it, {send}. To send your own words instead, resend them"
        f"{f' prefixed with {prefix!r}' if prefix else ''}. "
        f"Afterwards: dshkit outcome {run_id} ok|rework."
    )
