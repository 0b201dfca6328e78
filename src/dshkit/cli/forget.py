"""`dshkit forget SESSION`: drop what dshkit read of one session, and skip its logs from now on."""

from __future__ import annotations

import click

from ..sessions import Scanner
from ..store import LeaseBusy
from .common import (
    HARNESSES,
    find_session,
    json_option,
    open_store,
    print_json,
    state_dir_option,
    stdout,
)


@click.command()
@click.argument("session_id")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def forget(session_id: str, harness: str | None, state_dir: str | None, as_json: bool) -> None:
    """Forget one session for good: what dshkit read of it is deleted, and later scans skip
    its logs (the harness's own files are not touched).

    SESSION_ID may be a unique prefix of the id.
    """
    with open_store(state_dir) as store:
        scanner = Scanner(store)
        info = find_session(scanner.catalog, session_id, harness)
        try:
            scanner.forget(info.key)
        except LeaseBusy as exc:
            raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json({"forgotten": {"harness": info.harness, "id": info.session_id}})
    else:
        stdout.print(f"forgot {info.harness}:{info.session_id}", markup=False)
