"""prompt-adapt's API under /api/profile/: the state, its writes, and background runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NotRequired, ParamSpec, TypedDict, TypeVar

from starlette.requests import Request

from ...profile import CATEGORY_LABELS, Mode, ProfileService
from ...profile.service import CONTRACT
from ...profile.wire import (
    ConsoleStateJson,
    CopiedSnapshotJson,
    EntryChangeJson,
    ProfileVersionsJson,
)
from ..routing import ApiError, Json, JsonObject, Router, decimal, json_response
from .jobs import job_path

if TYPE_CHECKING:
    from ...app import App

P = ParamSpec("P")
T = TypeVar("T")


class Category(TypedDict):
    """One category of entries, named as the agent is told it (English and Chinese)."""

    key: str
    label: str
    labelZh: str


CATEGORIES: list[Category] = [
    {"key": key, "label": english, "labelZh": chinese}
    for key, (chinese, english) in CATEGORY_LABELS.items()
]


class SelfCheck(TypedDict):
    """Whose service this is: its name, the profile's contract, its state directory (doctor
    tells this install's from another's), and every endpoint it serves."""

    name: str
    contract: int
    stateDir: str
    endpoints: list[str]


class ProfileView(ConsoleStateJson):
    """The console's profile view, with the categories' names as the agent is told them."""

    categories: list[Category]


class ProfileModeBody(TypedDict):
    """The mode to inject in: the generated profile (`auto`) or the person's text (`custom`)."""

    mode: str


class ModeSet(TypedDict):
    """The mode set, and the view after."""

    ok: bool
    mode: str
    state: ProfileView


class CustomBody(TypedDict):
    """The text injected in custom mode (refused when it could not reach the agent whole)."""

    text: str


class CustomSet(TypedDict):
    """The custom text's length, and the view after."""

    ok: bool
    length: int
    state: ProfileView


class CopiedBody(TypedDict):
    """The text the person copied, and the entries it was made of (the newest version's when
    not a list)."""

    text: str
    entries: NotRequired[Any]


class CopiedAnswer(TypedDict):
    """The snapshot kept of the copy."""

    ok: bool
    copiedSnapshot: CopiedSnapshotJson


class EntryEdit(TypedDict):
    """A person's edit of one entry: its claim and/or its category (one of them at least)."""

    claim: NotRequired[Any]
    category: NotRequired[str | None]


class EntryChanged(EntryChangeJson):
    """What the change made, and the view after."""

    ok: bool
    state: ProfileView


class RunStarted(TypedDict):
    """A background run asked for (202, its `location` header the job's path): whether it
    started (False: one was running already)."""

    started: bool
    running: bool


def _mode(body: JsonObject) -> ProfileModeBody:
    mode = body.get("mode")
    if not isinstance(mode, str) or mode not in {m.value for m in Mode}:
        raise ApiError(400, f"mode must be 'auto' or 'custom', got {mode!r}")
    return {"mode": mode}


def _custom(body: JsonObject) -> CustomBody:
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError(400, f"text must be a string, got {type(text).__name__}")
    return {"text": text}


def _copied(body: JsonObject) -> CopiedBody:
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError(400, "expected a JSON object with a string 'text'")
    return {"text": text, "entries": body.get("entries")}


def _entry_edit(body: JsonObject) -> EntryEdit:
    claim, category = body.get("claim"), body.get("category")
    if category is not None and not isinstance(category, str):
        raise ApiError(400, f"category must be a string, got {type(category).__name__}")
    return {"claim": claim, "category": category}


def router(service: ProfileService) -> Router:
    api = Router("profile")

    @api.get("/")
    async def self_check(request: Request) -> Json[SelfCheck]:
        """Whose service this is, and what it serves (doctor tells this install's from
        another's by its state directory)."""
        return json_response(
            {
                "name": "dshkit",
                "contract": CONTRACT,
                "stateDir": str(service.state_dir),
                "endpoints": api.endpoints,
            }
        )

    def state() -> ProfileView:
        # The categories' names as the agent is told them (the page shows no names of its own).
        return {**service.state().as_json(), "categories": CATEGORIES}

    @api.get("/state")
    async def get_state(request: Request) -> Json[ProfileView]:
        """Everything the console's profile view shows: the text exactly as injected, the mode,
        the person's texts, the newest version, the last run and copy, the removed entries."""
        return json_response(await asyncio.to_thread(state), headers={"cache-control": "no-store"})

    @api.get("/versions")
    async def get_versions(request: Request) -> Json[ProfileVersionsJson]:
        """The newest kept versions (`?limit=`, 50 unless given), newest first, with diffs."""
        given = request.query_params.get("limit", "50")
        limit = decimal(given)  # its range is the service's to check
        if limit is None:
            raise ApiError(400, f"limit must be a whole number, got {given!r}")
        versions = await asyncio.to_thread(_checked, service.versions, limit)
        return json_response(versions.as_json(), headers={"cache-control": "no-store"})

    @api.post("/mode", body=_mode)
    async def post_mode(request: Request, body: ProfileModeBody) -> Json[ModeSet]:
        """Inject the generated profile (`auto`) or the person's own text (`custom`)."""
        mode = body["mode"]
        await asyncio.to_thread(_checked, service.set_mode, mode)
        return json_response({"ok": True, "mode": mode, "state": await asyncio.to_thread(state)})

    @api.put("/custom", body=_custom)
    async def put_custom(request: Request, body: CustomBody) -> Json[CustomSet]:
        """Set the text injected in custom mode (refused when it could not reach the agent
        whole)."""
        text = body["text"]
        await asyncio.to_thread(_checked, service.set_custom, text)
        shown = await asyncio.to_thread(state)
        return json_response({"ok": True, "length": len(text), "state": shown})

    @api.post("/copied", body=_copied)
    async def post_copied(request: Request, body: CopiedBody) -> Json[CopiedAnswer]:
        """Remember that the person copied the text (so the console can tell when the
        evidence behind it changed)."""
        copied = await asyncio.to_thread(_checked, service.copy, body["text"], body.get("entries"))
        return json_response({"ok": True, "copiedSnapshot": copied.as_json()})

    async def change_entry(
        request: Request, action: str, claim: Any = None, category: str | None = None
    ) -> Json[EntryChanged]:
        changed = await asyncio.to_thread(
            _checked,
            service.change_entry,
            request.path_params["id"],
            action,
            claim=claim,
            category=category,
        )
        shown = await asyncio.to_thread(state)
        return json_response({"ok": True, **changed.as_json(), "state": shown})

    # Before the route of the other actions: an edit is the one that takes a body.
    @api.post("/entries/{id}/edit", body=_entry_edit)
    async def edit_entry(request: Request, body: EntryEdit) -> Json[EntryChanged]:
        """Edit one entry of the newest version (its claim and/or category), stored as a new
        version; the entry is then pinned: regenerations keep it as the person left it."""
        return await change_entry(request, "edit", body.get("claim"), body.get("category"))

    @api.post("/entries/{id}/{action}")
    async def post_entry(request: Request) -> Json[EntryChanged]:
        """Pin, unpin or remove one entry of the newest version (stored as a new version), or
        restore a removed one (`restore`: a later regeneration may write it again)."""
        return await change_entry(request, request.path_params["action"])

    def start(force: bool) -> Json[RunStarted]:
        submitted = service.start_generate(force=force)
        return json_response(
            {"started": submitted.started, "running": True},
            202,
            headers={"location": job_path(submitted.job)},
        )

    @api.post("/regenerate")
    async def regenerate(request: Request) -> Json[RunStarted]:
        """Regenerate the profile now, in the background (a job of kind profile)."""
        return start(force=True)

    @api.post("/rescan")
    async def rescan(request: Request) -> Json[RunStarted]:
        """Read what is new in the sessions, then regenerate when enough is new, in the
        background (a job of kind profile)."""
        return start(force=False)

    return api


def _checked(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a use case (rejected text is the tree's Invalid, or TooLarge: the router maps it)."""
    return call(*args, **kwargs)


def from_app(app: App) -> Router:
    """The router over the app's profile."""
    return router(app.profile)
