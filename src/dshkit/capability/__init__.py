"""Capability facts: what a session can really do, probed, never guessed
(docs/design/capability.md#measure-never-guess).

`facts` reads the session's modes from where its harness reports them (`unknown` otherwise);
`probes` tests the three channels for real (subprocess, headless-browser screenshot, the
configured MCP servers, `mcp`); `service` caches results per mode and answers at once, the
probes running in the background; `text` renders it all as the Chinese the agent reads.

`CapabilityService` (`service`) is the one face the surfaces call. The names below are
imported on first use: the hook that reads facts on a session's first prompt does not pay
for the probes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # the real names, for type checkers
    from .facts import UNKNOWN, Facts, read_facts
    from .service import (
        TTL_S,
        CapabilityService,
        Lookup,
        Report,
        claim_probe,
        given_facts,
        lookup,
        probe,
        report,
        start_probe,
    )

_HOMES = {
    "UNKNOWN": "facts",
    "Facts": "facts",
    "read_facts": "facts",
    "TTL_S": "service",
    "CapabilityService": "service",
    "Lookup": "service",
    "Report": "service",
    "claim_probe": "service",
    "given_facts": "service",
    "lookup": "service",
    "probe": "service",
    "report": "service",
    "start_probe": "service",
}
__all__ = [
    "TTL_S",
    "UNKNOWN",
    "CapabilityService",
    "Facts",
    "Lookup",
    "Report",
    "claim_probe",
    "given_facts",
    "lookup",
    "probe",
    "read_facts",
    "report",
    "start_probe",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
