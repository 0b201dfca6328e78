"""Profile injection, the profile's hook face: the effective text reaches the model once per
session (docs/design/profile.md#the-profile-reaches-a-session-once).

Claude Code and Codex deliver SessionStart context before the first request, so it goes
there. DSH's bridge delivers SessionStart context only from the second request, and fires
UserPromptSubmit before *every* model step (after the first, its prompt is the contexts
injected so far): there the text goes with the session's first UserPromptSubmit, and later
firings are recognised because the session is marked as injected — once the text was
written to the harness, not before. A start that could not deliver it (a locked store, an
answer never written) leaves it owed: the session's next prompt carries it, once. A
compaction or a /clear drops what was injected, so those SessionStarts inject again. Empty
text: nothing. The preview (`dshkit inject show`) runs the same functions dry.

On the hooks' path: nothing is imported until a function runs, and a session that had the
text is answered from the delivery ledger alone (`profile.state` is not loaded).
"""

from __future__ import annotations

from ..hookio import JOIN, Answer, Call, Piece

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from ..store import Store
    from .state import Effective, ProfileState

PROFILE = "profile"


def on_session_start(call: Call) -> Answer:
    """The effective profile text, once per session: on the harness's context event, again
    after a compaction or /clear, and, while the session has not had it (its start could not
    deliver it: a locked store, an answer never written), with its next prompt. Delivered
    means recorded by the commit, once the text was written to the harness."""
    with call.open_store() as store:
        return _profile(store, call)


def _profile(store: Store, call: Call) -> Answer:
    from ..store import PROFILE_DELIVERY

    if not call.session_id:
        return Answer(PROFILE, why="the call names no session")
    if call.event == "SessionStart" and not call.first_context:
        return Answer(
            PROFILE, why="its start's context comes too late here: the first prompt carries it"
        )
    # A session that had it gets nothing, whatever the text is now: said from one read,
    # without loading the profile (every later prompt of the session asks).
    if not call.again and store.delivered(call.key, PROFILE_DELIVERY):
        return Answer(PROFILE, why="this session had it already")
    from .state import ProfileState

    state = ProfileState(store)
    effective = state.effective()
    if not effective.text:
        withheld = f" ({effective.withheld})" if effective.withheld else ""
        return Answer(PROFILE, why=f"there is no profile text to inject{withheld}")
    # A write transaction, not a bare read: a store another process keeps locked makes this
    # fail now (no opinion, and the next event delivers it) rather than inject a text whose
    # delivery could then not be recorded.
    with store.transaction():
        done = store.delivered(call.key, PROFILE_DELIVERY)
    if done and not call.again:
        return Answer(PROFILE, why="this session had it already")
    text = effective.text
    key = call.key

    def record(store: Store) -> None:
        import hashlib  # after the answer: not on the way to it

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]  # which text it was
        store.mark_delivered(key, PROFILE_DELIVERY, digest, superseding=True)

    return Answer(PROFILE, text, pieces=_profile_pieces(state, effective), commit=record)


def _profile_pieces(state: ProfileState, effective: Effective) -> tuple[Piece, ...]:
    """Where the profile text comes from: the person's own text (custom), or the generated
    profile and the extra text after it (auto), as `ProfileState.effective` joins them."""
    from .state import Mode

    if effective.mode is Mode.CUSTOM:
        return (Piece("profile:custom", effective.text),)
    extra = "" if effective.withheld else state.auto_extra_text.strip()
    generated = effective.text[: len(effective.text) - len(extra)].removesuffix(JOIN)
    found = (Piece("profile:auto", generated), Piece("profile:extra", extra))
    return tuple(piece for piece in found if piece.text)


def on_prompt(call: Call) -> Answer:
    """The text, with the session's first prompt where that carries its first context (DSH),
    or where its start could not deliver it (see `on_session_start`)."""
    with call.open_store() as store:
        return _profile(store, call)
