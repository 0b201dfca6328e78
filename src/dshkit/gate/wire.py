"""The JSON shapes of the delivery gate's results: one TypedDict per shape (`dshkit gate --json`,
the MCP tool `gate_check` and `/api/gate/` alike)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class VerdictSummaryJson(TypedDict):
    """The measured verdict (`dshkit gate --json`, the MCP tool `gate_check`): its name,
    whether the page recovered, how long judging took, the screenshot's path, what each
    canvas showed, the distinct errors and the text of a fatal overlay."""

    verdict: str
    recovered: bool
    elapsedMs: int
    screenshot: str | None
    canvas: list[dict[str, Any]]
    errors: list[str]
    overlayText: str | None


class VerdictEvidenceJson(VerdictSummaryJson):
    """Everything measured, as stored: the summary, the file and its digest, the timings,
    each sample's state, the error count, the loads refused, what was seen where and when
    (`{kind, what, where, atMs, count}`), and the report for people."""

    path: str
    sha256: str
    timings: dict[str, Any]
    history: list[str]
    errorCount: int
    blocked: list[dict[str, Any]]
    blockedMore: int
    findings: list[dict[str, Any]]
    report: list[str]


class StoredVerdictJson(TypedDict):
    """One stored verdict as read back: its id and time, then its evidence as the dshkit
    that judged it stored it (keys only ever get added: an older verdict lacks the newer
    ones), `findings` and `report` always there."""

    id: int
    at: int
    verdict: NotRequired[str]
    recovered: NotRequired[bool]
    elapsedMs: NotRequired[int]
    screenshot: NotRequired[str | None]
    canvas: NotRequired[list[dict[str, Any]]]
    errors: NotRequired[list[str]]
    overlayText: NotRequired[str | None]
    path: NotRequired[str]
    sha256: NotRequired[str]
    timings: NotRequired[dict[str, Any]]
    history: NotRequired[list[str]]
    errorCount: NotRequired[int]
    blocked: NotRequired[list[dict[str, Any]]]
    blockedMore: NotRequired[int]
    findings: list[dict[str, Any]]
    report: list[str]


class VerdictsJson(TypedDict):
    """The latest verdicts, newest first, each with its id, time and stored evidence."""

    verdicts: list[StoredVerdictJson]


class ReworkStateJson(TypedDict):
    """Whether a session's gate failures go back to it, and where that comes from ("config":
    `[gate] rework`; "session": switched for this session)."""

    harness: str
    session: str
    rework: bool
    source: str
