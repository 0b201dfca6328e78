"""The page-side scripts of the gate: the init script that records what the page does with its
canvases, and the sample read inside `requestAnimationFrame`. (Uncaught exceptions and
unhandled rejections both arrive as Playwright's `pageerror`: nothing to catch here.)

The judge never calls `getContext` (it could take the context type from the page): the init
script wraps it and keeps what the page created. It also wraps the draw calls of 2D, WebGL
and bitmap contexts, so a canvas is judged by what the page drew into it, not by whatever
shows through it in a screenshot (one 2D draw call in a few is placed through the context's
transform: a scene drawn outside a canvas never sized); WebGL draw calls issued with no valid
program in use (they draw nothing) are counted apart, and each program that fails to link is
recorded with its log and the logs of its shaders. Nothing here calls `getError`: that would
take the error flags from the page. `readPixels` outside a frame reads zeros, so the sample resolves
from inside a frame callback.

A fetch the gate refused rejects with a TypeError the page may leave unhandled: the wrapped
`fetch` remembers which rejections it gave for which URL, and an unhandled one is reported to
the judge with its URL, so the judge can tell the gate's refusal from the page's own error.
"""

from __future__ import annotations

KEY = "__dshkitGate"
BLOCK = 16  # the side of the centre block read from each canvas (backing-store pixels)
MAX_FAILURES = 50  # distinct shader and program failures kept per page
MAX_SCAN_PIXELS = 4_000_000  # a 2D canvas this big at most is read whole when its centre is empty
SPOT = 64  # CSS pixels of the block of a canvas checked in the screenshot
BLANK_MEAN, BLANK_MAX = 2.0, 8  # mean < 2 and max < 8 (RGB) is a blank picture
# A canvas whose brightest pixel (over what shows behind it) is darker than this relative
# luminance is dim: a texture of 8 px navy glyphs on black measured 0.011 to 0.015, a strip of
# its lighter glyphs at an edge more. A star, a sprite, a line of text is far brighter (#777
# is 0.18, white 1); a dim shape (#555 is 0.09) is told by its blocks, below.
DIM_LUMINANCE = 0.1
# ... unless it has a shape: its blocks of this side (backing-store pixels), each one's mean
# luminance, further apart than this share of the brighter (the 5th and 95th percentiles; a
# black ellipse on that navy texture: 1.0; the texture alone, its glyphs varying: 0.02). A
# uniform texture is no scene.
BLOCK_SIDE = 64
UNIFORM_SPREAD = 0.25
# A canvas whose brightest and darkest pixels differ less than this contrast ratio is one
# flat colour all over: judged by the dark thresholds alone (a very dark night sky cleared
# every frame is a scene); the dim rule is for textures (the navy glyphs: 1.16 to 1.3).
FLAT_CONTRAST = 1.1
# The page's own content beside its canvases (text, images, painted boxes) this big at most,
# as a share of the viewport, is a small overlay (an FPS box, a status line): it does not make
# a canvas that shows nothing a page that shows its scene.
SMALL_CONTENT = 0.05
# One 2D draw call in this many is placed (the others only counted); a prime, so that a frame
# of a few dozen calls is sampled at every position in turn.
PLACE_EVERY = 13
MAX_CONTENT_ELEMENTS = 3000  # elements looked at for the page's own content, at most
MIN_WATCHED_TIMER_MS = 300  # shorter one-shot timers are a page's own work, not a watchdog

INIT = f"""(() => {{
  if (window.{KEY}) return;
  const contexts = [], byContext = new WeakMap(), offscreen = new WeakSet();
  const failures = [], fetchFailures = [];
  const note = (list, what, extra) => {{
    const known = list.find((f) => f.what === what);
    if (known) known.count += 1;
    else if (list.length < {MAX_FAILURES})
      list.push(Object.assign({{ what, at: performance.now(), count: 1 }}, extra));
  }};
  const record = (canvas, type, context) => {{
    let entry = byContext.get(context);
    if (entry) return entry;
    entry = {{ id: contexts.length, canvas, type: String(type), context, draws: 0,
      programDraws: 0, badDraws: 0, lostAt: null, program: null, failedShaders: 0,
      checks: 0, placed: 0, outside: 0 }};
    contexts.push(entry);
    byContext.set(context, entry);
    if (/webgl/i.test(entry.type) && canvas.addEventListener) {{
      canvas.addEventListener('webglcontextlost', () => {{
        if (entry.lostAt === null) entry.lostAt = performance.now();
      }});
      canvas.addEventListener('webglcontextrestored', () => {{
        entry.lostAt = null;
        entry.program = null;
      }});
    }}
    return entry;
  }};
  const wrap = (proto, name, make) => {{
    if (!proto || typeof proto[name] !== 'function') return;
    proto[name] = make(proto[name]);
  }};
  const canvasProto = window.HTMLCanvasElement && HTMLCanvasElement.prototype;
  wrap(canvasProto, 'getContext', (original) => function (type, ...rest) {{
    const context = original.call(this, type, ...rest);
    if (context) record(this, type, context);
    return context;
  }});
  wrap(canvasProto, 'transferControlToOffscreen',
    (original) => function (...args) {{ offscreen.add(this); return original.apply(this, args); }});
  // A draw call of a 2D or bitmap context, or a WebGL clear or blit: counted as drawn.
  const plain = (original) => function (...args) {{
    const entry = byContext.get(this);
    if (entry) entry.draws += 1;
    return original.apply(this, args);
  }};
  // A WebGL draw call through a program: drawn only with a valid program in use (the one
  // the context holds after useProgram, which keeps the old one when given an invalid one).
  const programmed = (original, gl) => function (...args) {{
    const entry = byContext.get(gl || this);
    if (entry && entry.lostAt === null) {{
      if (entry.program === null) entry.badDraws += 1;
      else {{ entry.programDraws += 1; entry.draws += 1; }}
    }}
    return original.apply(this, args);
  }};
  const current = (gl) => {{
    const entry = byContext.get(gl);
    if (entry) entry.program = gl.isContextLost() ? null : gl.getParameter(gl.CURRENT_PROGRAM);
  }};
  // A 2D draw call with a place, counted as drawn; one in {PLACE_EVERY} is placed through the
  // context's transform, and whether it lands wholly outside the backing store is counted (a
  // scene drawn for the window on a canvas never sized lands outside it).
  const placed = (original, box) => function (...args) {{
    const entry = byContext.get(this);
    if (entry) {{
      entry.draws += 1;
      if (entry.checks++ % {PLACE_EVERY} === 0) try {{
        const [x, y, w, h] = box(args).map(Number), m = this.getTransform(), c = this.canvas;
        if ([x, y, w, h].every(Number.isFinite)) {{
          const xs = [], ys = [];
          for (const [px, py] of [[x, y], [x + w, y], [x, y + h], [x + w, y + h]]) {{
            xs.push(m.a * px + m.c * py + m.e);
            ys.push(m.b * px + m.d * py + m.f);
          }}
          entry.placed += 1;
          if (Math.min(...xs) >= c.width || Math.max(...xs) <= 0 ||
              Math.min(...ys) >= c.height || Math.max(...ys) <= 0) entry.outside += 1;
        }}
      }} catch (e) {{}}
    }}
    return original.apply(this, args);
  }};
  const places = {{
    fillRect: (a) => a.slice(0, 4), strokeRect: (a) => a.slice(0, 4),
    fillText: (a) => [a[1], a[2], 1, 1], strokeText: (a) => [a[1], a[2], 1, 1],
    drawImage: (a) => a.length >= 9 ? a.slice(5, 9) : a.length >= 5 ? a.slice(1, 5)
      : [a[1], a[2], (a[0] && a[0].width) || 1, (a[0] && a[0].height) || 1],
  }};
  const names2d = ['fillRect', 'strokeRect', 'fillText', 'strokeText', 'fill', 'stroke',
    'drawImage', 'putImageData'];
  for (const name of names2d)
    wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype, name,
      places[name] ? (o) => placed(o, places[name]) : plain);
  wrap(window.ImageBitmapRenderingContext && ImageBitmapRenderingContext.prototype,
    'transferFromImageBitmap', plain);
  const glProtos = [window.WebGLRenderingContext, window.WebGL2RenderingContext]
    .filter(Boolean).map((c) => c.prototype);
  const shaderLog = (gl, program) => (gl.getAttachedShaders(program) || []).flatMap((s) => {{
    if (gl.getShaderParameter(s, gl.COMPILE_STATUS)) return [];
    const kind = gl.getShaderParameter(s, gl.SHADER_TYPE) === gl.VERTEX_SHADER
      ? 'vertex' : 'fragment';
    return [`${{kind}} shader did not compile: ${{(gl.getShaderInfoLog(s) || '').trim()}}`];
  }});
  for (const proto of glProtos) {{
    for (const name of ['clear', 'clearBufferfv', 'clearBufferiv', 'clearBufferuiv',
      'clearBufferfi', 'blitFramebuffer']) wrap(proto, name, plain);
    for (const name of ['drawArrays', 'drawElements', 'drawArraysInstanced',
      'drawElementsInstanced', 'drawRangeElements']) wrap(proto, name, (o) => programmed(o));
    for (const name of ['useProgram', 'deleteProgram'])
      wrap(proto, name, (original) => function (...args) {{
        const result = original.apply(this, args);
        current(this);
        return result;
      }});
    wrap(proto, 'linkProgram', (original) => function (program, ...rest) {{
      const result = original.call(this, program, ...rest);
      current(this);
      try {{
        if (program && !this.isContextLost() &&
            !this.getProgramParameter(program, this.LINK_STATUS)) {{
          const log = (this.getProgramInfoLog(program) || '').trim();
          const details = shaderLog(this, program);
          note(failures, ['shader program did not link' + (log ? `: ${{log}}` : ''),
            ...details].join('\\n'), {{ context: (byContext.get(this) || {{}}).id ?? null }});
        }}
      }} catch (e) {{}}
      return result;
    }});
    // A shader that did not compile, checked at once (the page may delete it later, and
    // asking about a deleted shader would set an error flag the page could read).
    wrap(proto, 'compileShader', (original) => function (shader, ...rest) {{
      const result = original.call(this, shader, ...rest);
      try {{
        if (shader && !this.isContextLost() &&
            !this.getShaderParameter(shader, this.COMPILE_STATUS)) {{
          const entry = byContext.get(this);
          if (entry) entry.failedShaders += 1;
          const kind = this.getShaderParameter(shader, this.SHADER_TYPE) === this.VERTEX_SHADER
            ? 'vertex' : 'fragment';
          const log = (this.getShaderInfoLog(shader) || '').trim();
          note(failures, `${{kind}} shader did not compile: ${{log}}`,
            {{ context: entry ? entry.id : null }});
        }}
      }} catch (e) {{}}
      return result;
    }});
    wrap(proto, 'getExtension', (original) => function (name, ...rest) {{
      const ext = original.call(this, name, ...rest);
      if (ext && !ext.{KEY}) {{
        const gl = this;
        for (const method of ['drawArraysInstancedANGLE', 'drawElementsInstancedANGLE',
          'multiDrawArraysWEBGL', 'multiDrawElementsWEBGL', 'multiDrawArraysInstancedWEBGL',
          'multiDrawElementsInstancedWEBGL'])
          if (typeof ext[method] === 'function') ext[method] = programmed(ext[method], gl);
        try {{ Object.defineProperty(ext, '{KEY}', {{ value: true }}); }} catch (e) {{}}
      }}
      return ext;
    }});
  }}
  const refusedBy = new WeakMap();
  const pending = {{ fetches: 0 }};
  if (typeof window.fetch === 'function') {{
    const original = window.fetch;
    window.fetch = function (input, ...rest) {{
      let url = '';
      try {{ url = new Request(input).url; }} catch (e) {{}}
      pending.fetches += 1;
      return original.call(this, input, ...rest).then((answer) => {{
        pending.fetches -= 1;
        return answer;
      }}, (error) => {{
        pending.fetches -= 1;
        if (error && typeof error === 'object') refusedBy.set(error, url);
        throw error;
      }});
    }};
  }}
  // Listeners for a person's gesture (pointer, touch, keys), by target: a canvas waiting
  // for a click to start is not dead (the judge clicks once, as a person would).
  const pointerTypes = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup',
    'touchstart', 'touchend', 'dblclick']);
  const keyTypes = new Set(['keydown', 'keyup', 'keypress']);
  const gestures = {{ pointer: new WeakSet(), elements: [], keyTargets: 0 }};
  wrap(window.EventTarget && EventTarget.prototype, 'addEventListener',
    (original) => function (type, ...rest) {{
      try {{
        if (pointerTypes.has(type) && !gestures.pointer.has(this)) {{
          gestures.pointer.add(this);
          if (this instanceof Element && gestures.elements.length < 200)
            gestures.elements.push(this);
        }} else if (keyTypes.has(type)) gestures.keyTargets += 1;
      }} catch (e) {{}}
      return original.call(this, type, ...rest);
    }});
  // The page's animation loop: when it last asked for a frame (the judge's own frames go
  // through the original, kept below).
  const raf = window.requestAnimationFrame.bind(window);
  const frames = {{ at: 0 }};
  window.requestAnimationFrame = function (callback) {{
    frames.at = performance.now();
    return raf(callback);
  }};
  // Registered before any of the page's: an error or rejection whose event the page's own
  // handler cancels (`onerror` returning true, preventDefault) is never reported to the
  // judge, so the sample reads back which ones were cancelled.
  const raised = [];
  addEventListener('error', (event) => {{
    if (event instanceof ErrorEvent && raised.length < {MAX_FAILURES}) raised.push({{
      event, at: performance.now(), what: `${{event.message}}`,
      where: event.filename ? `${{event.filename}}:${{event.lineno}}:${{event.colno}}` : null,
    }});
  }});
  addEventListener('unhandledrejection', (event) => {{
    const url = event.reason && typeof event.reason === 'object' && refusedBy.get(event.reason);
    if (url) note(fetchFailures, String(event.reason), {{ url }});
    else if (raised.length < {MAX_FAILURES}) raised.push({{
      event, at: performance.now(), where: null, promise: event.promise,
      what: `Uncaught (in promise) ${{event.reason && event.reason.stack || String(event.reason)}}`,
    }});
  }});
  // A script that failed to load (a library the gate refused, a module whose import it
  // refused: that module never ran): its element's `error` event, seen in the capture phase.
  const failedScripts = [];
  addEventListener('error', (event) => {{
    const el = event.target;
    if (el instanceof HTMLScriptElement && failedScripts.length < {MAX_FAILURES})
      failedScripts.push({{ src: el.src || '', module: el.type === 'module',
        at: performance.now() }});
  }}, true);
  // A rejection reported unhandled whose handler came later (the browser fires
  // 'rejectionhandled'): in the end nothing was left unhandled, so the judge lets its
  // report go (matched by the reason's message), a cancelled one too.
  const handled = [];
  addEventListener('rejectionhandled', (event) => {{
    const reason = event.reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    if (handled.length < {MAX_FAILURES}) handled.push({{ message, at: performance.now() }});
    for (const r of raised) if (r.promise === event.promise) r.handled = true;
  }});
  // The page's one-shot timers still to fire (a watchdog that may show a failure seconds
  // after a good start): the judge does not stop early before those due soon have fired.
  // Every timer still to fire (`live`) and every interval: pending work, watched after an
  // early verdict until the page has none.
  const timers = new Map(), live = new Set(), intervals = new Map();
  const setTimer = window.setTimeout, clearTimer = window.clearTimeout;
  const setEvery = window.setInterval, clearEvery = window.clearInterval;
  window.setTimeout = function (handler, delay, ...rest) {{
    const wait = Number(delay) || 0;
    let id = null;
    const run = typeof handler === 'function'
      ? function (...args) {{
        timers.delete(id); live.delete(id);
        return handler.apply(this, args);
      }}
      : handler;
    id = setTimer.call(this, run, delay, ...rest);
    if (typeof handler === 'function') live.add(id);
    if (wait >= {MIN_WATCHED_TIMER_MS} && typeof handler === 'function')
      timers.set(id, performance.now() + wait);
    return id;
  }};
  window.setInterval = function (handler, delay, ...rest) {{
    const id = setEvery.call(this, handler, delay, ...rest);
    intervals.set(id, Number(delay) || 0);
    return id;
  }};
  // Either clears either kind (the browser's own rule).
  window.clearTimeout = function (id) {{
    timers.delete(id); live.delete(id); intervals.delete(id);
    return clearTimer.call(this, id);
  }};
  window.clearInterval = function (id) {{
    timers.delete(id); live.delete(id); intervals.delete(id);
    return clearEvery.call(this, id);
  }};
  Object.defineProperty(window, '{KEY}', {{
    value: {{ contexts, offscreen, failures, fetchFailures, failedScripts, raised, handled,
      timers, live, intervals, frames, raf, pending, gestures, later: setTimer.bind(window) }},
    enumerable: false,
  }});
}})();"""

SAMPLE = f"""([words, overlayIds, startWords]) => new Promise((resolve) => (
  (window.{KEY} && window.{KEY}.raf) || requestAnimationFrame)(() => {{
  const gate = window.{KEY} ||
    {{ contexts: [], offscreen: new WeakSet(), failures: [], fetchFailures: [], raised: [],
      handled: [], timers: new Map(), intervals: new Map(), frames: {{ at: 0 }}, gestures: {{}},
      pending: {{ fetches: 0 }} }};
  // Each context's draw count once the last frame was shown (a task after its callbacks): a
  // WebGL buffer the page drew into since holds this frame's picture (read after the page's
  // own frame callbacks); one it did not has been shown and cleared (it reads zeros), unless
  // it preserves its drawing buffer. Not known in time: not trusted.
  let before = null;
  (gate.later || setTimeout)(() => {{
    before = new Map(gate.contexts.map((e) => [e, e.draws]));
  }}, 0);
  (gate.raf || requestAnimationFrame)(() => {{
  const seen = (el) => el.checkVisibility({{ opacityProperty: true, visibilityProperty: true }});
  const failing = new RegExp(words, 'i'), convention = new RegExp(overlayIds);
  // What scrolling can reach: the document's area, on the viewport's coordinates.
  const root = document.scrollingElement || document.documentElement;
  const reach = {{
    left: -scrollX, top: -scrollY,
    right: Math.max(root ? root.scrollWidth : 0, innerWidth) - scrollX,
    bottom: Math.max(root ? root.scrollHeight : 0, innerHeight) - scrollY,
  }};
  const reachable = (box) => box.width > 0 && box.height > 0 && box.right > reach.left &&
    box.bottom > reach.top && box.left < reach.right && box.top < reach.bottom;
  const shown = [...document.querySelectorAll('[id]')].filter((el) => {{
    if (!convention.test(el.id)) return false;
    // Slid out of the document (a toast moved above the top edge) is not shown.
    return seen(el) && reachable(el.getBoundingClientRect()) && el.innerText.trim();
  }});
  const outer = shown.filter((el) => !shown.some((o) => o !== el && o.contains(el)));
  const overlay = outer.map((el) => el.innerText.trim()).join('\\n');
  const parseErrors = [...document.getElementsByTagNameNS('*', 'parsererror')]
    .map((el) => {{
      // Chromium's box: a heading, the parser's messages, a heading; the messages tell.
      const said = [...el.children].filter((c) => !/^h\\d$/i.test(c.localName))
        .map((c) => (c.textContent || '').trim()).filter(Boolean);
      return (said.length ? said.join(' ') : (el.textContent || '')).trim();
    }});
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
    let sum = 0, max = 0, alpha = 0;
    for (let i = 0; i < data.length; i += 4) {{
      for (let k = 0; k < 3; k++) {{ sum += data[i + k]; max = Math.max(max, data[i + k]); }}
      alpha = Math.max(alpha, data[i + 3]);
    }}
    const pixel = {{ mean: sum / (data.length / 4 * 3), max }};
    // A 2D canvas reads what it holds at any time: transparent at its centre and everywhere
    // else too, it shows nothing of its own (an image drawn before it loaded), whatever shows
    // through it on screen. (A WebGL canvas read in a later frame can be empty though drawn.)
    if (entry.type === '2d' && alpha === 0 && w * h <= {MAX_SCAN_PIXELS}) {{
      try {{
        const all = entry.context.getImageData(0, 0, w, h).data;
        let seen = false;
        for (let i = 3; i < all.length && !seen; i += 4) seen = all[i] !== 0;
        if (!seen) pixel.empty = true;
      }} catch (e) {{}}
    }}
    return pixel;
  }};
  // When the page's own load ended, on its clock (null before): a timer the page set from
  // its load is measured from there.
  const loadedAt = () => {{
    const [navigation] = performance.getEntriesByType('navigation');
    return navigation && navigation.loadEventEnd > 0 ? navigation.loadEventEnd : null;
  }};
  // Where in the viewport the canvas itself is on top (its centre first, then a grid over
  // what of it is in the viewport): a screenshot of its centre could show a panel over it.
  // [x, y, w, h] of a block of up to {SPOT}×{SPOT} CSS pixels, or null when covered at every
  // point tried (a panel with pointer-events:none is not seen by hit testing: a known gap).
  const spot = (canvas, box) => {{
    const left = Math.max(0, box.left), top = Math.max(0, box.top);
    const right = Math.min(innerWidth, box.right), bottom = Math.min(innerHeight, box.bottom);
    if (right - left < 1 || bottom - top < 1) {{
      // Out of the first screen (below the fold): no hit test there, so its centre block in
      // the document's coordinates, taken by a screenshot beyond the viewport.
      if (!reachable(box)) return null;
      const w = Math.min({SPOT}, box.width), h = Math.min({SPOT}, box.height);
      const x = box.left + box.width / 2 - w / 2 + scrollX;
      const y = box.top + box.height / 2 - h / 2 + scrollY;
      return [Math.max(0, x), Math.max(0, y), w, h, 'page'];
    }}
    const w = Math.min({SPOT}, right - left), h = Math.min({SPOT}, bottom - top);
    // Hit testing passes through a canvas with pointer-events:none: there, a point where
    // only its ancestors are hit (painted below it) is the canvas's too.
    const through = getComputedStyle(canvas).pointerEvents === 'none';
    const mine = (x, y) => {{
      const hit = document.elementFromPoint(x, y);
      return hit === canvas || (through && hit !== null && hit.contains(canvas));
    }};
    const fits = (cx, cy) => {{
      const x = Math.min(Math.max(left, cx - w / 2), right - w);
      const y = Math.min(Math.max(top, cy - h / 2), bottom - h);
      const ex = x + w - 0.5, ey = y + h - 0.5, mx = x + w / 2, my = y + h / 2;
      return mine(mx, my) && mine(x + 0.5, y + 0.5) && mine(ex, y + 0.5) &&
        mine(x + 0.5, ey) && mine(ex, ey) ? [x, y, w, h] : null;
    }};
    const centre = fits((box.left + box.right) / 2, (box.top + box.bottom) / 2);
    if (centre) return centre;
    for (const fy of [0.5, 0.1, 0.9, 0.3, 0.7])
      for (const fx of [0.5, 0.1, 0.9, 0.3, 0.7]) {{
        const found = fits(left + (right - left) * fx, top + (bottom - top) * fy);
        if (found) return found;
      }}
    return null;
  }};
  // Whether the canvas's buffer now holds the picture it shows: a 2D canvas always does; a
  // WebGL one that preserves its drawing buffer, or that the page drew into since a frame ago.
  const current = (entry) => {{
    if (!entry || entry.lostAt !== null) return false;
    if (entry.type === '2d') return true;
    if (typeof entry.context.readPixels !== 'function') return false;
    let preserved = false;
    try {{
      const attributes = entry.context.getContextAttributes();
      preserved = !!(attributes && attributes.preserveDrawingBuffer);
    }} catch (e) {{}}
    return preserved || (before !== null && entry.draws > (before.get(entry) || 0));
  }};
  // The colour behind a canvas: its nearest ancestor's background colour (the page's white
  // when none paints one).
  const backdrop = (canvas) => {{
    for (let e = canvas.parentElement; e; e = e.parentElement) {{
      const m = (getComputedStyle(e).backgroundColor.match(/[\\d.]+/g) || []).map(Number);
      if (m.length >= 3 && (m.length < 4 || m[3] > 0)) return m.slice(0, 3);
    }}
    return [255, 255, 255];
  }};
  const linear = [...Array(256).keys()].map((v) => {{
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  }});
  // The canvas's own picture, whole: transparent all over, or one flat dark colour all over
  // (mean < {BLANK_MEAN}, max < {BLANK_MAX}), shows nothing of its own, whatever shows through
  // or over it on screen (`blank`). Over the colour behind it, a texture (contrast
  // {FLAT_CONTRAST} or more) with no pixel lit above a dim luminance ({DIM_LUMINANCE}) and no
  // shape shows nothing a person sees (`faint`). Stops at the first sign of content.
  const own = (entry, canvas) => {{
    const back = backdrop(canvas);
    const w = canvas.width, h = canvas.height;
    if (w < 1 || h < 1 || w * h > {MAX_SCAN_PIXELS}) return null;
    let data = null;
    try {{
      const c = entry.context;
      if (entry.type === '2d') data = c.getImageData(0, 0, w, h).data;
      else {{
        if (c.isContextLost()) return null;
        data = new Uint8Array(w * h * 4);
        c.readPixels(0, 0, w, h, c.RGBA, c.UNSIGNED_BYTE, data);
      }}
    }} catch (e) {{
      return null;
    }}
    let lit = 0, sum = 0, shown = 0, low = 255, high = 0, darkest = 1, brightest = 0;
    const [br, bg, bb] = back;
    // Its luminance by blocks of {BLOCK_SIDE}×{BLOCK_SIDE} pixels (whole blocks only): a dim
    // picture with a shape has blocks far apart; a texture, or nothing, has them all alike.
    const side = {BLOCK_SIDE}, across = Math.floor(w / side), down = Math.floor(h / side);
    const blocks = new Float64Array(across * down);
    for (let i = 0; i < data.length; i += 4) {{
      const a = data[i + 3];
      if (a < low) low = a;
      if (a > high) high = a;
      if (a) {{
        const m = Math.max(data[i], data[i + 1], data[i + 2]);
        if (m > lit) lit = m;
        sum += data[i] + data[i + 1] + data[i + 2];
        shown += 1;
      }}
      // What a person sees there: the pixel over the colour behind the canvas.
      const y = 0.2126 * linear[Math.round((data[i] * a + br * (255 - a)) / 255)] +
        0.7152 * linear[Math.round((data[i + 1] * a + bg * (255 - a)) / 255)] +
        0.0722 * linear[Math.round((data[i + 2] * a + bb * (255 - a)) / 255)];
      if (y < darkest) darkest = y;
      if (y > brightest) brightest = y;
      const col = (i >> 2) % w, row = ((i >> 2) - col) / w;
      if (col < across * side && row < down * side)
        blocks[((row / side) | 0) * across + ((col / side) | 0)] += y;
      if ((low !== high || (high && lit >= {BLANK_MAX})) && brightest >= {DIM_LUMINANCE} &&
          brightest + 0.05 >= {FLAT_CONTRAST} * (darkest + 0.05))
        return {{ blank: false, faint: false }};
    }}
    const mean = shown ? sum / (shown * 3) : 0;
    const blank = high === 0 || (low === high && lit < {BLANK_MAX} && mean < {BLANK_MEAN});
    const contrast = (brightest + 0.05) / (darkest + 0.05);
    // How far apart its blocks are (the 5th and 95th percentiles: a ragged edge block is no
    // shape), as a share of the brighter (0: all alike).
    const sorted = [...blocks].sort((a, b) => a - b);
    const least = sorted[Math.floor(0.05 * (sorted.length - 1))] || 0;
    const most = sorted[Math.ceil(0.95 * (sorted.length - 1))] || 0;
    const spread = most > 0 ? (most - least) / most : 0;
    // A texture (not one flat colour: that is judged by the dark thresholds above), dim, with
    // no shape.
    const faint = !blank && contrast >= {FLAT_CONTRAST} && brightest < {DIM_LUMINANCE} &&
      spread <= {UNIFORM_SPREAD};
    return {{ blank, max: lit, mean: Math.round(mean * 100) / 100, alpha: high, faint,
      light: Math.round(brightest * 1000) / 1000, contrast: Math.round(contrast * 100) / 100,
      spread: Math.round(spread * 100) / 100 }};
  }};
  const dark = (frame) => frame === null || frame.lost ||
    (!frame.empty && frame.mean < {BLANK_MEAN} && frame.max < {BLANK_MAX});
  // The page's work still to come: timers of every length, intervals, an animation loop (a
  // frame asked for within the last second), fetches in flight.
  const pending = () => ({{
    timers: gate.live ? gate.live.size : 0,
    intervals: gate.intervals ? gate.intervals.size : 0,
    frameLoop: !!(gate.frames && gate.frames.at && performance.now() - gate.frames.at < 1000),
    fetches: gate.pending ? gate.pending.fetches : 0,
  }});
  // Where the page waits for a person's gesture: a visible control saying start that takes
  // clicks ('control'), a waiting canvas taking pointer input itself or through the whole
  // page ('canvas'), or key listeners only ('key'). The point is where a person would click:
  // the control's or canvas's centre, where it is on top.
  const gesture = (canvases) => {{
    const g = gate.gestures;
    if (!g || !g.pointer) return null;
    const starting = new RegExp(startWords, 'i');
    const handler = (el, names) => names.some((n) => typeof el[n] === 'function');
    const clicks = ['onclick', 'onmousedown', 'onpointerdown', 'onmouseup', 'onpointerup',
      'ontouchstart'];
    const keyed = ['onkeydown', 'onkeyup', 'onkeypress'];
    const takes = (el) => {{
      for (let e = el; e; e = e.parentElement)
        if (g.pointer.has(e) || handler(e, clicks)) return true;
      return false;
    }};
    const wide = [window, document, document.body, document.documentElement]
      .some((t) => t && (g.pointer.has(t) || handler(t, clicks)));
    const keys = g.keyTargets > 0 || [window, document, document.body]
      .some((t) => t && handler(t, keyed));
    const onTop = (el) => {{
      const b = el.getBoundingClientRect();
      const x = b.left + b.width / 2, y = b.top + b.height / 2;
      if (b.width < 1 || b.height < 1 || x < 0 || y < 0 || x >= innerWidth || y >= innerHeight)
        return null;
      const hit = document.elementFromPoint(x, y);
      return hit && (hit === el || el.contains(hit)) ? [x, y] : null;
    }};
    // Controls first; then what listens itself (a start screen, its text longer); then, where
    // the whole page listens, any short text saying start (the click reaches the page).
    const controls = [...document.querySelectorAll(
      'button, [role=button], input[type=button], input[type=submit], a, [onclick]'),
      ...g.elements];
    if (wide) controls.push(...[...document.querySelectorAll(
      'div, p, span, h1, h2, h3, h4, label, section')].slice(0, 500));
    for (const el of controls) {{
      if (!el.isConnected || !seen(el) || el.disabled) continue;
      const said = [el.innerText, el.value, el.getAttribute && el.getAttribute('aria-label'),
        el.title].filter((t) => typeof t === 'string').join(' ').trim();
      const limit = g.pointer.has(el) ? 300 : 80;
      if (!said || said.length > limit || !starting.test(said)) continue;
      if (!(takes(el) || wide || el.matches('button, input, a[href]'))) continue;
      const at = onTop(el);
      if (at) return {{ kind: 'control', at, what: said.slice(0, 80) }};
    }}
    // Not drawn yet, or drawn but blank all over (a scene that clears until it starts).
    const waiting = canvases.filter((c) => (c.draws === 0 || (c.own && (c.own.blank ||
      c.own.faint))) &&
      c.box[2] >= 1 && c.box[3] >= 1);
    for (const c of waiting) {{
      if (!(c.listens || wide)) continue;
      const [x, y, w, h] = c.box;
      const cx = x + w / 2, cy = y + h / 2;
      if (cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight)
        return {{ kind: 'canvas', at: [cx, cy], what: c.name }};
    }}
    if (waiting.length && keys) return {{ kind: 'key', at: null, what: 'keyboard' }};
    return null;
  }};
  // The page's own content beside its canvases, as a share of the viewport: text (where its
  // glyphs are), images and other replaced elements, boxes painted with a background, a border
  // or a shadow. `large` once it passes {SMALL_CONTENT} (an FPS box or a status line does not),
  // `painted` the count found; null for a document with no body (an SVG).
  const content = () => {{
    const body = document.body;
    if (!body) return null;
    const view = innerWidth * innerHeight;
    let area = 0, painted = 0, looked = 0;
    const clipped = (r) => Math.max(0, Math.min(innerWidth, r.right) - Math.max(0, r.left)) *
      Math.max(0, Math.min(innerHeight, r.bottom) - Math.max(0, r.top));
    const text = (node) => node.nodeType === 3 && node.textContent.trim() !== '';
    const replaced =
      /^(img|svg|video|iframe|object|embed|input|select|textarea|button|picture|math)$/;
    const range = document.createRange();
    // A background the page paints itself (a colour, an image) is something it shows: only
    // the browser's own blank white is nothing.
    const page = [document.documentElement, body].some((el) => {{
      const style = getComputedStyle(el);
      return style.backgroundImage !== 'none' ||
        !/^(transparent|rgba\\(.*, 0\\))$/.test(style.backgroundColor);
    }});
    for (const el of [body, ...body.querySelectorAll('*')]) {{
      if (++looked > {MAX_CONTENT_ELEMENTS}) return {{ large: true, painted: painted + 1 }};
      const tag = el.localName;
      if (tag === 'canvas' || tag === 'script' || tag === 'style' || tag === 'template' ||
          el.closest('svg') !== el && el.closest('svg')) continue;
      const nodes = [...el.childNodes].filter(text);
      const style = getComputedStyle(el);
      const paints = el !== body && (
        !/^(transparent|rgba\\(.*, 0\\))$/.test(style.backgroundColor) ||
        style.backgroundImage !== 'none' || style.boxShadow !== 'none' ||
        ['Top', 'Right', 'Bottom', 'Left'].some((side) => style[`border${{side}}Style`] !==
          'none' && parseFloat(style[`border${{side}}Width`]) > 0));
      const whole = el !== body && (replaced.test(tag) || el.shadowRoot !== null || paints);
      if (!nodes.length && !whole) continue;
      if (!seen(el)) continue;
      let here = 0;
      if (whole) here = clipped(el.getBoundingClientRect());
      else for (const node of nodes) {{
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) here += clipped(r);
      }}
      if (here < 1) continue;
      painted += 1;
      area += here;
      if (area > {SMALL_CONTENT} * view) return {{ large: true, painted }};
    }}
    return {{ large: false, painted: painted + (page ? 1 : 0),
      share: Math.round(area / view * 1000) / 1000 }};
  }};
  // What only helps the judge (a gesture to make) never costs the sample.
  const safely = (read) => {{
    try {{ return read(); }} catch (e) {{ return null; }}
  }};
  const all = [...document.querySelectorAll('canvas')];
  // A canvas hidden by CSS (display, visibility, opacity) shows nothing of its own: not judged.
  const canvases = all.filter(seen).map((canvas) => {{
    const entry = gate.contexts.find((e) => e.canvas === canvas);
    const box = canvas.getBoundingClientRect();
    const frame = read(entry, canvas);
    const now = current(entry);
    // Read whole where its buffer holds the picture it shows (it stops at the first sign of
    // content: most pages show some at once).
    const whole = now && frame !== null && !frame.lost ? own(entry, canvas) : null;
    return {{
      id: entry ? entry.id : null,
      name: canvas.id ? `canvas#${{canvas.id}}` : `canvas ${{all.indexOf(canvas) + 1}}`,
      width: canvas.width, height: canvas.height,
      cssWidth: Math.round(box.width), cssHeight: Math.round(box.height),
      box: [box.left, box.top, box.width, box.height],
      context: entry ? entry.type : gate.offscreen.has(canvas) ? 'offscreen' : null,
      draws: entry ? entry.draws : 0,
      programDraws: entry ? entry.programDraws : 0,
      badDraws: entry ? entry.badDraws : 0,
      lostAt: entry ? entry.lostAt : null,
      failedShaders: entry ? entry.failedShaders : 0,
      placed: entry ? entry.placed : 0, outside: entry ? entry.outside : 0,
      frame, current: now, own: whole,
      spot: dark(frame) && !(whole && whole.blank) ? spot(canvas, box) : null,
      listens: !!(gate.gestures && gate.gestures.pointer && gate.gestures.pointer.has(canvas)),
    }};
  }});
  resolve({{
    overlay, fatal: failing.test(overlay), overlayIds: outer.map((el) => el.id), canvases,
    parseErrors, failures: gate.failures.map((f) => Object.assign({{}}, f)),
    fetchFailures: gate.fetchFailures.map((f) => Object.assign({{}}, f)),
    failedScripts: (gate.failedScripts || []).map((f) => Object.assign({{}}, f)),
    cancelled: gate.raised.filter((r) => r.event.defaultPrevented)
      .map((r) => ({{ what: r.what, where: r.where, at: r.at, handled: !!r.handled }})),
    handled: gate.handled.map((h) => Object.assign({{}}, h)),
    timers: [...gate.timers.values()].sort((a, b) => a - b).slice(0, {MAX_FAILURES}),
    viewport: [innerWidth, innerHeight], now: performance.now(), loadedAt: loadedAt(),
    pending: pending(), gesture: safely(() => gesture(canvases)), content: safely(content),
  }});
  }});
}}))"""

# The screenshot of a canvas that drew once (its buffer no longer holds its picture) shows the
# canvas alone: every other element but its ancestors hidden for the shot (a DOM FPS counter
# over it is not the canvas), then shown again. Its argument is the canvas's context id;
# false when the page no longer has it.
SHOT_ALONE = f"""(id) => {{
  const gate = window.{KEY};
  const entry = gate && gate.contexts[id];
  if (!entry || !entry.canvas.isConnected) return false;
  for (let e = entry.canvas; e; e = e.parentElement) e.setAttribute('data-{KEY}-shot', '');
  const style = document.createElement('style');
  style.id = '{KEY}-shot';
  style.textContent = '* {{ visibility: hidden !important; }} ' +
    '[data-{KEY}-shot] {{ visibility: visible !important; }}';
  document.documentElement.appendChild(style);
  return true;
}}"""
SHOT_RESTORE = f"""() => {{
  const style = document.getElementById('{KEY}-shot');
  if (style) style.remove();
  for (const e of document.querySelectorAll('[data-{KEY}-shot]'))
    e.removeAttribute('data-{KEY}-shot');
}}"""
