"""Time of the capability facts' first render: the answer a session gets at its start, made
from the cache alone while the probes run detached (the seed's "first render < 20 ms").

In this process, the interpreter and store already open (the hook's own start is
bench/hook_latency.py's): reading the facts of a session, looking them up with nothing cached
(the detached probe's start replaced by a no-op, so that the runs start no browsers), and
rendering the text; then the same with the results cached.

    python bench/capability.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dshkit.capability import service
from dshkit.capability.facts import read_facts
from dshkit.store import Store

TARGET_MS = 20.0
CHANNELS = [
    {"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"},
    {"channel": "screenshot", "ok": True, "reason": "chromium: PNG 3797 bytes in 1.0 s"},
    {"channel": "toolServers", "ok": None, "reason": "no MCP server configured"},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    setattr(service, "spawn_detached", lambda *argv: None)  # noqa: B010 (no browsers)
    with tempfile.TemporaryDirectory() as home:
        cwd = str(Path(home))
        with Store(Path(home) / "state") as store:
            cold: list[float] = []
            for n in range(args.runs):
                # Another session each run, another mode: nothing cached for it.
                payload = {"session_id": f"s{n}", "cwd": cwd, "permission_mode": f"mode-{n}"}
                started = time.perf_counter()
                facts = read_facts(store, "claude", payload)
                found, _ = service.lookup(store, facts, cwd)
                text = found.text
                cold.append((time.perf_counter() - started) * 1000)
                assert found.pending and text
            facts = read_facts(store, "claude", {"session_id": "w", "cwd": cwd})
            key = service.cache_key(facts, cwd)
            import orjson

            with store.transaction() as db:
                db.execute(
                    "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
                    (key, int(time.time() * 1000), orjson.dumps(CHANNELS).decode()),
                )
            warm: list[float] = []
            for _ in range(args.runs):
                started = time.perf_counter()
                facts = read_facts(store, "claude", {"session_id": "w", "cwd": cwd})
                found, _ = service.lookup(store, facts, cwd)
                text = found.text
                warm.append((time.perf_counter() - started) * 1000)
                assert not found.pending and text
    for name, runs in (("nothing cached", cold), ("results cached", warm)):
        p95 = statistics.quantiles(runs, n=20)[-1]
        print(
            f"first render, {name} ({len(runs)} runs): median {statistics.median(runs):.2f} ms,"
            f" p95 {p95:.2f} ms, max {max(runs):.2f} ms (target < {TARGET_MS:g} ms)"
        )


if __name__ == "__main__":
    main()
