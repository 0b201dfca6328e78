"""Which failures of a judged page follow from a script the gate itself refused to load from
the network (a CDN's three.js, Chart.js, an ES module import), and the verdict that says so.

Model-written pages very often load their library from a CDN; the confined gate refuses it,
and the page then throws `THREE is not defined` or its module never runs. That is the gate's
doing, not the page's bug, and a rework order for it costs the person a turn
(docs/design/gate.md#a-page-that-needs-the-network-is-not-judged-offline). Each error of the
page is one of:

- caused: it names what a refused script would have defined (`THREE is not defined`,
  `Chart is not defined`, `THREE.OrbitControls is not a constructor`: a name of the script's
  URL, or a well-known library's global), or the refused URL itself (a dynamic `import()`);
- independent: a syntax error (the page's own code does not parse, whatever it loads), a
  name no refused script explains (`updateHud is not defined`), an error before any script
  was refused, a failed navigation or a crash;
- unclear: any other error after a script was refused (`Cannot read properties of
  undefined`: what a missing library leaves behind as often as a bug of the page's own).

A page with one independent error keeps its verdict: a real bug is still handed back. With
none, a page that refused a network script is `needs-network` instead of `ok` (its scripts
did not all run: the gate did not see it work), and instead of `page-error`, a blank
canvas, a collapsed canvas or its own fatal overlay when something ties that to the refusal
(a caused error, the page's own script that failed to load because its import was refused,
an overlay naming the library); unclear errors then go with it. Unclear errors alone tie
nothing: a styling script (Tailwind's CDN) or an analytics tag defines nothing the page
calls, and a page's own `Cannot read properties of null` after it is still its bug. A parse
error, a stuck thread or a WebGL shader failure is the page's own whatever it loads.
Stylesheets, fonts, images and fetches never change a verdict: a page without its web font
still works, and a page that loads one (most do) keeps its real bugs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

NEEDS_NETWORK = "needs-network"
CAUSED, INDEPENDENT, UNCLEAR = "caused", "independent", "unclear"
# Verdicts a refused script may explain; the others are the page's own whatever it loads.
EXPLAINABLE = frozenset(
    {"ok", "page-error", "fatal-overlay", "blank-canvas", "blank-canvas-0", "needs-gesture"}
)
# Globals of well-known libraries that their URL does not spell (matched by a URL word).
KNOWN_GLOBALS = {
    "jquery": ("$", "jquery"),
    "lodash": ("_",),
    "underscore": ("_",),
    "leaflet": ("l",),
    "tensorflow": ("tf",),
    "tfjs": ("tf",),
    "highlight": ("hljs",),
    "socket": ("io",),
    "sweetalert": ("swal",),
    "sweetalert2": ("swal",),
    "filesaver": ("saveas",),
    "autorender": ("rendermathinelement",),
    "lottie": ("bodymovin", "lottie"),
}
# URL words that name no library (hosts, folders, builds).
_PLAIN_WORDS = frozenset({
    "http", "https", "www", "cdn", "com", "net", "org", "io", "npm", "gh", "min", "js", "mjs",
    "cjs", "dist", "build", "builds", "umd", "esm", "es", "lib", "libs", "ajax", "module",
    "modules", "src", "examples", "jsm", "unpkg", "jsdelivr", "cdnjs", "cloudflare", "skypack",
    "sh", "index", "main", "latest", "release", "releases", "prod", "production", "development",
    "dev", "bundle", "browser", "global", "standalone", "all", "full", "core", "static",
    "assets", "vendor",
})  # fmt: skip
_NAMED = (
    re.compile(r"([\w$][\w$.]*) is not defined"),
    re.compile(r"([\w$][\w$.]*) is not a (?:constructor|function)"),
    re.compile(r"reading '([\w$]+)'"),
)
_NOT_DEFINED = re.compile(r"([\w$][\w$.]*) is not defined")
_SYNTAX = re.compile(r"\bSyntaxError\b|\bUnexpected (?:token|end of input|identifier|string)\b")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Refused:
    """A script the gate refused to load from the network, and when (monotonic)."""

    url: str
    at: float


@dataclass(frozen=True)
class PageError:
    """One error of the page, as the judge saw it: its kind (exception, console.error,
    crash, navigation), text, error name when known (SyntaxError), and when (monotonic)."""

    kind: str
    text: str
    at: float
    name: str | None = None


@dataclass
class Attribution:
    """The verdict after attribution, and for each refused script the errors it explains."""

    verdict: str
    scripts: list[Refused]
    caused: dict[str, list[str]] = field(default_factory=dict)  # url → error texts
    unclear: list[str] = field(default_factory=list)
    independent: list[str] = field(default_factory=list)
    own_failed: list[str] = field(default_factory=list)  # the page's scripts that never ran

    @property
    def needs_network(self) -> bool:
        return self.verdict == NEEDS_NETWORK


def url_words(url: str) -> set[str]:
    """The words of a script's URL that may name its library: its host's and path's words
    (less hosts, folders and versions), and each pair of neighbours joined (`react-dom`,
    `simplex-noise`, `chart.js`)."""
    parts = urlsplit(url)
    words: set[str] = set()
    for piece in (parts.netloc, *parts.path.split("/")):
        found = [w for w in _WORD.findall(piece.lower()) if not w.isdigit()]
        words.update(found)
        words.update(a + b for a, b in itertools.pairwise(found))
    return {w for w in words if w not in _PLAIN_WORDS and not re.fullmatch(r"v?\d[\w]*", w)}


def explains(url: str, name: str) -> bool:
    """Whether the script at `url` plausibly defines `name` (a global, or a part of a dotted
    name: `THREE.OrbitControls`)."""
    words = url_words(url)
    known = {g for w in words for g in KNOWN_GLOBALS.get(w, ())}
    for part in name.split("."):
        key = re.sub(r"[^a-z0-9$_]", "", part.lower())
        if not key:
            continue
        if key in known:
            return True
        if len(key) >= 2 and key in words:
            return True
        if len(key) >= 4 and any(w.startswith(key) for w in words):
            return True  # Howl → howler, tailwind → tailwindcss
    return False


def names(text: str) -> list[str]:
    """The names an error's text says are missing or wrong."""
    return [m for pattern in _NAMED for m in pattern.findall(text)]


def classify(error: PageError, scripts: Sequence[Refused]) -> tuple[str, str | None]:
    """Whether `error` was caused by a refused script (and which), is independent of them,
    or is unclear."""
    if error.kind in ("navigation", "crash"):
        return INDEPENDENT, None
    if error.name == "SyntaxError" or _SYNTAX.search(error.text):
        return INDEPENDENT, None  # the page's own code does not parse
    for script in scripts:
        if script.url in error.text:
            return CAUSED, script.url  # a dynamic import of it, a message naming it
    for name in names(error.text):
        for script in scripts:
            if explains(script.url, name):
                return CAUSED, script.url
    if any(not _explained(m, scripts) for m in _NOT_DEFINED.findall(error.text)):
        return INDEPENDENT, None  # a name of its own that no refused script defines
    if not scripts or error.at < min(s.at for s in scripts):
        return INDEPENDENT, None  # before any script was refused
    return UNCLEAR, None


def _explained(name: str, scripts: Iterable[Refused]) -> bool:
    return any(explains(s.url, name) for s in scripts)


def attribute(
    verdict: str,
    errors: Sequence[PageError],
    scripts: Sequence[Refused],
    own_failed: Sequence[str] = (),
    overlay: str | None = None,
) -> Attribution:
    """The verdict of a page that refused `scripts` from the network (`verdict` unchanged
    when it refused none, or when the failure is its own). `own_failed` are the page's own
    scripts (inline, or of its directory) that failed to load: a module whose import was
    refused never ran."""
    found = Attribution(verdict, list(scripts), own_failed=list(own_failed))
    if not scripts:
        return found
    for error in errors:
        kind, url = classify(error, scripts)
        if kind == CAUSED and url is not None:
            texts = found.caused.setdefault(url, [])
            if error.text not in texts:
                texts.append(error.text)
        elif kind == INDEPENDENT:
            found.independent.append(error.text)
        else:
            found.unclear.append(error.text)
    if found.independent or verdict not in EXPLAINABLE:
        return found  # a real bug of its own (or a failure no script explains)
    overlay_named = bool(overlay) and any(
        explains(s.url, w) for s in scripts for w in re.findall(r"[\w$.]+", overlay or "")
    )
    # An unclear error alone ties nothing to the refusal: a styling script (Tailwind's CDN) or
    # an analytics tag defines nothing the page calls, and its real bug must still go back.
    tied = bool(found.caused) or bool(own_failed) or overlay_named
    if verdict == "ok" or tied:
        found.verdict = NEEDS_NETWORK
    return found
