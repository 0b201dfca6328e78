"""`dshkit serve`: the local service (every capability's API, job progress, a status page)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..app import App
from ..web import link
from ..web.app import TOKEN_FILE, create_app, new_token
from ..web.security import TOKEN_HEADER, is_loopback_address
from ..web.server import listen, make_server, resolve
from .common import open_store, roots_option, sources_for, state_dir_option, stderr


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host: other machines may connect (with the token, as this "
    "machine does; plain HTTP).",
)
@roots_option
@state_dir_option
def serve(
    host: str,
    port: int,
    allow_remote: bool,
    roots: tuple[Path, ...],
    harness: str | None,
    state_dir: str | None,
) -> None:
    """Serve the API on this machine (loopback only unless --allow-remote)."""
    with open_store(state_dir) as store:  # refuse a newer or broken database before serving
        directory = store.state_dir
    try:
        token = new_token(directory)  # each start its own: a token that leaked dies here
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        address = resolve(host)
    except OSError as exc:
        raise click.ClickException(f"cannot resolve --host {host}: {exc}") from exc
    if not is_loopback_address(address) and not allow_remote:
        raise click.ClickException(
            f"--host {host} ({address}) is not a loopback address: other machines could "
            "connect. Serve on 127.0.0.1, or pass --allow-remote to let them in with the token."
        )
    try:
        sock = listen(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    bound, real_port = sock.getsockname()[:2]
    shown = f"[{bound}]" if ":" in bound else bound
    served = App(directory, sources_for(roots, harness))
    app = create_app(served, token, allow_remote=allow_remote)
    stderr.print(
        f"dshkit serving http://{shown}:{real_port}/ (API under /api/, state in {directory})",
        markup=False,
    )
    if is_loopback_address(bound):
        stderr.print(
            "only this machine can connect, and only this user (uid "
            f"{os.geteuid()}) with the token or a login link",
            markup=False,
        )
    else:
        stderr.print(
            f"warning: --allow-remote: other machines can connect (bound to {shown}:{real_port}) "
            "with the token; the traffic is plain HTTP (not encrypted): the token and what "
            "is served cross the network readable",
            markup=False,
        )
    # An unspecified bind address is no address to browse to: this machine's loopback is.
    here = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(bound, shown)
    url = f"http://{here}:{real_port}/"
    server = make_server(app)

    def stop() -> None:
        server.should_exit = True  # uvicorn's own flag: it serves no more once it is set

    with link.recording(directory, url, real_port, stop):  # before the link: `dshkit open`
        # A one-time link: the terminal is the owner's, and once used it opens nothing.
        stderr.print(
            f"open the console: {link.login_link(url, app.mint_login(ttl=None))} (one use; "
            f"`dshkit open` signs in again); scripts send the {TOKEN_HEADER} header, the "
            f"token is in {directory / TOKEN_FILE} (new at every start)",
            markup=False,
        )
        server.run(sockets=[sock])
