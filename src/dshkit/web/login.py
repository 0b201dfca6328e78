"""Asking a running `dshkit serve` for a one-time login link, with the state directory's token
(what `dshkit open` does): the link carries a code good for one sign-in, never the token."""

from __future__ import annotations

from pathlib import Path

import httpx

from .app import TOKEN_FILE
from .link import Served, login_link
from .security import LOGIN_CODES_PATH, TOKEN_HEADER

ASK_TIMEOUT_S = 10.0


class LoginRefused(Exception):
    """The service could not be asked for a login code (the message says why)."""


def mint_link(state_dir: Path, served: Served) -> str:
    """A one-time login link to the service `served` of `state_dir`."""
    path = Path(state_dir) / TOKEN_FILE
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise LoginRefused(f"cannot read the service's token {path}: {exc.strerror}") from exc
    try:
        answer = httpx.post(
            served.url.rstrip("/") + LOGIN_CODES_PATH,
            headers={TOKEN_HEADER: token},
            timeout=ASK_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise LoginRefused(f"the service at {served.url} did not answer: {exc}") from exc
    if answer.status_code != 201:
        try:
            reason = str(answer.json().get("error"))
        except ValueError:
            reason = answer.text[:200]
        raise LoginRefused(
            f"the service at {served.url} gave no login code (HTTP {answer.status_code}: "
            f"{reason}); if another `dshkit serve` of this state directory started since, "
            "stop one of them"
        )
    return login_link(served.url, str(answer.json()["code"]))
