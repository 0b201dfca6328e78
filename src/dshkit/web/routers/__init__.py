"""The routers the app can mount, by name, as the descriptors name them (`dshkit.plugins`).

Each entry builds its `Router` (named like its key, mounted at `/api/<name>/`) from the `App`
with its module's `from_app`, which takes the services it serves from it; the module is
imported when the router is built. See `web.app.create_app`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import plugins
from ..routing import Router

if TYPE_CHECKING:
    from ...app import App

RouterFactory = Callable[["App"], Router]


def _factory(reference: str) -> RouterFactory:
    """The factory `reference` names ("module:function"), imported when it first builds."""
    module, _, name = reference.partition(":")

    def build(app: App) -> Router:
        made: Router = getattr(importlib.import_module(module), name)(app)
        return made

    return build


ROUTERS: dict[str, RouterFactory] = {
    name: _factory(reference) for name, reference in plugins.routers().items()
}
