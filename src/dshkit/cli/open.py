"""`dshkit open`: the console of the running `dshkit serve`, opened in the browser signed in
(its login link: the recorded address and the token file of the state directory)."""

from __future__ import annotations

import webbrowser

import click

from ..paths import state_dir as resolve_state_dir
from ..web import link
from ..web.app import ensure_token
from .common import json_option, print_json, state_dir_option


@click.command("open")
@click.option(
    "--print", "print_only", is_flag=True, help="Print the login link instead of opening it."
)
@json_option
@state_dir_option
def open_console(print_only: bool, as_json: bool, state_dir: str | None) -> None:
    """Open the console in the browser, signed in. The link carries the token: it is for
    this machine's owner only (--print and --json show it instead of opening it)."""
    directory = resolve_state_dir(state_dir)
    served = link.recorded(directory)
    if served is None:
        raise click.ClickException(
            f"no `dshkit serve` is running for {directory}: start it (it prints the link too)"
        )
    try:
        token = ensure_token(directory)
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    url = link.login_link(served.url, token)
    if as_json:
        print_json({"url": url})
    elif print_only:
        click.echo(url)
    elif not webbrowser.open(url):
        raise click.ClickException(
            "no browser could be started; `dshkit open --print` shows the link"
        )
