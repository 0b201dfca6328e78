"""Codex CLI rollout lines as dshkit's events: the mapping the Codex adapter applies
(`sessions.codex`), importable on the hot path (no orjson, dataclasses or `re`): graft's fold
maps a rollout's new lines with it (`harnesses.EventLog.mapping`).

Lines are `{timestamp, type, payload}`. Human speech is a `response_item` user message whose
content items have `user` provenance; Codex's own user-role blocks (`<environment_context>`,
AGENTS.md, …) and `developer` messages are context, not speech. A rollout another agent
started says so in its first `session_meta` (`source` `{"subagent": …}` for a review, a
compaction or a spawned thread, `{"internal": …}`; `thread_source` `subagent`): its prompts
are that agent's (docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons). Usage is
reported apart from messages (`token_usage_record`, or `event_msg/token_count` in versions
without it).
"""

from __future__ import annotations

from .mapping import AGENT_MESSAGE, SUBAGENT, remember, turn_step

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Mapped = list[tuple[str, Any]]  # (event kind, event data), in order

KNOWN = frozenset(
    {
        "session_meta",
        "turn_context",
        "world_state",
        "compacted",
        "response_item",
        "event_msg",
        "token_usage_record",
    }
)
# Tagged blocks Codex writes on the user role itself (for versions without provenance).
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<skills_instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
)
# session_meta's `thread_source` of a rollout no person started (Codex's ThreadSource).
_AGENT_THREADS = ("subagent", "memory_consolidation")


def events(record: Any, state: dict[str, Any], dumps: Callable[[Any], str]) -> Mapped:
    """The events one rollout line maps to, in order, as (kind, data), `state` (the adapter's
    own, kept with the log's cursor) moved on; `dumps` writes a value as JSON text (a call's
    arguments or a tool's output Codex gave as a value)."""
    out: Mapped = []
    kind = record.get("type") if isinstance(record, dict) else None
    payload = record.get("payload") if isinstance(record, dict) else None
    if kind not in KNOWN or not isinstance(payload, dict):
        state["unknownLines"] = state.get("unknownLines", 0) + 1
    elif kind == "session_meta":
        state["cwd"] = payload.get("cwd") or state.get("cwd")
        if SUBAGENT not in state:  # the rollout's own; a fork may copy its parent's
            state[SUBAGENT] = _spawned(payload)
    elif kind == "event_msg":
        _event_msg(payload, state, out)
    elif kind == "response_item":
        _response_item(payload, state, out, dumps)
    elif kind == "token_usage_record":
        state["usageRecords"] = True
        _usage(payload.get("usage"), payload.get("response_id"), state, out)
    return out


def _event_msg(payload: dict[str, Any], state: dict[str, Any], out: Mapped) -> None:
    kind = payload.get("type")
    if kind == "task_started":
        state["turn"] = state.get("turn", 0) + 1
        state["step"] = 0
        out.append(("turn/start", {"turn": state["turn"]}))
        _window(payload.get("model_context_window"), state, out)
    elif kind in ("task_complete", "turn_aborted"):
        reason = "completed" if kind == "task_complete" else "aborted"
        out.append(("turn/end", {"turn": state.get("turn", 0), "reason": {"kind": reason}}))
    elif kind == "token_count":
        info = payload.get("info") or {}
        _window(info.get("model_context_window"), state, out)
        if not state.get("usageRecords"):
            _usage(info.get("last_token_usage"), None, state, out)


def _window(window: Any, state: dict[str, Any], out: Mapped) -> None:
    if isinstance(window, int) and window > 0 and window != state.get("contextWindow"):
        state["contextWindow"] = window
        out.append(("request/context", {"contextWindow": window}))


def _usage(usage: Any, response_id: Any, state: dict[str, Any], out: Mapped) -> None:
    if not isinstance(usage, dict):
        return
    if response_id and not remember(state, "responses", str(response_id)):
        return
    # OpenAI counts cached tokens inside input_tokens; DSH buckets do not overlap.
    cached = int(usage.get("cached_input_tokens") or 0)
    data = {
        **turn_step(state),
        "usage": {
            "inputTokens": max(0, int(usage.get("input_tokens") or 0) - cached),
            "outputTokens": int(usage.get("output_tokens") or 0),
            "cacheReadTokens": cached,
            "cacheWriteTokens": int(usage.get("cache_write_input_tokens") or 0),
            "reasoningTokens": int(usage.get("reasoning_output_tokens") or 0),
        },
    }
    out.append(("usage/record", data))


def _response_item(
    payload: dict[str, Any], state: dict[str, Any], out: Mapped, dumps: Callable[[Any], str]
) -> None:
    kind = payload.get("type")
    if kind == "message":
        _message(payload, state, out)
    elif kind == "reasoning":
        texts = [s.get("text", "") for s in payload.get("summary") or () if isinstance(s, dict)]
        if texts:
            message = {
                "role": "assistant",
                "content": [{"type": "reasoning", "text": "\n".join(texts)}],
            }
            out.append(("assistant/message", {**turn_step(state), "message": message}))
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        state["step"] = state.get("step", 0) + 1
        arguments = payload.get("arguments", payload.get("input"))
        if not isinstance(arguments, str):
            arguments = dumps(arguments if arguments is not None else payload.get("action") or {})
        call = {
            **turn_step(state),
            "callId": str(payload.get("call_id") or payload.get("id") or ""),
            "name": payload.get("name") or "local_shell",
            "arguments": arguments,
        }
        out.append(("tool/call", call))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        failed = isinstance(output, dict) and output.get("success") is False
        text = output.get("content", "") if isinstance(output, dict) else output
        result: dict[str, Any] = {
            "role": "tool",
            "source": {"kind": "tool", "callId": str(payload.get("call_id") or "")},
            "content": [{"type": "text", "text": text if isinstance(text, str) else dumps(text)}],
            "isError": failed,
        }
        out.append(("tool/result", {**turn_step(state), "message": result}))


def _message(payload: dict[str, Any], state: dict[str, Any], out: Mapped) -> None:
    role = payload.get("role")
    items = [c for c in payload.get("content") or () if isinstance(c, dict)]
    texts = [{"type": "text", "text": str(c.get("text", ""))} for c in items if "text" in c]
    if role == "assistant":
        message = {"role": "assistant", "content": texts}
        out.append(("assistant/message", {**turn_step(state), "message": message}))
    elif role == "developer":
        message = {"role": "developer", "content": texts}
        out.append(("developer/message", {**turn_step(state), "message": message}))
    elif role == "user":
        human = _human_texts(payload, items)
        if human:
            kind = AGENT_MESSAGE if state.get(SUBAGENT) else "user"
            out.append(
                ("user/message", {"role": "user", "content": human, "source": {"kind": kind}})
            )
        if len(human) < len(texts):
            injected = [t for t in texts if t not in human]
            context = {"role": "user", "content": injected, "source": {"kind": "runtime-context"}}
            out.append(("user/message", context))


def _spawned(meta: dict[str, Any]) -> bool:
    """Whether a session_meta names a rollout another agent started (Codex's SessionSource
    `SubAgent`/`Internal`, serialized `{"subagent": …}`/`{"internal": …}`)."""
    source = meta.get("source")
    if isinstance(source, dict) and ("subagent" in source or "internal" in source):
        return True
    return meta.get("thread_source") in _AGENT_THREADS


def _human_texts(payload: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The content items the person typed, by provenance where recorded, else by tag."""
    meta = payload.get("internal_chat_message_metadata_passthrough") or {}
    provenance = meta.get("content_item_metadata")
    human: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if "text" not in item:
            continue
        text = str(item["text"])
        if isinstance(provenance, list) and len(provenance) == len(items):
            typed = ((provenance[index] or {}).get("provenance") or {}).get("type") == "user"
        else:
            typed = not text.lstrip().startswith(_INJECTED_PREFIXES)
        if typed:
            human.append({"type": "text", "text": text})
    return human
