"""The rules of what each hook puts into a session: one function per context handler, run by
the hook that delivers it and, dry, by the preview that shows it.

A rule takes an open store and a `Call` (one event of one session, as its payload names it)
and returns a `Part`: the text for the model (empty when there is none, with why), where each
piece of it comes from, a decision (a block or a deny) when the rule makes one, what the hook
starts besides answering (a background probe, a recovery, a refresh), and the `commit` that
records the delivery, which the hook runtime calls only once the answer carrying the text
was written. A dry call starts nothing (its `effects` say what would start) and is run on a
store whose transactions never commit (`service.Uncommitted`), so the very same code shows
what the next event would bring without changing anything.

On the hooks' path: nothing beyond `os` is imported until a rule runs.
"""

from __future__ import annotations

import os

from .. import harnesses

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    from ..graft import live
    from ..profile.state import Effective, ProfileState
    from ..store import Store

    Commit = Callable[[Store], None]

JOIN = "\n\n"  # between two contexts of one answer, and between the parts of one context
LIMIT = harnesses.HOOK_TEXT_LIMIT  # one answer's text, in UTF-16 code units
AGAIN = ("compact", "clear")  # SessionStart sources after which what was injected is gone
LATE = "its start's context comes too late here: the first prompt carries it"
CAPABILITY_SWITCH = "DSHKIT_CAPABILITY"  # "off" turns the capability facts off

PROFILE = "profile"
MEMORY = "memory"
CAPABILITY = "capability"
GRAFT = "graft"
REFRESH = "refresh"


class Call:
    """One hook event of one session: its name, the calling harness (a registry name, or
    "unknown"), the payload, dshkit's state directory and the environment; `dry` for the
    preview (nothing started, nothing committed); `step` for a UserPromptSubmit that is a
    model step of a turn under way, not a person's prompt (`dshkit.turns`)."""

    __slots__ = ("dry", "env", "event", "harness", "payload", "state_dir", "step")

    def __init__(
        self,
        event: str,
        harness: str,
        payload: Mapping[str, Any],
        state_dir: Path,
        env: Mapping[str, str],
        *,
        dry: bool = False,
        step: bool = False,
    ) -> None:
        self.event = event
        self.harness = harness
        self.payload = payload
        self.state_dir = state_dir
        self.env = env
        self.dry = dry
        self.step = step

    @property
    def session_id(self) -> str:
        return str(self.payload.get("session_id") or "")

    @property
    def key(self) -> tuple[str, str]:
        return self.harness, self.session_id

    @property
    def cwd(self) -> str:
        return str(self.payload.get("cwd") or "")

    @property
    def first_context(self) -> bool:
        """Whether this event's context reaches the harness's first request: SessionStart, or
        the first prompt where SessionStart context comes too late (DSH's bridge). Unknown
        harnesses are treated like Claude Code."""
        return context_event(self.harness) == self.event

    @property
    def again(self) -> bool:
        """A start after a compaction or /clear: what was injected before is gone."""
        return self.event == "SessionStart" and self.payload.get("source") in AGAIN


def context_event(harness: str) -> str:
    """The event whose context reaches `harness`'s first request."""
    info = harnesses.HARNESSES.get(harness)
    return info.context_event if info else "SessionStart"


class Piece:
    """One source of a part's text: what it is (e.g. "profile:extra") and its text."""

    __slots__ = ("source", "text")

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text


class Part:
    """What one rule gives one event (see the module docstring)."""

    __slots__ = ("commit", "decision", "effects", "pieces", "source", "text", "why")

    def __init__(
        self,
        source: str,
        text: str = "",
        *,
        pieces: tuple[Piece, ...] = (),
        why: str = "",
        decision: tuple[str, str] | None = None,  # ("block" or "deny", the reason)
        effects: tuple[str, ...] = (),
        commit: Commit | None = None,
    ) -> None:
        self.source = source
        self.text = text
        self.pieces = pieces or ((Piece(source, text),) if text else ())
        self.why = why
        self.decision = decision
        self.effects = effects
        self.commit = commit


def join_contexts(event: str, contexts: list[tuple[str, str]]) -> tuple[str, list[int], list[str]]:
    """The contexts (handler, text), in priority order, as the one text an answer carries:
    joined in order, each that would take the text over the cap dropped whole (later, smaller
    ones may still fit). Returns the text, the indexes of the contexts it holds, and a note
    for the log naming each one dropped."""
    kept: list[int] = []
    texts: list[str] = []
    notes: list[str] = []
    used = 0
    for index, (name, text) in enumerate(contexts):
        length = harnesses.text_length(text)
        grown = used + (len(JOIN) if texts else 0) + length
        if grown > LIMIT:
            notes.append(
                f"dropped the context of {name} ({length} characters): it would take the "
                f"{event} context over the {LIMIT}-character cap ({used} used)"
            )
            continue
        texts.append(text)
        kept.append(index)
        used = grown
    return JOIN.join(texts), kept, notes


# -- the profile -----------------------------------------------------------------------------


def profile(store: Store, call: Call) -> Part:
    """The effective profile text, once per session: on the harness's context event, again
    after a compaction or /clear, and, while the session has not had it (its start could not
    deliver it: a locked store, an answer never written), with its next prompt. Delivered
    means recorded by the commit, once the text was written to the harness."""
    from ..store import PROFILE_DELIVERY

    if not call.session_id:
        return Part(PROFILE, why="the call names no session")
    if call.event == "SessionStart" and not call.first_context:
        return Part(
            PROFILE, why="its start's context comes too late here: the first prompt carries it"
        )
    # A session that had it gets nothing, whatever the text is now: said from one read,
    # without loading the profile (every later prompt of the session asks).
    if not call.again and store.delivered(call.key, PROFILE_DELIVERY):
        return Part(PROFILE, why="this session had it already")
    from ..profile.state import ProfileState

    state = ProfileState(store)
    effective = state.effective()
    if not effective.text:
        withheld = f" ({effective.withheld})" if effective.withheld else ""
        return Part(PROFILE, why=f"there is no profile text to inject{withheld}")
    # A write transaction, not a bare read: a store another process keeps locked makes this
    # fail now (no opinion, and the next event delivers it) rather than inject a text whose
    # delivery could then not be recorded.
    with store.transaction():
        done = store.delivered(call.key, PROFILE_DELIVERY)
    if done and not call.again:
        return Part(PROFILE, why="this session had it already")
    text = effective.text
    key = call.key

    def record(store: Store) -> None:
        import hashlib  # after the answer: not on the way to it

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]  # which text it was
        store.mark_delivered(key, PROFILE_DELIVERY, digest, superseding=True)

    return Part(PROFILE, text, pieces=_profile_pieces(state, effective), commit=record)


def _profile_pieces(state: ProfileState, effective: Effective) -> tuple[Piece, ...]:
    """Where the profile text comes from: the person's own text (custom), or the generated
    profile and the extra text after it (auto), as `ProfileState.effective` joins them."""
    from ..profile.state import Mode

    if effective.mode is Mode.CUSTOM:
        return (Piece("profile:custom", effective.text),)
    extra = "" if effective.withheld else state.auto_extra_text.strip()
    generated = effective.text[: len(effective.text) - len(extra)].removesuffix(JOIN)
    found = (Piece("profile:auto", generated), Piece("profile:extra", extra))
    return tuple(piece for piece in found if piece.text)


# -- memory --------------------------------------------------------------------------------


def memory_at_start(store: Store, call: Call) -> Part:
    """The workspace's memory (`dshkit.memory.inject`), once per session at its start and
    again after a compaction or /clear (then ranked by the session's first request), in the
    room the profile leaves in the answer. Only the session's own workspace: no directory in
    the call, no memory. Delivered means recorded by the commit."""
    from ..config import load_config
    from ..store import MEMORY_DELIVERY

    if not call.session_id:
        return Part(MEMORY, why="the call names no session")
    if call.event != "SessionStart":
        return Part(MEMORY, why="memory comes with the session's start")
    settings = load_config(call.state_dir)["memory"]
    if not settings["inject"]:
        return Part(MEMORY, why="switched off ([memory] inject)")
    with store.transaction():
        done = store.delivered(call.key, MEMORY_DELIVERY)
    if done and not call.again:
        return Part(MEMORY, why="this session had it already")
    if not call.cwd:
        return Part(MEMORY, why="the call names no directory: no workspace to read")
    from ..memory.inject import choose, room_beside  # (a start that had it reads none)
    from ..memory.workspace import identify, settle
    from ..profile.state import ProfileState

    workspace = identify(call.cwd, settings["workspaces"])
    settle(store, workspace)  # a remote added since: its root's records join it
    beside = ProfileState(store).effective().text  # the profile comes first in the answer
    budget = min(settings["inject_chars"], room_beside(beside))
    chosen = choose(store, workspace, _first_request(store, call), budget)
    if not chosen.text:
        return Part(MEMORY, why=f"nothing to give a session of {workspace.root}")
    text = chosen.text
    key = call.key

    def record(store: Store) -> None:
        import hashlib  # after the answer: not on the way to it

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        store.mark_delivered(key, MEMORY_DELIVERY, digest, superseding=True)

    pieces = tuple(Piece(f"memory:{r.id}", r.text) for r in chosen.records)
    return Part(MEMORY, text, pieces=pieces, commit=record)


def _first_request(store: Store, call: Call) -> str:
    """The session's first request when it is known (a start after a compaction): the first
    human message the scan kept."""
    row = store.db.execute(
        "SELECT text FROM human_messages WHERE harness = ? AND session_id = ? "
        "ORDER BY seq, rowid LIMIT 1",
        call.key,
    ).fetchone()
    return str(row[0]) if row else ""


# -- capability facts ------------------------------------------------------------------------


def capability_facts(store: Store, call: Call) -> Part:
    """The session's capability facts: on the harness's context event, again after a
    compaction or /clear, and with a later prompt whenever they differ from the last ones
    delivered (a changed mode; results that were pending; none delivered yet). A report with
    nothing fresh starts a background probe (a dry call only says it would)."""
    from ..capability import lookup, read_facts, report
    from ..store import CAPABILITY_DELIVERY

    if call.env.get(CAPABILITY_SWITCH, "").lower() in ("off", "0", "false"):
        return Part(CAPABILITY, why=f"switched off ({CAPABILITY_SWITCH})")
    if not call.session_id:
        return Part(CAPABILITY, why="the call names no session")
    if call.event == "SessionStart" and not call.first_context:
        return Part(
            CAPABILITY, why="its start's context comes too late here: the first prompt carries it"
        )
    # The probe's process gets this cwd: the same absolute path makes the same cache key.
    cwd = os.path.abspath(call.cwd or os.getcwd())
    errors: list[str] = []
    facts = read_facts(store, call.harness, call.payload, errors)
    if call.dry:
        now = report(store, facts, cwd, errors)
        started = now.probe_due
    else:
        now, started = lookup(store, facts, cwd, errors)
    effects = (f"starts a background probe of {now.key}",) if started else ()
    marker = now.key + ("#pending" if now.pending else "")
    # The last delivery only (each supersedes the one before): a mode changed back is news.
    key = call.key
    unchanged = any(store.delivered(key, CAPABILITY_DELIVERY, m) for m in (marker, now.key))
    if unchanged and not call.again:
        # (an expired cache being probed again is no news)
        return Part(CAPABILITY, why="unchanged since they were last delivered", effects=effects)

    def record(store: Store) -> None:
        store.mark_delivered(key, CAPABILITY_DELIVERY, marker, superseding=True)

    return Part(CAPABILITY, now.text, effects=effects, commit=record)


# -- context handoff (graft) -----------------------------------------------------------------


def handoff_at_start(store: Store, call: Call) -> Part:
    """A handoff waiting in the session's directory, handed to this new session; and an
    unfinished handoff nobody drives any more, recovered in the background."""
    effects: tuple[str, ...] = ()
    if _handoff_begun(store) and _recovery_due(store):
        effects = ("starts `dshkit graft recover`: an unfinished handoff has no process",)
        if not call.dry:
            from ..procs import spawn_detached

            spawn_detached("graft", "recover", "--state-dir", str(call.state_dir))
    picked = _pickup(store, call)
    if picked is None:
        return Part(GRAFT, why="no handoff waits for a session started here", effects=effects)
    return Part(
        GRAFT,
        picked.text,
        pieces=(Piece("graft:pickup", picked.text),),
        effects=effects,
        commit=picked.commit,
    )


def handoff_at_prompt(store: Store, call: Call) -> Part:
    """A prompt to a handed-off session is blocked (with where the work went); otherwise what
    the session is owed: a waiting handoff (its first prompt, where that carries context), a
    notice (a rolled-back handoff), the watermark's word for this step."""
    if not call.session_id:
        return Part(GRAFT, why="the call names no session")
    # No handoff ever began here: no session was handed off and none is owed a notice, so
    # only the watermark can speak (and `graft.live` is loaded only when it does read).
    notice = None
    if _handoff_begun(store):
        from ..graft import live

        pointer = live.retired(store, call.harness, call.session_id)
        if pointer is not None:
            return _blocked(store, call, "block", pointer)
        notice = live.notices(store, call.harness, call.session_id)
    owed: list[tuple[str, live.Notice | live.Watch | None]] = [
        ("graft:pickup", _pickup(store, call)),
        ("graft:notice", notice),
        ("graft:watermark", _watch(store, call)),
    ]
    said = [(source, each) for source, each in owed if each is not None]
    if not said:
        return Part(GRAFT, why="no handoff, notice or watermark word is owed")
    pieces = tuple(Piece(source, str(each.text)) for source, each in said)
    commits = [each.commit for _, each in said]

    def commit(store: Store) -> None:
        for each in commits:
            each(store)

    return Part(
        GRAFT,
        JOIN.join(piece.text for piece in pieces),
        pieces=pieces,
        effects=_forced(said),
        commit=commit,
    )


def watermark_after_tool(store: Store, call: Call) -> Part:
    """The watermark's word after a tool call, when it has one (a nudge, an escalation, the
    forced cut)."""
    watched = _watch(store, call)
    if watched is None:
        return Part(GRAFT, why="the watermark has nothing to say at this step")
    return Part(
        GRAFT,
        str(watched.text),
        pieces=(Piece("graft:watermark", str(watched.text)),),
        effects=_forced([("graft:watermark", watched)]),
        commit=watched.commit,
    )


def retirement_at_tool(store: Store, call: Call) -> Part:
    """Every tool call of a handed-off session is denied, with where the work went."""
    from ..graft import live

    if not call.session_id:
        return Part(GRAFT, why="the call names no session")
    pointer = live.retired(store, call.harness, call.session_id)
    if pointer is None:
        return Part(GRAFT, why="the session was not handed off")
    return _blocked(store, call, "deny", pointer)


def _blocked(store: Store, call: Call, decision: str, pointer: str) -> Part:
    """A handed-off session's prompt or tool call refused with the pointer; when no live
    process drives its handoff any more (its driver was killed), a recovery is started now."""
    from ..graft import live

    if not live.driver_gone(store, call.harness, call.session_id):
        return Part(GRAFT, decision=(decision, pointer))
    if not call.dry:
        from ..procs import spawn_detached

        spawn_detached("graft", "recover", "--state-dir", str(call.state_dir))
    return Part(
        GRAFT,
        decision=(decision, f"{pointer}\n{live.RECOVERING}"),
        effects=("starts `dshkit graft recover`: no live process drives this handoff",),
    )


def _watch(store: Store, call: Call) -> live.Watch | None:
    """The watermark's word for this step, when it has one to say."""
    transcript = str(call.payload.get("transcript_path") or "")
    if not call.session_id or not os.path.isfile(transcript):
        return None  # nothing written yet (or a harness that names no transcript)
    from ..graft import live
    from ..graft.settings import GraftSettings

    settings = GraftSettings.load(call.state_dir)
    watched = live.watch(
        store, call.harness, call.session_id, transcript, settings, str(call.state_dir)
    )
    return watched if watched.text else None


def _pickup(store: Store, call: Call) -> live.Notice | None:
    """A handoff waiting in this session's directory, when this event reaches the model
    (never in the middle of a turn: a step takes none)."""
    if not call.first_context or call.step or not call.session_id or not call.cwd:
        return None
    if not _handoff_begun(store):  # (as `live.pickup` says, without loading it)
        return None
    from ..graft import live

    return live.pickup(store, call.harness, call.session_id, call.cwd)


def _recovery_due(store: Store) -> bool:
    from ..graft import live

    return live.recovery_due(store)


def _handoff_begun(store: Store) -> bool:
    """Whether a handoff ever began in the store's state directory (`graft.marker.used`, one
    `stat`): without one no session here was handed off, is owed a notice or can pick one up,
    and `graft.live` (the watermark's imports with it) need not be loaded to say so."""
    from ..graft.marker import used

    return used(str(store.state_dir))


def _forced(said: list[tuple[str, live.Notice | live.Watch]]) -> tuple[str, ...]:
    """What a delivered forced cut starts (its commit starts it)."""
    from ..graft.live import Watch

    forced = any(isinstance(each, Watch) and each.decision.action == "force" for _, each in said)
    return ("once delivered, starts the handoff (`dshkit graft slice`, forced)",) if forced else ()


# -- when the agent pauses -------------------------------------------------------------------


def refresh_on_pause(store: Store, call: Call) -> Part:
    """An incremental scan and the profile trigger check in a detached `dshkit refresh`, unless
    a scan holds the store's lease (one at a time)."""
    from ..store import SCAN_LEASE

    if store.lease_holder(SCAN_LEASE) is not None:
        return Part(REFRESH, why="a scan is running: no refresh is started")
    if not call.dry:
        from ..procs import spawn_detached

        spawn_detached("refresh", "--state-dir", str(call.state_dir))
    return Part(
        REFRESH,
        why="nothing for the model: it brings dshkit's store up to date",
        effects=("starts a detached `dshkit refresh`",),
    )
