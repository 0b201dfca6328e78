"""A page that loads its library from the network (a CDN's three.js, Chart.js, an ES module
import), judged in real headless Chromium where the gate refuses it: what follows from the
refusal is `needs-network` (no failure, no rework, never `ok`), and a bug of the page's own
beside it is still its failure."""

from __future__ import annotations

import re

import pytest

from dshkit.cli.gate import check
from dshkit.gate.judge import HARD_FAILURES, NEEDS_NETWORK, VERDICTS, Verdict
from dshkit.gate.rework import NOT_FAILURES
from dshkit.mcp.tools import Tools

from ..support.gate import judged, kinds, shots
from ..support.paths import REPO

__all__ = ["shots"]

BUDGET_S = 10.0  # a loaded machine can miss a sample; the last one decides
NEEDS = {
    "cdn-three.html": "THREE is not defined",  # a correct scene, three.js from jsDelivr
    "cdn-chart.html": "Chart is not defined",  # a correct chart, Chart.js from jsDelivr
    "cdn-dynamic-import.html": "Failed to fetch dynamically imported module",  # import()
    "cdn-module-import.html": None,  # an import map to unpkg: the module never ran, no error
    "cdn-fatal-overlay.html": None,  # its own overlay: "Three.js 加载失败"
}
OWN_BUGS = {
    "cdn-three-own-bug.html": "updateScoreBoard is not defined",  # beside THREE's absence
    "cdn-chart-syntax-error.html": "Unexpected token",  # its own script does not parse
    "cdn-font-own-bug.html": "Cannot set properties of null",  # a web font is no excuse
    # Tailwind's CDN script defines nothing the page calls: its own null lookup is its bug.
    "cdn-tailwind-own-bug.html": "Cannot set properties of null",
}

pages = judged("pages", [*NEEDS, *OWN_BUGS], BUDGET_S)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(NEEDS))
def test_a_page_that_needs_a_refused_script_is_not_failed(
    pages: dict[str, Verdict], name: str
) -> None:
    verdict = pages[name]
    assert verdict.verdict == NEEDS_NETWORK, verdict.report()
    assert not verdict.failed and NEEDS_NETWORK in NOT_FAILURES
    assert NEEDS_NETWORK not in HARD_FAILURES
    # The evidence names the refused URLs, and what each explains.
    needs = [str(f["what"]) for f in kinds(verdict, "needs-network")]
    refused = {b["url"] for b in verdict.blocked if b["resourceType"] == "script"}
    assert refused and all(any(url in line for line in needs) for url in refused), needs
    explained = NEEDS[name]
    if explained is not None:
        assert any("it explains: uncaught" in s and explained in s for s in needs), needs
    assert verdict.report()[0].startswith("needs-network after ")
    assert "could not be judged offline" in verdict.report()[0]


@pytest.mark.browser
def test_a_module_whose_import_was_refused_is_said_never_to_have_run(
    pages: dict[str, Verdict],
) -> None:
    verdict = pages["cdn-module-import.html"]
    assert verdict.errors == []  # nothing thrown: without attribution it was `ok`
    needs = [str(f["what"]) for f in kinds(verdict, "needs-network")]
    assert any("own script never ran" in s for s in needs), needs


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(OWN_BUGS))
def test_a_bug_of_the_page_s_own_beside_a_refused_resource_is_still_a_failure(
    pages: dict[str, Verdict], name: str
) -> None:
    verdict = pages[name]
    assert verdict.verdict == "page-error", verdict.report()
    assert any(OWN_BUGS[name] in e for e in verdict.errors), verdict.errors
    assert kinds(verdict, "needs-network") == []


def test_every_verdict_is_named_where_verdicts_are_listed() -> None:
    app = (REPO / "src" / "dshkit" / "web" / "static" / "app.js").read_text()
    words = app[app.index("const VERDICT_WORDS = {") : app.index("};", app.index("VERDICT_WORDS"))]
    named = set(re.findall(r'^\s*"?([a-z0-9-]+)"?:', words, re.MULTILINE))
    table = (REPO / "docs" / "gate.md").read_text()
    quiet = app[app.index("const GATE_NOT_FAILURES") :].split(";", 1)[0]
    assert set(re.findall(r'"([a-z-]+)"', quiet)) == set(NOT_FAILURES)  # not counted as failed
    for verdict in VERDICTS:
        assert verdict in named, verdict  # the console's words for it
        assert f"`{verdict}`" in table, verdict
        assert verdict in (check.help or ""), verdict
        assert verdict in (Tools.gate_check.__doc__ or ""), verdict
