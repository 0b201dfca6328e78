"""The optimizer's one face: each use case once, for the CLI, MCP, the web and the hook alike.

A use case checks its input, brings the store as fresh as its caller asks (`Refresh`),
resolves the session it names (never a guess: none or several matching is an error),
applies the settings and runs the pipeline. Errors come from the tree (`dshkit.errors`) or
are a `ConfigError` naming the setting; a run that passed the raw words on is a `Run` with
`fallback` set, not an error: each surface decides what that means for it.

Constructing the service does no I/O; each call opens its own store connection, so one
service can be driven from any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import harnesses
from ..errors import Busy, Invalid, NotFound
from ..store import LeaseBusy, Store
from .runs import (
    OUTCOMES,
    PASSED_OFF,
    PASSED_PREFIX,
    PASSED_REFINED,
    Run,
    RunList,
    get_run,
    is_last_refined,
    last_markable,
    list_runs,
    record_outcome,
    record_passed,
    success_rates,
)
from .settings import Settings, set_project_settings, set_session_settings, settings_for
from .strategies import PASSTHROUGH_TIER

if TYPE_CHECKING:
    from ..jobs import JobRunner, Submitted
    from ..llm import LLMConfig
    from ..sessions.catalog import Catalog, SessionInfo, SessionKey
    from ..sessions.freshness import Refresh
    from ..sessions.scanner import Source
    from .evaluate import Evaluation
    from .wire import RunJson

JOB_KIND = "optimizer"

Progress = Callable[[str, str], None]  # (stage, message), as the pipeline reports


@dataclass(frozen=True, slots=True)
class _Request:
    """What one optimization resolved to, before any model is asked."""

    raw: str
    session: SessionKey | None  # whose history is read (None: none)
    owner: SessionKey | None  # the session the words were typed in, known or not
    settings: Settings
    cwd: str | None  # the directory the read-only tools may read (None: no files)


class OptimizerService:
    """The optimizer's use cases over one state directory.

    `jobs` runs background optimizations (`start` needs it; the web shares its runner);
    `sources` are the session roots a refresh scans (none: the store as the last scan left
    it); `busy_timeout` bounds each store statement's wait for another process's lock.
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        jobs: JobRunner | None = None,
        sources: Sequence[Source] | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._jobs = jobs
        self.sources = list(sources or ())
        self.busy_timeout = busy_timeout

    def _open(self) -> Store:
        return Store(self.state_dir, busy_timeout=self.busy_timeout)

    # -- optimizing -------------------------------------------------------------------------

    def optimize(
        self,
        raw: str,
        *,
        session: str | None = None,
        harness: str | None = None,
        typed_in: SessionKey | None = None,
        cwd: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        refresh: Refresh,
        progress: Progress | None = None,
        deadline_s: float | None = None,
        started: float | None = None,
    ) -> Run:
        """Optimize `raw` and store the run.

        `session` (an id or a unique prefix, of `harness` when given) gives the history and,
        without `cwd`, the directory the tools may read; or `typed_in`, the session the words
        were typed in as its harness names it: its settings apply, and its history once the
        store knows it (a session's first prompt can come before any scan stored it).
        `refresh` says how fresh the store must be before a session is read; `overrides`
        (`tier`, `form`, `turns`, `full`) go over the settings; `deadline_s` shortens the
        settings' timeout, which counts from `started` (a `time.monotonic()`; default: now),
        reading the session included.
        """
        started = time.monotonic() if started is None else started
        with self._open() as store:
            request = self._request(
                store, raw, session, harness, typed_in, cwd, overrides, refresh, deadline_s
            )
            return self._run(store, request, progress, started)

    def compare(
        self,
        raw: str,
        *,
        session: str,
        harness: str | None = None,
        cwd: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        refresh: Refresh,
    ) -> tuple[Run, Run]:
        """The same raw words optimized twice for one named session, with its history (as
        the settings show it) and without any: does the history make the instruction hit
        the right target, and does the model guess without it?
        (docs/design/optimizer.md#comparing-with-and-without-the-history). Both runs are
        stored; the files the tools may read are the same."""
        if not session or not session.strip():
            raise Invalid("name the session whose history is compared", field="session")
        given = dict(overrides or {})
        with_history = self.optimize(
            raw, session=session, harness=harness, cwd=cwd, overrides=given, refresh=refresh
        )
        without = {**given, "turns": 0, "full": False}
        without_history = self.optimize(
            raw, session=session, harness=harness, cwd=cwd, overrides=without, refresh=refresh
        )
        return with_history, without_history

    def start(
        self,
        raw: str,
        *,
        session: str | None = None,
        harness: str | None = None,
        cwd: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        refresh: Refresh,
    ) -> Submitted:
        """`optimize` in the background, as a job reporting its stages. What is wrong with
        the request raises before anything starts; the job's result is the run's JSON, and a
        run that passed the raw words on fails the job, keeping that JSON."""
        from ..jobs import JobFailed

        if self._jobs is None:
            raise RuntimeError("start() needs an OptimizerService made with jobs=")
        jobs = self._jobs
        with self._open() as store:
            request = self._request(
                store, raw, session, harness, None, cwd, overrides, refresh, None
            )

        def work(progress: Progress) -> RunJson:
            with self._open() as store:
                run = self._run(store, request, progress, None)
            if run.fallback:
                raise JobFailed(f"the raw words were passed on: {run.fallback}", run.as_json())
            return run.as_json()

        return jobs.submit(JOB_KIND, self.state_dir, work, label=raw[:60])

    def _request(
        self,
        store: Store,
        raw: object,
        session: str | None,
        harness: str | None,
        typed_in: SessionKey | None,
        cwd: str | None,
        overrides: Mapping[str, Any] | None,
        mode: Refresh,
        deadline_s: float | None,
    ) -> _Request:
        if not isinstance(raw, str) or not raw.strip():
            raise Invalid("the raw words are empty", field="raw")
        _check_harness(harness)
        named = session if session and session.strip() else None
        if named is not None or typed_in is not None:
            self._refresh(store, typed_in[0] if typed_in else harness, mode)
        catalog = _catalog(store)
        key: SessionKey | None
        if typed_in is not None:
            info = catalog.get(typed_in)
            key, reads = typed_in, typed_in if info else None
        else:
            info = _find(catalog, named, harness) if named is not None else None
            key = reads = info.key if info else None
        where = cwd or (info.cwd if info and info.cwd else None)
        settings = settings_for(store, key, dict(overrides or {}), project=where)
        if deadline_s is not None:
            settings = replace(settings, timeout_s=min(settings.timeout_s, deadline_s))
        # A session the store does not know has no directory of its own to ground in: the
        # directory the harness reports is only where its settings are chosen.
        tools_cwd = None if typed_in is not None and info is None else where
        return _Request(raw, reads, key, settings, tools_cwd)

    def _refresh(self, store: Store, harness: str | None, mode: Refresh) -> None:
        """Scan the roots of `harness` (all, when None) as `mode` asks."""
        # (here: the prompt hook with the optimizer off never scans, nor loads the scanner)
        from ..sessions.freshness import refresh

        wanted = [source for source in self.sources if harness in (None, source.harness)]
        try:
            refresh(store, wanted, mode)
        except LeaseBusy as exc:
            raise Busy(str(exc)) from exc

    def _run(
        self, store: Store, request: _Request, progress: Progress | None, started: float | None
    ) -> Run:
        from .pipeline import optimize  # the model client and the tools load only to optimize

        llm = _llm(store, request.settings)
        return optimize(
            store,
            request.raw,
            request.settings,
            llm,
            session=request.session,
            cwd=request.cwd,
            progress=progress,
            owner=request.owner,
            started=started,
        )

    def passes(self, raw: str, settings: Settings, harness: str | None) -> str | None:
        """Why `raw` goes to the agent without a model call under `settings` (tier off, a
        bare continuation, a command to the harness: runs.PASSED_*), or None."""
        if settings.tier == PASSTHROUGH_TIER:
            return PASSED_OFF
        from .trivial import needs_no_model

        return needs_no_model(raw, harness, settings)

    def record_passed(
        self,
        raw: str,
        settings: Settings,
        why: str,
        *,
        typed_in: SessionKey | None,
        cwd: str | None,
        started: float,
    ) -> Run:
        """Store a prompt that went to the agent as typed, without a model call (`why`)."""
        with self._open() as store:
            return record_passed(
                store,
                raw,
                settings.tier,
                settings.form,
                why,
                owner=typed_in,
                cwd=cwd,
                started=started,
            )

    def prefixed(self, body: str, typed_in: SessionKey | None) -> str:
        """Why a prompt sent with dshkit's prefix passes (runs.PASSED_*): the refined
        instruction of the session's last run pasted back (review), or the person's own
        words (`body`: the prompt without the prefix)."""
        if typed_in is not None:
            with self._open() as store:
                if is_last_refined(store, *typed_in, body):
                    return PASSED_REFINED
        return PASSED_PREFIX

    def mark_last(self, typed_in: SessionKey, outcome: str) -> Run:
        """Mark the newest run of the session the person typed in (`typed_in`, as its
        harness names it) `ok` or `rework`: the run a continuation carried on, never the
        continuation itself. NotFound when the session has none."""
        if outcome not in OUTCOMES:
            raise Invalid(f"outcome must be one of {', '.join(OUTCOMES)}", field="outcome")
        with self._open() as store:
            run = last_markable(store, *typed_in)
            return record_outcome(store, run.id or 0, outcome)

    def mark_last_of(self, session: str, harness: str | None, outcome: str) -> Run:
        """`mark_last` for a session named by id or unique prefix (the console's)."""
        _check_harness(harness)
        with self._open() as store:
            key = _find(_catalog(store), session, harness).key
        return self.mark_last(key, outcome)

    # -- runs and outcomes ------------------------------------------------------------------

    def runs(self, limit: int = 50, tier: str | None = None) -> RunList:
        """The newest `limit` runs (of `tier` when given) and every tier's success rate."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise Invalid(f"limit must be a whole number from 1, got {limit!r}", field="limit")
        with self._open() as store:
            return RunList(list_runs(store, limit, tier), success_rates(store))

    def run(self, run_id: int) -> Run:
        """Everything kept of one run (RunNotFound)."""
        with self._open() as store:
            return get_run(store, run_id)

    def last_run(self) -> Run:
        """The newest run (NotFound when there is none yet)."""
        with self._open() as store:
            newest = list_runs(store, 1)
        if not newest:
            raise NotFound("no optimizer run yet", field="run")
        return newest[0]

    def record_outcome(self, run_id: int, outcome: str) -> Run:
        """Mark a run `ok` (the agent got it right in one pass) or `rework`; marking again
        replaces the mark."""
        if outcome not in OUTCOMES:
            raise Invalid(f"outcome must be one of {', '.join(OUTCOMES)}", field="outcome")
        with self._open() as store:
            return record_outcome(store, run_id, outcome)

    # -- settings ---------------------------------------------------------------------------

    def settings(
        self,
        session: str | None = None,
        harness: str | None = None,
        *,
        typed_in: SessionKey | None = None,
        project: str | None = None,
    ) -> Settings:
        """The settings an optimization would run with: the defaults, then the project's
        (`project`, a working directory; without it, a named session's own directory), then
        a named session's (`session`, an id or unique prefix) or `typed_in`'s own."""
        _check_harness(harness)
        with self._open() as store:
            key = typed_in
            if key is None and session and session.strip():
                info = _find(_catalog(store), session, harness)
                key, project = info.key, project or info.cwd or None
            elif project is None and key is not None and (known := _catalog(store).get(key)):
                project = known.cwd or None
            return settings_for(store, key, project=project)

    def set_settings(
        self,
        session: str | None,
        harness: str | None,
        values: Mapping[str, Any],
        *,
        project: str | None = None,
    ) -> Settings:
        """Merge `values` into one session's own settings, or (`project`, a working
        directory) into that project's, which every session working there starts from; only
        the keys given change (a None value removes one). Returns what that session or a new
        session of that project now runs with. ConfigError names a value not allowed."""
        named = session if session and session.strip() else None
        if (named is None) == (project is None):
            raise Invalid(
                "name either a session or a project whose settings change", field="session"
            )
        _check_harness(harness)
        with self._open() as store:
            if project is not None:
                if not Path(project).is_dir():
                    raise Invalid(f"no directory {project!r}", field="project")
                set_project_settings(store, project, dict(values))
                return settings_for(store, None, project=project)
            info = _find(_catalog(store), named or "", harness)
            set_session_settings(store, info.key, dict(values))
            return settings_for(store, info.key, project=info.cwd or None)

    # -- the live verification table --------------------------------------------------------

    def evaluate(self, cases: Path, *, cwd: str, progress: Progress | None = None) -> Evaluation:
        """Run the case file `cases` against the configured model, every tier that calls it,
        with `cwd` as the directory the tools may read. Calls the real model."""
        from .evaluate import Evaluation, evaluate, load_cases

        try:
            loaded = load_cases(cases)
        except ValueError as exc:
            raise Invalid(str(exc), field="cases") from exc
        with self._open() as store:
            llm = _load_llm(store)
            return Evaluation(evaluate(store, loaded, llm, cwd=cwd, progress=progress))


def _check_harness(harness: str | None) -> None:
    if harness is not None and harness not in harnesses.NAMES:
        raise Invalid(str(harnesses.UnknownHarness(harness)), field="harness")


def _catalog(store: Store) -> Catalog:
    """The store's session catalog (imported here: the prompt hook, given its session and
    directory, reads no catalog)."""
    from ..sessions.catalog import Catalog

    return Catalog(store)


def _find(catalog: Catalog, session: str, harness: str | None) -> SessionInfo:
    """The stored session `session` names: SessionNotFound saying so, SessionAmbiguous
    naming the matches."""
    from ..sessions.catalog import SessionNotFound

    try:
        return catalog.find(session, harness)
    except SessionNotFound:
        of = f" of {harness}" if harness else ""
        raise SessionNotFound(
            f"no single session{of} matches {session!r} (dshkit sessions list)", field="session"
        ) from None


def _llm(store: Store, settings: Settings) -> LLMConfig | None:
    """The LLM the settings call for, checked, or None when the tier is off."""
    return None if settings.tier == PASSTHROUGH_TIER else _load_llm(store)


def _load_llm(store: Store) -> LLMConfig:
    """The configured LLM, checked: ConfigError says what is missing."""
    from ..llm import LLMConfig

    llm = LLMConfig.load(store.state_dir)
    llm.check()
    return llm
