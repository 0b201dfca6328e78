"""The page-side scripts of the gate: the init script that records what the page does with its
canvases, and the sample read inside `requestAnimationFrame`. (Uncaught exceptions and
unhandled rejections both arrive as Playwright's `pageerror`: nothing to catch here.)

The judge never calls `getContext` (it could take the context type from the page): the init
script wraps it and keeps what the page created. It also wraps the draw calls of 2D, WebGL
and bitmap contexts, so a canvas is judged by what the page drew into it, not by whatever
shows through it in a screenshot; WebGL draw calls issued with no valid program in use
(they draw nothing) are counted apart, and each program that fails to link is recorded with
its log and the logs of its shaders. Nothing here calls `getError`: that would take the
error flags from the page. `readPixels` outside a frame reads zeros, so the sample resolves
from inside a frame callback.

A fetch the gate refused rejects with a TypeError the page may leave unhandled: the wrapped
`fetch` remembers which rejections it gave for which URL, and an unhandled one is reported to
the judge with its URL, so the judge can tell the gate's refusal from the page's own error.
"""

from __future__ import annotations

KEY = "__dshkitGate"
BLOCK = 16  # the side of the centre block read from each canvas (backing-store pixels)
MAX_FAILURES = 50  # distinct shader and program failures kept per page

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
      programDraws: 0, badDraws: 0, lostAt: null, program: null }};
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
  const names2d = ['fillRect', 'strokeRect', 'fillText', 'strokeText', 'fill', 'stroke',
    'drawImage', 'putImageData'];
  for (const name of names2d)
    wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype, name, plain);
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
  if (typeof window.fetch === 'function') {{
    const original = window.fetch;
    window.fetch = function (input, ...rest) {{
      let url = '';
      try {{ url = new Request(input).url; }} catch (e) {{}}
      return original.call(this, input, ...rest).catch((error) => {{
        if (error && typeof error === 'object') refusedBy.set(error, url);
        throw error;
      }});
    }};
  }}
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
      event, at: performance.now(), where: null,
      what: `Uncaught (in promise) ${{event.reason && event.reason.stack || String(event.reason)}}`,
    }});
  }});
  Object.defineProperty(window, '{KEY}', {{
    value: {{ contexts, offscreen, failures, fetchFailures, raised }}, enumerable: false,
  }});
}})();"""

SAMPLE = f"""([words, overlayIds]) => new Promise((resolve) => requestAnimationFrame(() => {{
  const gate = window.{KEY} ||
    {{ contexts: [], offscreen: new WeakSet(), failures: [], fetchFailures: [], raised: [] }};
  const seen = (el) => el.checkVisibility({{ opacityProperty: true, visibilityProperty: true }});
  const failing = new RegExp(words, 'i'), convention = new RegExp(overlayIds);
  const shown = [...document.querySelectorAll('[id]')].filter((el) => {{
    if (!convention.test(el.id)) return false;
    const box = el.getBoundingClientRect();
    return seen(el) && box.width > 0 && box.height > 0 && el.innerText.trim();
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
    let sum = 0, max = 0;
    for (let i = 0; i < data.length; i += 4)
      for (let k = 0; k < 3; k++) {{ sum += data[i + k]; max = Math.max(max, data[i + k]); }}
    return {{ mean: sum / (data.length / 4 * 3), max }};
  }};
  // When the page's own load ended, on its clock (null before): a timer the page set from
  // its load is measured from there.
  const loadedAt = () => {{
    const [navigation] = performance.getEntriesByType('navigation');
    return navigation && navigation.loadEventEnd > 0 ? navigation.loadEventEnd : null;
  }};
  const all = [...document.querySelectorAll('canvas')];
  const canvases = all.filter((c) => c.checkVisibility()).map((canvas) => {{
    const entry = gate.contexts.find((e) => e.canvas === canvas);
    const box = canvas.getBoundingClientRect();
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
      frame: read(entry, canvas),
    }};
  }});
  resolve({{
    overlay, fatal: failing.test(overlay), overlayIds: outer.map((el) => el.id), canvases,
    parseErrors, failures: gate.failures.map((f) => Object.assign({{}}, f)),
    fetchFailures: gate.fetchFailures.map((f) => Object.assign({{}}, f)),
    cancelled: gate.raised.filter((r) => r.event.defaultPrevented)
      .map((r) => ({{ what: r.what, where: r.where, at: r.at }})),
    viewport: [innerWidth, innerHeight], now: performance.now(), loadedAt: loadedAt(),
  }});
}}))"""
