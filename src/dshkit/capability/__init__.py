"""Capability facts (seed 000 §0⁗): what a session can really do, probed, never guessed.

`facts` reads the session's modes from where its harness reports them (`unknown` otherwise);
`probes` tests the three channels for real (subprocess, headless-browser screenshot, the
configured MCP servers, `mcp`); `service` caches results per mode and answers at once, the
probes running in the background; `text` renders it all as the Chinese the agent reads.
"""

from __future__ import annotations

from .facts import UNKNOWN, Facts, read_facts
from .service import (
    TTL_S,
    CapabilityService,
    Report,
    claim_probe,
    given_facts,
    lookup,
    probe,
    report,
    start_probe,
)

__all__ = [
    "TTL_S",
    "UNKNOWN",
    "CapabilityService",
    "Facts",
    "Report",
    "claim_probe",
    "given_facts",
    "lookup",
    "probe",
    "read_facts",
    "report",
    "start_probe",
]
