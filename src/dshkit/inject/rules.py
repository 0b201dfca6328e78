"""The rules of what each hook puts into a session: one function per context handler, run by
the hook that delivers it and, dry, by the preview that shows it.

A rule takes a `hookio.Call` (one event of one session, as its payload names it) and returns a
`hookio.Answer`: the text for the model (empty when there is none, with why), where each
piece of it comes from, a decision (a block or a deny) when the rule makes one, what the hook
starts besides answering (a background probe, a recovery, a refresh), and the `commit` that
records the delivery, which the hook runtime calls only once the answer carrying the text
was written. A dry call starts nothing (its `effects` say what would start) and is run on a
store whose transactions never commit (`service.Uncommitted`), so the very same code shows
what the next event would bring without changing anything.

On the hooks' path: nothing beyond `os` is imported until a rule runs.
"""

from __future__ import annotations

from ..hookio import Answer, Call

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from ..store import Store


REFRESH = "refresh"


# -- when the agent pauses -------------------------------------------------------------------


def refresh_on_pause(call: Call) -> Answer:
    """An incremental scan and the profile trigger check in a detached `dshkit refresh`, unless
    a scan holds the store's lease (one at a time)."""
    with call.open_store() as store:
        return _refresh_on_pause(store, call)


def _refresh_on_pause(store: Store, call: Call) -> Answer:
    from ..store import SCAN_LEASE

    if store.lease_holder(SCAN_LEASE) is not None:
        return Answer(REFRESH, why="a scan is running: no refresh is started")
    if not call.dry:
        from ..procs import spawn_detached

        spawn_detached("refresh", "--state-dir", str(call.state_dir))
    return Answer(
        REFRESH,
        why="nothing for the model: it brings dshkit's store up to date",
        effects=("starts a detached `dshkit refresh`",),
    )
