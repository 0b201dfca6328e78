"""Text others control is shown as it is, and what the agent is told is shown whole.

A session title, a message, a command, a profile entry, a path or an audit record holding a
direction control (U+202E makes "evil" read "live"), a zero-width or another invisible
character shows it as a marked token (`⟨U+202E⟩`) in the console (real headless Chromium
against a real `dshkit serve`) and in `dshkit sessions list/show`; Chinese, emoji and
combining marks show as they are; `--json` and the API stay exact. The console's panel
"What the agent is told" shows each hook event's parts and its text byte for byte as
`GET /api/inject/` gives it.
"""

from __future__ import annotations

import re
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import chromium
from dshkit.cli.common import visible
from dshkit.gate.judge import Verdict
from dshkit.gate.verdicts import save_verdict
from dshkit.graft import ledger
from dshkit.optimizer.runs import Run, save_run
from dshkit.profile.state import ProfileState
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.browser_console import ARTIFACTS, VIEWPORTS, Console, serving, watched
from ..support.cli import run_dshkit
from ..support.logs import MINUTE, Log, session_dir, write_log
from ..support.paths import CLAUDE, REPO
from ..support.profile import store_version

SESSION = "text-bidi-1"
CLAUDE_SESSION = "cc34c54b-1db8-4032-8579-28682745ff2f"
# "evil" written backwards after an override: a page or terminal that obeys it reads "live".
TITLE = "修复登录 \u202elive\u202c 与 \u2066隔离\u2069 零\u200b宽"
COMMAND = "rm -rf ./build/\u202etxt.exe"
CUSTOM = "请用中文回答。\u200b\n不要\u202e反转\u202c文字。"
CLAIM = "提交前\u202e先跑测试\u202c"
# The characters the console and the terminal must never put on screen raw.
HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060\ufeff]")


def marker(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


# (text, what is shown): the listed characters are marked, the rest stays as it is.
KEPT = [
    "中文标题：修复登录",
    "emoji 😀👍🏽 🇨🇳",
    "👨\u200d👩\u200d👧 family",  # joiners inside an emoji sequence are part of its picture
    "🏳\ufe0f\u200d🌈",
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # a flag made of tags
    "e\u0301 combining, 한글, ก้, a\ufe0f",
    "tab\tand\nnewline",
    "crlf\r\n",
    "中文\u3000排版",  # the ideographic space is part of Chinese typesetting
    "plain ASCII ~!@#$%^&*()",
]
MARKED = [
    *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    *"\u200b\u200c\u200d\u2060\ufeff\u00ad",
    *"\x00\x07\x08\x1b\x7f\x85\x9b\r",  # C0 and C1 controls (a CR not ending a line)
    *"\u00a0\u2002\u2009\u202f\u205f\u3164\u2028\u2029",  # spaces that pass for a plain one
    "\U000e0041",  # a tag outside a flag
]
TABLE = [(text, text) for text in KEPT]
TABLE += [(f"a{char}b", f"a{marker(char)}b") for char in MARKED]
TABLE += [
    ("😀\u200d", f"😀{marker(chr(0x200D))}"),  # a joiner joining nothing
    ("a\u200d😀", f"a{marker(chr(0x200D))}😀"),
    ("evil \u202eexe.txt", "evil ⟨U+202E⟩exe.txt"),
]
# Named in the marker's title and label.
NAMED = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
NAMED += "\u200b\u200c\u200d\u2060\ufeff"

# The page's text under a node, each marker put back as the character it stands for.
UNMARKED = """(node) => {
  const out = [];
  const walk = (n) => {
    for (const c of n.childNodes) {
      if (c.nodeType === Node.TEXT_NODE) out.push(c.data);
      else if (c.classList && c.classList.contains("unseen"))
        out.push(String.fromCodePoint(parseInt(c.dataset.code, 16)));
      else walk(c);
    }
  };
  walk(node);
  return out.join("");
}"""
# Every text node and every label a person or a screen reader is given.
SHOWN = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) out.push(walker.currentNode.data);
  for (const el of document.body.querySelectorAll("*")) {
    for (const name of ["title", "aria-label", "alt", "placeholder"]) {
      if (el.hasAttribute(name)) out.push(el.getAttribute(name));
    }
  }
  return out;
}"""


def text_session(root: Path) -> None:
    """A DSH session whose title (its first message), a command and failures hold direction
    controls and zero-width characters."""
    log = Log()
    log.turn_start()
    log.human(TITLE)
    for n in range(3):
        log.call("write", f"w{n}", {"path": "src/\u202egol.py"})
        log.result(f"w{n}", 100, failed=True, code="E_WRITE", text="写入失败\u200b：\u202e权限")
    log.call("bash", "b1", {"command": COMMAND})
    log.result("b1", 2 * MINUTE, text="已删除\u200b")
    log.turn_start()
    log.human("继续")
    log.say("请你重试一下\u202e构建命令，然后告诉我结果。")
    path = session_dir(root, SESSION) / "session.v4.jsonl.zstd"
    write_log(path, [[e] for e in log.events], session_id=SESSION)


def text_world(state_dir: Path, dsh_root: Path, claude_root: Path) -> dict[str, Any]:
    """Sessions, a profile, an optimizer run, a gate verdict and an audit record, each with
    characters that hide or turn text; and a Claude Code session whose start is told the
    custom text."""
    text_session(dsh_root)
    project = claude_root / "-home-dev-proj1"
    project.mkdir(parents=True)
    shutil.copy(CLAUDE / "-home-dev-proj1" / f"{CLAUDE_SESSION}.jsonl", project)
    with Store(state_dir) as store:
        Scanner(store).scan([Source("dsh", dsh_root), Source("claude", claude_root)])
        entry = {"id": "B1", "category": "B", "claim": CLAIM, "confidence": "high"}
        store_version(store, [{**entry, "evidence": ["先\u200b跑测试"]}])
        state = ProfileState(store)
        state.set_custom_text(CUSTOM)
        state.set_mode("custom")
        save_run(
            store, Run(tier="advanced", form="ptc", raw="修一下\u202e登录", output="修复\u2066登录")
        )
        verdict = Verdict(
            path="/home/dev/work/\u202elmth.exe",
            sha256="0" * 64,
            verdict="blank-canvas-0",
            recovered=False,
            elapsed_ms=4000,
            screenshot=None,
            canvas=[{"width": 0, "height": 0}],
            errors=["\u2066错误\u2069"],
            overlay_text="覆盖\u200b层",
        )
        save_verdict(store, verdict)
        ledger.audit(store, "model-nudge", harness="dsh", session_id=SESSION, note="\u202eevil")
    return {}


pytestmark = pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed")


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("console-text")
    state_dir, dsh_root, claude_root = base / "state", base / "dsh", base / "claude"
    world = text_world(state_dir, dsh_root, claude_root)
    with serving(base, state_dir, [dsh_root, claude_root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


# -- the one helper --------------------------------------------------------------------------


@pytest.mark.browser
def test_the_page_helper_marks_what_cannot_be_seen_and_keeps_the_rest(
    console: Console, page: Any
) -> None:
    console.open("overview")
    shown = page.evaluate(
        """(texts) => texts.map((t) => visible(t).map((n) => n.nodeType === Node.TEXT_NODE
          ? n.data
          : { text: n.textContent, code: n.dataset.code, cls: n.className,
              title: n.title, label: n.getAttribute("aria-label") }))""",
        [text for text, _ in TABLE],
    )
    for (text, expected), nodes in zip(TABLE, shown, strict=True):
        assert "".join(n if isinstance(n, str) else n["text"] for n in nodes) == expected, text
        for node in nodes:
            if isinstance(node, dict):  # a marker: styled apart, naming its character
                assert node["cls"] == "unseen" and node["text"] == f"⟨U+{node['code']}⟩"
                assert node["title"].startswith(f"U+{node['code']} ") and node["label"]
    labels = page.evaluate("(texts) => texts.map(visibleLabel)", [text for text, _ in TABLE])
    assert labels == [expected for _, expected in TABLE]  # attributes: the same text
    titles = page.evaluate("(cs) => cs.map((c) => visible(c)[0].title)", list(NAMED))
    assert titles == [f"U+{ord(c):04X} {unicodedata.name(c)}" for c in NAMED]


@pytest.mark.browser
def test_the_terminal_helper_marks_the_same(console: Console, page: Any) -> None:
    for text, expected in TABLE:
        shown = visible(text)
        assert shown.plain == expected.replace("\r\n", "\n"), text  # rich ends lines with LF
        marks = [shown.plain[s.start : s.end] for s in shown.spans]
        assert marks == re.findall(r"⟨U\+[0-9A-F]{4,6}⟩", expected), text  # each one styled
    # Every character of the Basic Multilingual Plane (and some beyond) is marked by both or
    # by neither.
    beyond = [0x1F600, 0x1F3F4, 0xE0001, 0xE0041, 0xE007F, 0x110BD, 0x1D173, 0xE0100]
    console.open("overview")
    in_page = page.evaluate(
        """(beyond) => {
          const marked = [];
          const codes = [...Array(0x10000).keys(), ...beyond];
          for (const c of codes) {
            const s = String.fromCodePoint(c);
            if (visibleLabel(s) !== s) marked.push(c);
          }
          return marked;
        }""",
        beyond,
    )
    in_terminal = [c for c in [*range(0x10000), *beyond] if visible(chr(c)).plain != chr(c)]
    assert in_page == in_terminal


def test_the_page_puts_text_in_through_one_helper() -> None:
    script = (REPO / "src/dshkit/web/static/app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "innerText", "document.write"):
        assert sink not in script, sink
    assert script.count("createTextNode(") == 1  # in the helper
    assert set(re.findall(r"\.textContent\s*=(?!=)\s*([^;]*);", script)) == {'""'}  # clearing
    assert not re.search(r"\.(nodeValue|data)\s*=[^=]", script)


# -- what others wrote, in the console -------------------------------------------------------


@pytest.mark.browser
def test_a_title_with_direction_controls_is_shown_as_it_is(console: Console, page: Any) -> None:
    console.open("sessions")
    title = next(s for s in console.api("/api/sessions")["sessions"] if s["id"] == SESSION)
    assert title["title"] == TITLE  # the API is exact
    cell = page.locator("tr", has_text=SESSION[:12]).locator("td[lang=zh]")
    text = cell.text_content()
    for char in "\u202e\u2066\u200b":
        assert marker(char) in text and char not in text
    assert cell.evaluate(UNMARKED) == TITLE  # nothing lost: each marker stands for one
    assert not [t for t in page.evaluate(SHOWN) if HIDDEN.search(t)]
    console.open(f"session/dsh/{SESSION}")
    first = page.locator("ol.messages li pre").first
    assert marker("\u202e") in first.text_content() and first.evaluate(UNMARKED) == TITLE
    command = page.locator("details[data-seq]").last.locator("pre").first  # its arguments
    assert marker("\u202e") in command.text_content() and COMMAND in command.evaluate(UNMARKED)
    assert not [t for t in page.evaluate(SHOWN) if HIDDEN.search(t)]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        console.open(f"session/dsh/{SESSION}")
        page.screenshot(path=str(ARTIFACTS / f"marked-{viewport}.png"), full_page=True)
        overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
        assert overflow[0] <= overflow[1], (viewport, overflow)


@pytest.mark.browser
@pytest.mark.parametrize(
    "view",
    ["profile", "signals?signal=delegateRuns", "optimizer", "gate", "handoffs", "sessions"],
)
def test_no_view_shows_a_hidden_character_raw(console: Console, page: Any, view: str) -> None:
    console.open(view)
    for summary in page.locator("details > summary").all():
        summary.click()  # what is folded is shown too
    page.wait_for_timeout(300)
    shown = page.evaluate(SHOWN)
    assert not [t for t in shown if HIDDEN.search(t)], view
    assert any(marker("\u202e") in t or marker("\u2066") in t for t in shown), view


@pytest.mark.browser
def test_the_custom_text_editor_keeps_the_text_exact_and_says_what_it_holds(
    console: Console, page: Any
) -> None:
    console.open("profile")
    assert page.input_value("#custom-text") == CUSTOM  # what is saved back is what was there
    assert page.locator("#effective-text").evaluate(UNMARKED) == CUSTOM
    said = page.text_content("#custom-unseen")
    assert marker("\u202e") in said and marker("\u200b") in said


# -- what the agent is told ------------------------------------------------------------------


@pytest.mark.browser
def test_the_panel_shows_what_each_event_tells_the_agent_whole(console: Console, page: Any) -> None:
    preview = console.api(f"/api/inject/?session={CLAUDE_SESSION}&harness=claude")
    start = next(e for e in preview["events"] if e["event"] == "SessionStart")
    assert "请用中文回答" in start["text"]  # the custom text starts the session
    console.open(f"session/claude/{CLAUDE_SESSION}")
    panel = page.locator("#told")
    for event in preview["events"]:
        block = panel.locator(f'details[data-event="{event["event"]}"]')
        if block.get_attribute("open") is None:
            block.locator(":scope > summary").click()
        summary = block.locator(":scope > summary").text_content()
        assert event["event"] in summary and f"{event['chars']:,} characters" in summary
        parts = block.locator("li[data-handler]")
        assert parts.evaluate_all("ps => ps.map(p => p.dataset.handler)") == [
            p["handler"] for p in event["parts"]
        ]
        for part, item in zip(event["parts"], parts.all(), strict=True):
            text = item.text_content()
            state = (
                "not previewed"
                if not part["previewed"]
                else "dropped by the cap"
                if part["dropped"]
                else "delivered"
                if part["delivered"]
                else "nothing to add"
            )
            assert state in text and part["why"] in text
            for piece in part["pieces"]:
                assert f"{piece['source']} ({piece['chars']:,})" in text
        exact = block.locator("pre.told-text")
        if event["text"]:
            assert exact.evaluate(UNMARKED) == event["text"]  # byte for byte
        else:
            assert exact.count() == 0 and "carries no text" in block.text_content()
    assert (
        marker("\u202e") in panel.locator('pre.told-text[data-event="SessionStart"]').text_content()
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        console.open(f"session/claude/{CLAUDE_SESSION}")
        page.locator("#told").screenshot(path=str(ARTIFACTS / f"told-{viewport}.png"))
        overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
        assert overflow[0] <= overflow[1], (viewport, overflow)
        box = page.locator("#told").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


# -- the terminal ----------------------------------------------------------------------------


def test_sessions_list_and_show_mark_them_and_json_stays_exact(tmp_path: Path) -> None:
    state_dir, root = tmp_path / "state", tmp_path / "dsh"
    text_session(root)
    with Store(state_dir) as store:
        Scanner(store).scan([Source("dsh", root)])
    where = f"--state-dir={state_dir}"
    listed = run_dshkit("sessions", "list", where, home=tmp_path).stdout
    shown = run_dshkit("sessions", "show", SESSION, where, home=tmp_path).stdout
    for out in (listed, shown):
        assert not HIDDEN.search(out) and "\x1b" not in out
        for char in "\u202e\u2066\u200b":
            assert marker(char) in out
    assert "修复登录" in listed and "修复登录" in shown
    exact = orjson.loads(run_dshkit("sessions", "list", where, "--json", home=tmp_path).stdout)
    assert exact[0]["title"] == TITLE
    detail = orjson.loads(
        run_dshkit("sessions", "show", SESSION, where, "--json", home=tmp_path).stdout
    )
    assert detail["title"] == TITLE and detail["humanMessageTexts"][0]["text"] == TITLE
