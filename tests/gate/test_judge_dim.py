"""The delivery gate on pages that show nothing a person sees, beside at most a small overlay
(an FPS counter), and on good pages that are mostly dark with small bright content: a full
window canvas left black (WebGL, drawn every frame or once under the counter), a texture of
dim glyphs on black, a canvas never sized drawn for the window, an empty document; a
starfield, a dark terminal, a dark game with one sprite, dim orbits. The classes come from
the public corpus (bench/gate_corpus.py): pages judged `ok` that people saw as blank. Each
page is written here and judged in real headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.gate.judge import Verdict, judge_files

from ..support.gate import kinds, shots

__all__ = ["shots"]  # the fixture the fixtures below ask for

FAILING_BUDGET_S = 5.0
GOOD_BUDGET_S = 15.0

# A DOM FPS counter in the top left corner, updated every frame, as the corpus pages have.
FPS = """<div id="fps" style="position:absolute;left:10px;top:10px;padding:4px 8px;
  background:rgba(255,255,255,.5);border-radius:4px;font:12px monospace;color:#000">FPS: 0</div>
<script>
  let last = performance.now(), frames = 0;
  (function tick(now) {
    frames += 1;
    if (now - last > 250) {
      document.getElementById('fps').textContent =
        `FPS: ${(frames * 1000 / (now - last)).toFixed(1)} CURRENT FRAME: ${frames}/200`;
      last = now; frames = 0;
    }
    requestAnimationFrame(tick);
  })(last);
</script>"""
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
html, body {{ margin: 0; height: 100%; overflow: hidden; background: {background}; }}
canvas {{ display: block; width: 100vw; height: 100vh; }}
</style></head><body>{body}</body></html>"""
FULL = "const c = document.querySelector('canvas');"
FULL += "c.width = innerWidth; c.height = innerHeight;"
WEBGL_CLEAR = (
    """<canvas></canvas><script>"""
    + FULL
    + """
const gl = c.getContext('webgl');
(function frame() {{
  gl.clearColor({r}, {g}, {b}, 1); gl.clear(gl.COLOR_BUFFER_BIT);
  requestAnimationFrame(frame);
}})();
</script>"""
)

FAILING = {
    # Cleared every frame, then a texture of 8 px glyphs in the palette's darkest navy: the
    # Mandelbrot zoom whose escape times never reach its light colours.
    "dim-glyphs-2d.html": PAGE.format(
        background="#000",
        body="<canvas></canvas><script>"
        + FULL
        + """
const ctx = c.getContext('2d');
(function frame() {
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.font = '8px monospace'; ctx.textBaseline = 'top';
  for (let y = 0; y < c.height; y += 16)
    for (let x = 0; x < c.width; x += 16) {
      ctx.fillStyle = (x + y) % 32 ? '#17184b' : '#0f2350';
      ctx.fillText('月', x, y);
    }
  requestAnimationFrame(frame);
})();
</script>"""
        + FPS,
    ),
    # WebGL cleared black every frame under a DOM FPS counter (blank before this change too:
    # kept so that the counter never makes it a scene).
    "black-webgl.html": PAGE.format(
        background="#000", body=WEBGL_CLEAR.format(r=0, g=0, b=0) + FPS
    ),
    # WebGL cleared black once, never drawn again; a DOM FPS counter that takes no clicks
    # over its centre, updated every frame: the screenshot of the canvas is not the counter.
    "black-once-webgl.html": PAGE.format(
        background="#000",
        body="<canvas></canvas><script>"
        + FULL
        + """
const gl = c.getContext('webgl');
gl.clearColor(0, 0, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT);
</script>"""
        + FPS.replace(
            "left:10px;top:10px",
            "left:calc(50% - 150px);top:calc(50% - 40px);"
            "width:300px;height:80px;pointer-events:none;font-size:40px",
        ),
    ),
    # A canvas never sized (300×150) stretched over the window, its planets drawn for the
    # window's size: only the FPS box it draws in its corner shows.
    "unsized-2d.html": PAGE.format(
        background="#000",
        body="""<canvas></canvas><script>
const c = document.querySelector('canvas'), ctx = c.getContext('2d');
const W = innerWidth, H = innerHeight;
const sprite = document.createElement('canvas');
sprite.width = sprite.height = 20;
const s = sprite.getContext('2d');
s.fillStyle = '#fc3'; s.beginPath(); s.arc(10, 10, 10, 0, 7); s.fill();
let t = 0;
(function frame() {
  t += 0.01;
  ctx.clearRect(0, 0, W, H);
  for (let i = 1; i <= 8; i++)
    ctx.drawImage(sprite, W / 2 + 40 * i * Math.cos(t / i), H / 2 + 40 * i * Math.sin(t / i));
  ctx.fillStyle = 'rgba(255, 255, 255, .7)'; ctx.fillRect(12, 14, 150, 60);
  ctx.fillStyle = '#000'; ctx.font = 'bold 18px sans-serif';
  ctx.fillText('FPS: 60', 24, 40);
  requestAnimationFrame(frame);
})();
</script>""",
    ),
    # An empty document: white all over, no error.
    "empty.html": "",
    "empty-body.html": "<!DOCTYPE html><html><head><title>Solar system</title></head><body>"
    "<script>const planets = [];</script></body></html>",
}

# A field of stars, moving.
STARS = (
    """<canvas></canvas><script>"""
    + FULL
    + """
const ctx = c.getContext('2d');
const stars = Array.from({length: 120}, (_, i) => [(i * 97) % c.width, (i * 53) % c.height,
  1 + (i % 3)]);
(function frame() {
  ctx.fillStyle = '#000'; ctx.fillRect(0, 0, c.width, c.height);
  for (const s of stars) {
    s[0] = (s[0] + s[2] * 0.5) % c.width;
    ctx.fillStyle = s[2] === 3 ? '#fff' : '#9ab';
    ctx.fillRect(s[0], s[1], s[2] > 1 ? 2 : 1, s[2] > 1 ? 2 : 1);
  }
  requestAnimationFrame(frame);
})();
</script>"""
)

GOOD = {
    "starfield-2d.html": PAGE.format(background="#000", body=STARS + FPS),
    # Points in WebGL: a few bright pixels on black.
    "starfield-webgl.html": PAGE.format(
        background="#000",
        body="<canvas></canvas><script>"
        + FULL
        + """
const gl = c.getContext('webgl');
const shader = (type, text) => {
  const s = gl.createShader(type); gl.shaderSource(s, text); gl.compileShader(s); return s;
};
const p = gl.createProgram();
gl.attachShader(p, shader(gl.VERTEX_SHADER,
  'attribute vec2 a; void main() { gl_Position = vec4(a, 0., 1.); gl_PointSize = 2.; }'));
gl.attachShader(p, shader(gl.FRAGMENT_SHADER,
  'precision mediump float; void main() { gl_FragColor = vec4(1.); }'));
gl.linkProgram(p); gl.useProgram(p);
const points = new Float32Array(160).map((_, i) => ((i * 0.6180339) % 1) * 2 - 1);
gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
gl.enableVertexAttribArray(0);
(function frame(t) {
  for (let i = 0; i < points.length; i += 2) points[i] = ((points[i] + 1.002) % 2) - 1;
  gl.bufferData(gl.ARRAY_BUFFER, points, gl.DYNAMIC_DRAW);
  gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
  gl.clearColor(0, 0, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT);
  gl.drawArrays(gl.POINTS, 0, points.length / 2);
  requestAnimationFrame(frame);
})();
</script>"""
        + FPS,
    ),
    # A terminal: green text on black in the DOM, over a canvas of faint scanlines.
    "terminal.html": PAGE.format(
        background="#000",
        body="""<canvas style="position:fixed;inset:0"></canvas>
<pre id="log" style="position:relative;margin:0;padding:16px;color:#3f3;font:16px monospace">
</pre><script>"""
        + FULL
        + """
const ctx = c.getContext('2d');
(function frame() {
  ctx.clearRect(0, 0, c.width, c.height); ctx.fillStyle = 'rgba(40, 60, 40, 0.15)';
  for (let y = 0; y < c.height; y += 3) ctx.fillRect(0, y, c.width, 1);
  requestAnimationFrame(frame);
})();
const log = document.getElementById('log');
let n = 0;
setInterval(() => {
  n += 1;
  log.textContent += `[${String(n).padStart(4, '0')}] build step ${n}: compiled module_${n}.o\\n`;
  const lines = log.textContent.split('\\n');
  if (lines.length > 30) log.textContent = lines.slice(-30).join('\\n');
}, 50);
</script>""",
    ),
    # A dark game: one small sprite moving on a black canvas, the score drawn in it.
    "dark-game.html": PAGE.format(
        background="#000",
        body="<canvas></canvas><script>"
        + FULL
        + """
const ctx = c.getContext('2d');
let x = 0;
(function frame() {
  ctx.fillStyle = '#05060a'; ctx.fillRect(0, 0, c.width, c.height);
  x = (x + 3) % c.width;
  ctx.fillStyle = '#f4c430'; ctx.fillRect(x, c.height / 2, 12, 12);
  requestAnimationFrame(frame);
})();
</script>""",
    ),
    # Dim but seen: dark grey orbits on black and a small grey planet, all darker than the
    # dim shade; their shape shows.
    "dim-orbits.html": PAGE.format(
        background="#000",
        body="<canvas></canvas><script>"
        + FULL
        + """
const ctx = c.getContext('2d');
let a = 0;
(function frame() {
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.strokeStyle = '#444';
  for (const r of [80, 140, 200, 260]) {
    ctx.beginPath(); ctx.arc(c.width / 2, c.height / 2, r, 0, Math.PI * 2); ctx.stroke();
  }
  a += 0.02; ctx.fillStyle = '#555';
  ctx.beginPath();
  ctx.arc(c.width / 2 + 140 * Math.cos(a), c.height / 2 + 140 * Math.sin(a), 6, 0, 7);
  ctx.fill();
  requestAnimationFrame(frame);
})();
</script>"""
        + FPS,
    ),
    # Never sized, stretched over the window, and drawn for its own 300×150: pixels large.
    "unsized-drawn-inside.html": PAGE.format(
        background="#000",
        body="""<canvas></canvas><script>
const c = document.querySelector('canvas'), ctx = c.getContext('2d');
let x = 0;
(function frame() {
  ctx.fillStyle = '#000'; ctx.fillRect(0, 0, c.width, c.height);
  x = (x + 1) % c.width;
  ctx.fillStyle = '#4c4'; ctx.fillRect(x, 70, 10, 10);
  ctx.fillStyle = '#fff'; ctx.fillText('score 0', 4, 12);
  requestAnimationFrame(frame);
})();
</script>""",
    ),
    # No canvas: boxes painted by CSS, no text at all.
    "css-art.html": PAGE.format(
        background="#111",
        body='<div style="position:absolute;left:40%;top:30%;width:200px;height:200px;'
        'border-radius:50%;background:#e63"></div>',
    ),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dim-pages")
    for name, text in {**FAILING, **GOOD}.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def failing(written: Path, shots: Path) -> dict[str, Verdict]:
    verdicts = judge_files([written / n for n in FAILING], FAILING_BUDGET_S, shots)
    return {Path(v.path).name: v for v in verdicts}


@pytest.fixture(scope="module")
def good(written: Path, shots: Path) -> dict[str, Verdict]:
    verdicts = judge_files([written / n for n in GOOD], GOOD_BUDGET_S, shots)
    return {Path(v.path).name: v for v in verdicts}


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_page_that_shows_nothing_beside_a_small_overlay_is_blank(
    failing: dict[str, Verdict], name: str
) -> None:
    verdict = failing[name]
    assert verdict.verdict == "blank-canvas", verdict.report()
    assert verdict.errors == [] and not verdict.timings["stoppedEarly"]
    (finding,) = kinds(verdict, "canvas")
    if name.startswith("empty"):
        assert "the page shows nothing" in str(finding["what"])
    elif name.startswith("unsized"):
        assert "landed outside its backing store" in str(finding["what"])
    elif name == "black-webgl.html":
        assert "one dark colour all over" in str(finding["what"])
    elif name == "black-once-webgl.html":
        # Its screenshot is of the canvas alone, not of the counter over its centre.
        assert "black in the frame and on screen" in str(finding["what"])
        assert verdict.canvas[0]["screenshotPixel"] == {"mean": 0, "max": 0}
    else:
        assert "its scene never showed" in str(finding["what"])


@pytest.mark.browser
def test_what_the_blank_finding_says(failing: dict[str, Verdict]) -> None:
    (dim,) = failing["dim-glyphs-2d.html"].canvas
    assert dim["ownPixels"]["faint"] and dim["ownPixels"]["max"] > 8  # drawn, yet unseen
    assert dim["ownPixels"]["light"] < 0.1 and dim["ownPixels"]["spread"] < 0.25
    (finding,) = kinds(failing["dim-glyphs-2d.html"], "canvas")
    assert "a dim texture" in str(finding["what"]) and "no shape" in str(finding["what"])


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(GOOD))
def test_a_dark_page_with_small_bright_content_is_ok(good: dict[str, Verdict], name: str) -> None:
    verdict = good[name]
    assert verdict.verdict == "ok", verdict.report()
    assert verdict.timings["stoppedEarly"] and "blank-canvas" not in verdict.history[-2:]
