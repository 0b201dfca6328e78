"""`dshkit open`: the console of the running `dshkit serve`, opened in the browser signed in
(a one-time login link the service mints for the token of the state directory, opened
through a 0600 redirect file so that no secret is on the browser's command line)."""

from __future__ import annotations

import webbrowser

import click

from ..errors import Unavailable
from ..paths import state_dir as resolve_state_dir
from ..web import link
from .common import json_option, print_json, state_dir_option, stderr


@click.command("open")
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Print a one-time login link instead of opening the browser.",
)
@json_option
@state_dir_option
def open_console(print_only: bool, as_json: bool, state_dir: str | None) -> None:
    """Open the console in the browser, signed in. Each run mints a one-time login link
    (good for one sign-in within two minutes); the browser is opened on a private redirect
    file, never on the link, which would be readable in its command line. --print and
    --json show the link instead of opening it."""
    # Here, not at the top: `dshkit --help` imports every command module.
    from ..web.login import LoginRefused, mint_link

    directory = resolve_state_dir(state_dir)
    served = link.recorded(directory)
    if served is None:
        raise Unavailable(
            f"no `dshkit serve` is running for {directory}: start it (it prints a login link too)"
        )
    try:
        url = mint_link(directory, served)
    except LoginRefused as exc:
        raise Unavailable(str(exc)) from exc
    if as_json:
        print_json({"url": url, "oneTime": True})
        return
    if print_only:
        click.echo(url)
        return
    page = link.redirect_file(directory, url)
    try:
        started = webbrowser.open(page.as_uri())
    except (OSError, ValueError) as exc:  # $BROWSER that cannot be run or parsed
        raise Unavailable(
            f"the browser could not be started ({exc}); `dshkit open --print` shows a link"
        ) from exc
    if not started:
        raise Unavailable("no browser could be started; `dshkit open --print` shows a link")
    stderr.print(f"opened the console of {served.url} in the browser", markup=False)
