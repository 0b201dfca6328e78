"""`dshkit forget SESSION`: drop what dshkit read of one session, and skip its logs from now on."""

from __future__ import annotations

import click

from .common import HARNESSES, ID, json_option, print_json, state_dir_option, stdout
from .sessions import sessions_service


@click.command()
@click.argument("session_id", type=ID)
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def forget(session_id: str, harness: str | None, state_dir: str | None, as_json: bool) -> None:
    """Forget one session for good: what dshkit read of it is deleted, and later scans skip
    its logs (the harness's own files are not touched).

    SESSION_ID may be a unique prefix of the id.
    """
    forgotten = sessions_service(state_dir).forget(session_id, harness)
    if as_json:
        print_json(forgotten.as_json())
    else:
        stdout.print(f"forgot {forgotten.harness}:{forgotten.session_id}", markup=False)
