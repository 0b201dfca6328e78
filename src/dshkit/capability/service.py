"""Capability reports: what is known now, from a cache keyed by mode, never waiting on a probe.

A report reads the cache only (a few milliseconds): results younger than the TTL are used;
otherwise the report says the probes are pending and the caller may start them in the
background (`start_probe`: a detached `dshkit capability --probe`), whose results the next
report uses. The key holds the modes, so a changed mode is never answered from the old
mode's results (the failure was "switched mode, never re-tested":
docs/design/capability.md#a-changed-mode-voids-old-conclusions). The key
also holds the harness and working directory, which decide the configured MCP servers, and
a digest of those servers as their harness would start them or not: a server approved (or
edited) since is probed afresh. Only the servers their harness would start are ever started
(`harnesses.mcp_trust`); the rest are listed as not started.

Reading changes nothing: `report` (and `CapabilityService.cached`, what a GET and a
`dshkit capability` without `--probe` answer) only reads the cache; a probe starts from
`lookup` (the hooks, unless `DSHKIT_CAPABILITY=off`) or `probe` (a POST, `--probe`).

`CapabilityService` is the capability's one face for the surfaces (each call opens its own
store); the functions below it take the caller's store, for the hook that reads facts, looks
them up and records what it delivered in one connection.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

try:  # the interpreter's own SHA-256: hashlib would load OpenSSL first, on a prompt's path
    from _sha256 import sha256
except ImportError:  # (an interpreter without it)
    from hashlib import sha256

from .. import harnesses
from ..paths import dir_key
from ..procs import spawn_detached
from ..store import Store
from .facts import UNKNOWN, Facts, read_facts
from .probes import TOOL_SERVERS, channel, probe_all
from .text import render

if TYPE_CHECKING:
    from ..harnesses.config_files import Server
    from .wire import CachedJson, Channel, LookupJson, ReportJson

TTL_S = 600.0  # results older than this are probed again
PROBE_DEAD_S = 120.0  # a probe started longer ago than this without a result has died


def sandbox_runner(facts: Facts, cwd: str) -> tuple[list[str] | None, str]:
    """How the subprocess and screenshot probes run inside the session's own sandbox: the
    harness's runner for its mode (an argv prefix, and how it is spelled for people), or
    (None, "") where the harness offers none or the mode is unknown."""
    found = harnesses.sandbox(facts.harness)
    if found.runner is None or facts.sandbox == UNKNOWN:
        return None, ""
    prefix = found.runner(facts.sandbox, cwd)
    if prefix is None:
        return None, ""
    return prefix, f"{found.runner_name} ({facts.sandbox})"


def configured_servers(harness: str, cwd: str, errors: list[str]) -> list[Server] | None:
    """The MCP servers configured for `harness` in `cwd`, each its harness would not start
    marked `withheld` (None: the harness is not known, so neither are its servers)."""
    info = harnesses.HARNESSES.get(harness)
    if info is None or info.capability is None:
        return None
    return info.capability.mcp_servers(cwd, errors)


def servers_digest(servers: list[Server] | None) -> str:
    """What the probe of these servers depends on, hashed: each one's spec and whether it
    would be started (not the file it is in: another spelling of the directory is the same)."""
    if servers is None:
        return "unknown"
    fields = ("kind", "name", "transport", "command", "args", "env", "cwd", "url", "headers")
    specs = sorted(
        orjson.dumps([getattr(s, f) for f in (*fields, "withheld")], option=orjson.OPT_SORT_KEYS)
        for s in servers
    )
    digest: str = sha256(b"\n".join(specs)).hexdigest()
    return digest[:16]


def cache_key(facts: Facts, cwd: str, servers: str | None = None) -> str:
    """The key of the results for `facts` in `cwd`; `servers` is the digest of the servers
    (read from the harness's config when None)."""
    if servers is None:
        servers = servers_digest(configured_servers(facts.harness, cwd, []))
    return f"{facts.key};harness={facts.harness};cwd={dir_key(cwd)};servers={servers}"


@dataclass
class Report:
    """What is known of one session's capabilities right now."""

    facts: Facts
    cwd: str
    key: str
    channels: list[Channel] | None  # None: not probed within the TTL (pending)
    probed_at: int | None  # ms since the epoch
    probing: bool  # a probe for this key is running
    errors: list[str] = field(default_factory=list)  # facts that could not be read, and why
    # The last results kept for the key, fresh or expired (None: never probed), and when.
    cached_channels: list[Channel] | None = None
    cached_at: int | None = None
    now_ms: int = 0

    @property
    def pending(self) -> bool:
        return self.channels is None

    @property
    def fresh_until(self) -> int | None:
        """When the results it holds stop being fresh (ms since the epoch; None: it holds
        none): its text says otherwise from then on."""
        return None if self.probed_at is None else self.probed_at + int(TTL_S * 1000)

    @property
    def probe_due(self) -> bool:
        """Nothing fresh and no probe running: asking for the report starts one."""
        return self.pending and not self.probing

    @property
    def text(self) -> str:
        return render(self.facts, self.channels)

    def as_json(self) -> ReportJson:
        return {
            "facts": self.facts.as_json(),
            "cwd": self.cwd,
            "key": self.key,
            "pending": self.pending,
            "probing": self.probing,
            "probedAt": self.probed_at,
            "ttlS": TTL_S,
            "channels": self.channels,
            "cached": self.cached(),
            "errors": self.errors,
            "text": self.text,
        }

    def cached(self) -> CachedJson | None:
        """What the cache holds for the key, fresh or not, and how old it is."""
        if self.cached_at is None:
            return None
        return {
            "at": self.cached_at,
            "ageS": max(0, self.now_ms - self.cached_at) / 1000,
            "fresh": self.channels is not None,
            "channels": self.cached_channels,
        }


def report(
    store: Store, facts: Facts, cwd: str, errors: list[str] | None = None, now: float | None = None
) -> Report:
    """The report from the cache alone: reads, never probes, never writes."""
    key = cache_key(facts, cwd)
    now_ms = int((time.time() if now is None else now) * 1000)
    row = store.db.execute(
        "SELECT at, channels, started FROM capability_probes WHERE key = ?", (key,)
    ).fetchone()
    at, channels, started = row if row else (None, None, None)
    fresh = at is not None and now_ms - at < TTL_S * 1000
    probing = started is not None and now_ms - started < PROBE_DEAD_S * 1000
    kept = orjson.loads(channels) if at is not None and channels else None
    return Report(
        facts,
        cwd,
        key,
        kept if fresh else None,
        at if fresh else None,
        probing,
        list(errors or ()),
        kept,
        at,
        now_ms,
    )


def claim_probe(store: Store, key: str) -> bool:
    """Mark a probe of `key` as started, unless one already runs (decided in one transaction,
    so concurrent hooks start one probe between them)."""
    now_ms = int(time.time() * 1000)
    with store.transaction() as db:
        row = db.execute("SELECT started FROM capability_probes WHERE key = ?", (key,)).fetchone()
        if row and row[0] is not None and now_ms - row[0] < PROBE_DEAD_S * 1000:
            return False
        db.execute(
            "INSERT INTO capability_probes (key, started) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET started = excluded.started",
            (key, now_ms),
        )
    return True


def start_probe(state_dir: Path, facts: Facts, cwd: str) -> None:
    """A detached `dshkit capability --probe` for these facts: the caller does not wait."""
    argv = ["capability", "--probe", "--quiet", "--state-dir", str(state_dir), "--cwd", cwd]
    if facts.harness != UNKNOWN:
        argv += ["--harness", facts.harness]
    argv += ["--mode", facts.sandbox, "--approval", facts.approval]
    argv += ["--permission-mode", facts.permission]
    spawn_detached(*argv)


def probe(store: Store, facts: Facts, cwd: str) -> list[dict[str, Any]]:
    """Probe the three channels now (seconds) and cache the results under the facts' key:
    of the MCP servers, only those the harness would start itself."""
    errors: list[str] = []
    servers = configured_servers(facts.harness, cwd, errors)
    key = cache_key(facts, cwd, servers_digest(servers))
    claim_probe(store, key)
    info = harnesses.HARNESSES.get(facts.harness)
    inside, name = sandbox_runner(facts, cwd)
    label = info.label if info else facts.harness
    channels = probe_all(servers or [], errors, label, inside, name)
    if servers is None:
        unknown = "unknown: the harness is not known, so its configured servers cannot be read"
        channels = [
            c if c["channel"] != TOOL_SERVERS else channel(TOOL_SERVERS, None, unknown)
            for c in channels
        ]
    with store.transaction() as db:
        db.execute(
            "INSERT INTO capability_probes (key, at, channels, started) VALUES (?, ?, ?, NULL) "
            "ON CONFLICT (key) DO UPDATE SET at = excluded.at, channels = excluded.channels, "
            "started = NULL",
            (key, int(time.time() * 1000), orjson.dumps(channels).decode()),
        )
    return channels


def lookup(
    store: Store, facts: Facts, cwd: str, errors: list[str] | None = None, *, now: bool = False
) -> tuple[Report, bool]:
    """The report, probing first when `now`; otherwise a report with nothing fresh starts a
    background probe (unless one runs). Returns it and whether a probe was started."""
    if now:
        probe(store, facts, cwd)
    found = report(store, facts, cwd, errors)
    if found.probe_due and claim_probe(store, found.key):
        start_probe(store.state_dir, facts, cwd)
        return found, True
    return found, False


def given_facts(
    store: Store,
    harness: str | None,
    errors: list[str],
    cwd: str | None = None,
    **modes: str | None,
) -> Facts:
    """The facts a person asks about: what the harness's files say for a session in `cwd`
    (its project's settings too, read as the hook reads them: one code path), with the modes
    they give in its place."""
    payload = {"cwd": cwd} if cwd else {}
    return read_facts(store, harness or UNKNOWN, payload, errors).with_modes(**modes)


@dataclass(frozen=True)
class Lookup:
    """A report, and whether asking for it started a background probe."""

    report: Report
    started: bool

    def as_json(self) -> LookupJson:
        """`dshkit capability --json` and `/api/capability/`."""
        return {**self.report.as_json(), "started": self.started}


class CapabilityService:
    """Every use case of capability facts over one state directory; each call opens its own
    store (waiting at most `busy_timeout` seconds for another process's lock)."""

    def __init__(self, state_dir: Path, *, busy_timeout: float = 30.0) -> None:
        self.state_dir = Path(state_dir)
        self.busy_timeout = busy_timeout

    def _open(self) -> Store:
        return Store(self.state_dir, busy_timeout=self.busy_timeout)

    def read_facts(
        self, harness: str, payload: Mapping[str, Any], errors: list[str] | None = None
    ) -> Facts:
        """The facts of the session a hook payload names (see `facts.read_facts`)."""
        with self._open() as store:
            return read_facts(store, harness, payload, errors)

    def given_facts(
        self,
        harness: str | None,
        errors: list[str] | None = None,
        cwd: str | None = None,
        **modes: str | None,
    ) -> Facts:
        """The facts a person asks about: the harness's files for a session in `cwd`, with
        the modes they give."""
        with self._open() as store:
            return given_facts(store, harness, [] if errors is None else errors, cwd, **modes)

    def lookup(
        self, facts: Facts, cwd: str, errors: list[str] | None = None, *, now: bool = False
    ) -> Lookup:
        """The report of `facts` in `cwd`: probed first when `now` (seconds), otherwise from
        the cache at once, a background probe started when nothing is fresh."""
        with self._open() as store:
            return Lookup(*lookup(store, facts, cwd, errors, now=now))

    def lookup_given(
        self, harness: str | None, cwd: str, modes: dict[str, str | None], *, now: bool = False
    ) -> Lookup:
        """What a person asks (`dshkit capability`, the console): the report of the modes
        given (`sandbox`, `approval`, `permission`; None: as the harness's files say for a
        session in `cwd`) for `harness` in `cwd`, the facts that could not be read among its
        errors. Probed first when `now`; otherwise only read: a read starts no probe."""
        if now:
            return self.probe_given(harness, cwd, modes)
        return self.cached(harness, cwd, modes)

    def cached(self, harness: str | None, cwd: str, modes: dict[str, str | None]) -> Lookup:
        """What the cache holds for the modes given (as `lookup_given` takes them) in `cwd`:
        read only, nothing probed or started, nothing written (a GET's answer)."""
        with self._open() as store:
            errors: list[str] = []
            facts = given_facts(store, harness, errors, cwd, **modes)
            return Lookup(report(store, facts, cwd, errors), False)

    def probe_given(self, harness: str | None, cwd: str, modes: dict[str, str | None]) -> Lookup:
        """Probe the modes given in `cwd` now (seconds), then their report (a POST's)."""
        with self._open() as store:
            errors: list[str] = []
            facts = given_facts(store, harness, errors, cwd, **modes)
            probe(store, facts, cwd)
            return Lookup(report(store, facts, cwd, errors), False)

    def probe(self, facts: Facts, cwd: str) -> list[dict[str, Any]]:
        """Probe the three channels now (seconds) and cache the results."""
        with self._open() as store:
            return probe(store, facts, cwd)
