"""The docs cannot drift from behaviour: the generated references are current, every command in
the README's and the docs pages' shell blocks runs as documented on a temporary home holding the
real fixtures of the three harnesses, and every link between the pages lands on a file and a
heading that exist; and the code cites the rules it follows by their anchors in docs/design/,
never by a spec section or an issue number a reader cannot open."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit import chromium

from .support.cli import BARE_PATH, environment, run_dshkit
from .support.paths import CLAUDE, CODEX, DSH_ZSTD, REPO

DOCS = REPO / "docs"
GENERATED = (DOCS / "cli.md", DOCS / "config.md", DOCS / "api.md")
# The pages a person reads, in the order they are linked; the generated references hold no
# shell block of their own.
PAGES = sorted(
    [REPO / "README.md", REPO / "CONTRIBUTING.md", *DOCS.rglob("*.md")],
    key=lambda p: (p.parent != REPO, str(p)),
)
# A Claude Code fixture session: what `<session>` in a page stands for.
SESSION = "cc34c54b"
# This venv's programs and the system's only: a harness CLI on the developer's PATH (`dsh`
# would have install-hooks add its bridge from the network) is not part of the page's world.
ENV = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{BARE_PATH}"}
PLACEHOLDERS = {"<session>": SESSION}

# Commands a test cannot run, each with why (a prefix of the line as the page writes it).
NOT_RUN = {
    "make run": "installs .venv, then serves until stopped (the console tests run `serve`)",
    "make test": "is the whole suite, this test included",
    "make fast": "is the suite without the real CLIs and Chromium, this test included",
    "make install-user": "installs into the real home (pipx, uv or ~/.local)",
    "make uninstall-user": "removes what install-user put in the real home",
    "git pull": "changes the checkout",
    "dshkit serve": "serves until stopped; tests/web start it (tests/support/browser_console.py)",
    "dshkit open": "opens a browser on a running serve; tests/cli and tests/web cover it",
    # The plugin route: the real CLIs run these in a fresh home (tests/real/test_plugin_*.py).
    "claude plugin marketplace add /path/to/this/checkout": "tests/real/test_plugin_claude.py",
    "claude plugin marketplace add /path/to/dshkit": "tests/real/test_plugin_claude.py",
    "claude plugin install dshkit@dshkit": "tests/real/test_plugin_claude.py",
    "codex plugin marketplace add /path/to/dshkit": "tests/real/test_plugin_codex.py",
    "codex plugin add dshkit@dshkit": "tests/real/test_plugin_codex.py",
    "dshkit capability --harness claude": (
        "without --probe it starts a detached probe (a Chromium) that would outlive the test; "
        "the --probe line below runs the same probe in the foreground"
    ),
}
# Lines that need Chromium: run by the browser-marked test.
BROWSER = (
    "dshkit gate tests/data/gate/chart-2d.html",
    "dshkit gate tests/data/gate/page-error.html",
    "dshkit capability --harness claude --probe",
)
# Lines that exit with something other than 0, as the page says: (page, prefix) → code, why.
# (`dshkit doctor` exits 0: the home holds DSH's sessions but no `dsh` CLI, so DSH is not
# installed here, skipped by install-hooks and absent, not broken, for doctor.)
EXIT = {
    ("docs/gate.md", "dshkit gate tests/data/gate/page-error.html"): (1, "a failing page"),
}
# Lines that are not dshkit's, run by bash in the temporary home.
SHELL = ("rm -rf ~/.dsh/dshkit",)


def commands(page: Path) -> list[str]:
    """Every command line of the page's ```sh blocks, continuation lines joined, comments
    dropped."""
    found: list[str] = []
    block: list[str] | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        if block is None:
            if line.strip() == "```sh":
                block = []
            continue
        if line.strip() == "```":
            text = "\n".join(block).replace("\\\n", " ")
            found += [cmd for cmd in map(_uncommented, text.splitlines()) if cmd]
            block = None
            continue
        block.append(line)
    return found


def _uncommented(line: str) -> str:
    """The line without its comment (a `#` after a blank, outside quotes), blanks squeezed."""
    quote = ""
    for n, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (n == 0 or line[n - 1].isspace()):
            line = line[:n]
            break
    return " ".join(line.split())


def _matches(command: str, prefix: str) -> bool:
    return command == prefix or command.startswith(prefix + " ")


def _kind(command: str) -> str:
    """not-run, browser, shell or run; anything else is a command this test does not know."""
    if any(_matches(command, prefix) for prefix in BROWSER):
        return "browser"
    if any(_matches(command, prefix) for prefix in NOT_RUN):
        return "not-run"
    if command in SHELL:
        return "shell"
    if command.split()[0] == "dshkit":
        return "run"
    return "unknown"


def _expected(page: Path, command: str) -> int:
    name = _name(page)
    exits = [
        code for (on, prefix), (code, _) in EXIT.items() if on == name and _matches(command, prefix)
    ]
    return exits[-1] if exits else 0


def _home(base: Path, page: Path) -> Path:
    """A person's home with the fixtures where each harness keeps its sessions; scanned
    already for a docs page (its reader has taken the README's tour), not for the README."""
    home = base / "home"
    shutil.copytree(DSH_ZSTD, home / ".dsh" / "sessions")
    shutil.copytree(CLAUDE, home / ".claude" / "projects")
    shutil.copytree(CODEX, home / ".codex" / "sessions")
    if page.is_relative_to(DOCS):
        run_dshkit("scan", home=home, cwd=home, env=ENV)
    return home


def _argv(command: str) -> list[str]:
    words = shlex.split(command)[1:]
    for placeholder, value in PLACEHOLDERS.items():
        words = [word.replace(placeholder, value) for word in words]
    return [str(REPO / word) if word.startswith("tests/data/") else word for word in words]


def _run_page(page: Path, base: Path, kinds: tuple[str, ...]) -> list[str]:
    """Runs the page's commands of these kinds in order on one home; the failures."""
    home = _home(base, page)
    failures = []
    for command in commands(page):
        kind = _kind(command)
        if kind not in kinds:
            continue
        if kind == "shell":
            done = subprocess.run(
                ["bash", "-c", command], env=environment(home, ENV), cwd=home, capture_output=True
            )
        else:
            done = run_dshkit(
                *_argv(command), home=home, env=ENV, cwd=home, check=False, timeout=180
            )
        want = _expected(page, command)
        if done.returncode != want:
            failures.append(f"{command}: exit {done.returncode}, not {want}: {done.stderr!r}")
    return failures


def _with_commands() -> list[Path]:
    return [page for page in PAGES if commands(page)]


def _name(page: Path) -> str:
    return str(page.relative_to(REPO))


@pytest.mark.parametrize("page", _with_commands(), ids=_name)
@pytest.mark.process
def test_every_command_of_the_page_runs_as_documented(page: Path, tmp_path: Path) -> None:
    assert _run_page(page, tmp_path, ("run", "shell")) == []


@pytest.mark.browser
@pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed")
@pytest.mark.parametrize(
    "page",
    [p for p in _with_commands() if any(_kind(c) == "browser" for c in commands(p))],
    ids=_name,
)
def test_every_browser_command_of_the_page_runs_as_documented(page: Path, tmp_path: Path) -> None:
    assert _run_page(page, tmp_path, ("browser",)) == []


def test_every_command_is_run_or_says_why_not() -> None:
    unknown = [
        f"{_name(page)}: {command}"
        for page in PAGES
        for command in commands(page)
        if _kind(command) == "unknown"
    ]
    assert unknown == [], "add each to NOT_RUN (with why) or SHELL"


def test_the_lists_of_exceptions_are_in_use() -> None:
    """A command listed as not run, run in a browser or exiting non-zero is still on a page."""
    every = [command for page in PAGES for command in commands(page)]
    listed = [*NOT_RUN, *BROWSER, *SHELL]
    assert [p for p in listed if not any(_matches(c, p) for c in every)] == []
    on_pages = {(_name(page), command) for page in PAGES for command in commands(page)}
    assert [
        key for key in EXIT if not any(on == key[0] and _matches(c, key[1]) for on, c in on_pages)
    ] == []


def test_the_readme_tour_is_complete() -> None:
    """The tour's five steps are there, in order, and run (the first test runs them)."""
    tour = commands(REPO / "README.md")
    steps = ["dshkit scan", "dshkit install-hooks", "dshkit doctor", "dshkit open"]
    steps.append("dshkit inject show --harness claude")
    positions = [tour.index(step) for step in steps]
    assert positions == sorted(positions)
    assert {"make run", "make test", "make install-user", "dshkit uninstall-hooks"} <= set(tour)


@pytest.mark.process
def test_the_generated_references_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen-docs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in GENERATED)


@pytest.mark.process
def test_the_staleness_check_fails_on_a_stale_reference(tmp_path: Path) -> None:
    """`--check` exits 1 when a reference differs from what the code writes (a copy of the
    script writing into a docs folder of its own)."""
    scripts, docs = tmp_path / "scripts", tmp_path / "docs"
    scripts.mkdir()
    script = shutil.copy(REPO / "scripts" / "gen-docs.py", scripts)

    def generate(*args: str) -> subprocess.CompletedProcess[str]:
        run = [sys.executable, script, *args]
        return subprocess.run(run, capture_output=True, text=True, timeout=120)

    assert generate().returncode == 0  # writes docs/cli.md, config.md and api.md there
    assert generate("--check").returncode == 0
    with (docs / "config.md").open("a", encoding="utf-8") as stale:
        stale.write("| `gone` | a key the code no longer has |\n")
    done = generate("--check")
    assert done.returncode == 1
    assert "stale: config.md" in done.stderr


# -- links and anchors -----------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (code blocks skipped; repeats numbered)."""
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not fenced:
            base = anchor = slug(heading.group(1))
            n = 0
            while anchor in found:
                n += 1
                anchor = f"{base}-{n}"
            found.add(anchor)
    return found


def _links(page: Path) -> Iterator[tuple[Path, str | None]]:
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            yield (page.parent / path).resolve() if path else page, anchor or None


def test_every_link_lands_on_a_file_and_a_heading() -> None:
    broken = []
    for page in [*PAGES, REPO / "ARCHITECTURE.md"]:
        for target, anchor in _links(page):
            if not target.exists():
                broken.append(f"{_name(page)}: {target} does not exist")
            elif anchor is not None and anchor not in anchors(target):
                broken.append(f"{_name(page)}: no heading #{anchor} in {_name(target)}")
    assert broken == []


def test_the_slug_is_githubs() -> None:
    assert slug("Cut at the last turn end") == "cut-at-the-last-turn-end"
    assert slug("`dshkit graft status`") == "dshkit-graft-status"
    assert slug("How to add …") == "how-to-add-"
    assert slug("The session is shown as an onlookers history") == (
        "the-session-is-shown-as-an-onlookers-history"
    )


# -- what the code cites -----------------------------------------------------------------------

SOURCES = sorted((REPO / "src" / "dshkit").rglob("*.py"))
# A spec section, a spec version or an issue number: what a reader of the repository cannot open.
CITATION = re.compile(
    r"§|\bseed\s+(?:\d{3}|§|W\d)|\bseed 000\b|\bthe seed\b|\bseed's\b|\bv0\.\d+\b"
    r"|\bissues?\s+#?\d+|\(D\d\)|\bW[123]b?\b",
    re.IGNORECASE,
)
ANCHOR = re.compile(r"docs/design/([\w-]+\.md)#([\w-]+)")


def _commentary(path: Path) -> Iterator[tuple[int, str]]:
    """Every comment and string of a module, with its line (docstrings are strings)."""
    with path.open("rb") as source:
        for token in tokenize.tokenize(source.readline):
            if token.type in (tokenize.COMMENT, tokenize.STRING):
                yield token.start[0], token.string


def test_no_comment_cites_a_spec_section_or_an_issue() -> None:
    found = [
        f"{_name(path)}:{line}: {match.group(0)!r}"
        for path in SOURCES
        for line, text in _commentary(path)
        for match in CITATION.finditer(text)
    ]
    assert found == [], "cite docs/design/<page>.md#<rule> instead"


def test_every_design_anchor_cited_in_the_code_exists() -> None:
    cited = {
        (page, anchor, f"{_name(path)}:{line}")
        for path in SOURCES
        for line, text in _commentary(path)
        for page, anchor in ANCHOR.findall(text)
    }
    assert cited, "the code cites its design rules"
    missing = [
        f"{where}: docs/design/{page}#{anchor}"
        for page, anchor, where in sorted(cited)
        if not (DOCS / "design" / page).exists() or anchor not in anchors(DOCS / "design" / page)
    ]
    assert missing == []


def test_the_citation_pattern_knows_a_citation() -> None:
    for text in ("(seed 004 v0.18 item 3)", "(§5.3.2)", "the seed's order", "issue 12 §2", "(D2)"):
        assert CITATION.search(text), text
    for text in ("DSH's handoff plugin seeds a target", "random seed", "v1.2", "W4"):
        assert not CITATION.search(text), text
