"""`dshkit serve`: the local service (prompt-adapt's API and a status page)."""

from __future__ import annotations

from pathlib import Path

import click

from ..paths import state_dir as resolve_state_dir
from ..profile.service import ProfileService
from ..store import Store, StoreError
from ..web.app import API, create_app, ensure_token, is_loopback
from .common import roots_option, sources_for, state_dir_option, stderr


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@roots_option
@state_dir_option
def serve(
    host: str, port: int, roots: tuple[Path, ...], harness: str | None, state_dir: str | None
) -> None:
    """Serve the profile API on this machine (loopback only by default)."""
    import uvicorn

    directory = resolve_state_dir(state_dir)
    try:
        Store(directory).close()  # refuse a newer or broken database before serving
        token = ensure_token(directory)
    except (StoreError, OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not is_loopback(host):
        stderr.print(
            f"[yellow]warning:[/] binding {host}; requests must still name a "
            "loopback host, so other machines are refused"
        )
    service = ProfileService(directory, sources_for(roots, harness))
    stderr.print(f"dshkit serving http://{host}:{port}/ (API under {API}/, state in {directory})")
    stderr.print(f"changes need the X-Dshkit-Token header: the token is in {directory / 'token'}")
    uvicorn.run(create_app(service, token), host=host, port=port, log_level="warning")
