"""The command guard under /api/guard/: the mode agents' shell commands are judged under, where
that comes from and the person's choice of it; the log of what it stopped, and a false alarm
turned into an allow rule."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from starlette.requests import Request

from ...guard.service import add_rule, log_page, mode_state, set_mode
from ...guard.wire import LogPageJson, ModeStateJson, RuleAddedJson
from ...store import SQLITE_INT_MAX
from ..routing import ApiError, Json, JsonObject, Router, json_response, whole_number


class GuardModeBody(TypedDict):
    """The mode agents' shell commands are judged under from now on, or `config` to leave it
    to config.toml again."""

    mode: str


class ModeChosen(ModeStateJson):
    """The mode now, and where it comes from."""

    ok: bool


def _mode(body: JsonObject) -> GuardModeBody:
    mode = body.get("mode")
    if not isinstance(mode, str):
        raise ApiError(400, "expected a JSON object with a string 'mode'")
    return {"mode": mode}


class RuleBody(TypedDict):
    """A rule for config.toml: its pattern (as `dshkit guard explain` shows the words), allow
    or deny, and the workspace it is for (null: every workspace)."""

    pattern: str
    kind: str
    project: str | None


def _rule(body: JsonObject) -> RuleBody:
    pattern, kind, project = body.get("pattern"), body.get("kind", "allow"), body.get("project")
    if not isinstance(pattern, str) or not isinstance(kind, str):
        raise ApiError(400, "expected a JSON object with a string 'pattern' (and 'kind')")
    if project is not None and not isinstance(project, str):
        raise ApiError(400, "'project' must be a string (an absolute directory) or null")
    return {"pattern": pattern, "kind": kind, "project": project}


if TYPE_CHECKING:
    from ...app import App


def router(state_dir: Path) -> Router:
    api = Router("guard")

    @api.get("/mode")
    async def get_mode(request: Request) -> Json[ModeStateJson]:
        """The mode commands are judged under now, where it comes from (the environment, the
        person's choice, config.toml, the default), and config.toml's own."""
        shown = await asyncio.to_thread(mode_state, state_dir)
        return json_response(shown.as_json(), headers={"cache-control": "no-store"})

    @api.post("/mode", body=_mode)
    async def post_mode(request: Request, body: GuardModeBody) -> Json[ModeChosen]:
        """Choose the mode for every agent's shell commands, or leave it to config.toml again
        (`config`)."""
        shown = await asyncio.to_thread(set_mode, state_dir, body["mode"])
        return json_response({"ok": True, **shown.as_json()})

    @api.get("/log")
    async def get_log(request: Request) -> Json[LogPageJson]:
        """What the guard stopped or asked about, newest first (`?workspace=` one workspace
        and below it, `?limit=` 50 unless given, `?before=` an id to page on from)."""
        limit = whole_number(request.query_params.get("limit", "50"), "limit", 1, 1_000)
        given = request.query_params.get("before")
        before = whole_number(given, "before", 1, SQLITE_INT_MAX) if given else None
        workspace = request.query_params.get("workspace") or None
        page = await asyncio.to_thread(log_page, state_dir, workspace, limit, before)
        return json_response(page, headers={"cache-control": "no-store"})

    @api.post("/rules", body=_rule)
    async def post_rule(request: Request, body: RuleBody) -> Json[RuleAddedJson]:
        """Write an allow (or deny) rule into config.toml, for one workspace or every one: a
        false alarm of the log turned into a rule. The file is edited, never rewritten."""
        added = await asyncio.to_thread(
            add_rule, state_dir, body["pattern"], body["kind"], body["project"]
        )
        return json_response(added)

    return api


def from_app(app: App) -> Router:
    """The router over the guard's mode in the app's state directory."""
    return router(app.state_dir)
