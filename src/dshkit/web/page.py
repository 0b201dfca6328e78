"""The short status page at `/` until the console replaces it."""

from __future__ import annotations

import asyncio
import html
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..profile.service import ProfileService
from .routing import Handler


def page(profile: ProfileService | None, endpoints: list[str]) -> Handler:
    async def show(request: Request) -> Response:
        state = await asyncio.to_thread(profile.state) if profile is not None else None
        return HTMLResponse(_render(state, endpoints))

    return show


def _render(state: dict[str, Any] | None, endpoints: list[str]) -> str:
    apis = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in endpoints)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dshkit</title>
<style>body{{font:15px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{white-space:pre-wrap;background:#f5f5f5;padding:1rem}}
td{{padding:.2rem .6rem;vertical-align:top}}</style>
</head><body>
<h1>dshkit</h1>
{_profile(state) if state is not None else ""}
<h2>API</h2>
<ul>{apis}</ul>
<p>Changes need the <code>X-Dshkit-Token</code> header. Background jobs report their progress
as server-sent events at <code>/api/jobs/&lt;id&gt;/events</code>.</p>
</body></html>"""


def _profile(state: dict[str, Any]) -> str:
    run = state["lastRun"] or {}
    profile = state["profile"] or {"version": None, "entries": []}
    rows = "".join(
        f"<tr><td>{html.escape(e['id'])}</td><td>{html.escape(e['category'])}</td>"
        f"<td>{html.escape(e['claim'])}</td><td>{html.escape(e['confidence'])}</td></tr>"
        for e in profile["entries"]
    )
    verdict = "updated" if run.get("ok") else (run.get("error") or run.get("reason") or "never run")
    return f"""<p>Mode: <b>{html.escape(state["mode"])}</b> (text from \
{html.escape(state["effectiveSource"])}). Profile version: {profile["version"] or "none yet"}. \
Last run: {html.escape(str(verdict))}.</p>
<h2>What the agent is told</h2>
<pre>{html.escape(state["effectiveText"]) or "(nothing is injected)"}</pre>
<h2>Profile entries</h2>
<table>{rows or "<tr><td>No profile yet.</td></tr>"}</table>"""
