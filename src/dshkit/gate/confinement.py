"""What a judged page may load: the files under its own directory, and nothing else.

A deliverable is whatever an agent wrote, so it is opened as untrusted: its screenshot and
evidence are stored and served, and must never show a file it had no business reading. The
judge routes every request of the page's browser context through `Confinement.route`
(Playwright's interception sees file: navigations and subresources alike, a dedicated
worker's requests too) and every WebSocket through `Confinement.web_socket`:

- a `file:` URL is loaded only if its real path (`..` and symbolic links resolved: a link in
  the tree pointing out is outside) lies under the page's directory, and no name below that
  directory starts with a dot (`.env`, `.git/`, `.ssh/`: where secrets live);
- but a directory that is everybody's files (`too_wide`: the home directory, the file
  system's root, the temporary directory, or one holding any of them) is no confinement at
  all: a page written straight into it may load only its own file, and the verdict says so
  (docs/design/gate.md#a-judged-page-is-confined-to-its-directory);
- `data:`, `blob:` and `about:` URLs are the page's own making and pass;
- every other URL — http(s), ws(s), loopback, any other scheme — is refused.

The browser underneath is confined too (`chromium.CONFINED_FLAGS`): what interception does not
see fails in its network stack. A refused request is the gate's doing, not the page's error:
it is listed in the evidence, and the browser's console line about it is not counted.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:  # Playwright is imported when a page is judged, not with this module
    from playwright.async_api import Request, Route, WebSocketRoute

OWN_SCHEMES = frozenset({"data", "blob", "about"})
NETWORK_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
MAX_LISTED = 20  # distinct refused requests listed in the evidence; the rest are counted
MAX_URL_CHARS = 300

OUTSIDE = "a file outside the page's directory"
HIDDEN = "a hidden file or directory (a name starting with a dot)"
NETWORK = "a network request (the judged page is offline, loopback included)"
SCHEME = "a URL scheme a judged page may not load"
ONLY_OWN = (
    "a file other than the page itself (its directory is {what}, too wide to confine a page "
    "to: only its own file may load)"
)
# Shared scratch directories besides `tempfile.gettempdir()` (which follows TMPDIR).
TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")

# What the browser logs for a load the gate refused: at the interception (`abort`) or, for
# what it did not see, at the dead proxy of the confined browser.
_REFUSED_LOAD = re.compile(
    r"net::ERR_(?:BLOCKED_BY_CLIENT|PROXY_CONNECTION_FAILED|TUNNEL_CONNECTION_FAILED)\b"
)
_QUOTED_URL = re.compile(r"'([a-zA-Z][a-zA-Z0-9+.-]*:[^']+)'|\b((?:wss?|https?)://\S+?):? ")


class Confinement:
    """The load policy of one judged page, and the requests it refused.

    `root` is the directory the page may load from, None when its directory is `too_wide`
    (then `wide` says what that directory is, and only the page's own file loads). `home`
    is for tests: by default the user's own (see `too_wide`)."""

    def __init__(self, page: Path, *, home: str | os.PathLike[str] | None = None) -> None:
        self.page = Path(os.path.realpath(page))
        self.wide = too_wide(self.page.parent, home=home)
        self.root: Path | None = None if self.wide else self.page.parent
        # The first MAX_LISTED distinct (url, resource type) with why and how often; the
        # rest only counted. A page may ask for any number of URLs: nothing grows with them
        # but the set of URLs seen (what tells a console line about one apart from news).
        self._listed: dict[tuple[str, str], str] = {}
        self._counts: Counter[tuple[str, str]] = Counter()
        self._more = 0
        self._seen: set[str] = set()
        # The scripts refused from the network (a CDN's library, a module's import), each
        # with when it was first refused (monotonic): what `attribution` weighs errors against.
        self._scripts: dict[str, float] = {}

    def why_refused(self, url: str) -> str | None:
        """None when the page may load `url`, else why it may not."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in OWN_SCHEMES:
            return None
        if scheme != "file":
            return NETWORK if scheme in NETWORK_SCHEMES else SCHEME
        if parts.netloc not in ("", "localhost"):
            return OUTSIDE  # a file of another host
        try:
            path = Path(os.path.realpath(unquote(parts.path)))
            if self.root is None:  # only the page itself, by real path: no link or `..` out
                return None if path == self.page else ONLY_OWN.format(what=self.wide)
            below = path.relative_to(self.root)
        except (ValueError, OSError):  # elsewhere, or not a path (a NUL byte)
            return OUTSIDE
        if any(name.startswith(".") for name in below.parts):
            return HIDDEN
        return None

    def note(self) -> str | None:
        """What the verdict must say when the page could load only its own file."""
        if self.wide is None:
            return None
        return (
            f"only the page's own file could be loaded: its directory, {self.page.parent}, is "
            f"{self.wide}, too wide to confine a judged page to, so every other file was "
            "refused; to judge the page with its files, put them in a folder of their own"
        )

    async def route(self, route: Route, request: Request) -> None:
        """Playwright's route handler: continue an allowed request, abort any other."""
        reason = self.why_refused(request.url)
        with contextlib.suppress(Exception):  # the page or context is closing: nothing to do
            if reason is None:
                await route.continue_()
                return
            self.refuse(request.url, request.resource_type, reason)
            # A refused navigation of the page itself leaves it where it is (aborted: no
            # error page replaces the deliverable); anything else fails as blocked.
            await route.abort("aborted" if _is_top_navigation(request) else "blockedbyclient")

    async def web_socket(self, socket: WebSocketRoute) -> None:
        """Playwright's WebSocket route: never connected to a server, closed at once."""
        self.refuse(socket.url, "websocket", NETWORK)
        with contextlib.suppress(Exception):
            await socket.close(code=1008, reason="blocked by the dshkit gate")

    def refuse(self, url: str, resource_type: str, reason: str) -> None:
        key = (url, resource_type)
        self._seen.add(url)
        if resource_type == "script" and reason == NETWORK and len(self._scripts) < MAX_LISTED:
            self._scripts.setdefault(url, time.monotonic())
        if key not in self._listed and len(self._listed) < MAX_LISTED:
            self._listed[key] = reason
        if key in self._listed:
            self._counts[key] += 1
        else:
            self._more += 1

    def refused_below(self, url: str, resource_type: str) -> None:
        """Record a load the interception did not see (a worker's WebSocket, what the
        browser's console reports), which the confined browser's network refuses; once."""
        if url not in self._seen:
            self.refuse(url, resource_type, self.why_refused(url) or NETWORK)

    def refused_in_console(self, text: str, location_url: str = "") -> bool:
        """Whether a console error only reports a load the gate refused (not the page's
        error); such a load not seen before (refused at the network) is recorded."""
        if not _REFUSED_LOAD.search(text):
            return False
        found = _QUOTED_URL.search(text)
        url = (found.group(1) or found.group(2)) if found else location_url
        if url:
            if "WebSocket" in text:
                kind = "websocket"
            elif "establish a connection" in text:
                kind = "webtransport"
            else:
                kind = "other"
            self.refused_below(url, kind)
        return True

    def network_scripts(self) -> list[tuple[str, float]]:
        """The scripts refused from the network (the first MAX_LISTED), with when each was
        first refused (monotonic), in that order."""
        return list(self._scripts.items())

    def evidence(self) -> tuple[list[dict[str, Any]], int]:
        """The refused requests (the first MAX_LISTED distinct ones, in order), and how many
        refused requests that list leaves out."""
        listed = [
            {
                "url": _clip_url(url),
                "resourceType": resource_type,
                "count": self._counts[url, resource_type],
                "reason": f"blocked by the gate: {reason}; the verdict could not see it",
            }
            for (url, resource_type), reason in self._listed.items()
        ]
        return listed, self._more


def too_wide(directory: Path, *, home: str | os.PathLike[str] | None = None) -> str | None:
    """What `directory` is when confining a page to it would confine nothing (None when it
    is not): the file system's root, the home directory (`home`, by default both `$HOME` and
    the password database's), the temporary directory (`tempfile.gettempdir()` and
    TEMP_ROOTS), or a directory holding one of them. Compared by real path: a link to one
    of them is it."""
    real = os.path.realpath(directory)
    homes = [os.fspath(home)] if home is not None else _user_homes()
    places = [("/", "the file system's root")]
    places += [(h, "the home directory") for h in homes]
    places += [(t, "the temporary directory") for t in (tempfile.gettempdir(), *TEMP_ROOTS)]
    known = [(os.path.realpath(place), what) for place, what in places]
    for place, what in known:
        if real == place:
            return what
    for place, what in known:
        if os.path.commonpath((real, place)) == real:  # (an ancestor: it holds that one)
            return f"a directory holding {what} ({place})"
    return None


def _user_homes() -> list[str]:
    """The user's home directories: `$HOME` (when absolute) and the password database's."""
    homes = []
    given = os.environ.get("HOME", "")
    if os.path.isabs(given):
        homes.append(given)
    try:
        import pwd  # (POSIX only)

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    return [h for h in homes if os.path.isabs(h)]


def _is_top_navigation(request: Request) -> bool:
    try:
        return bool(request.is_navigation_request() and request.frame.parent_frame is None)
    except Exception:  # a worker's request has no frame
        return False


def _clip_url(url: str) -> str:
    if len(url) <= MAX_URL_CHARS:
        return url
    return url[:MAX_URL_CHARS] + f"… ({len(url)} characters in all)"
