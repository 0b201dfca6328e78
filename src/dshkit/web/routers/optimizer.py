"""The optimizer's API under /api/optimizer/: optimize (a job with progress), runs, outcomes,
settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar, cast

from starlette.requests import Request

from ...optimizer import OUTCOMES, OptimizerService
from ...optimizer.wire import RunDetailJson, RunListJson, SettingsJson, TierRate
from ...sessions import Refresh
from ..routing import ApiError, Json, JsonObject, Router, decimal, json_response, whole_number
from .jobs import AcceptedJob, accepted

if TYPE_CHECKING:
    from ...app import App

_OVERRIDES = ("tier", "form", "turns", "full")
_SETTINGS = (*_OVERRIDES, "permission", "skip_trivial")
T = TypeVar("T")


class OptimizeBody(TypedDict):
    """The raw words to refine; the session whose history and directory ground them (an id
    or unique prefix, of `harness`), the directory whose files may be read; and this run's
    settings over the configured ones (checked as `[optimizer]` checks them)."""

    raw: str
    session: NotRequired[str | None]
    harness: NotRequired[str | None]
    cwd: NotRequired[str | None]
    tier: NotRequired[Any]
    form: NotRequired[Any]
    turns: NotRequired[Any]
    full: NotRequired[Any]


class OutcomeBody(TypedDict):
    """A run's outcome as the person judged it: `ok` or `rework`."""

    runId: int
    outcome: str


class LastOutcomeBody(TypedDict):
    """The outcome of a session's last run a person can judge (`ok` or `rework`)."""

    session: str
    harness: NotRequired[str | None]
    outcome: str


class SettingsBody(TypedDict):
    """Settings of one session or one project (a directory), not both: each key given is set,
    a null removes it (the configured value applies again)."""

    session: NotRequired[str | None]
    project: NotRequired[str | None]
    harness: NotRequired[str | None]
    tier: NotRequired[Any]
    form: NotRequired[Any]
    turns: NotRequired[Any]
    full: NotRequired[Any]
    permission: NotRequired[Any]
    skip_trivial: NotRequired[Any]


class RatesJson(TypedDict):
    """Every tier's record (`off`: the raw words)."""

    rates: dict[str, TierRate]


class SettingsSet(TypedDict):
    """The settings in effect after the change."""

    ok: bool
    settings: SettingsJson


def _optimize(body: JsonObject) -> OptimizeBody:
    raw = body.get("raw")
    if not isinstance(raw, str) or not raw.strip():
        raise ApiError(400, "raw must be a non-empty string")
    return {
        "raw": raw,
        "session": _text(body, "session"),
        "harness": _text(body, "harness"),
        "cwd": _text(body, "cwd"),
        "tier": body.get("tier"),
        "form": body.get("form"),
        "turns": body.get("turns"),
        "full": body.get("full"),
    }


def _outcome(body: JsonObject) -> OutcomeBody:
    run_id, outcome = body.get("runId"), body.get("outcome")
    if not isinstance(run_id, int) or isinstance(run_id, bool):
        raise ApiError(400, "runId must be an integer")
    if outcome not in OUTCOMES:
        raise ApiError(400, f"outcome must be one of {', '.join(OUTCOMES)}")
    return {"runId": run_id, "outcome": outcome}


def _last_outcome(body: JsonObject) -> LastOutcomeBody:
    session, harness = _text(body, "session"), _text(body, "harness")
    outcome = body.get("outcome")
    if session is None or not session.strip():
        raise ApiError(400, "session must name the session (id or unique prefix)")
    if outcome not in OUTCOMES:
        raise ApiError(400, f"outcome must be one of {', '.join(OUTCOMES)}")
    return {"session": session, "harness": harness, "outcome": outcome}


def _settings(body: JsonObject) -> SettingsBody:
    session, project = _text(body, "session"), _text(body, "project")
    if (session is None) == (project is None):
        raise ApiError(
            400, "name either the session or the project (a directory) whose settings change"
        )
    given = {name: body[name] for name in _SETTINGS if name in body}  # a null removes that key
    parsed = {"session": session, "project": project, "harness": _text(body, "harness"), **given}
    return cast(SettingsBody, parsed)  # the settings' keys are SettingsBody's


def router(service: OptimizerService) -> Router:
    api = Router("optimizer")

    @api.post("/optimize", body=_optimize)
    async def post_optimize(request: Request, body: OptimizeBody) -> Json[AcceptedJob]:
        """Refine the raw words into a grounded instruction, in the background (a job of kind
        optimizer: its result is the run, `RunJson`)."""
        raw, session, harness, cwd = body["raw"], body["session"], body["harness"], body["cwd"]
        overrides = {name: body.get(name) for name in _OVERRIDES}
        submitted = await _call(
            lambda: service.start(
                raw,
                session=session,
                harness=harness,
                cwd=cwd,
                overrides=overrides,
                refresh=Refresh.TRY,  # the session's newest turn, unless a scan is under way
            )
        )
        return accepted(submitted)

    @api.get("/runs")
    async def get_runs(request: Request) -> Json[RunListJson]:
        """The newest runs (`?limit=`, 50 unless given; `?tier=` of one tier), and every
        tier's record."""
        limit = whole_number(request.query_params.get("limit", "50"), "limit", 1, 1000)
        tier = request.query_params.get("tier")
        listed = await _call(lambda: service.runs(limit, tier))
        return json_response(listed.as_json())

    @api.get("/runs/{run_id}")
    async def get_run(request: Request) -> Json[RunDetailJson]:
        """Everything kept of one run: its context, each step of the tool loop, each
        sentence's audit, its timings."""
        wanted = request.path_params["run_id"]
        run_id = decimal(wanted)
        if run_id is None:  # not a number, or one no run's id can be
            raise ApiError(404, f"no optimizer run {wanted!r}")
        run = await _call(lambda: service.run(run_id))
        return json_response(run.detail())

    @api.post("/outcome", body=_outcome)
    async def post_outcome(request: Request, body: OutcomeBody) -> Json[RunDetailJson]:
        """Mark a run ok or rework (marking again replaces the mark)."""
        run_id, outcome = body["runId"], body["outcome"]
        run = await _call(lambda: service.record_outcome(run_id, outcome))
        return json_response(run.detail())

    @api.get("/stats")
    async def get_stats(request: Request) -> Json[RatesJson]:
        """Per tier: added latency and the one-pass rate against the raw words (n both)."""
        listed = await _call(lambda: service.runs(1))
        return json_response({"rates": listed.rates})

    @api.post("/outcome/last", body=_last_outcome)
    async def post_outcome_last(request: Request, body: LastOutcomeBody) -> Json[RunDetailJson]:
        """Mark a session's last run (the one a person can judge) ok or rework."""
        session, harness, outcome = body["session"], body.get("harness"), body["outcome"]
        run = await _call(lambda: service.mark_last_of(session, harness, outcome))
        return json_response(run.detail())

    @api.get("/settings")
    async def get_settings(request: Request) -> Json[SettingsJson]:
        """The settings in effect for a session (`?session=`, `?harness=`), a project
        (`?project=`, a directory), or none (the configured ones)."""
        session = request.query_params.get("session")
        harness = request.query_params.get("harness")
        project = request.query_params.get("project")
        settings = await _call(lambda: service.settings(session, harness, project=project))
        return json_response(settings.as_json())

    @api.put("/settings", body=_settings)
    async def put_settings(request: Request, body: SettingsBody) -> Json[SettingsSet]:
        """Change the settings of one session or one project (a null removes a key)."""
        session, project, harness = body.get("session"), body.get("project"), body.get("harness")
        values = {k: v for k, v in body.items() if k in _SETTINGS}
        settings = await _call(
            lambda: service.set_settings(session, harness, values, project=project)
        )
        return json_response({"ok": True, "settings": settings.as_json()})

    return api


async def _call(work: Callable[[], T]) -> T:
    """Run a use case off the event loop (its errors are the router's to map)."""
    return await asyncio.to_thread(work)


def _text(body: JsonObject, name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string")
    return value


def from_app(app: App) -> Router:
    """The router over the app's prompt optimizer."""
    return router(app.optimizer)
