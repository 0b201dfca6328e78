"""The delivery gate cannot read the machine: a judged page loads only files under its own
directory and reaches no network, loopback included, in real headless Chromium.

Each attack page (tests/data/gate/confinement/site) tries one way out towards a secret kept
next to its directory — a page, an SVG, a stylesheet, a script and a plain text file, each
carrying a token drawn big in magenta (the text file on white) — and copies whatever it gets
into its title, its body and console.error. The secret must appear nowhere: not in the stored
evidence, not in the screenshot (no magenta, no white pixel); a recording HTTP server and a UDP
socket on 127.0.0.1 must see no connection and no datagram; each refused load is listed in the
evidence; and the page is judged `ok` (a load the gate refused is not the page's error). A
page loading its own files still works.

A page written straight into the home directory or the temporary directory (whose siblings are
everybody's files) loads only its own file, however it asks (a frame, a fetch, an image, the
directory's listing, `..`, a link to the home), and its verdict says so first; a page in a
folder of its own under the home still loads its files.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest
from PIL import Image

from dshkit import chromium
from dshkit.gate.judge import GateInputError, Verdict, check_deliverable, judge_files
from dshkit.procs import kill_group

from ..support.paths import PAGES

TEMPLATES = PAGES / "confinement"
BUDGET_S = 10.0  # a good page stops early, well before it
MAGENTA = (255, 0, 255)
WHITE = (255, 255, 255)

FILE = "file://@SECRET@/"
# Each attack page, and the loads (URL with @SECRET@ for the secret's directory, resource
# type) its evidence must list as blocked.
ATTACKS: dict[str, list[tuple[str, str]]] = {
    "iframe.html": [(FILE + "key.html", "document"), (FILE + "key.txt", "document")],
    "img.html": [(FILE + "key.svg", "image"), ("file://localhost@SECRET@/key.svg", "image")],
    "fetch.html": [(FILE + "key.txt", "fetch")],
    "xhr.html": [(FILE + "key.txt", "xhr")],
    "stylesheet.html": [(FILE + "key.css", "stylesheet")],
    "object.html": [(FILE + "key.html", "document"), (FILE + "key.svg", "document")],
    "css-url.html": [(FILE + "key.svg", "image")],
    "meta-refresh.html": [(FILE + "key.html", "document")],
    "symlink.html": [
        ("file://@SITE@/pics/photo.svg", "image"),
        ("file://@SITE@/frame-link.html", "document"),
    ],
    "hidden.html": [
        ("file://@SITE@/.private/key.svg", "image"),
        ("file://@SITE@/.private/key.txt", "document"),
    ],
    "script.html": [(FILE + "key.js", "script")],
    "attack.svg": [(FILE + "key.svg", "image"), (FILE + "key.html", "document")],
}
TEXT_FRAMES = ("iframe.html", "hidden.html")  # pages framing the plain text secret
HTTP = "http://127.0.0.1:@PORT@"
NETWORK = [
    (HTTP + "/prefetch", "other"),
    ("http://localhost:@PORT@/style.css", "stylesheet"),
    (HTTP + "/img.svg", "image"),
    (HTTP + "/page.html", "document"),
    (HTTP + "/script.js", "script"),
    (HTTP + "/api/status", "fetch"),
    (HTTP + "/xhr", "xhr"),
    ("ws://127.0.0.1:@PORT@/socket", "websocket"),
    (HTTP + "/events", "eventsource"),
    (HTTP + "/beacon", "ping"),
    (HTTP + "/worker-fetch", "fetch"),
    # Past the interception, refused by the confined browser's network (and so listed):
    ("ws://127.0.0.1:@PORT@/worker-socket", "websocket"),
    ("https://127.0.0.1:@UDP@/transport", "webtransport"),
]


class Recorder:
    """A loopback HTTP server and UDP socket that record every connection and datagram, and
    answer with the secret (CORS open): what a page reaching them would get."""

    def __init__(self, token: str) -> None:
        self.hits: list[str] = []
        hits, secret = self.hits, token.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(f"GET {self.path}")
                page = b"<body style='background:#ff00ff'>" + secret if "page" in self.path else b""
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(page or secret)

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def get_request(self) -> tuple[socket.socket, Any]:
                connection = super().get_request()
                hits.append("TCP connection")
                return connection

        self.http = Server(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp_port = self.udp.getsockname()[1]
        self.udp.settimeout(0.1)
        self.running = True
        self.threads = [
            threading.Thread(target=self.http.serve_forever, daemon=True),
            threading.Thread(target=self._datagrams, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _datagrams(self) -> None:
        while self.running:
            try:
                data, _ = self.udp.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self.hits.append(f"UDP datagram of {len(data)} bytes")

    def close(self) -> None:
        self.running = False
        self.http.shutdown()
        self.http.server_close()
        for thread in self.threads:
            thread.join(5)
        self.udp.close()


class Tree:
    """The secret next to the site, the site's pages with their placeholders filled in."""

    def __init__(self, base: Path, recorder: Recorder, token: str) -> None:
        self.secret, self.site = base / "secret", base / "site"
        self.token = token
        shutil.copytree(TEMPLATES / "secret", self.secret)
        shutil.copytree(TEMPLATES / "site", self.site)
        self.values = {
            "@TOKEN@": token,
            "@SECRET@": str(self.secret),
            "@SITE@": str(self.site),
            "@PORT@": str(recorder.port),
            "@UDP@": str(recorder.udp_port),
        }
        for path in [*self.secret.rglob("*"), *self.site.rglob("*")]:
            if path.is_file():
                path.write_text(self.fill(path.read_text()))
        (self.site / "pics").mkdir()
        (self.site / "pics" / "photo.svg").symlink_to(self.secret / "key.svg")  # points out
        (self.site / "frame-link.html").symlink_to(self.secret / "key.html")  # points out
        (self.site / "own" / "alias.svg").symlink_to("pic.svg")  # stays inside
        hidden = self.site / ".private"  # inside, but a dot name: where secrets live
        hidden.mkdir()
        for name in ("key.svg", "key.txt"):
            shutil.copy(self.secret / name, hidden / name)

    def fill(self, text: str) -> str:
        for name, value in self.values.items():
            text = text.replace(name, value)
        return text


@pytest.fixture(scope="module")
def token() -> str:
    return f"DSHKIT-SECRET-{uuid.uuid4().hex[:16]}"


@pytest.fixture(scope="module")
def recorder(token: str) -> Iterator[Recorder]:
    recorder = Recorder(token)
    yield recorder
    recorder.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, recorder: Recorder, token: str) -> Tree:
    return Tree(tmp_path_factory.mktemp("confinement"), recorder, token)


@pytest.fixture(scope="module")
def verdicts(tree: Tree, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    names = [*ATTACKS, "network.html", "good.html"]
    shots = tmp_path_factory.mktemp("shots")
    judged = judge_files([tree.site / name for name in names], BUDGET_S, shots)
    return {Path(v.path).name: v for v in judged}


def _pixels(verdict: Verdict) -> dict[tuple[int, int, int], int]:
    """How many pixels of each colour the verdict's screenshot has."""
    assert verdict.screenshot is not None, verdict.evidence()
    with Image.open(verdict.screenshot) as image:
        # An RGB image's colours are 3-tuples; the stub's type covers every mode.
        counted = cast(
            "list[tuple[int, tuple[int, int, int]]]",
            image.convert("RGB").getcolors(1280 * 720) or [],
        )
    return {colour: count for count, colour in counted}


def _assert_never_shown(verdict: Verdict, token: str) -> None:
    evidence = json.dumps(verdict.evidence(), ensure_ascii=False)
    assert token not in evidence and "leaked:" not in evidence, evidence
    pixels = _pixels(verdict)
    assert pixels.get(MAGENTA, 0) == 0, f"the secret is in the screenshot {verdict.screenshot}"
    if Path(verdict.path).name in TEXT_FRAMES:
        # The text file would be a white page; a refused image's icon has a few white pixels.
        assert pixels.get(WHITE, 0) < 100, f"a text file is in the screenshot {verdict.screenshot}"


def _assert_listed(verdict: Verdict, tree: Tree, expected: list[tuple[str, str]]) -> None:
    blocked = {(b["url"], b["resourceType"]): b for b in verdict.evidence()["blocked"]}
    for url, kind in expected:
        entry = blocked.get((tree.fill(url), kind))
        assert entry is not None, (tree.fill(url), kind, sorted(blocked))
        assert entry["reason"].startswith("blocked by the gate: ")
        assert entry["reason"].endswith("the verdict could not see it")
    assert verdict.evidence()["blockedMore"] == 0


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_page_loads_no_file_outside_its_directory(
    verdicts: dict[str, Verdict], tree: Tree, name: str
) -> None:
    verdict = verdicts[name]
    _assert_never_shown(verdict, tree.token)
    _assert_listed(verdict, tree, ATTACKS[name])
    # The refused load is the gate's doing, not an error of the page's.
    assert verdict.verdict == "ok" and verdict.errors == [], verdict.evidence()


@pytest.mark.browser
def test_a_refused_navigation_leaves_the_page_where_it_was(
    verdicts: dict[str, Verdict],
) -> None:
    verdict = verdicts["meta-refresh.html"]
    assert verdict.path.endswith("/site/meta-refresh.html")
    assert _pixels(verdict) == {(16, 32, 48): 1280 * 720}  # its own background, nothing else


@pytest.mark.browser
def test_a_page_reaches_no_network_loopback_included(
    verdicts: dict[str, Verdict], tree: Tree, recorder: Recorder
) -> None:
    verdict = verdicts["network.html"]
    assert recorder.hits == []  # no connection, no request, no datagram: not even a preconnect
    _assert_never_shown(verdict, tree.token)
    _assert_listed(verdict, tree, NETWORK)
    # No error of its own; but a script it loads was refused, so it was not seen to work.
    assert verdict.verdict == "needs-network" and verdict.errors == [], verdict.evidence()


@pytest.mark.browser
def test_a_page_loading_its_own_files_is_ok(verdicts: dict[str, Verdict]) -> None:
    # Its stylesheet, script, images (one through a link that stays inside, one through
    # `..` that stays inside), a frame in a subdirectory, data: and blob: images: each
    # reports a failure to load as console.error, and none came.
    verdict = verdicts["good.html"]
    assert verdict.verdict == "ok" and verdict.errors == [], verdict.evidence()
    assert verdict.blocked == [] and verdict.blocked_more == 0
    (canvas,) = verdict.canvas
    assert canvas["framePixel"] == {"mean": pytest.approx((0x33 + 0x66 + 0xFF) / 3), "max": 255}
    pixels = _pixels(verdict)
    assert pixels[(0x22, 0xAA, 0x66)] > 100_000  # own/style.css's background
    assert pixels[(0xFF, 0xCC, 0x00)] >= 3 * 40 * 40  # own/pic.svg, thrice
    assert pixels[(0x33, 0x55, 0xAA)] > 0  # own/sub/frame.html


@pytest.mark.browser
def test_many_refused_loads_are_listed_up_to_a_bound_and_counted(
    tree: Tree, tmp_path: Path
) -> None:
    secret = f"file://{tree.secret}/"
    page = tree.site / "many.html"
    page.write_text(
        "<!doctype html><body style='background:#102030'><script>"
        f"fetch('{secret}' + 'x'.repeat(5000)).catch(() => {{}});"
        f"for (let i = 0; i < 3; i++) fetch('{secret}key.txt').catch(() => {{}});"
        "setTimeout(() => { for (let i = 0; i < 40; i++)"
        f" new Image().src = '{secret}' + i + '.png'; }}, 300);"
        "</script>"
    )
    (verdict,) = judge_files([page], BUDGET_S, tmp_path)
    listed = verdict.evidence()["blocked"]
    assert len(listed) == 20 and all(b["url"].startswith(secret) for b in listed)
    long, key = listed[:2]
    assert (
        long["url"]
        == secret + "x" * (300 - len(secret)) + f"… ({len(secret) + 5000} characters in all)"
    )
    assert (key["url"], key["resourceType"], key["count"]) == (secret + "key.txt", "fetch", 3)
    assert [b["url"] for b in listed[2:]] == [f"{secret}{i}.png" for i in range(18)]
    assert verdict.evidence()["blockedMore"] == 40 - 18
    assert verdict.verdict == "ok" and verdict.errors == []


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("file://@SITE@/good.html", None),
        ("file://@SITE@/own/sub/../pic.svg", None),
        ("file://@SITE@/own/%70ic.svg", None),
        ("file://@SITE@/own/", None),  # a directory of its own: listed, harmless
        ("data:text/html,<p>x</p>", None),
        ("blob:null/6a3c0d4e-0000-4000-8000-000000000000", None),
        ("about:blank", None),
        ("file://@SITE@/own/%2e%2e/%2e%2e/secret/key.txt", "outside"),
        ("file://@SITE@/own/..%2f..%2fsecret/key.txt", "outside"),
        ("file://@SITE@/own/pic.svg%00.txt", "outside"),
        ("file://elsewhere@SITE@/good.html", "outside"),
        ("file://@SITE@/pics/photo.svg", "outside"),  # a link out
        ("file://@SITE@/.private/key.txt", "hidden"),
        ("file://@SITE@/own/.env", "hidden"),
        ("file://@SITE@", None),  # its own directory's listing
        ("file://@SITE@/..", "outside"),  # its parent's listing would name the secret
        ("http://127.0.0.1:8765/api/status", "network"),
        ("wss://example.com/", "network"),
        ("chrome://version", "scheme"),
        ("filesystem:file:///x", "scheme"),
    ],
)
def test_the_policy_of_each_url(tree: Tree, url: str, refused: str | None) -> None:
    from dshkit.gate import confinement

    reasons = {
        "outside": confinement.OUTSIDE,
        "hidden": confinement.HIDDEN,
        "network": confinement.NETWORK,
        "scheme": confinement.SCHEME,
    }
    policy = confinement.Confinement(tree.site / "good.html")
    assert policy.why_refused(tree.fill(url)) == (refused and reasons[refused])


def test_a_deliverable_linked_to_another_kind_of_file_is_not_judged(tree: Tree) -> None:
    link = tree.site / "notes.html"
    link.symlink_to(tree.secret / "key.txt")
    with pytest.raises(GateInputError, match="not a web deliverable") as refused:
        check_deliverable(link)
    assert refused.value.field == "path"


# -- a page written straight into a directory that is everybody's files ----------------------

WIDE = TEMPLATES / "wide" / "page.html"
HOME_NOTE = "its directory, {dir}, is the home directory, too wide to confine a judged page to"


class Wide:
    """A fake home with a page written straight into it (next to notes and a Documents
    folder holding more), a project folder in it with its own files, a link elsewhere to
    the home; and a page written straight into the real temporary directory, with its own
    siblings (names of this run only, removed after)."""

    def __init__(self, base: Path, token: str) -> None:
        self.token = token
        self.home = base / "home"
        self.temp = Path(tempfile.gettempdir())
        self.stem = f"dshkit-gate-test-{uuid.uuid4().hex[:12]}"
        self.home.mkdir()
        self._plant(self.home, "notes", "Documents", "report.html")
        self._plant(self.temp, self.stem, self.stem, f"{self.stem}.html")
        self.project = self.home / "proj"
        shutil.copytree(TEMPLATES / "site" / "own", self.project / "own")
        shutil.copy(TEMPLATES / "site" / "good.html", self.project / "good.html")
        (self.project / "own" / "alias.svg").symlink_to("pic.svg")
        self.link = base / "via-link"
        self.link.symlink_to(self.home, target_is_directory=True)

    def _plant(self, where: Path, sibling: str, folder: str, page: str) -> None:
        secret = {
            name: (TEMPLATES / "secret" / name).read_text().replace("@TOKEN@", self.token)
            for name in ("key.txt", "key.svg")
        }
        (where / folder).mkdir()
        (where / f"{sibling}.txt").write_text(secret["key.txt"])
        (where / f"{sibling}.svg").write_text(secret["key.svg"])
        (where / folder / "notes.txt").write_text(secret["key.txt"])
        (where / folder / "secret.svg").write_text(secret["key.svg"])
        text = WIDE.read_text().replace("@SIBLING@", sibling).replace("@FOLDER@", folder)
        (where / page).write_text(text)

    def refused(self, where: Path, sibling: str, folder: str) -> list[tuple[str, str]]:
        """The loads of a wide page in `where` that must be listed as blocked."""
        url = f"file://{where}/"
        return [
            (f"{url}{sibling}.txt", "document"),
            (f"{url}{folder}/notes.txt", "document"),
            (url, "document"),  # its directory's listing
            (f"{url}{sibling}.svg", "image"),
            (f"{url}{folder}/secret.svg", "image"),
            (f"{url}{sibling}.svg?again", "image"),  # `FOLDER/../` back to the sibling
            (f"{url}{sibling}.txt", "fetch"),
            (f"{url}{folder}/notes.txt", "fetch"),
        ]

    def remove(self) -> None:
        (self.temp / f"{self.stem}.html").unlink(missing_ok=True)
        for suffix in (".txt", ".svg"):
            (self.temp / f"{self.stem}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(self.temp / self.stem, ignore_errors=True)


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory, token: str) -> Iterator[Wide]:
    made = Wide(tmp_path_factory.mktemp("wide"), token)
    yield made
    made.remove()


@pytest.fixture(scope="module")
def wide_verdicts(wide: Wide, tmp_path_factory: pytest.TempPathFactory) -> list[Verdict]:
    """The home page, the project's page, the home page through a link to the home, the
    temporary directory's page: judged as a process whose HOME is the fake home."""
    pages = [
        wide.home / "report.html",
        wide.project / "good.html",
        wide.link / "report.html",
        wide.temp / f"{wide.stem}.html",
    ]
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("HOME", str(wide.home))
        return judge_files(pages, BUDGET_S, tmp_path_factory.mktemp("shots"))


def _assert_only_its_own_file(verdict: Verdict, token: str, directory: str, what: str) -> None:
    from dshkit.gate.confinement import ONLY_OWN

    evidence = json.dumps(verdict.evidence(), ensure_ascii=False)
    assert token not in evidence and "leaked:" not in evidence, evidence
    pixels = _pixels(verdict)
    assert pixels.get(MAGENTA, 0) == 0, f"a secret is in the screenshot {verdict.screenshot}"
    assert pixels.get(WHITE, 0) < 100, f"a text file is in the screenshot {verdict.screenshot}"
    reason = f"blocked by the gate: {ONLY_OWN.format(what=what)}; the verdict could not see it"
    assert {b["reason"] for b in verdict.blocked} == {reason}, verdict.blocked
    # The verdict says so first, whatever else it found.
    first = verdict.findings[0]
    assert first["kind"] == "not-seen", verdict.findings
    assert str(first["what"]).startswith("only the page's own file could be loaded: "), first
    assert f"its directory, {directory}, is {what}, too wide" in str(first["what"])
    assert verdict.report()[1].strip().startswith("not-seen only the page's own file")
    assert verdict.verdict == "ok" and verdict.errors == [], verdict.evidence()


@pytest.mark.browser
@pytest.mark.parametrize("which", [0, 2], ids=["in-home", "through-a-link-to-home"])
def test_a_page_in_the_home_directory_loads_only_its_own_file(
    wide: Wide, wide_verdicts: list[Verdict], which: int
) -> None:
    verdict = wide_verdicts[which]
    assert verdict.path == str(wide.home / "report.html")  # a link is judged as its target
    _assert_only_its_own_file(verdict, wide.token, str(wide.home), "the home directory")
    listed = {(b["url"], b["resourceType"]) for b in verdict.blocked}
    assert set(wide.refused(wide.home, "notes", "Documents")) <= listed, sorted(listed)


@pytest.mark.browser
def test_a_page_in_a_project_folder_under_home_loads_its_own_files(
    wide: Wide, wide_verdicts: list[Verdict]
) -> None:
    verdict = wide_verdicts[1]
    assert verdict.path == str(wide.project / "good.html")
    assert verdict.verdict == "ok" and verdict.errors == [], verdict.evidence()
    assert verdict.blocked == [] and not any(
        "own file could be loaded" in str(f["what"]) for f in verdict.findings
    )
    pixels = _pixels(verdict)
    assert pixels[(0x22, 0xAA, 0x66)] > 100_000  # own/style.css's background
    assert pixels[(0xFF, 0xCC, 0x00)] >= 3 * 40 * 40  # own/pic.svg, thrice
    assert pixels[(0x33, 0x55, 0xAA)] > 0  # own/sub/frame.html


@pytest.mark.browser
def test_a_page_in_the_temporary_directory_loads_only_its_own_file(
    wide: Wide, wide_verdicts: list[Verdict]
) -> None:
    verdict = wide_verdicts[3]
    temp = str(wide.temp)
    _assert_only_its_own_file(verdict, wide.token, temp, "the temporary directory")
    listed = {(b["url"], b["resourceType"]) for b in verdict.blocked}
    assert set(wide.refused(wide.temp, wide.stem, wide.stem)) <= listed, sorted(listed)


def test_what_is_too_wide_to_confine_a_page_to(tmp_path: Path) -> None:
    from dshkit.gate.confinement import too_wide

    home = tmp_path / "home"
    (home / "proj" / "docs").mkdir(parents=True)
    (tmp_path / "to-home").symlink_to(home)
    assert too_wide(home, home=home) == "the home directory"
    assert too_wide(tmp_path / "to-home", home=home) == "the home directory"  # by real path
    assert too_wide(home / "proj" / "..", home=home) == "the home directory"
    assert too_wide(tmp_path, home=home) == f"a directory holding the home directory ({home})"
    assert too_wide(Path("/"), home=home) == "the file system's root"
    assert too_wide(Path(tempfile.gettempdir()), home=home) == "the temporary directory"
    assert too_wide(Path("/tmp"), home=home) == "the temporary directory"
    holding = "a directory holding the temporary directory (/var/tmp)"
    assert too_wide(Path("/var"), home=home) == holding
    assert too_wide(home / "proj", home=home) is None
    assert too_wide(home / "proj" / "docs", home=home) is None
    assert too_wide(tmp_path / "to-home" / "proj", home=home) is None


def test_the_home_is_the_users_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pwd

    from dshkit.gate.confinement import too_wide

    monkeypatch.setenv("HOME", str(tmp_path))
    assert too_wide(tmp_path) == "the home directory"
    # The password database's home too: a HOME changed in the agent's environment does not
    # make the real one a place to confine a page to.
    assert too_wide(Path(pwd.getpwuid(os.getuid()).pw_dir)) in (
        "the home directory",
        "the file system's root",
    )
    monkeypatch.setenv("HOME", "relative")
    assert too_wide(tmp_path) is None


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("file://@HOME@/report.html", None),  # itself
        ("file://@HOME@/report.html?x#y", None),
        ("file://@HOME@/Documents/../report.html", None),
        ("file://@HOME@/proj/link.html", None),  # a link to itself: its own content
        ("file://@HOME@/notes.txt", "own"),
        ("file://@HOME@/Documents/notes.txt", "own"),
        ("file://@HOME@/Documents/../notes.txt", "own"),
        ("file://@HOME@/", "own"),
        ("file://@HOME@", "own"),
        ("file://@HOME@/proj/up/notes.txt", "own"),  # a link out of a folder of it
        ("file://@HOME@/report.html%00.txt", "outside"),  # not a path at all
        ("file://elsewhere@HOME@/report.html", "outside"),
    ],
)
def test_the_policy_of_a_page_in_the_home_directory(
    tmp_path: Path, url: str, refused: str | None
) -> None:
    from dshkit.gate import confinement

    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "proj").mkdir()
    (home / "report.html").write_text("<p>report</p>")
    (home / "notes.txt").write_text("notes")
    (home / "proj" / "link.html").symlink_to(home / "report.html")
    (home / "proj" / "up").symlink_to(home)
    policy = confinement.Confinement(home / "report.html", home=home)
    assert policy.root is None and policy.wide == "the home directory"
    reasons = {
        "own": confinement.ONLY_OWN.format(what="the home directory"),
        "outside": confinement.OUTSIDE,
    }
    assert policy.why_refused(url.replace("@HOME@", str(home))) == (refused and reasons[refused])
    for own in ("data:text/plain,x", "about:blank"):
        assert policy.why_refused(own) is None
    assert policy.why_refused("http://127.0.0.1:9/") == confinement.NETWORK
    note = policy.note()
    assert note is not None and HOME_NOTE.format(dir=home) in note
    # A page of a folder of its own keeps its folder, and says nothing.
    linked = confinement.Confinement(home / "proj" / "link.html", home=home)
    assert linked.root is None  # (a link: it is the page it points to, in the home)
    folder = confinement.Confinement(home / "proj" / "page.html", home=home)
    assert folder.root == home / "proj" and folder.note() is None


def test_chromium_runs_without_its_sandbox_only_as_root() -> None:
    assert chromium.NO_SANDBOX in chromium.launch_flags(0)
    assert chromium.NO_SANDBOX not in chromium.launch_flags(1000)
    assert chromium.launch_flags(os.geteuid()) == chromium.FLAGS
    # The offline flags stay, and the confined browser has a proxy no flag overrides.
    for flags in (chromium.FLAGS, chromium.CONFINED_FLAGS):
        assert "--disable-background-networking" in flags
        assert any(f.startswith("--host-resolver-rules=MAP * ~NOTFOUND") for f in flags)
    assert "--no-proxy-server" not in chromium.CONFINED_FLAGS
    assert "--proxy-bypass-list=<-loopback>" in chromium.CONFINED_FLAGS


NOBODY = 65534


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A directory of the user the browser runs as (pytest's own is root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="dshkit-sandbox-"))
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.browser
def test_chromium_keeps_its_sandbox_for_a_user_who_is_not_root(scratch: Path) -> None:
    # As root Chromium must go without its sandbox (it refuses to start otherwise), so the
    # real run is as another user, `nobody`, with the flags dshkit gives such a user: its
    # renderers run under the seccomp filter (Seccomp: 2); with root's flags they do not.
    binary = chromium.find()
    assert binary is not None
    user: dict[str, Any] = {}
    if os.geteuid() == 0:
        user = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    uid = NOBODY if user else os.geteuid()
    sandboxed = _renderer_seccomp(binary, chromium.launch_flags(uid), scratch / "a", user)
    assert sandboxed == {"2"}
    if user:  # the same user told --no-sandbox: the check tells the two apart
        assert _renderer_seccomp(binary, chromium.launch_flags(0), scratch / "b", user) == {"0"}


def _renderer_seccomp(
    binary: str, flags: tuple[str, ...], profile: Path, user: dict[str, Any]
) -> set[str]:
    """The Seccomp modes of the renderers of a Chromium started with `flags`, as `user`."""
    process = subprocess.Popen(
        [binary, *flags, f"--user-data-dir={profile}", "data:text/html,<p>sandboxed?</p>"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "HOME": str(profile.parent), "TMPDIR": str(profile.parent)},
        **user,
    )
    try:
        deadline = time.monotonic() + 20
        while not _renderers(process.pid):
            assert process.poll() is None, f"{binary} exited with {process.returncode}"
            assert time.monotonic() < deadline, "no renderer within 20 s"
            time.sleep(0.1)
        time.sleep(1.0)  # a renderer just forked has no filter yet: look once it has started
        return set(_renderers(process.pid).values())
    finally:
        kill_group(process)


def _renderers(group: int) -> dict[int, str]:
    """The renderers of process group `group`, each with its Seccomp mode."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            # Chromium rewrites its title: the arguments may be one string.
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").split()
            in_group = os.getpgid(int(entry.name)) == group
            status = (entry / "status").read_text()
        except (OSError, ValueError):
            continue
        if in_group and b"--type=renderer" in argv:
            line = next(x for x in status.splitlines() if x.startswith("Seccomp:"))
            found[int(entry.name)] = line.split()[1]
    return found
