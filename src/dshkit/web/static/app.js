// The dshkit console: views over the local service's API, no build step, no dependencies.
// Every API call carries this tab's credential in a header (see web/security.py): the page
// is handed it once, at the one-time sign-in, and keeps it in sessionStorage, which no other
// origin (another port of 127.0.0.1 included) can read or is ever sent; the browser's cookie
// opens this page and nothing more. Every text from the store is put in the page as text,
// never as HTML, and through `visible`: what would hide or turn it shows.
"use strict";

const SIGN_IN = "This tab is not signed in (or the service restarted): run `dshkit open` to open the console signed in.";
const CREDENTIAL_KEY = "dshkit-console";

// The sign-in's page holds the tab's credential: kept in the tab, taken out of the page, and
// the spent login code out of the address bar.
(() => {
  const meta = document.querySelector('meta[name="dshkit-console"]');
  if (!meta) return;
  sessionStorage.setItem(CREDENTIAL_KEY, meta.content);
  meta.remove();
  const url = new URL(location.href);
  url.searchParams.delete("login");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
})();

// The headers every API call carries: this tab's credential.
function authHeaders() {
  const credential = sessionStorage.getItem(CREDENTIAL_KEY);
  return credential ? { "x-dshkit-console": credential } : {};
}

// -- text from others -------------------------------------------------------------------

// Characters that would hide or turn what a person reads: direction controls (after U+202E
// "evil" reads "live"), zero-width and other format characters, C0 and C1 controls but tab
// and newline (and a CR ending a line), and spaces passing for a plain one. Chinese, emoji,
// combining marks and the ideographic space are text as it is. `dshkit sessions` marks the
// same characters (cli/common.py `visible`).
const UNSEEN_NAMES = {
  0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED",
  0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x7F: "DELETE", 0x85: "NEXT LINE",
  0x00A0: "NO-BREAK SPACE", 0x00AD: "SOFT HYPHEN", 0x061C: "ARABIC LETTER MARK",
  0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER", 0x1680: "OGHAM SPACE MARK",
  0x180E: "MONGOLIAN VOWEL SEPARATOR",
  0x2000: "EN QUAD", 0x2001: "EM QUAD", 0x2002: "EN SPACE", 0x2003: "EM SPACE",
  0x2004: "THREE-PER-EM SPACE", 0x2005: "FOUR-PER-EM SPACE", 0x2006: "SIX-PER-EM SPACE",
  0x2007: "FIGURE SPACE", 0x2008: "PUNCTUATION SPACE", 0x2009: "THIN SPACE", 0x200A: "HAIR SPACE",
  0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
  0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK",
  0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
  0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING",
  0x202C: "POP DIRECTIONAL FORMATTING", 0x202D: "LEFT-TO-RIGHT OVERRIDE",
  0x202E: "RIGHT-TO-LEFT OVERRIDE", 0x202F: "NARROW NO-BREAK SPACE",
  0x205F: "MEDIUM MATHEMATICAL SPACE", 0x2060: "WORD JOINER",
  0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
  0x2800: "BRAILLE PATTERN BLANK", 0x3164: "HANGUL FILLER",
  0xFEFF: "ZERO WIDTH NO-BREAK SPACE", 0xFFA0: "HALFWIDTH HANGUL FILLER",
};
// An emoji's joiners and a flag's tags belong to the picture a person sees: kept whole.
const EMOJI_SEQUENCE = String.raw`\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]*(?:\u200D\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]*)+|\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}`;
const UNSEEN_CHARACTER = String.raw`\r(?!\n)|[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u115F\u1160\u3164\uFFA0\u2800]`;
const UNSEEN = new RegExp(`(${EMOJI_SEQUENCE})|${UNSEEN_CHARACTER}`, "gu");

// `text` cut into runs shown as they are (strings) and the code points to mark (numbers).
function unseenParts(text) {
  const parts = [];
  let from = 0;
  for (const found of text.matchAll(UNSEEN)) {
    if (found[1] !== undefined) continue;
    if (found.index > from) parts.push(text.slice(from, found.index));
    parts.push(found[0].codePointAt(0));
    from = found.index + found[0].length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

function unseenCode(code) {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

function unseenName(code) {
  const char = String.fromCodePoint(code);
  const kind = /\p{Cc}/u.test(char) ? "control character" : /\p{Cs}/u.test(char) ? "lone surrogate"
    : /\p{Zs}/u.test(char) ? "space" : "format character";
  return `${unseenCode(code)} ${UNSEEN_NAMES[code] ?? kind}`;
}

// THE way text from the store, the files or the model enters the page: text nodes, each
// hidden character a marked token (`⟨U+202E⟩`) naming it to the eye and to a screen reader.
function visible(value) {
  return unseenParts(String(value)).map((part) => {
    if (typeof part === "string") return document.createTextNode(part);
    const token = document.createElement("span");
    token.className = "unseen";
    token.dataset.code = unseenCode(part).slice(2);
    token.title = unseenName(part);
    token.setAttribute("role", "img");
    token.setAttribute("aria-label", token.title);
    token.append(`⟨${unseenCode(part)}⟩`);  // a string: appended as text, never parsed
    return token;
  });
}

// The same for an attribute a person reads (title, label, alt text): the token as text.
function visibleLabel(value) {
  return unseenParts(String(value)).map((part) =>
    typeof part === "string" ? part : `⟨${unseenCode(part)}⟩`).join("");
}

// -- small helpers ----------------------------------------------------------------------

const LABELS = new Set(["title", "aria-label", "alt", "placeholder"]);

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (LABELS.has(key)) node.setAttribute(key, visibleLabel(value));
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    if (child instanceof Node) node.append(child);
    else node.append(...visible(child));
  }
  return node;
}

// Append children as `h` does: arrays flattened, null/false left out.
function fill(node, ...children) {
  node.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

class ApiError extends Error {}

async function api(method, path, body) {
  const headers = authHeaders();
  if (method !== "GET") {
    headers["x-dshkit-request"] = "1";
    headers["content-type"] = "application/json";
  }
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",  // the cookie opens the page only; the header is the credential
  });
  const value = await response.json().catch(() => null);
  if (response.status === 401) throw new ApiError(SIGN_IN);
  if (!response.ok && response.status !== 202) {
    throw new ApiError((value && value.error) || `${method} ${path}: HTTP ${response.status}`);
  }
  return { value, response };
}

async function get(path) {
  return (await api("GET", path)).value;
}

let knownHarnesses = null;  // the registry's names, as the service reports them

async function harnessNames() {
  if (!knownHarnesses) knownHarnesses = (await get("/api/status")).harnesses;
  return knownHarnesses;
}

function when(ms) {
  if (ms === null || ms === undefined) return "—";
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function pct(x) {
  return x === null || x === undefined ? "—" : `${(x * 100).toFixed(1)}%`;
}

function seconds(ms) {
  return ms === null || ms === undefined ? "—" : `${(ms / 1000).toFixed(1)} s`;
}

let noticeTimer = 0;
// A notice for what a click did: a success fades, an error stays until it is dismissed.
function notify(message, bad = false) {
  const box = document.getElementById("notice");
  box.replaceChildren(...visible(message));
  box.className = bad ? "bad" : "";
  clearTimeout(noticeTimer);
  if (bad) {
    box.setAttribute("role", "alert");
    box.append(" ", h("button", { type: "button", class: "dismiss", "aria-label": "Dismiss",
      onclick: () => { box.textContent = ""; } }, "×"));
  } else {
    box.setAttribute("role", "status");
    noticeTimer = setTimeout(() => { box.textContent = ""; }, 6000);
  }
}

// The mode agents' shell commands are judged under, where it comes from, and the switch.
const GUARD_SOURCES = { env: "set by DSHKIT_GUARD_MODE (the switch cannot change it)", chosen: "chosen here", config: "from config.toml [guard] mode", default: "the default", unreadable: "the settings cannot be read, so the guard is strict" };
function guardCard(g) {
  const pick = h("select", { id: "guard-mode", "aria-label": "Guard mode" },
    g.modes.map((m) => h("option", { value: m, selected: m === g.mode }, m)));
  const looser = (mode) => g.modes.indexOf(mode) > g.modes.indexOf(g.mode);  // strict first
  const set = async (mode) => {
    if (mode !== "config" && looser(mode) && !window.confirm(`Let agents' shell commands through in ${mode} mode? It asks about fewer of them than ${g.mode}.`)) return;
    try {
      const { value: done } = await api("POST", "/api/guard/mode", { mode });
      await refresh();
      notify(`Guard mode: ${done.mode} (${GUARD_SOURCES[done.source]})`);
    } catch (e) { notify(e.message, true); }
  };
  return card("Shell command guard",
    h("p", { id: "guard-state" }, h("b", {}, g.mode), ` · ${GUARD_SOURCES[g.source] || g.source}`,
      g.source === "chosen" && g.configMode !== g.mode ? ` (config.toml says ${g.configMode})` : "",
      g.chosen && g.source !== "chosen" ? ` · your choice, ${g.chosen}, is kept but not in force` : ""),
    g.problem ? h("p", { id: "guard-problem", class: "bad" }, g.problem) : null,
    h("p", { class: "muted" }, "strict denies destructive, unknown and opaque commands; balanced asks about unknown ones; autonomous asks only about the risky rest."),
    h("div", { class: "row" }, pick,
      h("button", { type: "button", id: "guard-set", onclick: () => set(pick.value) }, "Use this mode"),
      g.chosen ? h("button", { type: "button", id: "guard-config", onclick: () => set("config") }, "Back to config.toml") : null));
}

// What the guard stopped or asked about, and a false alarm turned into an allow rule for its
// workspace (config.toml edited, never rewritten).
function guardLogCard(log) {
  const allow = async (e) => {
    if (!window.confirm(`Allow \`${e.suggested}\` from now on in ${e.workspace || "every workspace"}?`)) return;
    try {
      const { value: done } = await api("POST", "/api/guard/rules", { pattern: e.suggested, kind: "allow", project: e.workspace });
      notify(`${done.added ? "Allowed" : "Already allowed"}: ${done.pattern} (${done.table})`);
      await refresh();
    } catch (err) { notify(err.message, true); }
  };
  return card("Stopped by the guard",
    log.entries.length ? h("ul", { id: "guard-log", class: "plain" }, log.entries.map((e) =>
      h("li", { "data-guard-entry": e.id },
        h("b", {}, e.relaxed ? "asked (your words)" : e.decision), ` · ${new Date(e.at).toLocaleString()} · ${e.workspace || "-"}`,
        h("div", {}, h("code", {}, e.command)),
        h("div", { class: "muted" }, e.reason + (e.rule ? ` (rule ${e.rule})` : "")),
        e.suggested ? h("button", { type: "button", "data-guard-allow": e.id, onclick: () => allow(e) }, "Allow this here") : null)))
      : h("p", { id: "guard-log", class: "muted" }, "Nothing stopped yet."));
}

function card(title, ...children) {
  return h("section", { class: "card" }, title ? h("h3", {}, title) : null, ...children);
}

function facts(pairs) {
  return h("dl", { class: "facts" },
    pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function table(columns, rows, attrs) {
  return h("div", { class: "scroll" }, h("table", attrs || {},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows)));
}

function sessionHref(harness, id, around) {
  const base = `#session/${encodeURIComponent(harness)}/${encodeURIComponent(id)}`;
  return around === null || around === undefined ? base : `${base}?around=${around}`;
}

function shown(list, noun) {
  const end = list.offset + list.items.length;
  return list.total > list.items.length
    ? `${noun} ${list.offset + 1}–${end} of ${list.total}`
    : `${list.total} ${noun}`;
}

function cut(item) {
  return item.cutChars ? h("span", { class: "muted" }, ` … ${item.cutChars} more characters`) : null;
}

// Server-sent events read with fetch (EventSource cannot send the tab's credential): calls
// `on[event](data, id)` for each event, `ended(error)` once when the stream ends or breaks.
// Returns a handle whose `close()` stops it without `ended` being called.
function eventStream(path, on, ended, lastId = null) {
  const control = new AbortController();
  (async () => {
    try {
      const headers = { ...authHeaders(), accept: "text/event-stream" };
      if (lastId !== null) headers["last-event-id"] = lastId;
      const response = await fetch(path, { headers, cache: "no-store", credentials: "omit", signal: control.signal });
      if (response.status === 401) throw new ApiError(SIGN_IN);
      if (!response.ok || !response.body) throw new ApiError(`GET ${path}: HTTP ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let event = { type: "message", data: [], id: null };
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split(/\r\n|\r|\n/);
        buffer = lines.pop();
        for (const line of lines) {
          if (line === "") {
            if (event.data.length && on[event.type]) on[event.type](event.data.join("\n"), event.id);
            event = { type: "message", data: [], id: null };
            continue;
          }
          if (line.startsWith(":")) continue;  // a keep-alive comment
          const at = line.indexOf(":");
          const field = at < 0 ? line : line.slice(0, at);
          const text = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
          if (field === "event") event.type = text;
          else if (field === "data") event.data.push(text);
          else if (field === "id") event.id = text;
        }
      }
      if (!control.signal.aborted) ended(null);
    } catch (err) {
      if (!control.signal.aborted) ended(err);
    }
  })();
  return { close: () => control.abort() };
}

// Follow a job's progress over the service's event stream; resolves with the finished job.
// When the stream breaks, the job is asked for: a service that no longer answers rejects
// (the page says so instead of waiting forever), one that restarted without the job too;
// a job still running is followed again from the last event heard.
function follow(location, list) {
  return new Promise((resolve, reject) => {
    let lastId = null;
    let finished = false;
    const open = () => eventStream(`${location}/events`, {
      progress: (data, id) => {
        if (id !== null) lastId = id;
        const event = JSON.parse(data);
        const share = event.fraction === null ? "" : ` (${Math.round(event.fraction * 100)}%)`;
        list.append(h("li", { "data-stage": event.stage },
          h("b", {}, event.stage), ` ${event.message}${share}`));
      },
      end: (data) => { finished = true; source.close(); resolve(JSON.parse(data)); },
    }, async () => {
      if (finished) return;
      try {
        const job = await get(location);
        if (job.state !== "running" && job.state !== "queued") { resolve(job); return; }
        setTimeout(() => { source = open(); }, 1000);
      } catch (err) {
        reject(new ApiError(err instanceof ApiError && !/HTTP|not signed/i.test(err.message)
          ? err.message : LOST));
      }
    }, lastId);
    let source = open();
  });
}

// An image the API serves: fetched with the tab's credential, shown from a blob URL.
function apiImage(path, attrs) {
  const img = h("img", { ...attrs, "data-src": path });
  fetch(path, { headers: authHeaders(), cache: "no-store", credentials: "omit" })
    .then((r) => (r.ok ? r.blob() : Promise.reject(new Error(`HTTP ${r.status}`))))
    .then((blob) => {
      const url = URL.createObjectURL(blob);
      img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
      img.src = url;
    })
    .catch(() => { img.alt = `${img.alt || "screenshot"} (could not be loaded)`; });
  return img;
}

const LOST = "Lost contact with the service: it stopped or restarted, so this run's outcome is unknown. Start `dshkit serve` again and reload.";

// -- re-rendering in place ----------------------------------------------------------------

// A key naming an element across two renderings of a view: its id, else its data attributes
// and text, with its place among elements of the same key.
const RUNTIME_DATA = new Set(["data-dirty", "data-linked", "data-ready"]);  // set after rendering

function keyOf(el) {
  if (el.id) return `#${el.id}`;
  const data = [...el.attributes].filter((a) => a.name.startsWith("data-") && !RUNTIME_DATA.has(a.name))
    .map((a) => `${a.name}=${a.value}`).join(",");
  const label = el.tagName === "DETAILS" ? (el.querySelector("summary")?.textContent || "").replace(/[0-9]+/g, "#") : el.textContent.slice(0, 40);
  return `${el.tagName}|${data}|${label}`;
}

function keyed(root, selector) {
  const seen = new Map();
  const found = new Map();
  for (const el of root.querySelectorAll(selector)) {
    const key = keyOf(el);
    const n = seen.get(key) || 0;
    seen.set(key, n + 1);
    found.set(`${key}@${n}`, el);
  }
  return found;
}

// Build the current view again off-screen and swap it in keeping what the person had: the
// scroll position, the focused control, the open sections and unsaved edits.
let refreshing = Promise.resolve();
function refresh() {
  refreshing = refreshing.then(rerender);
  return refreshing;
}

// A change heard while a view was still being read: that view may hold the figures from
// before it, so it is read again once it is shown.
let missed = false;

async function rerender() {
  const main = document.getElementById("view");
  const old = main.firstElementChild;
  if (!old || !old.dataset.ready) { missed = true; return; }
  try {
    const { name, params, rest } = current();
    const fresh = h("div", { "data-view": name, "aria-busy": "true" });
    await (VIEWS[name] || VIEWS.overview)(fresh, params, rest);
    if (main.firstElementChild !== old) return;  // the person moved on meanwhile
    const open = [...keyed(old, "details")].filter(([, el]) => el.open).map(([k]) => k);
    const focused = document.activeElement && old.contains(document.activeElement)
      ? [...keyed(old, "button, a, input, select, textarea, summary, [tabindex]")].find(([, el]) => el === document.activeElement)?.[0]
      : null;
    const edits = [...keyed(old, "input, textarea, select")].filter(([, el]) => el.dataset.dirty);
    const scroll = [window.scrollX, window.scrollY];
    fresh.setAttribute("aria-busy", "false");
    fresh.dataset.ready = "1";
    const freshDetails = keyed(fresh, "details");
    const freshInputs = keyed(fresh, "input, textarea, select");
    for (const [key, el] of edits) {
      const twin = freshInputs.get(key);
      if (!twin) continue;
      if (el.type === "checkbox") twin.checked = el.checked; else twin.value = el.value;
      twin.dataset.dirty = "1";
    }
    // What the person opened or loaded by hand in a part of the view stays as it is.
    for (const kept of old.querySelectorAll("[data-keep]")) {
      const twin = fresh.querySelector(`[data-keep="${CSS.escape(kept.dataset.keep)}"]`);
      if (twin) twin.replaceWith(kept);
    }
    main.replaceChildren(fresh);
    for (const key of open) { const twin = freshDetails.get(key); if (twin) twin.open = true; }
    window.scrollTo(...scroll);
    if (focused) keyed(fresh, "button, a, input, select, textarea, summary, [tabindex]").get(focused)?.focus({ preventScroll: true });
  } catch (e) {
    // An error the person has not dismissed yet stays: it is usually the cause of this one
    // (a stopped service fails every refresh after it).
    const box = document.getElementById("notice");
    if (box.className === "bad" && box.textContent) return;
    notify(`Could not refresh this view: ${e.message}`, true);
  }
}
document.addEventListener("input", (e) => { if (e.target.dataset) e.target.dataset.dirty = "1"; });

// The element on screen that stands for `box`: a re-render keeps the shown one of a
// [data-keep] box and drops the fresh twin, so code holding the twin must write to the kept.
function live(box) {
  if (box.isConnected) return box;
  return document.querySelector(`[data-keep="${CSS.escape(box.dataset.keep)}"]`) || box;
}

// -- views ------------------------------------------------------------------------------

const VIEWS = {};
// The last regeneration's progress, kept across re-renders of the profile view. A re-render
// builds a stand-in while it is shown (moved into the view off-screen, the list would leave
// the page shorter meanwhile, and the scroll kept would be the shorter page's); the swap puts
// the list back in its place.
const PROGRESS = h("ol", { class: "progress", id: "regen-progress", "aria-live": "polite", "data-keep": "regen-progress" });
const progressSlot = () => (PROGRESS.isConnected ? h("ol", { class: "progress", "data-keep": "regen-progress" }) : PROGRESS);

// -- names people recognise ----------------------------------------------------------------

// A session as a person knows it: its project, what they first asked, and when.
// Where a session ran: its working directory's last part; a project key (DSH spells /a/b
// as -a-b-) only without one.
function sessionPlace(s) {
  const base = (path) => (path || "").replace(/[\\/]+$/, "").split(/[\\/]/).pop();
  return base(s.cwd) || (s.project || "").replace(/^-+|-+$/g, "") || s.harness;
}

function sessionName(s) {
  if (!s) return null;
  const place = sessionPlace(s);
  const asked = (s.title || "").replace(/\s+/g, " ").trim();
  const first = asked ? (asked.length > 60 ? `${asked.slice(0, 59)}…` : asked) : "(no request yet)";
  return `${place} · ${first} · ${when(s.lastTime ?? s.firstTime).slice(0, 16)}`;
}

let sessionIndex = null;  // harness:id → the session's summary, for naming sessions

async function sessionsByKey(fresh = false) {
  if (!sessionIndex || fresh) {
    const found = await get("/api/sessions?limit=1000");
    sessionIndex = new Map(found.sessions.map((s) => [`${s.harness}:${s.id}`, s]));
  }
  return sessionIndex;
}

// A link to a session named as a person knows it, its full id beside it for whoever needs it.
function sessionLink(index, harness, id, around) {
  const info = index.get(`${harness}:${id}`);
  return h("span", { class: "session-name" },
    h("a", { href: sessionHref(harness, id, around), class: "open-session", lang: "zh" }, sessionName(info) || `${harness} session`),
    " ", h("code", { class: "session-id muted" }, `${harness}:${id}`));
}

// The gate's verdicts that are no failure (gate/rework.py NOT_FAILURES): nothing went back.
const GATE_NOT_FAILURES = new Set(["ok", "needs-gesture", "needs-network"]);

// A command a person runs, with a button that copies it.
function command(text) {
  const copy = async (e) => {
    try { await navigator.clipboard.writeText(text); notify(`Copied: ${text}`); } catch { notify("The browser refused the clipboard: select the command to copy it", true); }
    e.target.focus();
  };
  return h("span", { class: "command" }, h("code", {}, text),
    h("button", { type: "button", class: "copy", "data-copy": text, "aria-label": `Copy ${text}`, onclick: copy }, "Copy"));
}

const DAY_MS = 24 * 3600 * 1000;

VIEWS.overview = async (main) => {
  const [s, signals, gate, runs, recent, state, guard, guardLog] = await Promise.all([
    get("/api/status"), get("/api/signals").catch(() => null), get("/api/gate?limit=200").catch(() => null),
    get("/api/optimizer/runs?limit=200").catch(() => null), get("/api/sessions?limit=10"),
    get("/api/profile/state").catch(() => null), get("/api/guard/mode").catch(() => null),
    get("/api/guard/log?limit=5").catch(() => null),
  ]);
  const watermarks = (await Promise.all(recent.sessions.map((x) =>
    get(`/api/graft/status?session=${encodeURIComponent(x.id)}`).catch(() => null)))).filter(Boolean);
  const index = new Map(recent.sessions.map((x) => [`${x.harness}:${x.id}`, x]));
  const total = Object.values(s.sessions).reduce((a, b) => a + b, 0);
  const weekAgo = Date.now() - 7 * DAY_MS;
  const weekDay = new Date(weekAgo).toISOString().slice(0, 10);

  const hooksIn = s.hooks.filter((x) => x.installed && !x.problems.length);
  const friction = {};
  for (const d of (signals ? signals.days : [])) {
    if (d.day && d.day < weekDay) continue;
    for (const [name, n] of Object.entries(d.totals)) friction[name] = (friction[name] || 0) + n;
  }
  const frictionTotal = Object.values(friction).reduce((a, b) => a + b, 0);
  const near = watermarks.filter((p) => p.decision && p.decision.pressure.ratio !== null
    && p.decision.pressure.ratio >= p.decision.watermark.warning * 0.8)
    .sort((a, b) => b.decision.pressure.ratio - a.decision.pressure.ratio);
  const failures = gate ? gate.verdicts.filter((v) => v.at >= weekAgo && !GATE_NOT_FAILURES.has(v.verdict)) : [];
  const judged = gate ? gate.verdicts.filter((v) => v.at >= weekAgo).length : 0;
  const weekRuns = runs ? runs.runs.filter((r) => r.at >= weekAgo) : [];
  const customEmpty = state && state.mode === "custom" && !state.customText.trim();

  // What is off, and the one next step for each.
  const steps = [];
  if (!s.llm.configured) steps.push(["The profile and the optimizer cannot ask a model.", s.llm.nextStep]);
  for (const x of s.hooks) {
    if (!x.installed || x.problems.length) {
      steps.push([`${x.harness}: dshkit's hooks are ${x.installed ? "installed with problems" : "not installed"}, so nothing reaches its agent.`, x.nextStep]);
    }
  }
  if (!total) steps.push(["No sessions read yet.", "dshkit scan"]);
  if (total && s.llm.configured && s.profile.version === null) steps.push(["No profile yet: regenerate it on the Profile view.", null]);
  if (customEmpty) steps.push(["Custom mode with no text: nothing is injected. Write it on the Profile view or switch to Auto.", null]);
  for (const p of near) {
    steps.push([`A session is at ${pct(p.decision.pressure.ratio)} of its context window (warning at ${pct(p.decision.watermark.warning)}): hand it off before it is forced.`, null]);
  }

  const checklist = [
    ["An LLM is configured", s.llm.configured],
    ["dshkit's hooks are installed in at least one harness", hooksIn.length > 0],
    ["Sessions have been read", total > 0],
    ["A profile has been generated", s.profile.version !== null],
    ["The agent is told something", state ? Boolean(state.effectiveText) : s.profile.version !== null],
  ];
  const setupDone = checklist.every(([, ok]) => ok);
  const scanButton = h("button", { type: "button", class: "primary", id: "scan-now", onclick: async (e) => {
    e.target.disabled = true;
    try {
      const { value } = await api("POST", "/api/sessions/scan");
      await refresh();
      notify(`Scanned ${value.files} log files in ${seconds(value.elapsedMs)}: ${value.sessions} sessions changed, ${value.humanMessages} new human messages`);
    } catch (err) { notify(err.message, true); e.target.disabled = false; }
  } }, "Scan now");

  fill(main,
    h("h2", {}, "What dshkit is doing for you"),
    h("div", { class: "row" }, scanButton, h("span", { class: "muted" }, `${total} sessions read, ${s.humanMessages} human messages kept`)),
    steps.length ? h("section", { class: "card attention", id: "next-steps" }, h("h3", {}, "Needs your attention"),
      h("ol", {}, steps.map(([what, cmd]) => h("li", {}, what, cmd ? [" Next step: ", command(cmd)] : null))))
      : h("p", { class: "ok", id: "next-steps" }, "All is well: nothing needs your attention."),
    setupDone ? null : card("Setup checklist", h("ul", { class: "checklist", id: "checklist" }, checklist.map(([what, ok]) =>
      h("li", { class: ok ? "ok" : "warn", "data-done": ok ? "1" : "0" }, h("span", { "aria-hidden": "true" }, ok ? "✓ " : "○ "), what, h("span", { class: "sr-only" }, ok ? " (done)" : " (to do)"))))),
    h("div", { class: "grid" },
      card("Reaching your agents",
        h("ul", { class: "plain", id: "hooks" }, s.hooks.map((x) => h("li", { "data-harness": x.harness },
          h("b", {}, x.harness), ": ",
          x.installed && !x.problems.length ? h("span", { class: "ok" }, "hooks installed, the profile reaches it")
            : h("span", { class: "warn" }, x.installed ? `installed with problems: ${x.problems.join("; ")}` : "not installed (see above)")))),
        h("p", {}, `Profile: ${s.profile.mode} mode, `, s.profile.version === null ? "no version yet" : `version ${s.profile.version}`,
          " · ", h("a", { href: "#profile" }, "what the agent is told"))),
      card("Friction this week",
        h("p", { class: "big", id: "friction-week" }, frictionTotal),
        frictionTotal ? h("ul", { class: "plain" }, Object.entries(friction).filter(([, n]) => n).map(([name, n]) =>
          h("li", {}, h("a", { href: `#signals?signal=${name}` }, name), ` ${n}`))) : h("p", { class: "muted" }, "No friction counted in the last 7 days."),
        h("a", { href: "#signals" }, "All signals")),
      card("Near the handoff line",
        near.length ? h("ul", { class: "plain", id: "near-handoff" }, near.map((p) => h("li", {},
          sessionLink(index, p.harness, p.sessionId), h("div", {}, meter(p.decision.pressure.ratio, p.decision.watermark.warning, p.decision.watermark.forced),
            ` ${pct(p.decision.pressure.ratio)} of the window`))))
          : h("p", { class: "muted", id: "near-handoff" }, `None of the ${watermarks.length} newest sessions is near its warning line.`),
        h("a", { href: "#handoffs" }, "Handoffs")),
      card("Delivery gate this week",
        h("p", { class: failures.length ? "big bad" : "big", id: "gate-failures" }, failures.length),
        h("p", {}, `${failures.length ? "failed" : "failures"} of ${judged} judged`),
        failures.slice(0, 3).map((v) => h("div", { class: "muted" }, `${v.verdict}: ${v.path}`)),
        h("a", { href: "#gate" }, "Verdicts")),
      card("Optimizer this week",
        h("p", { class: "big", id: "optimizer-week" }, weekRuns.length),
        h("p", {}, weekRuns.length ? Object.entries(weekRuns.reduce((a, r) => ({ ...a, [r.tier]: (a[r.tier] || 0) + 1 }), {}))
          .map(([tier, n]) => `${tier} ${n}`).join(", ") : "no prompts optimized in the last 7 days"),
        h("a", { href: "#optimizer" }, "Runs")),
      guard ? guardCard(guard) : null,
      guardLog ? guardLogCard(guardLog) : null,
      card("Sessions read",
        h("p", { class: "big", id: "sessions-total" }, total),
        facts(Object.entries(s.sessions).map(([k, v]) => [k, v])),
        total ? h("a", { href: "#sessions" }, "Open the sessions") : null),
      card("LLM", s.llm.configured
        ? h("p", { class: "ok", id: "llm-state" }, `LLM configured: ${s.llm.model} at ${s.llm.baseUrl}`)
        : h("div", { id: "llm-state" },
          h("p", { class: "bad" }, "LLM not configured: the profile and the optimizer cannot ask a model."),
          h("p", {}, s.llm.problem), h("p", {}, "Next step: ", command(s.llm.nextStep)))),
    ),
    h("p", { class: "muted" }, `State directory: ${s.stateDir}`),
  );
};

// How full a context window is, against its warning and forced lines.
function meter(ratio, warning, forced) {
  const width = 160, height = 12;
  const x = (r) => Math.max(0, Math.min(1, r)) * width;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("class", "meter");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${pct(ratio)} in use; warning at ${pct(warning)}${forced === null ? "" : `, forced at ${pct(forced)}`}`);
  const rect = (cls, w) => { const r = document.createElementNS(ns, "rect"); r.setAttribute("class", cls); r.setAttribute("width", w); r.setAttribute("height", height); svg.append(r); };
  rect("track", width);
  rect(ratio >= warning ? "fill over" : "fill", x(ratio));
  for (const [cls, at] of [["warning", warning], ["forced", forced]]) {
    if (at === null || at === undefined) continue;
    const line = document.createElementNS(ns, "line");
    line.setAttribute("class", cls);
    line.setAttribute("x1", x(at)); line.setAttribute("x2", x(at)); line.setAttribute("y1", 0); line.setAttribute("y2", height);
    svg.append(line);
  }
  return svg;
}

VIEWS.profile = async (main) => {
  const [state, history] = await Promise.all([get("/api/profile/state"), get("/api/profile/versions")]);
  const profile = state.profile;
  const run = state.lastRun;
  const progress = PROGRESS;
  const labels = categoryLabels(state.categories);
  const kept = refusals(run, labels);
  const withheld = new Set((profile && profile.unsupported) || []);
  // What a green "ok" would hide: a reply cut off, an entry losing confidence.
  const caveats = [];
  if (run && run.partial) {
    caveats.push(`The model's reply was cut off (${run.truncationReason || "reason unknown"}, ${count(run.droppedTailChars || 0)} characters lost): entries it did not reach were kept as they were, none deleted.`);
  }
  const newest = history.versions[0];
  if (run && newest && run.version === newest.version) {
    for (const change of confidenceChanges(history.versions[1], newest)) {
      if (change.down) caveats.push(`${change.id} dropped from ${change.from} to ${change.to} confidence: ${change.claim}`);
    }
  }
  // The editor holds the text exactly (what is saved back is what was there); what it holds
  // that cannot be seen in it is said beside it.
  const custom = h("textarea", { id: "custom-text", "aria-label": "Custom text", lang: "zh" });
  custom.value = state.customText;
  const unseen = h("p", { id: "custom-unseen", class: "warn", "aria-live": "polite" });
  const sayUnseen = () => {
    const codes = unseenParts(custom.value).filter((part) => typeof part === "number");
    unseen.replaceChildren();
    if (codes.length) {
      fill(unseen, `Holds ${codes.length} character${codes.length > 1 ? "s" : ""} not seen in the editor: `,
        visible(String.fromCodePoint(...new Set(codes))));
    }
  };
  custom.addEventListener("input", sayUnseen);
  sayUnseen();

  const setMode = async (mode) => {
    try {
      await api("POST", "/api/profile/mode", { mode });
      await refresh();
      notify(`Mode set to ${mode}`);
    } catch (e) { notify(e.message, true); }
  };
  const save = async () => {
    try {
      const { value } = await api("PUT", "/api/profile/custom", { text: custom.value });
      await refresh();
      notify(`Custom text saved (${value.length} characters)`);
    } catch (e) { notify(e.message, true); }
  };
  const copy = async () => {
    const text = state.effectiveText;
    let copied = true;
    try { await navigator.clipboard.writeText(text); } catch { copied = false; }
    try {
      const { value } = await api("POST", "/api/profile/copied", { text });
      const at = when(value.copiedSnapshot.at);
      await refresh();
      notify(copied ? `Copied; snapshot recorded at ${at}` : `Snapshot recorded at ${at}; the browser refused the clipboard, select the text to copy it`);
    } catch (e) { notify(e.message, true); }
  };
  const regenerate = async (button) => {
    button.disabled = true;
    progress.replaceChildren();
    try {
      const { value, response } = await api("POST", "/api/profile/regenerate");
      if (!value.started) progress.append(h("li", {}, "A run was already going: following it."));
      const job = await follow(response.headers.get("location"), progress);
      progress.append(h("li", { "data-stage": "end", class: job.state === "done" ? "ok" : "bad" },
        job.state === "done" ? "Finished." : `Failed: ${job.error}`));
      refresh();
    } catch (e) {
      progress.append(h("li", { "data-stage": "lost", class: "bad" }, e.message));
      notify(e.message, true);
      button.disabled = false;
      // A re-render while the run went on drew a new button, disabled as the run was then.
      const shown = document.getElementById("regenerate");
      if (shown) shown.disabled = false;
    }
  };

  const modeButton = (mode, label) => h("button", {
    type: "button", "aria-pressed": String(state.mode === mode), "data-mode": mode,
    onclick: () => setMode(mode),
  }, label);
  const regenButton = h("button", { type: "button", class: "primary", id: "regenerate", disabled: state.running },
    "Regenerate now");
  regenButton.addEventListener("click", () => regenerate(regenButton));

  fill(main,
    h("h2", {}, "Profile"),
    card("What the agent is told",
      h("div", { class: "row", role: "group", "aria-label": "Mode" },
        "Mode:", modeButton("auto", "Auto (generated profile)"), modeButton("custom", "Custom (your text)")),
      h("p", { class: "muted" }, `Text from ${state.effectiveSource}`,
        state.copiedSnapshot ? ` · last copied ${when(state.copiedSnapshot.at)}` : ""),
      state.mode === "custom" && !state.customText.trim()
        ? h("p", { class: "bad", id: "custom-empty", role: "alert" },
          "Custom mode with no custom text: nothing reaches the agent. Write the text below and save it, or switch back to Auto.")
        : null,
      h("pre", { id: "effective-text", lang: "zh" }, state.effectiveText || "(nothing is injected)"),
      profile && profile.dropped.length
        ? h("p", { class: "warn" }, `Left out to fit the budget: ${profile.dropped.join(", ")}`) : null,
      withheld.size
        ? h("p", { class: "muted", id: "not-injected" }, `Not injected (no evidence from the person's own words, or a claim another entry says): ${[...withheld].join(", ")}`) : null,
      h("div", { class: "row" }, h("button", { type: "button", id: "copy", onclick: copy }, "Copy"))),
    card("Custom text",
      h("p", { class: "muted" }, "Used in custom mode instead of the generated profile (at most 10,000 characters)."),
      custom, unseen,
      h("div", { class: "row" }, h("button", { type: "button", id: "save-custom", onclick: save }, "Save custom text"))),
    card("Last run",
      run ? facts([
        ["when", when(run.at)],
        ["outcome", h("span", { id: "last-outcome", class: run.error ? "bad" : run.ok && !caveats.length ? "ok" : caveats.length ? "warn" : "" }, run.outcome)],
        caveats.length ? ["but", h("ul", { id: "last-run-caveats", class: "warn", lang: "zh" }, caveats.map((c) => h("li", {}, c)))] : null,
        ["why", run.error || run.reason || "—"],
        retryWait(state.retry),
        run.materialLeftOut > 0 ? ["material", h("span", { id: "last-run-left-out" },
          `your ${count(run.materialMessages)} newest messages were sent (about ${count(run.promptTokens)} tokens); ${count(run.materialLeftOut)} older ones were left out to fit [profile] prompt_tokens`)] : null,
        run.diff ? ["changes", `added ${run.diff.added.length}, removed ${run.diff.removed.length}, modified ${run.diff.modified.length}, unchanged ${run.diff.unchanged.length}`] : null,
        ["spurious rate", pct(run.spuriousRate)],
        kept.removedRow,
        kept.refusedRow,
        kept.warnings.length ? ["warnings", kept.warnings.join("; ")] : null,
      ]) : h("p", {}, "Never run."),
      h("div", { class: "row" }, regenButton,
        state.running ? h("span", { class: "muted" }, "a run is going") : null),
      progressSlot()),
    card(profile ? `Entries (version ${profile.version}, ${when(profile.generatedAt)})` : "Entries",
      profile ? entriesByCategory(profile.entries, labels, withheld) : h("p", {}, "No profile yet.")),
    removedEntries(state.removed || [], labels),
    card(`Versions (${history.kept} kept)`, versions(history.versions)),
  );
};

// When evidence is opened: each quote links to the human messages it was taken from. A quote
// traced when the entry was written already names its place: its session gets its name here;
// an older one is looked up.
async function linkQuotes(details) {
  if (!details.open || details.dataset.linked) return;
  details.dataset.linked = "1";
  const placed = details.querySelectorAll("a[data-session]");
  if (placed.length) {
    const index = await sessionsByKey();
    for (const a of placed) {
      const info = index.get(a.dataset.session);
      if (!info) continue;
      const asked = (info.title || "").replace(/\s+/g, " ").trim();
      a.replaceChildren(...visible(`${sessionPlace(info)} · ${asked.length > 40 ? `${asked.slice(0, 39)}…` : asked || "(no request yet)"}`));
    }
  }
  for (const item of details.querySelectorAll("li[data-quote]:not([data-source])")) {
    const found = await get(`/api/sessions/quote?text=${encodeURIComponent(item.dataset.quote)}`);
    const index = await sessionsByKey();
    const links = found.matches.map((m) => h("a", { href: `#session/${m.harness}/${encodeURIComponent(m.sessionId)}?around=${m.seq}`, lang: "zh" },
      sessionName(index.get(`${m.harness}:${m.sessionId}`)) || `${m.harness} session`));
    const more = found.total > found.matches.length ? ` and ${found.total - found.matches.length} more` : "";
    item.append(" ", h("span", { class: "muted" }, links.length ? "— said in " : "— no kept message contains it", ...links.flatMap((a, i) => i ? [", ", a] : [a]), more));
  }
}

// The categories' names from the service: the words the agent is told, English and Chinese.
function categoryLabels(categories) {
  return new Map((categories || []).map((c) => [c.key, c]));
}

function categoryTitle(labels, key) {
  const c = labels.get(key);
  return c ? [`${key} · ${c.label} `, h("span", { class: "muted", lang: "zh" }, `（${c.labelZh}）`)] : key;
}

const CONFIDENCE_RANK = { high: 3, medium: 2, low: 1 };

// Same-id entries whose confidence moved between two versions (the diff counts only claims).
function confidenceChanges(before, after) {
  if (!before || !after) return [];
  const old = new Map(before.entries.map((e) => [e.id, e]));
  return after.entries.filter((e) => old.has(e.id) && old.get(e.id).confidence !== e.confidence)
    .map((e) => ({ id: e.id, claim: e.claim, from: old.get(e.id).confidence, to: e.confidence,
      down: (CONFIDENCE_RANK[e.confidence] || 0) < (CONFIDENCE_RANK[old.get(e.id).confidence] || 0) }));
}

// `withheld`: the ids of the entries never injected (profile.unsupported), shown dimmed with why.
function entriesByCategory(entries, labels, withheld = new Set()) {
  const groups = [];
  for (const category of new Set([...labels.keys(), ...entries.map((e) => e.category)])) {
    const mine = entries.filter((e) => e.category === category);
    if (!mine.length) continue;
    groups.push(h("h4", { "data-category": category }, categoryTitle(labels, category)), h("ul", {}, mine.map((e) => h("li", {
      lang: "zh", "data-entry": e.id, "data-pinned": e.pinned ? "1" : "0",
      "data-injected": withheld.has(e.id) ? "0" : "1", class: withheld.has(e.id) ? "not-injected" : null,
    },
      h("b", {}, e.id), " ", h("span", { class: "claim" }, e.claim), " ", h("span", { class: "tag" }, e.confidence),
      e.pinned ? h("span", { class: "tag pinned", title: "Kept as you left it by every regeneration" }, " pinned") : null,
      withheld.has(e.id) ? notInjected(e, entries, withheld) : null,
      h("div", { class: "muted" },
        `first seen ${when(e.firstSeenAt)}, last seen ${when(e.lastSeenAt)}, seen ${e.timesSeen ?? 1}×${e.editedAt ? `, edited by you ${when(e.editedAt)}` : ""}`),
      entryControls(e, labels),
      evidenceList(e)))));
  }
  return groups.length ? groups : h("p", {}, "No entries.");
}

// Why an entry is never injected (docs/design/profile.md#evidence-is-verified): none of its
// evidence was traced to the person's own words, or another entry says the same claim (the
// claim is injected once).
function notInjected(e, entries, withheld) {
  const same = (claim) => String(claim || "").split(/\s+/).filter(Boolean).join(" ").toLowerCase();
  const twin = (e.pinned || (e.sources || []).length)
    ? entries.find((o) => o !== e && same(o.claim) === same(e.claim) && !withheld.has(o.id))
      || entries.find((o) => o !== e && same(o.claim) === same(e.claim))
    : null;
  const [title, why] = twin
    ? ["not injected: the same claim as another entry",
      `${twin.id} says the same, and the agent is told each claim once.`]
    : ["not injected: no evidence from the person's own words",
      "None of its evidence is traced to your own messages (as with an entry kept from before dshkit checked evidence). A later run that quotes you for it puts it back in."];
  return h("div", { class: "not-injected-why", "data-not-injected": e.id },
    h("span", { class: "tag" }, title), " ", h("span", { class: "muted" }, why));
}

// An entry's evidence: each quote traced to the person's words with where it was said
// (harness, session, message seq, date), linked to that message; an older entry's quotes,
// with no place kept, are looked up when opened (linkQuotes).
function evidenceList(e) {
  const sources = e.sources || [];
  const items = sources.length
    ? sources.map((s) => h("li", { "data-quote": s.quote, "data-source": `${s.harness}:${s.session}:${s.seq ?? ""}` },
      s.quote, " ", sourcePlace(s)))
    : (e.evidence || []).map((q) => h("li", { "data-quote": q }, q));
  return h("details", { ontoggle: (ev) => linkQuotes(ev.target) },
    h("summary", {}, `evidence (${items.length}${sources.length ? ", with where you said it" : ""})`),
    h("ul", { class: "evidence-list" }, items));
}

function sourcePlace(s) {
  const seq = s.seq === null || s.seq === undefined ? "" : `, message ${s.seq}`;
  const at = s.at === null || s.at === undefined ? "no time recorded" : when(s.at).slice(0, 16);
  return h("span", { class: "muted source", lang: "en" }, "— said in ",
    h("a", { href: sessionHref(s.harness, s.session, s.seq), "data-session": `${s.harness}:${s.session}`, lang: "zh" },
      `session ${s.session.length > 12 ? `${s.session.slice(0, 12)}…` : s.session}`),
    ` (${s.harness}${seq} · ${at})`);
}

const ENTRY_DONE = { edit: "saved and pinned", pin: "pinned", unpin: "unpinned", remove: "removed" };

// One action on one entry (edit, pin, unpin, remove, restore): the view read again in place,
// then what it did said (an error stays until dismissed); whether it was done.
async function entryAction(id, action, body) {
  try {
    const { value: done } = await api("POST", `/api/profile/entries/${encodeURIComponent(id)}/${action}`, body);
    await refresh();
    notify(action === "restore"
      ? `Entry ${id}: removal undone; the next regeneration may write it again`
      : `Entry ${id}: ${ENTRY_DONE[action]} (profile v${done.version})`);
    return true;
  } catch (err) { notify(err.message, true); return false; }
}

// Edit, pin or remove one entry: each change is a new version; an edited or pinned entry is
// kept as the person left it by every later regeneration.
function entryControls(e, labels) {
  const change = async (action, body) => {
    if (action === "remove" && !window.confirm(`Remove entry ${e.id} from the profile?`)) return;
    await entryAction(e.id, action, body);
  };
  const claim = h("input", { type: "text", id: `entry-claim-${e.id}`, "aria-label": `Claim of entry ${e.id}`, value: e.claim, maxlength: 100, lang: "zh" });
  const category = h("select", { id: `entry-category-${e.id}`, "aria-label": `Category of entry ${e.id}` },
    [...labels.keys()].map((k) => h("option", { value: k, selected: k === e.category }, `${k} · ${labels.get(k).label}`)));
  return h("details", { class: "entry-edit", "data-edit": e.id },
    h("summary", {}, "Change"),
    h("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); change("edit", { claim: claim.value, category: category.value }); } },
      claim, category, h("button", { type: "submit", class: "primary", "data-entry-act": "edit" }, "Save and pin")),
    h("div", { class: "row" },
      e.pinned
        ? h("button", { type: "button", "data-entry-act": "unpin", onclick: () => change("unpin") }, "Unpin")
        : h("button", { type: "button", "data-entry-act": "pin", onclick: () => change("pin") }, "Pin"),
      h("button", { type: "button", "data-entry-act": "remove", onclick: () => change("remove") }, "Remove")));
}

// The entries the person removed, newest first: no regeneration writes them again until one is
// restored (the record forgotten; the entry itself comes back only if a later run writes it).
const REMOVED_SHOWN = 5;  // more than this: the older ones wait in a closed section

function removedEntries(removed, labels) {
  const restore = async (r, button) => {
    const buttons = [...document.querySelectorAll("#removed button[data-restore]")];
    const at = Math.max(0, buttons.indexOf(button));
    if (!(await entryAction(r.id, "restore"))) return;
    // The button is gone with its line: the keyboard goes on from the next one, else the heading.
    const left = [...document.querySelectorAll("#removed button[data-restore]")]
      .filter((b) => b.getClientRects().length);
    (left[Math.min(at, left.length - 1)] || document.getElementById("removed-title"))?.focus({ preventScroll: true });
  };
  const item = (r) => h("li", { "data-removed": r.id },
    h("b", {}, r.id), " ", h("span", { class: "claim", lang: "zh" }, r.claim),
    h("div", { class: "muted" }, categoryTitle(labels, r.category), ` · removed ${when(r.removedAt)}`),
    h("div", { class: "row" }, h("button", {
      type: "button", "data-restore": r.id, "aria-label": `Restore entry ${r.id}`,
      onclick: (ev) => restore(r, ev.currentTarget),
    }, "Restore")));
  const newest = removed.slice(0, REMOVED_SHOWN), older = removed.slice(REMOVED_SHOWN);
  return h("section", { class: "card", id: "removed" },
    h("h3", { id: "removed-title", tabindex: "-1" }, `Removed by you (${removed.length})`),
    removed.length
      ? h("p", { class: "muted" }, "No regeneration writes these again. Restore forgets the removal: the entry is not put back now, but the next regeneration may write it again.")
      : h("p", { class: "muted", id: "removed-none" }, "None. An entry you remove is listed here, and no regeneration writes it again until you restore it."),
    newest.length ? h("ul", { class: "plain removed", id: "removed-list" }, newest.map(item)) : null,
    older.length ? h("details", { id: "removed-older" }, h("summary", {}, `${older.length} older removal${older.length > 1 ? "s" : ""}`),
      h("ul", { class: "plain removed" }, older.map(item))) : null);
}

// What the last run's answer wrote that did not go in as written, in words: what it wrote again
// although the person had removed it ("kept out"), and every other refusal (kind, claim, why,
// and the entry kept in its place). The run's warnings say the same in the log's words, so
// those are not listed twice; a removed entry is said once, under "kept out".
function refusals(run, labels) {
  const dropped = (run && run.droppedAsRemoved) || [];
  const keptOut = new Set(dropped.map((d) => d.id));
  const refused = ((run && run.refused) || []).filter((r) => !(r.kind === "removed" && keptOut.has(r.id)));
  const said = new Set([
    ...dropped.map((d) => `entry '${d.id}' dropped: the person removed it (${d.why})`),
    ...refused.map((r) => `entry '${r.id}' refused (${r.kind}): ${r.why}${r.kept ? `; entry '${r.kept}' is kept as it was` : ""}`),
  ]);
  const warnings = ((run && run.warnings) || []).filter((w) => !said.has(w));
  const refusedRow = refused.length ? [`refused (${refused.length})`, h("ul", { class: "plain", id: "last-run-refused" },
    refused.map((r) => h("li", { "data-refused": r.id, "data-kind": r.kind },
      h("span", { class: "tag" }, r.kind), " ", h("b", {}, r.id || "(no id)"), " “", h("span", { lang: "zh" }, r.claim), "”: ",
      h("span", { lang: "zh" }, r.why),
      r.kept ? h("span", { class: "kept", "data-kept": r.kept }, ` — kept ${r.kept} as it was`) : null)))] : null;
  const removedRow = dropped.length ? ["kept out", h("ul", { class: "plain", id: "last-run-removed" },
    dropped.map((d) => h("li", { "data-dropped": d.id },
      "The model wrote ", h("b", {}, d.id), " “", h("span", { lang: "zh" }, d.claim), "” (",
      categoryTitle(labels, d.category), ") again; it was not added back, as you removed ",
      d.removedId === d.id ? "it" : d.removedId, ": ", d.why, ".")))] : null;
  return { removedRow, refusedRow, warnings };
}

// The hooks' wait after failed runs (the console state's retry), in words; null when none.
function retryWait(retry) {
  if (!retry) return null;
  const failed = `${retry.failures} failed run${retry.failures > 1 ? "s" : ""} in a row`;
  return ["next try", h("span", { id: "last-run-retry", class: "warn" }, retry.notBefore <= Date.now()
    ? `After ${failed}, the wait is over: the next automatic refresh asks the model again.`
    : `After ${failed}, automatic refreshes wait: next automatic try after ${when(retry.notBefore).slice(0, 16)}, or when you say something new. Regenerate now asks at once.`)];
}

function versions(list) {
  if (!list.length) return h("p", {}, "No versions yet.");
  return list.map((v, i) => {
    const before = new Map((list[i + 1] ? list[i + 1].entries : []).map((e) => [e.id, e]));
    const now = new Map(v.entries.map((e) => [e.id, e]));
    const lines = [];
    for (const id of v.diff.added || []) lines.push(h("li", { class: "ok" }, `+ ${id} ${now.get(id)?.claim ?? ""}`));
    for (const id of v.diff.removed || []) lines.push(h("li", { class: "bad" }, `− ${id} ${before.get(id)?.claim ?? ""}`));
    for (const id of v.diff.modified || []) {
      lines.push(h("li", { class: "warn" }, `~ ${id} ${before.get(id)?.claim ?? "?"} → ${now.get(id)?.claim ?? ""}`));
    }
    for (const c of confidenceChanges(list[i + 1], v)) {
      lines.push(h("li", { class: c.down ? "bad" : "ok", "data-confidence": c.id },
        `${c.down ? "↓" : "↑"} ${c.id} confidence ${c.from} → ${c.to}: ${c.claim}`));
    }
    return h("details", { class: "version" },
      h("summary", {}, `v${v.version} · ${when(v.at)} · ${v.entries.length} entries · spurious ${pct(v.spuriousRate)}${v.partial ? " · from a cut-off reply" : ""}`),
      h("p", { class: "muted" }, v.reason),
      lines.length ? h("ul", { lang: "zh" }, lines) : h("p", {}, "No changes against the version before."));
  });
}

VIEWS.signals = async (main, params) => {
  const [s, per] = await Promise.all([get("/api/signals"), get("/api/signals/sessions")]);
  const harness = params.get("harness") || "";
  const project = params.get("project") || "";
  // The sessions the charts count: of the harness and the project picked (all when none).
  const rows = per.sessions.filter((r) => (!harness || r.harness === harness) && (!project || r.project === project));
  const hitsBox = h("div", { id: "hits", "data-keep": "signal-hits" });
  // A count or a bar clicked: the sessions it stands for, then its hits. `query` holds what
  // the service filters by (harness, day); a project is kept to those sessions here.
  const open = async (signal, query, where = "") => {
    const within = per.sessions.filter((r) => r.totals[signal] > 0
      && (!query.harness || r.harness === query.harness) && (!query.project || r.project === query.project)
      && (!query.day || r.day === query.day));
    const server = new URLSearchParams({ signal, limit: query.project ? "500" : "100",
      ...(query.harness ? { harness: query.harness } : {}), ...(query.day ? { day: query.day } : {}) });
    const [found, index] = await Promise.all([get(`/api/signals/hits?${server}`), sessionsByKey()]);
    const keys = new Set(within.map((r) => `${r.harness}:${r.sessionId}`));
    const hits = query.project ? found.hits.filter((hit) => keys.has(`${hit.harness}:${hit.sessionId}`)) : found.hits;
    const total = query.project ? within.reduce((a, r) => a + r.totals[signal], 0) : found.total;
    const box = live(hitsBox);
    box.replaceChildren(
      h("section", { class: "card", id: "signal-sessions", "data-signal": signal },
        h("h3", {}, `Sessions with ${signal}${where}: ${within.length}`),
        within.length ? table(["session", "project", "harness", "hits"], within.map((r) => h("tr", { "data-session": r.sessionId },
          h("td", {}, sessionLink(index, r.harness, r.sessionId)),
          h("td", {}, projectName(r.project)), h("td", {}, r.harness), h("td", {}, r.totals[signal]))), { class: "signal-sessions" })
          : h("p", { class: "muted" }, "None.")),
      card(`${signal}: ${total} hits${total > hits.length ? ` (first ${hits.length} shown)` : ""}`,
        table(["session", "turn", "tool", "duration", "error code", "texts"],
          hits.map((hit) => h("tr", {},
            h("td", {}, sessionLink(index, hit.harness, hit.sessionId, hitSeq(hit))),
            h("td", {}, hit.turn),
            h("td", {}, hit.tool ?? "—"),
            h("td", {}, hit.durationMs !== undefined ? seconds(hit.durationMs) : hit.failures !== undefined ? `${hit.failures} failures` : "—"),
            h("td", {}, hit.errorCode ?? "—"),
            h("td", { lang: "zh" }, hitTexts(hit)))),
          { class: "hits" })));
    const heading = box.querySelector("h3");
    heading.tabIndex = -1;
    heading.focus();
  };
  const shownOpen = (signal, query, where) => open(signal, query, where).catch((e) => notify(e.message, true));
  const countButton = (signal, count, query, label) => h("button", {
    type: "button", class: "link", "data-signal": signal,
    "aria-label": `${count} ${signal} hits${label ? ` ${label}` : ""}`,
    onclick: () => shownOpen(signal, query, label ? ` ${label}` : ""),
  }, count);
  const projects = [...new Set(per.sessions.map((r) => r.project))].sort();
  const byProject = projects.map((p) => [p, per.sessions.filter((r) => r.project === p)
    .reduce((a, r) => { for (const name of s.signals) a[name] = (a[name] || 0) + r.totals[name]; return a; }, {})]);
  fill(main,
    h("h2", {}, "Signals"),
    h("p", { class: "muted" },
      `${s.sessions} sessions with ${s.humanMessages} human messages, as of the last scan. Long tools over ${seconds(s.config.longToolMs)}, failures in a row from ${s.config.repeatFailMin}. Click a count or a bar to see its sessions and hits.`),
    card("Totals", table(["signal", "all", ...Object.keys(s.harnesses)],
      s.signals.map((name) => h("tr", {},
        h("th", { scope: "row" }, name),
        h("td", {}, countButton(name, s.totals[name], {}, "")),
        Object.entries(s.harnesses).map(([harness, totals]) =>
          h("td", {}, countButton(name, totals[name], { harness }, `in ${harness}`))))))),
    projects.length ? card("Per project", table(["project", ...s.signals],
      byProject.map(([p, totals]) => h("tr", { "data-project": p },
        h("th", { scope: "row" }, projectName(p)),
        s.signals.map((name) => h("td", {}, totals[name]
          ? countButton(name, totals[name], { project: p }, `in ${projectName(p)}`) : "0")))), { id: "per-project" })) : null,
    overTime(s.signals, rows, { harness, project }, Object.keys(s.harnesses), projects, shownOpen),
    hitsBox,
  );
  if (params.get("signal")) await open(params.get("signal"), { ...(harness ? { harness } : {}), ...(project ? { project } : {}) });
};

// A project as the sessions name it (DSH spells the directory /a/b as -a-b-).
function projectName(p) {
  return (p || "").replace(/^-+|-+$/g, "") || "(no project)";
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const child of children) if (child) node.append(child);
  return node;
}

// Every signal over time, one small chart each (the day of a session's last activity, UTC),
// for all harnesses and projects or the one picked; a bar opens that day's sessions and hits.
function overTime(signals, rows, picked, harnesses, projects, open) {
  const { harness, project } = picked;
  const hash = (changes) => {
    const next = new URLSearchParams({ ...(harness ? { harness } : {}), ...(project ? { project } : {}), ...changes });
    for (const [k, v] of [...next]) if (!v) next.delete(k);
    return `#signals${[...next].length ? `?${next}` : ""}`;
  };
  const pick = h("div", { class: "row" },
    h("div", { class: "row", role: "group", "aria-label": "Harness" }, "Harness:",
      ["", ...harnesses].map((name) => h("a", {
        href: hash({ harness: name }), class: "chip", "aria-current": name === harness ? "true" : null,
      }, name || "all"))),
    h("label", {}, "Project: ", h("select", { id: "signal-project", onchange: (e) => { location.hash = hash({ project: e.target.value }); } },
      ["", ...projects].map((p) => h("option", { value: p, selected: p === project }, p ? projectName(p) : "all projects")))));
  const where = [harness ? `in ${harness}` : "", project ? `in ${projectName(project)}` : ""].filter(Boolean).join(" ");
  const days = [...new Set(rows.map((r) => r.day).filter(Boolean))].sort();
  if (!days.length) return card("Over time", pick, h("p", { class: "muted" }, rows.length ? "No dated sessions here." : "No friction here yet."));
  const total = (signal, day) => rows.filter((r) => r.day === day).reduce((a, r) => a + (r.totals[signal] || 0), 0);
  const charts = signals.map((signal) => {
    const values = days.map((day) => total(signal, day));
    const top = Math.max(1, ...values);
    const width = 200, height = 40, bar = Math.min(width / days.length, 14);
    const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 2}`, class: "bars", role: "img",
      "aria-label": `${signal}${where ? ` ${where}` : ""}: ${values.reduce((a, b) => a + b, 0)} hits over ${days.length} days, at most ${top} a day` },
      svg("line", { x1: 0, x2: width, y1: height + 1, y2: height + 1, class: "axis" }));
    values.forEach((n, i) => {
      if (!n) return;
      const tall = Math.max(2, (n / top) * height);
      const rect = svg("rect", { x: i * bar + 1, y: height + 1 - tall, width: Math.max(1, bar - 2), height: tall, "data-day": days[i] },
        svg("title", {}, ...visible(`${days[i]}: ${n} ${signal}`)));
      rect.addEventListener("click", () => open(signal, { ...(harness ? { harness } : {}), ...(project ? { project } : {}), day: days[i] },
        ` on ${days[i]}${where ? ` ${where}` : ""}`));
      chart.append(rect);
    });
    const sum = values.reduce((a, b) => a + b, 0);
    return h("figure", { class: "spark", "data-signal-chart": signal },
      h("figcaption", {}, h("b", {}, signal), ` ${sum}`), chart);
  });
  return card(`Over time, ${days[0]} to ${days[days.length - 1]}${where ? `, ${where}` : ""}`, pick, h("div", { class: "sparks" }, charts));
}

function hitSeq(hit) {
  for (const key of ["seq", "callSeq", "resultSeq", "askSeq"]) {
    if (typeof hit[key] === "number") return hit[key];
  }
  return null;
}

function hitTexts(hit) {
  const parts = [];
  if (hit.match) parts.push(h("div", {}, h("b", {}, "match "), hit.match));
  if (hit.text) parts.push(h("div", {}, hit.text));
  if (hit.options) parts.push(h("div", {}, h("b", {}, "options "), hit.options.join(" / ")));
  if (hit.answer) parts.push(h("div", {}, h("b", {}, "answer "), hit.answer));
  return parts.length ? parts : "—";
}

VIEWS.optimizer = async (main) => {
  const data = await get("/api/optimizer/runs?limit=50");
  const settings = await get("/api/optimizer/settings").catch(() => null);
  const record = async (runId, outcome) => {
    try {
      await api("POST", "/api/optimizer/outcome", { runId, outcome });
      await refresh();
      notify(`Run ${runId} recorded as ${outcome}`);
    } catch (e) { notify(e.message, true); }
  };
  fill(main,
    h("h2", {}, "Optimizer"),
    card("One-pass success per tier (against the raw words, tier off)",
      table(["tier", "runs", "judged", "ok", "rework", "success", "", "added time p50 / p95", "vs raw words"],
        Object.entries(data.rates).map(([tier, r]) => h("tr", { "data-tier": tier },
          h("td", {}, tier), h("td", {}, r.runs), h("td", {}, r.judged), h("td", {}, r.ok),
          h("td", {}, r.rework), h("td", { class: "rate" }, r.successRate === null
            ? `— (under ${r.minSample} judged)`
            : `${pct(r.successRate)} (95% CI ${pct(r.interval[0])}–${pct(r.interval[1])})`),
          h("td", {}, rateBar(r.successRate, r.judged)),
          h("td", { class: "latency" }, r.latency && r.latency.p50Ms !== null
            ? `${seconds(r.latency.p50Ms)} / ${seconds(r.latency.p95Ms)} (n=${r.latency.prompts})` : "—"),
          h("td", {}, `${r.vsRawWords === null ? "—" : `${r.vsRawWords >= 0 ? "+" : ""}${(r.vsRawWords * 100).toFixed(1)} pt`} (${r.comparable} / ${r.rawComparable})`))))),
    optimizeCard(),
    settings ? settingsCard(settings) : null,
    data.runs.length ? data.runs.map((run) => card(`Run ${run.runId} · ${run.tier} · ${run.form} · ${when(run.at)}`,
      rawBeside(run),
      run.fallback ? h("p", { class: "warn" }, `Raw words passed on: ${run.fallback}`) : null,
      facts([
        ["length gate", gateText(run.lengthGate)],
        ["ask gate", gateText(run.askGate)],
        ["evidence", `${run.evidence.length} items`],
        ["audit", auditText(run.audit)],
      ]),
      runDetails(run.runId),
      h("div", { class: "row", role: "group", "aria-label": `Outcome of run ${run.runId}` },
        "Outcome:", h("strong", { class: "outcome" }, run.outcome ?? "not recorded"),
        h("button", { type: "button", "data-outcome": "ok", "data-run": run.runId, onclick: () => record(run.runId, "ok") }, "Right in one pass (ok)"),
        h("button", { type: "button", "data-outcome": "rework", "data-run": run.runId, onclick: () => record(run.runId, "rework") }, "Needed rework")),
    )) : card("", h("p", {}, "No optimizer runs yet.")),
  );
};

// A success rate as a bar, with the number of judged runs it stands on.
function rateBar(rate, n) {
  const width = 100, height = 10;
  const label = rate === null || rate === undefined
    ? (n ? `${n} judged, too few for a rate` : "no judged runs")
    : `${pct(rate)} of ${n} judged`;
  return h("span", { class: "rate-bar" },
    svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label },
      svg("rect", { width, height, class: "track" }),
      rate ? svg("rect", { width: rate * width, height, class: "fill" }) : null),
    h("span", { class: "muted" }, ` n=${n}`));
}

// The raw words beside what was sent on, with the words the optimizer added marked.
function rawBeside(run) {
  const [raw, output] = wordDiff(run.raw || "", run.output || "");
  return h("div", { class: "pair" },
    h("div", {}, h("b", {}, "Raw"), h("pre", { lang: "zh", class: "diff raw" }, raw)),
    h("div", {}, h("b", {}, "Optimized"), h("pre", { lang: "zh", class: "diff optimized" }, output)));
}

// Words (a Chinese character counts as one) of `a` and `b` marked where they differ: the
// longest common subsequence, what only `a` has struck out, what only `b` has marked new.
function wordDiff(a, b) {
  const split = (t) => t.match(/[\p{Script=Han}]|[\p{L}\p{N}_]+|\s+|[^\s\p{L}\p{N}_]/gu) || [];
  const x = split(a), y = split(b);
  if (x.length * y.length > 4e6) return [[a], [b]];  // too long to compare: shown as they are
  const n = x.length, m = y.length;
  const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  }
  const left = [], right = [];
  const run = (list, cls, text) => {
    const last = list[list.length - 1];
    if (last && typeof last !== "string" && last.className === cls) last.append(...visible(text));
    else list.push(cls ? h(cls === "del" ? "del" : "ins", { class: cls }, text) : text);
  };
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { run(left, "", x[i]); run(right, "", y[j]); i++; j++; }
    else if (j < m && (i === n || table[i][j + 1] >= table[i + 1][j])) { run(right, "ins", y[j]); j++; }
    else { run(left, "del", x[i]); i++; }
  }
  return [left, right];
}

// Optimize one prompt now: the job's stages as they come, then the raw words beside the result.
function optimizeCard() {
  const raw = h("textarea", { id: "optimize-raw", "aria-label": "Prompt to optimize", lang: "zh", placeholder: "the prompt, as you would send it" });
  const session = h("input", { id: "optimize-session", "aria-label": "Session (optional)", placeholder: "session id or prefix (optional)" });
  const tier = h("select", { id: "optimize-tier", "aria-label": "Tier" }, ["basic", "advanced", "extreme"].map((t) => h("option", { value: t }, t)));
  const progress = h("ol", { class: "progress", id: "optimize-progress", "aria-live": "polite" });
  const result = h("div", { id: "optimize-result" });
  const go = async (e) => {
    const button = e.target;
    if (!raw.value.trim()) { notify("Write the prompt to optimize first", true); return; }
    button.disabled = true;
    progress.replaceChildren();
    result.replaceChildren();
    try {
      const body = { raw: raw.value, tier: tier.value };
      if (session.value.trim()) body.session = session.value.trim();
      const { response } = await api("POST", "/api/optimizer/optimize", body);
      const job = await follow(response.headers.get("location"), progress);
      const run = job.result;
      if (run && run.raw !== undefined) {
        fill(result, rawBeside(run),
          run.fallback ? h("p", { class: "warn" }, `Raw words passed on: ${run.fallback}`) : null);
      }
      if (job.state !== "done") result.append(h("p", { class: "bad", role: "alert" }, `Failed: ${job.error}`));
    } catch (err) {
      result.append(h("p", { class: "bad", role: "alert" }, err.message));
    }
    button.disabled = false;
  };
  return h("section", { class: "card", "data-keep": "optimize" }, h("h3", {}, "Optimize a prompt"),
    raw, h("div", { class: "row" }, session, tier,
      h("button", { type: "button", class: "primary", id: "optimize-go", onclick: go }, "Optimize")),
    progress, result);
}

// Tier, form, context and permission: the defaults, or one session's own (changed here).
function settingsCard(defaults) {
  const choice = (name, options, value) => h("label", {}, `${name} `,
    h("select", { name, "data-setting": name }, options.map((o) => h("option", { value: o, selected: o === value }, o))));
  const session = h("input", { id: "settings-session", "aria-label": "Session id or prefix", placeholder: "session id (or a unique prefix)" });
  const form = h("div", { class: "row" });
  const shownBox = h("pre", { id: "settings-shown" }, JSON.stringify(defaults, null, 2));
  const show = (values) => {
    form.replaceChildren();
    fill(form,
      choice("tier", ["off", "basic", "advanced", "extreme"], values.tier),
      choice("form", ["ptc", "chat"], values.form),
      h("label", {}, "turns ", h("input", { type: "number", min: 0, max: 10, value: values.turns, "data-setting": "turns" })),
      h("label", {}, h("input", { type: "checkbox", checked: values.full, "data-setting": "full" }), " full history"),
      choice("permission", ["auto", "review"], values.permission));
    shownBox.replaceChildren(...visible(JSON.stringify(values, null, 2)));
  };
  const load = async () => {
    try {
      const q = session.value ? `?session=${encodeURIComponent(session.value)}` : "";
      show(await get(`/api/optimizer/settings${q}`));
    } catch (e) { notify(e.message, true); }
  };
  const save = async () => {
    if (!session.value) { notify("Name a session: the defaults live in config.toml [optimizer]", true); return; }
    const body = { session: session.value };
    for (const input of form.querySelectorAll("[data-setting]")) {
      const key = input.dataset.setting;
      body[key] = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value) : input.value;
    }
    try {
      const { value } = await api("PUT", "/api/optimizer/settings", body);
      show(value.settings);
      notify(`Settings saved for ${session.value}`);
    } catch (e) { notify(e.message, true); }
  };
  show(defaults);
  return h("section", { class: "card", "data-keep": "optimizer-settings" }, h("h3", {}, "Settings"),
    h("p", { class: "muted" }, "Without a session: the defaults (config.toml [optimizer]). A session's own settings override them."),
    h("div", { class: "row" }, session,
      h("button", { type: "button", onclick: load }, "Load"),
      h("button", { type: "button", id: "save-settings", onclick: save }, "Save for this session")),
    form, h("details", {}, h("summary", {}, "All values"), shownBox));
}

// Everything kept of a run (evidence index, tool-loop steps, traced sentences), on demand.
function runDetails(runId) {
  const box = h("div", {});
  let loaded = false;
  return h("details", {
    class: "run-detail", "data-run-detail": runId,
    ontoggle: async (e) => {
      if (!e.target.open || loaded) return;
      loaded = true;
      try {
        const d = await get(`/api/optimizer/runs/${runId}`);
        fill(box,
          facts([
            ["session", d.sessionId ? h("a", { href: sessionHref(d.harness, d.sessionId) }, `${d.harness}:${d.sessionId}`) : "—"],
            ["model", d.model ?? "—"], ["cwd", d.cwd ?? "—"],
            ["tool-loop steps", d.steps.length], ["evidence items", d.evidence.length],
          ]),
          d.evidence.length ? [h("b", {}, "Evidence index"), h("pre", {}, JSON.stringify(d.evidence, null, 2))] : null,
          d.steps.length ? [h("b", {}, "Tool-loop steps"), h("ol", { class: "steps" }, d.steps.map(stepWords)), rawJson(d.steps)] : null,
          d.sentences.length ? [h("b", {}, "Sentences by the audit's verdict"), audited(d.sentences), rawJson(d.sentences)] : null);
      } catch (err) { fill(box, h("p", { class: "bad" }, err.message)); }
    },
  }, h("summary", {}, "Details: evidence, steps, provenance"), box);
}

const AUDIT_WORDS = {
  traced: "traced to the raw words, the history or what the tools read",
  freedom: "the optimizer's own wording of what was asked (allowed)",
  untraced: "traced to nothing the optimizer was given",
};

// The optimized text sentence by sentence, each coloured by the audit's verdict; its reason
// and sources show on hover and focus (and to a screen reader).
function audited(units) {
  const kinds = units.reduce((a, u) => ({ ...a, [u.kind]: (a[u.kind] || 0) + 1 }), {});
  return h("div", { class: "audited" },
    h("p", { class: "legend" }, Object.entries(kinds).map(([k, n]) => h("span", { class: `verdict ${k}` }, `${k} ${n}`)).flatMap((x, i) => i ? [" · ", x] : [x])),
    h("p", { lang: "zh", class: "sentences" }, units.map((u) => {
      const why = [AUDIT_WORDS[u.kind] || u.kind, u.why, u.cites && u.cites.length ? `sources: ${u.cites.join(", ")}` : ""].filter(Boolean).join(" · ");
      return [h("span", { class: `sentence ${u.kind}`, tabindex: "0", title: why, "aria-label": `${u.text} (${why})`, "data-kind": u.kind }, u.text), " "];
    })));
}

// One tool-loop step as a person reads it: what was asked, and what came of it. A refusal
// is the tool's answer to the model (a result, not an error), so its words are shown.
function stepWords(step) {
  if (step.tool === undefined) {  // a note of the loop itself (workspace, tools refused)
    return h("li", { class: "warn" }, Object.entries(step).map(([k, v]) => `${k}: ${v}`).join("; "));
  }
  const args = step.arguments && typeof step.arguments === "object"
    ? Object.entries(step.arguments).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ")
    : String(step.arguments ?? "");
  const refusal = step.refused ? (step.refusal || "the workspace refused it")
    : typeof step.result === "string" && /^\[(拒绝|错误|未执行)/.test(step.result) ? step.result : null;
  const outcome = step.error ? h("span", { class: "bad" }, `failed: ${step.error}`)
    : refusal ? h("span", { class: "bad", lang: "zh" }, `refused: ${refusal}`)
    : h("span", {}, `returned ${count(step.resultBytes)} bytes${step.truncated ? `, ${count(step.shownBytes)} shown (cut)` : ""}`);
  return h("li", { "data-step": step.step, class: step.error || refusal ? "failed" : null },
    h("code", {}, `${step.tool}(${args})`), " → ", outcome,
    typeof step.result === "string" && !refusal ? h("details", {}, h("summary", {}, "result"), h("pre", { lang: "zh" }, step.result)) : null);
}

function gateText(gate) {
  if (!gate || !Object.keys(gate).length) return "—";
  return Object.entries(gate).map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
}

function auditText(audit) {
  if (!audit || !Object.keys(audit).length) return "—";
  const counts = audit.counts || audit;
  return Object.entries(counts).filter(([, v]) => typeof v === "number").map(([k, v]) => `${k} ${v}`).join(", ") || JSON.stringify(audit);
}

// What a verdict means, in words: what the gate saw, the errors it listed (their count is
// the listed ones, or the total kept when more were seen than listed), the raw record on demand.
const VERDICT_WORDS = {
  ok: "The page loaded, drew and kept responding.",
  "fatal-overlay": "The page covered itself with an error message.",
  "page-error": "The page's script failed.",
  "blank-canvas-0": "A canvas has no size (0 × 0), so nothing can be drawn on it.",
  "blank-canvas": "The canvas stayed blank.",
  unresponsive: "The page stopped responding.",
  "parse-error": "The browser could not parse the document.",
  "webgl-error": "WebGL drew nothing: a shader did not compile or no valid program was in use.",
  "needs-gesture": "The page waits for a person: clicked once, it still showed nothing to judge (not a failure).",
  "needs-network": "The page needs scripts from the network, which the gate refuses: it could not be judged offline (not a failure).",
};

function verdictEvidence(v) {
  const listed = v.errors || [];
  const total = Math.max(v.errorCount || 0, listed.length);
  const noun = `${total} error${total === 1 ? "" : "s"}`;
  return h("div", { class: "evidence", "data-verdict-evidence": v.id },
    h("p", {}, VERDICT_WORDS[v.verdict] || v.verdict),
    v.overlayText ? [h("b", {}, "What the page showed"), h("pre", { lang: "zh" }, v.overlayText)] : null,
    total ? h("details", { open: listed.length <= 3 || null },
      h("summary", { class: "error-count" }, total > listed.length ? `${noun} (the first ${listed.length} listed)` : noun),
      h("ol", { class: "errors" }, listed.map((e) => h("li", {}, h("code", {}, e)))))
      : h("p", { class: "muted error-count" }, "no script errors"),
    (v.canvas || []).length ? h("p", { class: "muted" }, `canvas: ${v.canvas.map((c) => `${c.width ?? "?"} × ${c.height ?? "?"}`).join(", ")}`) : null,
    rawJson(v));
}

// The verdicts' screenshots side by side, grouped by verdict; one opens the full picture.
function gallery(verdicts, show) {
  const shot = verdicts.filter((v) => v.screenshot);
  if (!shot.length) return null;
  const groups = [...new Set(shot.map((v) => v.verdict))].sort((a, b) => (a === "ok") - (b === "ok"));
  return card("Screenshots by verdict", groups.map((verdict) => [
    h("h4", { class: verdict === "ok" ? "ok" : "bad" }, `${verdict} (${shot.filter((v) => v.verdict === verdict).length})`),
    h("div", { class: "thumbs" }, shot.filter((v) => v.verdict === verdict).slice(0, 24).map((v) =>
      h("button", { type: "button", class: "thumb", "data-thumb": v.id, onclick: () => show(v), "aria-label": `Open the screenshot of ${v.path}` },
        apiImage(`/api/gate/${v.id}/screenshot`, { alt: "", width: 160, height: 90 }),
        h("span", {}, v.path.split("/").pop())))),
  ]));
}

// Judge one file now (a background job): its stages, then its verdict in words.
function judgeCard() {
  const path = h("input", { id: "judge-path", "aria-label": "File to judge", placeholder: "/absolute/path/to/page.html" });
  const progress = h("ol", { class: "progress", id: "judge-progress", "aria-live": "polite" });
  const result = h("div", { id: "judge-result" });
  const go = async (e) => {
    e.target.disabled = true;
    progress.replaceChildren();
    result.replaceChildren();
    try {
      const { response } = await api("POST", "/api/gate/run", { path: path.value });
      const job = await follow(response.headers.get("location"), progress);
      if (job.state === "done" && job.result) result.append(verdictEvidence(job.result));
      else result.append(h("p", { class: "bad", role: "alert" }, `Failed: ${job.error}`));
    } catch (err) { result.append(h("p", { class: "bad", role: "alert" }, err.message)); }
    e.target.disabled = false;
  };
  return h("section", { class: "card", "data-keep": "judge" }, h("h3", {}, "Judge a file"),
    h("div", { class: "row" }, path, h("button", { type: "button", class: "primary", id: "judge-go", onclick: go }, "Judge")),
    progress, result);
}

// Whether a session's failed deliverables go back to its agent: on, off, or as config says.
function reworkCard() {
  const session = h("input", { id: "rework-session", "aria-label": "Session id or prefix", placeholder: "session id (or a unique prefix)" });
  const shown = h("p", { id: "rework-state", "aria-live": "polite" });
  const say = (r) => shown.replaceChildren(...visible(`${r.harness}:${r.session}: rework ${r.rework ? "on" : "off"} (${r.source === "config" ? "as config.toml [gate] says" : "this session's own choice"})`));
  const ask = async (rework) => {
    if (!session.value.trim()) { notify("Name a session first", true); return; }
    try {
      say(rework === undefined
        ? await get(`/api/gate/rework?session=${encodeURIComponent(session.value.trim())}`)
        : (await api("POST", "/api/gate/rework", { session: session.value.trim(), rework })).value);
    } catch (err) { notify(err.message, true); }
  };
  return h("section", { class: "card", "data-keep": "rework" }, h("h3", {}, "Rework per session"),
    h("p", { class: "muted" }, "When a deliverable fails the gate, the agent is told to fix it, unless rework is off for its session."),
    h("div", { class: "row" }, session,
      h("button", { type: "button", onclick: () => ask(undefined) }, "Show"),
      h("button", { type: "button", "data-rework": "on", onclick: () => ask(true) }, "On"),
      h("button", { type: "button", "data-rework": "off", onclick: () => ask(false) }, "Off"),
      h("button", { type: "button", "data-rework": "config", onclick: () => ask(null) }, "As config says")),
    shown);
}

// The record behind a plain-language summary, for whoever wants it.
function rawJson(value) {
  return h("details", { class: "raw" }, h("summary", {}, "JSON"), h("pre", {}, JSON.stringify(value, null, 2)));
}

VIEWS.gate = async (main) => {
  const data = await get("/api/gate?limit=50");
  const names = await harnessNames();
  const shotBox = h("div", { id: "shot", "data-keep": "gate-shot" });
  const showShot = (v) => {
    const box = live(shotBox);
    box.replaceChildren(card(`Screenshot of verdict ${v.id}: ${v.path}`,
      apiImage(`/api/gate/${v.id}/screenshot`, { class: "shot", alt: `Screenshot of ${v.path} (${v.verdict})` })));
    box.scrollIntoView();
  };
  const capBox = h("div", { id: "capability" });
  const harness = h("select", { "aria-label": "Harness" }, ["", ...names].map((x) => h("option", { value: x }, x || "(any harness)")));
  const mode = h("input", { "aria-label": "Sandbox mode", placeholder: "mode (e.g. workspace-write)" });
  // "Show cached" reads (a GET changes nothing, starts nothing); "Probe now" is a POST.
  const loadCapability = async (probe) => {
    const asked = {};
    if (harness.value) asked.harness = harness.value;
    if (mode.value) asked.mode = mode.value;
    capBox.replaceChildren(h("p", { class: "muted" }, probe ? "Probing (seconds)…" : "Loading…"));
    try {
      const r = probe
        ? (await api("POST", "/api/capability/probe", asked)).value
        : await get(`/api/capability/?${new URLSearchParams(asked)}`);
      const kept = r.cached;
      const probed = !r.pending ? when(r.probedAt)
        : kept ? `nothing fresh: last results from ${when(kept.at)} (${Math.round(kept.ageS)} s old, expired)`
        : "nothing cached for this mode: probe now";
      const shown = r.channels || (kept && kept.channels);
      capBox.replaceChildren();
      fill(capBox,
        facts([["facts", JSON.stringify(r.facts)], ["probed", probed]]),
        shown ? table(["channel", "works", "raw reason"], shown.map((c) => h("tr", {},
          h("td", {}, c.channel ?? c.name ?? "?"),
          h("td", { class: c.ok ? "ok" : c.ok === false ? "bad" : "muted" }, c.ok ? "✓" : c.ok === false ? "✗" : "—"),
          h("td", {}, c.reason ?? c.detail ?? "")))) : null,
        r.errors.length ? h("p", { class: "warn" }, r.errors.join("; ")) : null,
        h("details", {}, h("summary", {}, "Text told to the agent"), h("pre", { lang: "zh" }, r.text)));
    } catch (e) { capBox.replaceChildren(h("p", { class: "bad" }, e.message)); }
  };
  fill(main,
    h("h2", {}, "Gate and capability"),
    gallery(data.verdicts, showShot),
    card("Delivery gate verdicts",
      data.verdicts.length ? table(["when", "file", "verdict", "evidence", "screenshot"],
        data.verdicts.map((v) => h("tr", {},
          h("td", {}, when(v.at)), h("td", {}, v.path),
          h("td", { class: v.verdict === "ok" ? "ok" : "bad" }, v.verdict, v.recovered ? " (recovered)" : ""),
          h("td", {}, verdictEvidence(v)),
          h("td", {}, v.screenshot ? h("button", { type: "button", class: "show-shot", "data-verdict": v.id, onclick: () => showShot(v) }, "Show") : "—"))))
        : h("p", {}, "No verdicts yet.")),
    shotBox,
    judgeCard(),
    reworkCard(),
    h("section", { class: "card", "data-keep": "capability" }, h("h3", {}, "Capability (probed channels per mode)"),
      h("div", { class: "row" }, harness, mode,
        h("button", { type: "button", onclick: () => loadCapability(false) }, "Show cached"),
        h("button", { type: "button", onclick: () => loadCapability(true) }, "Probe now")),
      capBox),
  );
};

const OPEN_STATES = new Set(["PREPARING", "PENDING", "TARGET_STARTED", "VERIFIED"]);

async function cancelHandoff(txn) {
  if (!window.confirm(`Cancel handoff #${txn}? The source session stays as it is.`)) return;
  try {
    await api("POST", "/api/graft/cancel", { txn, reason: "cancelled from the console" });
    await refresh();
    notify(`Handoff #${txn} cancelled`);
  } catch (e) { notify(e.message, true); }
}

// Whether a handoff starts its new session at once (the ignition switch), and where that comes from.
function ignitionCard(ig) {
  const set = async (ignite) => {
    try {
      const { value: done } = await api("POST", "/api/graft/ignition", { ignite });
      await refresh();
      notify(`A handoff now ${done.ignite ? "starts its new session at once" : "waits for the next session in its directory"}`);
    } catch (e) { notify(e.message, true); }
  };
  return card("Ignition",
    h("p", { id: "ignition-state" }, h("b", {}, ig.ignite ? "on" : "off"),
      ig.ignite ? " · a handoff starts its new session at once" : " · a handoff waits for the next session started in its directory",
      ig.chosen === null ? " (config.toml [graft] ignite_target)" : ` (chosen here; config.toml says ${ig.config ? "on" : "off"})`),
    h("div", { class: "row" },
      h("button", { type: "button", id: "ignition-toggle", onclick: () => set(!ig.ignite) }, ig.ignite ? "Turn off" : "Turn on"),
      ig.chosen !== null ? h("button", { type: "button", id: "ignition-config", onclick: () => set(null) }, "Back to config.toml") : null));
}

async function includeSession(x) {
  try {
    await api("POST", "/api/graft/exclude", { session: x.sessionId, harness: x.harness, exclude: false });
    await refresh();
    notify(`${x.harness} ${x.sessionId} is cut at the forced watermark again`);
  } catch (e) { notify(e.message, true); }
}

VIEWS.handoffs = async (main) => {
  const [panel, audit, recent] = await Promise.all([
    get("/api/graft/status"), get("/api/graft/audit?limit=100"), get("/api/sessions?limit=10"),
  ]);
  const parts = await Promise.all(recent.sessions.map((s) =>
    get(`/api/graft/status?session=${encodeURIComponent(s.id)}`).catch(() => null)));
  const index = await sessionsByKey(true);
  const txnRow = (t) => h("tr", { "data-txn": t.id },
    h("td", {}, t.id), h("td", {}, t.state), h("td", {}, sessionLink(index, t.harness, t.sessionId)),
    h("td", {}, t.targetSessionId ? `${t.targetHarness}:${t.targetSessionId}` : t.targetHarness),
    h("td", {}, t.attempts), h("td", { class: t.lastError ? "bad" : "" }, t.lastError ?? "—"), h("td", {}, when(t.updatedAt)),
    h("td", {}, OPEN_STATES.has(t.state) ? h("button", { type: "button", class: "cancel-handoff", "data-txn": t.id, onclick: () => cancelHandoff(t.id) }, "Cancel") : "—"));
  const byId = new Map(parts.filter(Boolean).flatMap((p) => p.handoffs).map((t) => [t.id, t]));
  const handoffs = [...byId.values()].sort((a, b) => b.id - a.id);
  fill(main,
    h("h2", {}, "Handoffs"),
    panel.settingsError ? h("p", { id: "graft-settings-error", class: "bad" }, `Settings refused (defaults used): ${panel.settingsError}`) : null,
    ignitionCard(panel.ignition),
    card("Kept from the forced cut", panel.exclusions.length
      ? table(["session", "since", "by", "reason", ""], panel.exclusions.map((x) => h("tr", { "data-excluded": x.sessionId },
        h("td", {}, sessionLink(index, x.harness, x.sessionId)), h("td", {}, when(x.at)), h("td", {}, x.by), h("td", {}, x.reason ?? "—"),
        h("td", {}, h("button", { type: "button", class: "include-session", onclick: () => includeSession(x) }, "Cut again")))))
      : h("p", {}, "None.")),
    card("Counts", facts(Object.entries(panel.counts.byState).map(([k, v]) => [k, v]).concat([
      ["transferring", panel.counts.transferring], ["retired", panel.counts.retired], ["born from a handoff", panel.counts.targets]]))),
    card("Watermark per recent session", table(["session", "context in use", "source", "warning / forced", "decision", "retired →"],
      parts.filter(Boolean).map((p) => {
        const d = p.decision;
        return h("tr", {},
          h("td", {}, sessionLink(index, p.harness, p.sessionId)),
          h("td", {}, d ? [meter(d.pressure.ratio ?? 0, d.watermark.warning, d.watermark.forced), h("div", {}, `${pct(d.pressure.ratio)} (${d.pressure.tokens ?? "—"} of ${d.pressure.window ?? "—"})`)] : p.settingsError),
          h("td", {}, d ? d.pressure.source : "—"),
          h("td", {}, d ? `${pct(d.watermark.warning)} / ${d.watermark.forced === null ? "off" : pct(d.watermark.forced)}` : "—"),
          h("td", {}, d ? d.action : "—"),
          h("td", { class: "retired" }, p.retirement ? p.retirement.pointer : "—"));
      }))),
    card("Handoffs being carried out (preparing, target started, verified)",
      panel.transactions.length ? table(["id", "state", "from", "to", "attempts", "last error", "updated", ""], panel.transactions.map(txnRow))
        : h("p", {}, "None."),
      panel.pending.length ? h("p", {}, `${panel.pending.length} pending ignitions: `,
        panel.pending.map((p) => `#${p.txnId} ${p.targetHarness} in ${p.cwd}`).join("; ")) : null),
    card("Handoffs of recent sessions",
      handoffs.length ? table(["id", "state", "from", "to", "attempts", "last error", "updated", ""],
        handoffs.map(txnRow), { id: "handoffs" }) : h("p", {}, "None.")),
    card(`Audit trail (latest ${audit.records.length}${audit.more ? `, ${audit.more} older` : ""})`,
      audit.records.length ? table(["when", "kind", "session", "handoff", "detail"], audit.records.slice().reverse().map((r) => h("tr", {},
        h("td", {}, when(r.at)), h("td", {}, r.kind), h("td", {}, r.sessionId ? sessionLink(index, r.harness, r.sessionId) : "—"),
        h("td", {}, r.txnId ?? "—"), h("td", { lang: "zh" }, JSON.stringify(r.detail))))) : h("p", {}, "Empty.")),
  );
};

VIEWS.sessions = async (main, params) => {
  const harness = params.get("harness") || "";
  const q = (params.get("q") || "").trim();
  const since = params.get("since") || "";
  const [data, names, said, state] = await Promise.all([
    get(`/api/sessions?limit=1000${harness ? `&harness=${harness}` : ""}`), harnessNames(),
    q ? get(`/api/sessions/quote?${new URLSearchParams({ text: q, limit: "50" })}`).catch((e) => ({ error: e.message })) : null,
    q ? get("/api/profile/state").catch(() => null) : null,
  ]);
  const go = (changes) => {
    const next = new URLSearchParams({ ...(harness ? { harness } : {}), ...(q ? { q } : {}), ...(since ? { since } : {}), ...changes });
    for (const [k, v] of [...next]) if (!v) next.delete(k);
    location.hash = `#sessions${[...next].length ? `?${next}` : ""}`;
  };
  const pick = h("select", { "aria-label": "Harness", onchange: (e) => go({ harness: e.target.value }) },
    ["", ...names].map((x) => h("option", { value: x, selected: x === harness }, x || "all harnesses")));
  const box = h("input", { type: "search", id: "search", "aria-label": "Search sessions, messages and profile entries", placeholder: "search sessions, messages, profile", value: q });
  const from = h("input", { type: "date", id: "since", "aria-label": "Active since", value: since });
  const form = h("form", { class: "row", role: "search", onsubmit: (e) => { e.preventDefault(); go({ q: box.value.trim(), since: from.value }); } },
    box, pick, h("label", {}, "since ", from), h("button", { type: "submit", class: "primary" }, "Search"));
  const low = q.toLowerCase();
  const sinceMs = since ? Date.parse(`${since}T00:00:00`) : null;
  const sessions = data.sessions.filter((s) => (!sinceMs || (s.lastTime ?? 0) >= sinceMs)
    && (!q || [s.title, s.project, s.cwd, s.id].some((t) => (t || "").toLowerCase().includes(low))));
  const index = new Map(data.sessions.map((s) => [`${s.harness}:${s.id}`, s]));
  const messages = said && !said.error ? said.matches.filter((m) => (!harness || m.harness === harness) && (!sinceMs || (m.time ?? 0) >= sinceMs)) : [];
  const entries = state && state.profile ? state.profile.entries.filter((e) => `${e.claim} ${(e.evidence || []).join(" ")}`.toLowerCase().includes(low)) : [];
  const labels = categoryLabels(state && state.categories);
  fill(main,
    h("h2", {}, "Sessions"),
    form,
    q ? h("section", { class: "card", id: "search-results" }, h("h3", {}, `“${q}”`),
      h("h4", {}, `In what was said (${said && !said.error ? said.total : 0}${said && said.total > messages.length ? `, ${messages.length} shown` : ""})`),
      said && said.error ? h("p", { class: "bad" }, said.error)
        : messages.length ? h("ul", { class: "plain", id: "found-messages" }, messages.map((m) => h("li", {},
          sessionLink(index, m.harness, m.sessionId, m.seq), h("span", { class: "muted" }, ` · ${when(m.time)}`))))
        : h("p", { class: "muted" }, "No human message holds it."),
      h("h4", {}, `In the profile (${entries.length})`),
      entries.length ? h("ul", { class: "plain", id: "found-entries" }, entries.map((e) => h("li", { lang: "zh" },
        h("a", { href: "#profile" }, e.id), " ", e.claim, " ", h("span", { class: "muted" }, categoryTitle(labels, e.category)))))
        : h("p", { class: "muted" }, "No profile entry holds it."),
      h("h4", {}, `Sessions (${sessions.length})`)) : null,
    h("div", { class: "row" }, h("span", { class: "muted" }, `${sessions.length} of ${data.sessions.length} shown, most recent first`)),
    sessions.length ? table(["first request", "project · last activity", "harness", "human", "tools"],
      sessions.map((s) => h("tr", { "data-session": s.id },
        h("td", { lang: "zh", class: "name" }, s.title || "(no request yet)"),
        h("td", {}, h("a", { href: sessionHref(s.harness, s.id), class: "open-session" }, sessionPlace(s), " · ", when(s.lastTime).slice(0, 16)),
          " ", h("code", { class: "session-id muted" }, `${s.harness}:${s.id}`)),
        h("td", {}, s.harness), h("td", {}, s.humanMessages), h("td", {}, s.toolCalls))), { id: "sessions" })
      : h("p", {}, q || since ? "No session matches." : "No sessions yet."),
  );
};

VIEWS.session = async (main, params, rest) => {
  const [harness, id] = rest.map(decodeURIComponent);
  const around = params.get("around");
  const q = new URLSearchParams({ limit: "100" });
  if (around !== null) q.set("around", around);
  const told = new URLSearchParams({ session: id, harness });
  const key = `${encodeURIComponent(harness)}/${encodeURIComponent(id)}`;
  // What the pictures need besides the session: each may fail alone, the rest still shows.
  const [v, preview, used, quoted] = await Promise.all([
    get(`/api/sessions/${key}?${q}`),
    get(`/api/inject/?${told}`).catch((e) => ({ error: e.message })),
    get(`/api/graft/context/${key}`).catch((e) => ({ error: e.message })),
    get(`/api/sessions/${key}/quoted`).catch(() => ({ quotes: [] })),
  ]);
  const friction = await get(`/api/signals/sessions?${new URLSearchParams({ harness, session: v.session.id })}`).catch(() => null);
  const mine = friction && friction.sessions.find((r) => r.harness === harness && r.sessionId === v.session.id);
  const hits = mine ? (await Promise.all(Object.entries(mine.totals).filter(([, n]) => n).map(([signal]) =>
    get(`/api/signals/hits?${new URLSearchParams({ signal, harness, session: v.session.id, limit: "500" })}`)
      .then((found) => found.hits.map((hit) => ({ signal, hit }))).catch(() => []))))
    .flat() : [];
  const marks = { quotes: quoted.quotes, hits, used: used.error ? null : used };
  const mark = around === null ? null : Number(around);
  const near = (item) => mark !== null && (item.seq === mark || (item.result && item.result.seq === mark));
  fill(main,
    h("h2", { lang: "zh" }, sessionName(v.session), h("span", { class: "muted session-id" }, ` · Session ${harness}:${id}`)),
    card("Summary", facts([
      ["title", v.session.title], ["cwd", v.session.cwd], ["turns", v.turns],
      ["first / last", `${when(v.session.firstTime)} – ${when(v.session.lastTime)}`],
      ["events", v.session.events], ["unpaired tool results", v.unpairedToolResults],
    ])),
    contextChart(used),
    timeline(v, mark, main, marks),
    handoffCard(harness, id),
    toldCard(preview),
    card(shown(v.humanMessages, "human messages"),
      h("ol", { class: "messages", start: v.humanMessages.offset + 1 }, v.humanMessages.items.map((m) =>
        h("li", { lang: "zh", "data-seq": m.seq, class: near(m) ? "hit" : null },
          h("span", { class: "muted" }, `${when(m.time)} · turn ${m.turn} · seq ${m.seq}`), h("pre", {}, m.text), cut(m))))),
    card(shown(v.toolCalls, "tool calls"),
      v.toolCalls.items.map((c) => h("details", { "data-seq": c.seq, open: near(c) || null, class: near(c) ? "hit" : null },
        h("summary", { class: c.failed ? "bad" : "" },
          `turn ${c.turn} · ${c.name} · ${seconds(c.durationMs)}${c.failed ? ` · failed${c.result.errorCode ? ` (${c.result.errorCode})` : ""}` : ""}${c.result ? "" : " · no result"}`),
        h("b", {}, "arguments"), h("pre", {}, c.arguments.text), cut(c.arguments),
        c.result ? [h("b", {}, "result"), h("pre", { lang: "zh" }, c.result.text), cut(c.result)] : null))),
  );
  const hit = main.querySelector(".hit");
  if (hit) hit.scrollIntoView({ block: "center" });
};

function kTokens(n) {
  return n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n);
}

// A session's context use over its turns: each turn's last request against its window, the
// warning and forced lines the hooks drew at that turn's end (in dynamic mode they move with
// the growth the session showed), and where a handoff cut it.
function contextChart(used) {
  const title = "Context use over turns";
  if (used.error) return card(title, h("p", { class: "bad", id: "context-use" }, `No context figures: ${used.error}`));
  const turns = used.turns;
  const measured = turns.filter((t) => t.tokens !== null);
  if (!measured.length) {
    return card(title, h("p", { class: "muted", id: "context-use" },
      `No request of this session reported its token usage (${turns.length} turns): nothing to draw.`));
  }
  const width = 1000, height = 250, left = 64, right = 16, top = 26, bottom = 34;
  const most = Math.max(...turns.map((t) => t.window), ...measured.map((t) => t.tokens));
  const n = turns.length;
  const x = (i) => left + (n === 1 ? (width - left - right) / 2 : (i * (width - left - right)) / (n - 1));
  const y = (tokens) => top + (1 - tokens / most) * (height - top - bottom);
  const half = (i) => (n === 1 ? 40 : (x(1) - x(0)) / 2);
  // A line of the watermark as steps: each turn's value across its own stretch of the axis.
  const steps = (name) => {
    let d = "", open = false;
    turns.forEach((t, i) => {
      const at = t[name];
      if (at === null) { open = false; return; }
      const from = Math.max(left, x(i) - half(i)), to = Math.min(width - right, x(i) + half(i));
      d += `${open ? "V" : `M${from} `}${y(at)}H${to}`;
      open = true;
    });
    return d;
  };
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "context", id: "context-chart", role: "img",
    "aria-label": contextSummary(used) });
  for (const share of [0, 0.25, 0.5, 0.75, 1]) {
    const at = y(share * most);
    chart.append(svg("line", { x1: left, x2: width - right, y1: at, y2: at, class: share ? "grid" : "axis" }),
      svg("text", { x: left - 8, y: at + 4, class: "tick end" }, `${kTokens(Math.round(share * most))}`));
  }
  chart.append(svg("path", { d: steps("warningTokens"), class: "warning-line" }),
    svg("path", { d: steps("forcedTokens"), class: "forced-line" }));
  let use = "", going = false;
  turns.forEach((t, i) => {
    if (t.tokens === null) { going = false; return; }
    use += `${going ? "L" : "M"}${x(i)} ${y(t.tokens)}`;
    going = true;
  });
  chart.append(svg("path", { d: use, class: "use" }));
  const every = Math.max(1, Math.ceil(n / 12));
  turns.forEach((t, i) => {
    if (i % every === 0 || i === n - 1) chart.append(svg("text", { x: x(i), y: height - 12, class: "tick mid" }, `${t.turn}`));
    if (t.tokens === null) return;
    const level = t.forced !== null && t.ratio >= t.forced ? " forced" : t.warning !== null && t.ratio >= t.warning ? " warned" : "";
    chart.append(svg("circle", { cx: x(i), cy: y(t.tokens), r: 5, class: `point${level}`, "data-turn": t.turn },
      svg("title", {}, `turn ${t.turn}: ${count(t.tokens)} of ${count(t.window)} tokens (${pct(t.ratio)}); warning ${pct(t.warning)}, forced ${t.forced === null ? "off" : pct(t.forced)}`)));
  });
  chart.append(svg("text", { x: left - 8, y: height - 12, class: "tick end" }, "turn"));
  for (const b of used.boundaries) {
    const i = b.role === "source" ? turns.findIndex((t) => t.turn === b.turn) : 0;
    if (b.role === "source" && i < 0) continue;
    const at = b.role === "source" ? (i < n - 1 ? (x(i) + x(i + 1)) / 2 : x(i) + Math.min(half(i), right)) : left;
    chart.append(svg("line", { x1: at, x2: at, y1: top - 14, y2: height - bottom, class: "boundary", "data-txn": b.txnId },
      svg("title", {}, boundaryText(b))),
      svg("text", { x: at + 4, y: top - 16 + 10, class: "tick" }, `handoff #${b.txnId}`));
  }
  const rows = turns.map((t) => h("tr", { "data-turn": t.turn },
    h("td", {}, t.turn), h("td", {}, t.tokens === null ? "—" : count(t.tokens)), h("td", {}, count(t.window)),
    h("td", {}, t.ratio === null ? "—" : pct(t.ratio)), h("td", {}, pct(t.warning)), h("td", {}, t.forced === null ? "off" : pct(t.forced))));
  return h("section", { class: "card", id: "context-use" }, h("h3", {}, title),
    h("div", { class: "scroll", tabindex: "0" }, chart),
    h("p", { class: "muted legend" },
      h("span", { class: "key use" }, "context in use at a turn's last request"), " ",
      h("span", { class: "key warning" }, "warning line"), " ",
      h("span", { class: "key forced" }, "forced line"), " ",
      h("span", { class: "key boundary" }, "where a handoff cut")),
    h("p", { id: "context-said" }, contextSummary(used)),
    h("details", {}, h("summary", {}, "The figures per turn"),
      table(["turn", "tokens", "window", "in use", "warning", "forced"], rows, { id: "context-figures" })));
}

function boundaryText(b) {
  return b.role === "source"
    ? `Handoff #${b.txnId} (${b.state}) carried this session up to seq ${b.seq}${b.turn === null ? "" : `, the end of turn ${b.turn}`}`
    : `Born from handoff #${b.txnId} (${b.state}) of ${b.otherSessionId}, cut there at seq ${b.seq}`;
}

function contextSummary(used) {
  const parts = [`${used.turns.length} turns`];
  if (used.peak) parts.push(`at most ${pct(used.peak.ratio)} of the window (turn ${used.peak.turn})`);
  parts.push(used.firstWarningTurn === null ? "never in the warning band" : `in the warning band from turn ${used.firstWarningTurn}`);
  parts.push(used.firstForcedTurn === null ? "never at the forced line" : `at the forced line from turn ${used.firstForcedTurn}`);
  const cut = used.boundaries.filter((b) => b.role === "source");
  if (cut.length) parts.push(cut.map((b) => `handoff #${b.txnId} cut it${b.turn === null ? "" : ` after turn ${b.turn}`}`).join(", "));
  const born = used.boundaries.filter((b) => b.role === "target");
  if (born.length) parts.push(`born from handoff #${born.map((b) => b.txnId).join(", #")}`);
  return `Context use: ${parts.join("; ")} (${used.mode} watermark).`;
}

// A session's handoff: the card it would carry now (nothing started), and handing it off now
// (confirmed first: from then on the session takes no new prompt or tool call).
function handoffCard(harness, id) {
  const shown = h("div", { id: "handoff-preview", "aria-live": "polite" });
  const who = { session: id, harness };
  const preview = async () => {
    try {
      const p = await get(`/api/graft/preview?${new URLSearchParams(who)}`);
      fill(shown, h("p", { class: "muted" }, `The card a new session would start from now (${p.card.length} characters${p.cardCut ? ", cut to fit" : ""}):`),
        h("pre", { class: "handoff-card", lang: "zh" }, p.card));
    } catch (e) { fill(shown, h("p", { class: "bad" }, `No handoff can be made: ${e.message}`)); }
  };
  const now = async () => {
    if (!window.confirm("Hand this session off now? It takes no new prompt or tool call from then on; a new session continues from the card.")) return;
    try {
      const { value: done } = await api("POST", "/api/graft/slice", who);
      notify(`Handoff #${done.id} begun (${done.state})${done.detached ? "; the new session is being started" : ""}`);
      await refresh();
    } catch (e) { notify(e.message, true); }
  };
  return card("Handoff",
    h("div", { class: "row" },
      h("button", { type: "button", id: "handoff-preview-go", onclick: preview }, "Preview the handoff card"),
      h("button", { type: "button", id: "handoff-now", onclick: now }, "Hand off now")),
    shown);
}

// The session as a trace: what the person said as marks on the top line; under it the marks
// of what was found in it (the profile's quotes, the signals' hits) and its turns as spans;
// each tool call a span as long as it ran (failures in red) in as many lanes as overlap
// needs, opening its call below; a handoff's cut across all. The place a link pointed at is
// marked.
function timeline(v, mark, main, marks) {
  const said = v.humanMessages.items.filter((m) => typeof m.time === "number");
  const calls = v.toolCalls.items.filter((c) => typeof c.time === "number");
  const used = marks.used;
  const turns = used ? used.turns.filter((t) => typeof t.start === "number" && typeof t.end === "number") : [];
  if (!said.length && !calls.length && !turns.length) return null;
  // Where a seq happened: the message, call or result shown that holds it, else its turn.
  const times = new Map();
  for (const m of v.humanMessages.items) times.set(m.seq, m.time);
  for (const c of v.toolCalls.items) { times.set(c.seq, c.time); if (c.result) times.set(c.result.seq, c.result.time); }
  const timeOf = (seq, turn) => {
    if (typeof times.get(seq) === "number") return times.get(seq);
    const t = turns.find((x) => x.turn === turn);
    return t ? (t.start + t.end) / 2 : null;
  };
  const quotes = marks.quotes.map((q) => ({ ...q, at: typeof q.time === "number" ? q.time : timeOf(q.seq, null) }));
  const hits = marks.hits.map(({ signal, hit }) => ({ signal, hit, seq: hitSeq(hit), at: timeOf(hitSeq(hit), hit.turn) }));
  const cuts = used ? used.boundaries.filter((b) => b.role === "source" && typeof b.time === "number") : [];
  const ends = calls.map((c) => c.time + (c.durationMs || 0));
  const moments = [...said.map((m) => m.time), ...calls.map((c) => c.time), ...turns.map((t) => t.start)];
  const start = Math.min(...moments);
  const end = Math.max(start + 1000, ...said.map((m) => m.time), ...ends, ...turns.map((t) => t.end));
  const width = 1000, lane = 14, quotesAt = 27, hitsAt = 41, turnsAt = 50, top = turns.length ? 68 : 54;
  const x = (t) => 6 + ((Math.max(start, Math.min(end, t)) - start) / (end - start)) * (width - 12);
  const lanes = [];
  const placed = calls.map((c) => {
    const from = x(c.time), to = Math.max(from + 3, x(c.time + (c.durationMs || 0)));
    let n = lanes.findIndex((free) => free <= from);
    if (n < 0) { n = lanes.length < 8 ? lanes.length : lanes.indexOf(Math.min(...lanes)); }
    lanes[n] = to + 1;
    return { c, from, to, n };
  });
  const height = top + Math.max(1, lanes.length) * lane + 16;
  const failed = calls.filter((c) => c.failed).length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "trace", role: "img",
    "aria-label": `${said.length} messages, ${turns.length} turns and ${calls.length} tool calls over ${seconds(end - start)}${failed ? `, ${failed} failed` : ""}; ${quotes.length} profile quotes, ${hits.length} signal hits${cuts.length ? `, ${cuts.length} handoff cuts` : ""}` },
    svg("line", { x1: 0, x2: width, y1: 10, y2: 10, class: "axis" }));
  const openSeq = (seq) => {
    const target = main.querySelector(`details[data-seq="${seq}"]`);
    if (target) { target.open = true; target.scrollIntoView({ block: "center" }); target.querySelector("summary").focus(); return; }
    const message = main.querySelector(`ol.messages li[data-seq="${seq}"]`);
    if (message) message.scrollIntoView({ block: "center" });
  };
  for (const t of turns) {
    const from = x(t.start), to = Math.max(from + 3, x(t.end));
    chart.append(svg("rect", { x: from, y: turnsAt, width: to - from, height: 10, class: "turn", "data-turn": t.turn },
      svg("title", {}, `turn ${t.turn} · ${seconds(t.end - t.start)}${t.tokens === null ? "" : ` · ${count(t.tokens)} tokens in use (${pct(t.ratio)})`}`)));
  }
  for (const m of said) {
    const at = x(m.time);
    chart.append(svg("path", { d: `M${at} 3 L${at + 5} 10 L${at} 17 L${at - 5} 10 Z`, class: m.seq === mark ? "said hit" : "said" },
      svg("title", {}, ...visible(`${when(m.time)} · turn ${m.turn}: ${m.text.slice(0, 80)}`))));
  }
  for (const q of quotes) {
    if (q.at === null) continue;
    const ring = svg("circle", { cx: x(q.at), cy: quotesAt, r: 5, class: "quote", "data-quote": q.label, "data-seq": q.seq },
      svg("title", {}, ...visible(`profile entry ${q.label} quotes this message: “${q.quote}”${q.claim ? ` (${q.claim})` : ""}`)));
    ring.addEventListener("click", () => openSeq(q.seq));
    chart.append(ring);
  }
  for (const { signal, hit, seq, at: when_ } of hits) {
    if (when_ === null) continue;
    const at = x(when_);
    const sign = svg("path", { d: `M${at} ${hitsAt - 6} L${at + 6} ${hitsAt + 5} L${at - 6} ${hitsAt + 5} Z`, class: "signal-hit", "data-signal": signal, "data-seq": seq },
      svg("title", {}, ...visible(`${signal} at turn ${hit.turn}${hit.tool ? ` (${hit.tool})` : ""}`)));
    sign.addEventListener("click", () => openSeq(seq));
    chart.append(sign);
  }
  for (const { c, from, to, n } of placed) {
    const near = mark !== null && (c.seq === mark || (c.result && c.result.seq === mark));
    const rect = svg("rect", { x: from, y: top + n * lane, width: to - from, height: lane - 4, "data-seq": c.seq,
      class: `span${c.failed ? " failed" : ""}${near ? " hit" : ""}` },
      svg("title", {}, ...visible(`${c.name} · ${seconds(c.durationMs)}${c.failed ? " · failed" : ""} · turn ${c.turn}`)));
    rect.addEventListener("click", () => openSeq(c.seq));
    chart.append(rect);
  }
  for (const b of cuts) {
    const at = x(b.time);
    chart.append(svg("line", { x1: at, x2: at, y1: 0, y2: height - 14, class: "boundary", "data-txn": b.txnId },
      svg("title", {}, boundaryText(b))));
  }
  chart.append(svg("text", { x: 0, y: height - 3, class: "tick" }, ...visible(when(start).slice(11))),
    svg("text", { x: width, y: height - 3, class: "tick end" }, ...visible(when(end).slice(11))));
  // The marks again as words and links: what a keyboard or a screen reader reaches.
  const href = (seq) => sessionHref(v.session.harness, v.session.id, seq);
  const listed = [
    ...quotes.map((q) => h("li", { "data-mark": "quote", lang: "zh" }, h("span", { class: "key quote", "aria-hidden": "true" }), " ",
      `Profile entry ${q.label}${q.claim ? ` (${q.claim})` : ""} quotes “${q.quote}”: `, h("a", { href: href(q.seq) }, `seq ${q.seq}`))),
    ...hits.map(({ signal, hit, seq }) => h("li", { "data-mark": "signal", "data-signal": signal }, h("span", { class: "key signal-hit", "aria-hidden": "true" }), " ",
      `${signal} at turn ${hit.turn}${hit.tool ? ` (${hit.tool})` : ""}: `, seq === null ? "—" : h("a", { href: href(seq) }, `seq ${seq}`))),
    ...(used ? used.boundaries : []).map((b) => h("li", { "data-mark": "boundary", "data-txn": b.txnId }, h("span", { class: "key boundary", "aria-hidden": "true" }), " ",
      `${boundaryText(b)}${b.role === "source" && b.seq >= 0 ? ": " : ""}`, b.role === "source" && b.seq >= 0 ? h("a", { href: href(b.seq) }, `seq ${b.seq}`) : null)),
  ];
  return h("section", { class: "card", id: "timeline" },
    h("h3", {}, `Timeline (${seconds(end - start)}${v.toolCalls.total > calls.length ? `, the ${calls.length} calls shown below` : ""})`),
    h("div", { class: "scroll" }, chart),
    h("p", { class: "muted legend" }, "◆ what the person said · ○ a profile quote · ▲ a signal hit · ▭ a turn · ▬ a tool call as long as it ran (red: failed) · ┊ where a handoff cut · a span or a mark opens its place below"),
    listed.length ? h("ul", { class: "plain marks", id: "timeline-marks" }, listed) : h("p", { class: "muted", id: "timeline-marks" }, "No profile quote, signal hit or handoff in this session."));
}

// What each hook event would put into the session if it fired next (the hooks' own rules,
// run dry by GET /api/inject/): its parts in order, and the text exactly as the answer
// would carry it.
function toldCard(preview) {
  const title = "What the agent is told";
  if (preview.error) return card(title, h("p", { class: "bad" }, `No preview: ${preview.error}`));
  const limit = preview.events.length ? preview.events[0].limit : 0;
  return h("section", { class: "card", id: "told" }, h("h3", {}, title),
    h("p", { class: "muted" },
      `Each event as if it fired next, nothing delivered in between; one answer carries at most ${count(limit)} characters, and a part past that is dropped whole.`),
    preview.events.map(toldEvent));
}

function count(n) {
  return Number(n).toLocaleString("en");
}

function toldEvent(e) {
  const delivered = e.parts.filter((p) => p.delivered).length;
  return h("details", { class: "told-event", "data-event": e.event, open: e.text ? true : null },
    h("summary", {}, h("b", {}, e.event),
      ` · ${count(e.chars)} characters · ${delivered} of ${e.parts.length} part${e.parts.length === 1 ? "" : "s"} delivered`),
    e.decision ? h("p", { class: "warn" }, `${e.decision.kind}: ${e.decision.reason}`) : null,
    h("ol", { class: "told-parts" }, e.parts.map(toldPart)),
    e.notes.length ? h("ul", { class: "warn" }, e.notes.map((n) => h("li", {}, n))) : null,
    e.text ? [h("b", {}, "Exact text"), h("pre", { class: "told-text", "data-event": e.event, lang: "zh" }, e.text)]
      : h("p", { class: "muted" }, "The answer carries no text."));
}

function toldPart(p) {
  const [state, tone] = !p.previewed ? ["not previewed", "muted"]
    : p.dropped ? ["dropped by the cap", "bad"]
    : p.delivered ? ["delivered", "ok"] : ["nothing to add", "muted"];
  return h("li", { "data-handler": p.handler },
    h("code", { class: "handler" }, p.handler), h("span", { class: "muted" }, ` · order ${p.order}`),
    h("div", {}, h("span", { class: `tag ${tone}` }, state),
      p.source ? ` from ${p.source}` : "", p.text ? ` · ${count(p.chars)} characters` : ""),
    p.pieces.length ? h("div", {}, "sources: ",
      p.pieces.map((x) => `${x.source} (${count(x.chars)})`).join(", ")) : null,
    p.why ? h("div", { class: "muted" }, p.why) : null,
    p.decision ? h("div", { class: "warn" }, `${p.decision.kind}: ${p.decision.reason}`) : null,
    p.effects.length ? h("div", { class: "muted" }, `besides answering, the hook ${p.effects.join("; ")}`) : null,
    p.text ? h("details", {}, h("summary", {}, "this part's text"), h("pre", { lang: "zh" }, p.text)) : null);
}

// -- routing ----------------------------------------------------------------------------

function current() {
  const hash = location.hash.slice(1) || "overview";
  const [path, query] = hash.split("?");
  const [name, ...rest] = path.split("/");
  return { name: VIEWS[name] ? name : "overview", params: new URLSearchParams(query || ""), rest };
}

async function route() {
  const { name, params, rest } = current();
  const nav = name === "session" ? "sessions" : name;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const main = document.getElementById("view");
  const fresh = h("div", { "data-view": name, "aria-busy": "true" });
  main.replaceChildren(fresh);
  missed = false;  // what is read from here on is newer than any change heard before
  try {
    await VIEWS[name](fresh, params, rest);
  } catch (e) {
    fresh.append(h("p", { class: "bad", role: "alert" }, `Could not load this view: ${e.message}`));
  }
  fresh.setAttribute("aria-busy", "false");
  fresh.dataset.ready = "1";
  if (missed && main.firstElementChild === fresh) { missed = false; refresh(); }
}

// -- live: the page follows the store over one event stream ------------------------------

// What sessions learned, per workspace: the workspaces with their counts, the records waiting
// for the person's review ([memory] confirm), the skill proposals to accept or reject, the
// supersession timeline (a fact and what superseded it, with times), and each record grouped
// by its workspace, with where it came from, whether it stands, and what a person can do with
// it (set it aside, let it back, forget it). `?workspace=` narrows every part to one. How memory
// stands (as `dshkit memory status`: ids, what caps dropped, what an injection leaves out) and
// the move of a workspace's memory to where its folder went (`dshkit memory rekey`).
const MEMORY_KINDS = ["fact", "negative", "experience", "skill"];
VIEWS.memory = async (main, params) => {
  const q = (params.get("q") || "").trim();
  const only = params.get("workspace") || "";
  const scope = only ? `workspace=${encodeURIComponent(only)}&` : "";
  const [data, index, spaces, pending, skills, timeline, names, status] = await Promise.all([
    get(q ? `/api/memory/search?${new URLSearchParams({ q, limit: "100", ...(only ? { workspace: only } : {}) })}` : `/api/memory/records?${scope}limit=200`),
    sessionsByKey(),
    get("/api/memory/workspaces"),
    get(`/api/memory/pending?${scope}rejected=1`),
    get(`/api/memory/skills?${scope}`),
    get(`/api/memory/timeline?${scope}`),
    harnessNames(),
    get(`/api/memory/status?${scope}`),
  ]);
  const done = { quarantine: "set aside", release: "let back", forget: "forgotten", accept: "accepted", reject: "rejected" };
  const act = async (record, how, body) => {
    if (how === "forget" && !window.confirm(`Forget memory record #${record.id} for good?`)) return;
    try {
      if (how === "forget") await api("DELETE", `/api/memory/records/${record.id}`);
      else await api("POST", `/api/memory/records/${record.id}/${how === "verdict" ? "review" : how}`, body || (how === "quarantine" ? { reason: "set aside from the console" } : {}));
      await refresh();
      notify(`Record #${record.id}: ${how === "verdict" ? done[body.verdict] : done[how]}`);
    } catch (e) { notify(e.message, true); }
  };
  const from = (r) => r.source.sessionId ? sessionLink(index, r.source.harness, r.source.sessionId, r.source.seq) : "—";
  const records = data.records || [];
  const box = h("input", { type: "search", id: "memory-search", "aria-label": "Search memory", placeholder: "words a record holds", value: q });
  const here = (root) => `#memory?workspace=${encodeURIComponent(root)}`;

  const workspaceCard = card("Workspaces",
    spaces.workspaces.length ? table(["workspace", ...MEMORY_KINDS, "superseded", "waiting", "rejected", "set aside", "last learned"],
      spaces.workspaces.map((w) => h("tr", { "data-workspace": w.root, class: w.root === only ? "picked" : null },
        h("td", {}, h("a", { href: here(w.root), "aria-current": w.root === only ? "true" : null }, w.root), w.remote ? h("div", { class: "muted" }, w.remote) : null),
        MEMORY_KINDS.map((k) => h("td", { "data-count": k }, String(w.kinds[k] ?? 0))),
        h("td", {}, String(w.superseded)), h("td", { "data-count": "pending" }, String(w.pending)),
        h("td", {}, String(w.rejected)), h("td", {}, String(w.quarantined)), h("td", {}, when(w.lastRecordedAt)))),
      { id: "memory-workspaces" }) : h("p", {}, "No workspace has memory yet."),
    only ? h("p", {}, h("a", { href: "#memory", id: "memory-every" }, "Every workspace")) : null);

  const lost = Object.entries(status.dropped.byKind).filter(([, n]) => n);
  const left = status.injection ? Object.entries(status.injection.leftOut).filter(([, n]) => n) : [];
  const oldBox = h("select", { id: "memory-rekey-old", "aria-label": "Workspace whose memory moves" },
    status.workspaces.map((w) => h("option", { value: w.id }, `${w.id} · ${w.root}${w.remote ? ` (${w.remote})` : ""}`)));
  const newBox = h("input", { type: "text", id: "memory-rekey-new", "aria-label": "Where it is now", placeholder: "/absolute/new/folder or a workspace id" });
  const rekey = async (e) => {
    e.preventDefault();
    const body = { old: oldBox.value, new: newBox.value.trim() };
    if (!body.old || !body.new) return notify("Name the workspace and where it is now", true);
    if (!window.confirm(`Move the memory of ${body.old} to ${body.new}?`)) return;
    try {
      const moved = await api("POST", "/api/memory/rekey", body);
      await refresh();
      notify(`Moved ${moved.records} record(s) to ${moved.to.root}; ${moved.superseded} superseded`);
    } catch (err) { notify(err.message, true); }
  };
  const statusCard = card("Status",
    h("p", { id: "memory-status-counts" }, `${status.counts.facts} facts, ${status.counts.negative} negative paths, ${status.counts.experiences} experiences, ${status.counts.skills} skills standing; ${status.counts.quarantined} set aside, ${status.counts.pending} waiting`),
    h("p", { id: "memory-status-dropped" }, lost.length ? `Dropped over the per-session caps: ${lost.map(([k, n]) => `${n} ${k} (cap ${status.dropped.caps[k] ?? "?"})`).join(", ")}` : "No harvest dropped a record over its caps."),
    status.injection ? h("p", { id: "memory-status-injection" }, `A new session here gets ${status.injection.records} record(s) (${status.injection.chars} characters); left out: ${left.length ? left.map(([k, n]) => `${n} ${k}`).join(", ") : "none"}`) : null,
    status.workspaces.length ? h("form", { class: "row", id: "memory-rekey", onsubmit: rekey },
      h("span", {}, "Folder moved? Move its memory:"), oldBox, newBox, h("button", { type: "submit" }, "Move")) : null);

  const waiting = pending.records.filter((r) => r.state === "pending");
  const rejected = pending.records.filter((r) => r.state === "rejected");
  const reviewItem = (r) => h("li", { class: "memory-pending", "data-record": r.id },
    h("div", {}, h("span", { class: "tag" }, r.kind), " ", r.subject ? h("b", { lang: "zh" }, r.subject) : null,
      r.state === "rejected" ? h("span", { class: "tag muted" }, " rejected") : null),
    h("p", { lang: "zh" }, r.text),
    h("div", { class: "muted" }, `${r.workspace.root} · learned ${when(r.recordedAt)} · ${r.grade} · from `, from(r)),
    h("div", { class: "row" },
      h("button", { type: "button", class: "primary", "data-act": "review-accept", onclick: () => act(r, "verdict", { verdict: "accept" }) }, "Accept"),
      r.state === "pending" ? h("button", { type: "button", "data-act": "review-reject", onclick: () => act(r, "verdict", { verdict: "reject" }) }, "Reject") : null));
  const reviewCard = waiting.length || rejected.length ? card("Waiting for your review",
    h("p", { class: "muted" }, "What sessions learned on their own waits here ([memory] confirm = true): it is given to no session until you accept it. A rejected record is kept, never given."),
    waiting.length ? h("ul", { class: "plain", id: "memory-pending" }, waiting.map(reviewItem)) : h("p", {}, "Nothing waits."),
    rejected.length ? h("details", { id: "memory-rejected" }, h("summary", {}, `${rejected.length} rejected`), h("ul", { class: "plain" }, rejected.map(reviewItem))) : null) : null;

  const proposals = skills.records.filter((r) => r.state === "proposed" && !r.quarantined && r.current !== false);
  const decided = skills.records.filter((r) => r.state === "accepted" || r.state === "rejected");
  const skillItem = (r) => {
    const pick = h("select", { "aria-label": `Harness for skill ${r.detail.name}`, "data-harness": r.id },
      names.map((n) => h("option", { value: n }, n)));
    return h("li", { class: "card memory-skill", "data-record": r.id },
      h("div", {}, h("b", {}, r.detail.name || r.subject), " ", h("span", { class: "tag" }, r.state)),
      h("p", { lang: "zh" }, r.text),
      r.detail.draft ? h("details", {}, h("summary", {}, "SKILL.md"), h("pre", { lang: "zh" }, r.detail.draft)) : null,
      r.detail.evals ? h("details", {}, h("summary", {}, "evals/evals.json"), h("pre", {}, JSON.stringify(r.detail.evals, null, 2))) : null,
      r.state === "accepted" && r.detail.path ? h("div", { class: "muted" }, `written to ${r.detail.path}`) : null,
      h("div", { class: "muted" }, `${r.workspace.root} · from `, from(r)),
      r.state === "proposed" ? h("div", { class: "row" }, pick,
        h("button", { type: "button", class: "primary", "data-act": "skill-accept", onclick: () => act(r, "accept", { harness: pick.value, scope: "project" }) }, "Accept: write SKILL.md"),
        h("button", { type: "button", "data-act": "skill-reject", onclick: () => act(r, "reject") }, "Reject")) : null);
  };
  const skillCard = proposals.length || decided.length ? card("Skill proposals",
    h("p", { class: "muted" }, "A skill is written into the harness's skills folder of the workspace only when you accept it, with its evals beside it."),
    proposals.length ? h("ul", { class: "plain", id: "memory-skills" }, proposals.map(skillItem)) : h("p", {}, "No proposal waits."),
    decided.length ? h("details", {}, h("summary", {}, `${decided.length} decided`), h("ul", { class: "plain" }, decided.map(skillItem))) : null) : null;

  const held = (r) => h("li", { "data-record": r.id, class: r.current ? null : "muted" },
    h("span", { lang: "zh" }, r.text), " ",
    h("span", { class: "muted" },
      `#${r.id} · ${r.grade} · valid ${when(r.validFrom)} → ${r.validTo ? when(r.validTo) : "now"} · recorded ${when(r.recordedAt)}`,
      r.expiredAt ? ` · closed ${when(r.expiredAt)}` : "",
      r.supersededBy ? ` · superseded by #${r.supersededBy}` : " · stands",
      r.supersededBy && r.detail.verdict && r.detail.verdict !== "superseded" ? ` (${r.detail.verdict})` : ""));
  const chainItem = (chain) => h("li", { class: "memory-chain", "data-subject": chain.subject },
    h("b", { lang: "zh" }, chain.subject || "(no subject)"),
    h("ol", {}, chain.records.map(held)));
  const timelineCard = timeline.chains.length ? card("Supersession timeline",
    h("p", { class: "muted" }, "Each fact, in the order it held, and what superseded it: valid from → to, recorded, closed."),
    h("ol", { class: "plain", id: "memory-timeline" }, timeline.chains.map(chainItem))) : null;

  const recordItem = (r) => h("li", { class: "card memory-record", "data-record": r.id },
    h("div", {}, h("span", { class: "tag" }, r.kind), " ", r.subject ? h("b", { lang: "zh" }, r.subject) : null,
      r.quarantined ? h("span", { class: "tag bad" }, " set aside") : r.current === false ? h("span", { class: "tag muted" }, " superseded") : null,
      r.state === "pending" ? h("span", { class: "tag warn" }, " waiting for review") : r.state === "rejected" && r.kind !== "skill" ? h("span", { class: "tag muted" }, " rejected") : null),
    h("p", { lang: "zh" }, r.text),
    r.quarantined && r.quarantineReason ? h("p", { class: "warn" }, `Why it is set aside: ${r.quarantineReason}`) : null,
    h("div", { class: "muted" }, `${r.workspace.root} · recorded ${when(r.recordedAt)} · from `, from(r)),
    h("div", { class: "row" },
      r.quarantined
        ? h("button", { type: "button", "data-act": "release", onclick: () => act(r, "release") }, "Let it back")
        : h("button", { type: "button", "data-act": "quarantine", onclick: () => act(r, "quarantine") }, "Set aside"),
      h("button", { type: "button", "data-act": "forget", onclick: () => act(r, "forget") }, "Forget"),
      rawJson(r)));
  const groups = new Map();
  for (const r of records) {
    const key = r.workspace.root;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  const recordList = records.length ? h("div", { id: "memory-records" }, [...groups].map(([root, list]) => h("section", { class: "memory-group", "data-workspace": root },
    h("h3", {}, h("a", { href: here(root) }, root), h("span", { class: "muted" }, ` · ${list.length} record${list.length === 1 ? "" : "s"}`)),
    h("ul", { class: "plain" }, list.map(recordItem)))))
    : h("p", {}, q ? "No record holds those words." : "No memory records yet.");

  fill(main,
    h("h2", {}, only ? `Memory of ${only}` : "Memory"),
    h("form", { class: "row", role: "search", onsubmit: (e) => { e.preventDefault(); const words = box.value.trim(); const query = new URLSearchParams({ ...(words ? { q: words } : {}), ...(only ? { workspace: only } : {}) }).toString(); location.hash = query ? `#memory?${query}` : "#memory"; } },
      box, h("button", { type: "submit", class: "primary" }, "Search")),
    workspaceCard, statusCard, reviewCard, skillCard, timelineCard, recordList);
};

// Every call made to the model (the profile's, the optimizer's), newest first; one opens to
// the prompt it was sent and the reply it gave.
VIEWS.llm = async (main) => {
  const data = await get("/api/status/llm-calls?limit=200");
  const tokens = (u) => u ? `${count(u.prompt_tokens ?? 0)} in / ${count(u.completion_tokens ?? 0)} out` : "—";
  const slow = Math.max(1, ...data.calls.map((c) => c.elapsedMs || 0));
  const detail = (c) => {
    const box = h("div", {});
    return h("details", { class: "llm-call", "data-call": c.id, ontoggle: async (e) => {
      if (!e.target.open || e.target.dataset.linked) return;
      e.target.dataset.linked = "1";
      try {
        const full = await get(`/api/status/llm-calls/${c.id}`);
        fill(box,
          c.error ? h("p", { class: "bad" }, c.error) : null,
          h("b", {}, "Prompt"), h("pre", { lang: "zh" }, promptText(full.prompt)),
          h("b", {}, "Reply"), h("pre", { lang: "zh" }, full.response || "(empty)"), rawJson(full.usage));
      } catch (err) { fill(box, h("p", { class: "bad" }, err.message)); }
    } },
    h("summary", { class: c.outcome === "ok" ? "" : "bad" },
      `${when(c.at)} · ${c.purpose} · ${c.model ?? "?"} · ${c.outcome}${c.finishReason && c.finishReason !== "stop" ? ` (${c.finishReason})` : ""} · ${tokens(c.usage)} · ${seconds(c.elapsedMs)}`,
      " ", svg("svg", { viewBox: "0 0 100 8", width: 100, height: 8, class: "latency", "aria-hidden": "true" },
        svg("rect", { width: Math.max(1, (100 * (c.elapsedMs || 0)) / slow), height: 8 }))),
    box);
  };
  fill(main,
    h("h2", {}, "LLM calls"),
    h("p", { class: "muted" }, `${data.total} calls kept${data.total > data.calls.length ? `, the newest ${data.calls.length} shown` : ""}; each bar is its latency against the slowest shown.`),
    data.calls.length ? card("", data.calls.map(detail)) : h("p", {}, "No calls to the model yet."));
};

// A prompt as stored (JSON messages) shown as its messages, each under its role.
function promptText(prompt) {
  try {
    const messages = JSON.parse(prompt);
    if (Array.isArray(messages)) return messages.map((m) => `── ${m.role} ──\n${typeof m.content === "string" ? m.content : JSON.stringify(m.content, null, 2)}`).join("\n\n");
  } catch { /* not JSON: shown as it is */ }
  return prompt;
}

// The topics each view shows; a change in one of them refreshes the view in place.
const VIEW_TOPICS = {
  overview: ["sessions", "optimizer", "gate", "graft", "profile"], profile: ["profile"],
  signals: ["sessions"], optimizer: ["optimizer"], gate: ["gate"], handoffs: ["graft", "sessions"],
  sessions: ["sessions"], session: ["sessions", "graft", "profile"], llm: ["profile", "optimizer"], memory: ["memory"],
};
const LIVE = { connected: false, scanning: false, lastScanAt: null, refreshes: 0 };
let liveTimer = 0;

function showLive() {
  const box = document.getElementById("live");
  if (!box) return;
  const ago = LIVE.lastScanAt === null ? null : Math.max(0, Math.round((Date.now() - LIVE.lastScanAt) / 1000));
  const words = !LIVE.connected ? "offline: reconnecting…"
    : LIVE.scanning ? "live · scanning now"
    : ago === null ? "live · no scan since the service started"
    : `live · last scan ${ago < 90 ? `${ago} s` : ago < 5400 ? `${Math.round(ago / 60)} min` : `${Math.round(ago / 3600)} h`} ago`;
  if (box.textContent !== words) box.replaceChildren(...visible(words));
  box.className = `live ${LIVE.connected ? "on" : "off"}`;
}

// The stream beats every few seconds; one silent for longer is dropped and opened again
// (a connection can die without the browser noticing), and the view read anew.
const SILENT_MS = 12000;
let liveSource = null;
let heardAt = 0;

const RECONNECT_MS = 2000;
let liveGeneration = 0;  // the stream opened last; a reconnection planned for an older one is void

function followStore(again = false) {
  const generation = ++liveGeneration;
  heardAt = Date.now();
  // How often the stream was opened and what it said, for a test to tell a kept stream.
  LIVE.opened = (LIVE.opened || 0) + 1;
  document.body.dataset.liveOpened = String(LIVE.opened);
  const take = (data) => {
    const d = JSON.parse(data);
    heardAt = Date.now();
    LIVE.heard = (LIVE.heard || 0) + 1;
    document.body.dataset.liveHeard = String(LIVE.heard);
    if (d.counters) document.body.dataset.liveSessions = d.counters.sessions;
    LIVE.connected = true;
    LIVE.scanning = d.scanning;
    LIVE.lastScanAt = d.lastScanAt;
    showLive();
    return d;
  };
  const later = () => {
    clearTimeout(liveTimer);
    liveTimer = setTimeout(async () => {
      await refresh();
      LIVE.refreshes += 1;
      document.body.dataset.liveRefreshes = String(LIVE.refreshes);
    }, 300);
  };
  liveSource = eventStream("/api/events", {
    // Connected again after a break: what changed meanwhile is unknown, so the view is read anew.
    ready: (data) => {
      take(data);
      document.body.dataset.liveReadies = String((Number(document.body.dataset.liveReadies) || 0) + 1);
      if (again) { sessionIndex = null; later(); }
    },
    beat: take,
    change: (data) => {
      const d = take(data);
      if (d.topics.includes("sessions")) sessionIndex = null;
      const wanted = VIEW_TOPICS[current().name] || [];
      if (d.topics.some((t) => wanted.includes(t))) later();
    },
  }, () => {
    // Broken or ended: shown as offline, and opened again after a pause (as EventSource would).
    LIVE.connected = false;
    showLive();
    setTimeout(() => { if (generation === liveGeneration) followStore(true); }, RECONNECT_MS);
  });
}

// Keys for the main views: g then the view's letter (o, p, s, z, g, h, e), ? lists them.
const SHORTCUTS = { o: "overview", p: "profile", i: "signals", z: "optimizer", g: "gate", h: "handoffs", s: "sessions", m: "memory", l: "llm" };
let leader = 0;
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) || e.target.isContentEditable) return;
  if (e.key === "g" && !leader) { leader = setTimeout(() => { leader = 0; }, 1500); return; }
  if (leader && SHORTCUTS[e.key]) {
    clearTimeout(leader); leader = 0;
    location.hash = `#${SHORTCUTS[e.key]}`;
    e.preventDefault();
  } else if (e.key === "/") {  // search
    e.preventDefault();
    const box = document.getElementById("search");
    if (box) { box.focus(); return; }
    wantSearch = true;
    location.hash = "#sessions";
  } else if (e.key === "?") {
    notify(`Keys: ${Object.entries(SHORTCUTS).map(([k, v]) => `g ${k} ${v}`).join(" · ")} · / search`);
  }
});

// A link followed inside the page moves focus to the view it opened; an address typed or
// history walked starts the keyboard from the top of the page, as a new page would.
let followedAt = 0;
let wantSearch = false;  // "/" pressed away from the sessions view: its box gets the focus
document.addEventListener("click", (e) => { if (e.target.closest && e.target.closest('a[href^="#"]')) followedAt = Date.now(); });

window.addEventListener("hashchange", () => {
  const notice = document.getElementById("notice");
  if (!notice.classList.contains("bad")) notice.textContent = "";
  const followed = Date.now() - followedAt < 500;
  followedAt = 0;
  route().then(() => {
    if (wantSearch) { wantSearch = false; document.getElementById("search")?.focus(); return; }
    if (followed) { document.getElementById("view").focus({ preventScroll: true }); return; }
    const top = document.querySelector(".skip");
    top.focus({ preventScroll: true });
    top.blur();
  });
});
route();
followStore();
setInterval(() => {
  showLive();
  if (Date.now() - heardAt > SILENT_MS) {
    liveSource.close();
    LIVE.connected = false;
    followStore(true);
  }
}, 1000);
