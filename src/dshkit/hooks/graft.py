"""Graft at the hooks (logic in `dshkit.graft.live`, the rules in `dshkit.inject.rules`): a
handed-off session takes no new work, the watermark speaks once per turn, a waiting handoff
reaches the next session, notices once.

A prompt to a transferring or retired session is blocked and every tool call denied, with a
pointer to where the work went. The warning, the escalation and the forced cut reach the model
as additional context after a tool call or with a prompt; what they leave behind is recorded
only once the text was delivered (the runtime's `commit`).

After a tool call (every tool call: the hot path) a session the watermark cannot have
anything to say to yet is answered from its room hint (`graft.marker`), without opening the
store or reading the transcript; a check that had nothing to say moves the hint. A prompt
where no handoff ever began is answered from the same hint (and drops it).
"""

from __future__ import annotations

from ..graft import marker
from ..hookio import Answer, Call


def on_session_start(call: Call) -> Answer | None:
    from ..inject import rules

    return rules.handoff_at_start(call)


def on_prompt(call: Call) -> Answer | None:
    state = call.state
    transcript = str(call.payload.get("transcript_path") or "")
    # Where no handoff ever began, only the watermark can speak to a prompt, and its room
    # hint says when it surely has nothing to say to the transcript as it is (as after a
    # tool call): then the store is not opened nor the log read; the next check folds it.
    size = marker.transcript_size(transcript)
    quiet = not marker.used(state) and marker.quiet(state, transcript, size, None)
    # A prompt may bring context its transcript does not show in bytes yet (an attached
    # file, a new turn): the first tool call after it is checked in full.
    marker.forget(state, transcript)
    if quiet:
        return None
    from ..inject import rules

    return rules.handoff_at_prompt(call)


def on_tool(call: Call) -> Answer | None:
    # Registered to run only once a handoff ever began here (the entry point checks the
    # marker before it starts any handler): every tool call would pass here otherwise.
    if not call.session_id:
        return None
    from ..inject import rules

    return rules.retirement_at_tool(call)


def after_tool(call: Call) -> Answer | None:
    state = call.state  # the state directory without pathlib (the hot path)
    transcript = str(call.payload.get("transcript_path") or "")
    size = marker.transcript_size(transcript)
    if marker.quiet(state, transcript, size, call.payload.get("tool_input")):
        return None
    from ..inject import rules

    if size is None or not call.session_id:
        return rules.watermark_after_tool(call)
    with call.open_store() as store:
        answer = rules._watermark_after_tool(store, call)
        try:  # the room hint moved in the same store
            if answer.text:
                marker.forget(state, transcript)
            else:
                marker.remember(store, state, call.harness, call.session_id, transcript, size)
        except Exception as exc:  # a hint not kept only costs the next call a full check
            marker.forget(state, transcript)
            call.log(f"graft room hint not kept: {type(exc).__name__}: {exc}")
    return answer
