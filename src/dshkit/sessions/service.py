"""The session layer's one face for the surfaces: scanning, listing, showing, browsing,
quoting and forgetting sessions.

`SessionsService` is all the command line (`scan`, `sessions`, `forget`) and the web's
session routes call. Each use case opens its own store connection (nothing is opened or read
on construction) and answers with a typed result whose `as_json()` is the one JSON every
surface gives (`--json` and the HTTP API alike). A session named by id is resolved with
`Catalog.find`: its id or a unique prefix, of a harness when given (SessionNotFound,
SessionAmbiguous). Errors are the tree's: bad input is Invalid naming its field, a scan
another process holds past the wait is Busy (LeaseBusy), a store that cannot be used is
Unavailable (StoreError).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import harnesses
from ..errors import Invalid
from ..store import Store
from .browse import (
    QUOTE_LIMIT,
    TEXT_LIMIT,
    WINDOW_LIMIT,
    QuoteSources,
    SessionDetail,
    SessionView,
    Window,
    quote_sources,
    quote_text,
    session_detail,
    view,
)
from .catalog import Catalog, SessionInfo
from .scanner import Progress, Scanner, ScanReport, Source, default_sources
from .wire import ForgottenJson

if TYPE_CHECKING:
    from .quoted import Quoted

__all__ = [
    "QUOTE_LIMIT",
    "TEXT_LIMIT",
    "WINDOW_LIMIT",
    "Forgotten",
    "SessionsService",
]


@dataclass(frozen=True, slots=True)
class Forgotten:
    """A session forgotten for good."""

    harness: str
    session_id: str

    def as_json(self) -> ForgottenJson:
        return {"forgotten": {"harness": self.harness, "id": self.session_id}}


class SessionsService:
    """The session use cases over the state directory `state_dir`, scanning `sources` (each
    harness's own root when None); `busy_timeout` bounds each wait for another process's
    database lock, and is how long a scan or a forget waits for a scan under way."""

    def __init__(
        self,
        state_dir: Path,
        *,
        sources: Sequence[Source] | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._sources = None if sources is None else list(sources)
        self.busy_timeout = busy_timeout

    @property
    def sources(self) -> list[Source]:
        return default_sources() if self._sources is None else self._sources

    def _store(self) -> Store:
        return Store(self.state_dir, busy_timeout=self.busy_timeout)

    # -- the write side ---------------------------------------------------------------------

    def scan(
        self,
        sources: Sequence[Source] | None = None,
        *,
        frame_budget: int | None = None,
        progress: Progress | None = None,
        wait: float | None = None,
    ) -> ScanReport:
        """Read what is new under `sources` (the service's when None) into the store, decoding
        at most `frame_budget` zstd frames this round (the next one resumes), telling
        `progress` as it reads. Busy when another scan holds the store past `wait` seconds
        (the busy timeout when None)."""
        if frame_budget is not None and frame_budget < 1:
            raise Invalid(
                f"the frame budget must be at least 1, got {frame_budget}", field="frame_budget"
            )
        scanned = self.sources if sources is None else list(sources)
        with self._store() as store:
            scanner = Scanner(store, frame_budget=frame_budget)
            return scanner.scan(scanned, progress, wait=self._wait(wait))

    def forget(
        self, session: str, harness: str | None = None, *, wait: float | None = None
    ) -> Forgotten:
        """Forget the session `session` names for good: what was read of it is deleted, and
        later scans skip its logs (the harness's own files are never touched). Busy when a
        scan holds the store past `wait` seconds (the busy timeout when None)."""
        of = _harness(harness)
        with self._store() as store:
            scanner = Scanner(store)
            info = scanner.catalog.find(session, of)
            scanner.forget(info.key, wait=self._wait(wait))
        return Forgotten(info.harness, info.session_id)

    def _wait(self, wait: float | None) -> float:
        return self.busy_timeout if wait is None else wait

    # -- the read side (what the last scan stored) -------------------------------------------

    def recent(self, harness: str | None = None, limit: int | None = 50) -> list[SessionInfo]:
        """The newest `limit` sessions with events (all when None), of `harness` when given,
        most recent first."""
        if limit is not None and limit < 1:
            raise Invalid(f"limit must be at least 1, got {limit}", field="limit")
        of = _harness(harness)
        with self._store() as store:
            return Catalog(store).recent(of, limit)

    def show(self, session: str, harness: str | None = None) -> SessionDetail:
        """The session `session` names, whole: its human messages, tools, turns, token usage
        and log files (as `dshkit sessions show` prints it)."""
        of = _harness(harness)
        with self._store() as store:
            catalog = Catalog(store)
            return session_detail(catalog, catalog.find(session, of))

    def window(
        self,
        session: str,
        harness: str | None = None,
        *,
        offset: int = 0,
        limit: int = 100,
        around: int | None = None,
    ) -> SessionView:
        """The session `session` names, as the console opens it: its human messages and tool
        calls, `limit` items (at most WINDOW_LIMIT) of each from `offset`, or the part holding
        the event whose seq is `around`."""
        if not 1 <= limit <= WINDOW_LIMIT:
            raise Invalid(f"limit must be from 1 to {WINDOW_LIMIT}, got {limit}", field="limit")
        if offset < 0:
            raise Invalid(f"offset must not be negative, got {offset}", field="offset")
        shown = Window(offset, limit, around)
        of = _harness(harness)
        with self._store() as store:
            catalog = Catalog(store)
            return view(catalog, catalog.find(session, of), shown)

    def quote(self, text: str, limit: int = 5) -> QuoteSources:
        """The newest `limit` human messages holding `text` (1 to QUOTE_LIMIT characters: a
        profile entry's evidence is quoted from them), with how many there are in all."""
        try:
            quote = quote_text(text)
        except ValueError as exc:
            raise Invalid(str(exc), field="text") from None
        if limit < 1:
            raise Invalid(f"limit must be at least 1, got {limit}", field="limit")
        with self._store() as store:
            return quote_sources(store, quote, limit)

    def quoted(
        self, session: str, quotes: Sequence[tuple[str, str]], harness: str | None = None
    ) -> list[Quoted]:
        """Where in the session `session` names each (label, quote) was said: its human
        messages holding the quote, in log order (a profile entry's evidence on the timeline)."""
        from .quoted import quoted_in

        of = _harness(harness)
        with self._store() as store:
            return quoted_in(store, Catalog(store).find(session, of), quotes)


def _harness(name: str | None) -> str | None:
    """`name` when it is a harness of the registry (None: any); Invalid naming the known."""
    if name is None:
        return None
    try:
        return harnesses.get(name).name
    except harnesses.UnknownHarness as exc:
        raise Invalid(str(exc), field="harness") from None
