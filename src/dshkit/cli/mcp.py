"""`dshkit mcp`: dshkit's MCP server, on stdio (as harnesses start it: the pipe is theirs) or
on streamable HTTP bound to 127.0.0.1, where every request comes from this user and carries
the server's own bearer token (`<state dir>/mcp-token`, drawn anew at each start)."""

from __future__ import annotations

from pathlib import Path

import click

from ..paths import state_dir as resolve_state_dir
from ..store import StoreError
from .common import roots_option, sources_for, state_dir_option, stderr

DEFAULT_PORT = 8766  # beside `dshkit serve`'s 8765


@click.command()
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address to bind; 127.0.0.1 only (plain HTTP: the bearer token "
    "would cross the network readable).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="With --http: the port (0: any free one, printed on stderr).",
)
@click.option(
    "--no-profile",
    is_flag=True,
    help="Leave the profile out of the server's instructions (where dshkit's hooks inject it).",
)
@roots_option
@state_dir_option
def mcp(
    http: bool,
    host: str,
    port: int,
    no_profile: bool,
    roots: tuple[Path, ...],
    harness: str | None,
    state_dir: str | None,
) -> None:
    """Serve dshkit's tools over MCP (stdio: stdout carries the protocol only, messages go to
    stderr). Its instructions are the profile, for harnesses that put them in the system
    prompt. `dshkit install-hooks` registers it with each harness, with --no-profile: the
    hooks installed beside it inject the profile once per session. Over --http every request
    needs `Authorization: Bearer <token>`, the token in <state dir>/mcp-token (new at each
    start), and comes from this user of the machine."""
    # Here, not at the top: `dshkit --help` imports every command module, and the SDK is big.
    from ..mcp.server import HTTP_HOST, HTTP_PATH, build_server, serve_http, serve_stdio
    from ..web.app import MCP_TOKEN_FILE, new_token
    from ..web.server import listen

    if not http and (host != HTTP_HOST or port != DEFAULT_PORT):
        raise click.UsageError("--host and --port go with --http")
    if host != HTTP_HOST:
        raise click.BadParameter(
            f"{host!r}: the MCP server speaks plain HTTP (its bearer token would cross the "
            f"network readable), so it serves on {HTTP_HOST} only",
            param_hint="--host",
        )
    directory = resolve_state_dir(state_dir)
    try:
        server = build_server(
            directory, sources_for(roots, harness), profile=not no_profile, harness=harness
        )
    except (StoreError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not http:
        serve_stdio(server)
        return
    try:
        token = new_token(directory, MCP_TOKEN_FILE)  # its own, and new at each start
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        sock = listen(HTTP_HOST, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {HTTP_HOST}:{port}: {exc.strerror}") from exc
    bound = sock.getsockname()[1]
    stderr.print(f"dshkit MCP server at http://{HTTP_HOST}:{bound}{HTTP_PATH}", markup=False)
    stderr.print(
        f"every request needs `Authorization: Bearer <token>`, the token in "
        f"{directory / MCP_TOKEN_FILE}; only this user of the machine is served",
        markup=False,
    )
    serve_http(server, sock, token)
