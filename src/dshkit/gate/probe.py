"""The page-side scripts of the gate: the init script that records the page's own contexts, and
the sample read inside `requestAnimationFrame`. (Uncaught exceptions and unhandled
rejections both arrive as Playwright's `pageerror`: nothing to catch here.)

The judge never calls `getContext` (it could take the context type from the page): the init
script wraps it and keeps what the page created. `readPixels` outside a frame reads zeros, so
the sample resolves from inside a frame callback.
"""

from __future__ import annotations

KEY = "__dshkitGate"
BLOCK = 16  # the side of the centre block read from each canvas (backing-store pixels)

INIT = f"""(() => {{
  if (window.{KEY}) return;
  const contexts = [];
  const wrap = (proto) => {{
    if (!proto || !proto.getContext) return;
    const original = proto.getContext;
    proto.getContext = function (type, ...rest) {{
      const context = original.call(this, type, ...rest);
      if (context && !contexts.some((e) => e.context === context))
        contexts.push({{ canvas: this, type: String(type), context }});
      return context;
    }};
  }};
  wrap(window.HTMLCanvasElement && HTMLCanvasElement.prototype);
  Object.defineProperty(window, '{KEY}', {{ value: {{ contexts }}, enumerable: false }});
}})();"""

SAMPLE = f"""(words) => new Promise((resolve) => requestAnimationFrame(() => {{
  const gate = window.{KEY} || {{ contexts: [] }};
  const seen = (el) => el.checkVisibility({{ opacityProperty: true, visibilityProperty: true }});
  const failing = new RegExp(words, 'i');
  const shown = [...document.querySelectorAll('[id^="fatal" i]')].filter((el) => {{
    const box = el.getBoundingClientRect();
    return seen(el) && box.width > 0 && box.height > 0 && el.innerText.trim();
  }});
  const outer = shown.filter((el) => !shown.some((o) => o !== el && o.contains(el)));
  const overlay = outer.map((el) => el.innerText.trim()).join('\\n');
  const read = (entry, canvas) => {{
    const w = canvas.width, h = canvas.height, n = Math.min({BLOCK}, w, h);
    if (!entry || n < 1) return null;
    const x = Math.floor((w - n) / 2), y = Math.floor((h - n) / 2);
    let data = null;
    try {{
      const c = entry.context;
      if (entry.type === '2d') data = c.getImageData(x, y, n, n).data;
      else if (typeof c.readPixels === 'function') {{
        if (c.isContextLost()) return {{ lost: true }};
        data = new Uint8Array(n * n * 4);
        c.readPixels(x, y, n, n, c.RGBA, c.UNSIGNED_BYTE, data);
      }}
    }} catch (e) {{
      return null;
    }}
    if (!data) return null;
    let sum = 0, max = 0;
    for (let i = 0; i < data.length; i += 4)
      for (let k = 0; k < 3; k++) {{ sum += data[i + k]; max = Math.max(max, data[i + k]); }}
    return {{ mean: sum / (data.length / 4 * 3), max }};
  }};
  const canvases = [...document.querySelectorAll('canvas')].filter((c) =>
    c.checkVisibility()).map((canvas) => {{
    const entry = gate.contexts.find((e) => e.canvas === canvas);
    const box = canvas.getBoundingClientRect();
    return {{
      width: canvas.width, height: canvas.height,
      cssWidth: Math.round(box.width), cssHeight: Math.round(box.height),
      box: [box.left, box.top, box.width, box.height],
      context: entry ? entry.type : null,
      frame: read(entry, canvas),
    }};
  }});
  resolve({{
    overlay, fatal: failing.test(overlay), canvases,
    viewport: [innerWidth, innerHeight],
  }});
}}))"""
