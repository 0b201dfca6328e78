"""The composition root: one state directory, the session roots it reads, one job runner, and
each capability's service, built once and handed to every surface.

The CLI commands, the MCP server and the web app are each given an `App`; each asks it for
the services it needs (`app.profile`, `app.graft`, …), which are built on first use, so a
command that needs one capability imports only that one. The hook path does not build an
`App`: it runs on every tool call and builds only what its handler needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .graft.wire import Panel
from .memory.wire import MemoryCountsJson

if TYPE_CHECKING:
    from .capability import CapabilityService
    from .gate import GateService
    from .graft import GraftService
    from .inject import InjectService
    from .jobs import JobRunner
    from .memory import MemoryService
    from .optimizer import OptimizerService
    from .overview import StatusService
    from .profile import ProfileService
    from .sessions import SessionsService, Source


class DebugStatusJson(Panel):
    """Graft's debug panel with memory's counts beside it, as one read (`dshkit graft
    debug-status --json`, the MCP tool `graft_debug_status`)."""

    memory: MemoryCountsJson


class App:
    """Every capability's service over the state directory `state_dir`, reading sessions from
    `sources` (each harness's own root when None). Building it does no I/O; `open` also
    checks that the store can be used."""

    def __init__(
        self,
        state_dir: Path,
        sources: Sequence[Source] | None = None,
        *,
        jobs: JobRunner | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._sources = None if sources is None else list(sources)
        self._jobs = jobs
        self.busy_timeout = busy_timeout

    @classmethod
    def open(
        cls,
        state_dir: str | Path | None = None,
        sources: Sequence[Source] | None = None,
        *,
        jobs: JobRunner | None = None,
        busy_timeout: float = 30.0,
    ) -> tuple[App, list[str]]:
        """The app over `state_dir` (the default state directory when None), once its store
        opened: a database that cannot be used raises StoreError (the tree's Unavailable)
        here, before any surface starts. Also what was tightened of the directory's modes
        (each a note for the person: it held people's words open to others)."""
        from .paths import state_dir as resolve
        from .store import Store

        directory = resolve(None if state_dir is None else str(state_dir))
        with Store(directory, busy_timeout=busy_timeout) as store:
            notes = list(store.tightened)
        return cls(directory, sources, jobs=jobs, busy_timeout=busy_timeout), notes

    def use(self, **services: object) -> App:
        """Put prebuilt services in place of those the app would build (`use(gate=…)`): an
        embedding, or a test, that wants one service made differently. Only names the app
        builds are taken."""
        for name, service in services.items():
            if not isinstance(getattr(type(self), name, None), cached_property):
                raise ValueError(f"the app builds no service called {name!r}")
            self.__dict__[name] = service  # where cached_property keeps what it built
        return self

    @property
    def sources(self) -> list[Source]:
        """The session roots a refresh reads."""
        if self._sources is None:
            from .sessions import default_sources

            self._sources = default_sources()
        return self._sources

    @cached_property
    def jobs(self) -> JobRunner:
        """The one runner of background jobs (a second job of a kind gets the running one)."""
        if self._jobs is None:
            from .jobs import JobRunner

            self._jobs = JobRunner()
        return self._jobs

    @cached_property
    def sessions(self) -> SessionsService:
        from .sessions import SessionsService

        return SessionsService(self.state_dir, sources=self.sources, busy_timeout=self.busy_timeout)

    @cached_property
    def profile(self) -> ProfileService:
        from .profile import ProfileService

        return ProfileService(
            self.state_dir, jobs=self.jobs, sources=self.sources, busy_timeout=self.busy_timeout
        )

    @cached_property
    def optimizer(self) -> OptimizerService:
        from .optimizer import OptimizerService

        return OptimizerService(
            self.state_dir, jobs=self.jobs, sources=self.sources, busy_timeout=self.busy_timeout
        )

    @cached_property
    def capability(self) -> CapabilityService:
        from .capability import CapabilityService

        return CapabilityService(self.state_dir, busy_timeout=self.busy_timeout)

    @cached_property
    def gate(self) -> GateService:
        from .gate import GateService

        return GateService(self.state_dir, jobs=self.jobs, busy_timeout=self.busy_timeout)

    @cached_property
    def graft(self) -> GraftService:
        from .graft import GraftService

        return GraftService(self.state_dir, sources=self.sources, busy_timeout=self.busy_timeout)

    @cached_property
    def memory(self) -> MemoryService:
        """What sessions learned, per workspace (harvest, read, inject, quarantine, skills)."""
        from .memory import MemoryService

        return MemoryService(self.state_dir, sources=self.sources, busy_timeout=self.busy_timeout)

    @cached_property
    def status(self) -> StatusService:
        from .overview import StatusService

        return StatusService(self.state_dir)

    @cached_property
    def inject(self) -> InjectService:
        """What each hook event would inject into a session (a preview: nothing delivered)."""
        from .inject import InjectService

        return InjectService(self.state_dir)

    def debug_status(
        self, session: str | None = None, harness: str | None = None, cwd: str | None = None
    ) -> DebugStatusJson:
        """Graft's debug panel (of `session` too, when given) and memory's counts, as of the
        workspace of `cwd` when given."""
        panel = self.graft.debug_status(session, harness)
        memory = self.memory
        counts = memory.counts(None if cwd is None else memory.workspace(cwd=cwd))
        return {**panel, "memory": counts}
