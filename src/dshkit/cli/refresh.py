"""`dshkit refresh`: scan, then generate the profile if the trigger fires; never waits."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import Busy
from ..sessions import Refresh
from .common import (
    json_option,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
)
from .profile import service_for


@click.command()
@roots_option
@state_dir_option
@json_option
def refresh(
    roots: tuple[Path, ...], harness: str | None, state_dir: str | None, as_json: bool
) -> None:
    """Read what is new and update the profile when enough is new (what the hooks start on
    Stop and SessionEnd). Does nothing when another scan is running, and skips the
    generation (saying so in the profile's lastRun) when another one is running."""
    service = service_for(state_dir, sources_for(roots, harness))
    try:
        result = service.generate(refresh=Refresh.TRY, wait_turn=False)
    except Busy:
        if as_json:
            print_json({"ran": False, "reason": "another scan is running"})
        return
    if as_json:
        print_json({"ran": True, **result.as_json()})
