"""Which errors a script the gate refused explains, and the verdict that follows (no browser:
the judge's own pages are in test_judge_network)."""

from __future__ import annotations

import pytest

from dshkit.gate.attribution import (
    CAUSED,
    INDEPENDENT,
    NEEDS_NETWORK,
    UNCLEAR,
    PageError,
    Refused,
    attribute,
    classify,
    explains,
)

THREE = Refused("https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.min.js", 1.0)
CHART = Refused("https://cdn.jsdelivr.net/npm/chart.js@4.4.1/dist/chart.umd.min.js", 1.0)


def error(text: str, at: float = 2.0, name: str | None = None) -> PageError:
    return PageError("exception", f"uncaught {text}", at, name)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (THREE.url, "THREE"),
        ("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js", "THREE"),
        ("https://unpkg.com/three@0.160.0/examples/js/controls/OrbitControls.js",
         "THREE.OrbitControls"),
        (CHART.url, "Chart"),
        ("https://cdn.jsdelivr.net/npm/p5@1.9.0/lib/p5.min.js", "p5"),
        ("https://d3js.org/d3.v7.min.js", "d3"),
        ("https://code.jquery.com/jquery-3.7.1.min.js", "$"),
        ("https://cdn.jsdelivr.net/npm/lodash@4/lodash.min.js", "_"),
        ("https://unpkg.com/leaflet@1.9.4/dist/leaflet.js", "L"),
        ("https://cdn.tailwindcss.com", "tailwind"),
        ("https://cdnjs.cloudflare.com/ajax/libs/howler/2.2.4/howler.min.js", "Howl"),
        ("https://unpkg.com/react-dom@18/umd/react-dom.production.min.js", "ReactDOM"),
        ("https://cdn.jsdelivr.net/npm/simplex-noise@2.4.0/simplex-noise.js", "SimplexNoise"),
        ("https://cdn.jsdelivr.net/npm/sweetalert2@11", "Swal"),
        ("https://cdn.jsdelivr.net/npm/katex@0.16.9/dist/contrib/auto-render.min.js",
         "renderMathInElement"),
    ],
)  # fmt: skip
def test_a_refused_script_explains_its_library_s_global(url: str, name: str) -> None:
    assert explains(url, name)


@pytest.mark.parametrize("name", ["updateScoreBoard", "init", "cdn", "js", "min", "game"])
def test_a_refused_script_does_not_explain_a_name_of_the_page_s_own(name: str) -> None:
    assert not explains(THREE.url, name)
    assert not explains(CHART.url, name)


def test_each_error_is_caused_independent_or_unclear() -> None:
    scripts = [THREE]
    assert classify(error("ReferenceError: THREE is not defined"), scripts) == (CAUSED, THREE.url)
    constructor = error("TypeError: THREE.OrbitControls is not a constructor")
    assert classify(constructor, scripts) == (CAUSED, THREE.url)
    imported = error(f"TypeError: Failed to fetch dynamically imported module: {THREE.url}")
    assert classify(imported, scripts) == (CAUSED, THREE.url)
    # A console.error that quotes the caught error names the global too.
    logged = PageError("console.error", "console.error: 初始化失败 ReferenceError: THREE is not "
                       "defined", 2.0)  # fmt: skip
    assert classify(logged, scripts) == (CAUSED, THREE.url)
    # The page's own: a syntax error (its name known, or only its message), a name no
    # refused script defines, an error before any script was refused, a failed navigation.
    assert classify(error("Unexpected token '}'", name="SyntaxError"), scripts)[0] == INDEPENDENT
    assert classify(error("SyntaxError: missing ) after argument list"), scripts)[0] == INDEPENDENT
    own = error("ReferenceError: updateScoreBoard is not defined")
    assert classify(own, scripts)[0] == INDEPENDENT
    early = error("TypeError: Cannot read properties of undefined (reading 'x')", at=0.5)
    assert classify(early, scripts)[0] == INDEPENDENT
    assert classify(PageError("navigation", "navigation failed", 2.0), scripts)[0] == INDEPENDENT
    # What a missing library leaves behind as often as a bug: unclear.
    later = error("TypeError: Cannot read properties of undefined (reading 'render')")
    assert classify(later, scripts)[0] == UNCLEAR


def test_a_page_whose_failure_follows_from_a_refused_script_needs_the_network() -> None:
    caused = [error("ReferenceError: THREE is not defined")]
    for verdict in ("page-error", "blank-canvas", "blank-canvas-0", "fatal-overlay", "ok"):
        found = attribute(verdict, caused, [THREE])
        assert found.verdict == NEEDS_NETWORK and found.caused == {THREE.url: [caused[0].text]}
    # A module whose import was refused never ran: nothing was thrown, nothing drawn.
    assert attribute("blank-canvas", [], [THREE], ["inline"]).verdict == NEEDS_NETWORK
    # Its own overlay names the library.
    assert attribute("fatal-overlay", [], [THREE], overlay="Three.js 加载失败").needs_network
    # An error after a refused script that is not the page's own for certain goes with a
    # caused one.
    unclear = error("TypeError: Cannot read properties of undefined (reading 'render')")
    found = attribute("page-error", [caused[0], unclear], [THREE])
    assert found.verdict == NEEDS_NETWORK and found.unclear == [unclear.text]
    # A page that refused a script is never `ok`: not all of it ran.
    assert attribute("ok", [], [THREE]).verdict == NEEDS_NETWORK


def test_a_real_bug_of_the_page_s_own_keeps_its_verdict() -> None:
    caused = error("ReferenceError: THREE is not defined")
    own = error("ReferenceError: updateScoreBoard is not defined")
    found = attribute("page-error", [own, caused], [THREE])
    assert found.verdict == "page-error" and found.independent == [own.text]
    syntax = error("Unexpected token '}'", name="SyntaxError")
    assert attribute("page-error", [syntax], [CHART]).verdict == "page-error"
    # A failure that nothing ties to the refused script, or that is the page's own whatever
    # it loads.
    assert attribute("blank-canvas", [], [THREE]).verdict == "blank-canvas"
    assert attribute("fatal-overlay", [], [THREE], overlay="WebGL 不支持").verdict == (
        "fatal-overlay"
    )
    for verdict in ("webgl-error", "parse-error", "unresponsive"):
        assert attribute(verdict, [caused], [THREE], ["inline"]).verdict == verdict
    # An unclear error alone ties nothing to a refused script that defines nothing the page
    # calls (Tailwind's CDN): the page's own null lookup is still its failure.
    tailwind = Refused("https://cdn.tailwindcss.com", 1.0)
    null = error("TypeError: Cannot set properties of null (setting 'textContent')")
    assert attribute("page-error", [null], [tailwind]).verdict == "page-error"
    # Nothing refused from the network: nothing changes.
    assert attribute("page-error", [caused], []).verdict == "page-error"
    assert attribute("ok", [], []).verdict == "ok"
