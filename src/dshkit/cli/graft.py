"""`dshkit graft …`: context handoff; `status` shows a session's watermark and the decision now,
`prepare` the handoff it would get (task board, constraints, first message), read-only;
`audit`, `debug-status` and `handoffs` show what happened and what is under way (read-only),
`recover` finishes or rolls back what a stopped process left unfinished, `cancel` withdraws a
pending or stuck handoff and `release` un-retires a handed-off source on purpose (audited);
`exclude` / `include` keep a session from the forced cut or give it back, and `ignition`
shows or sets whether a handoff starts its new session at once (audited)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import orjson
from rich.table import Table
from rich.text import Text

from ..graft import (
    AUDIT_LIMIT,
    Exclusions,
    GraftService,
    Panel,
    SessionPart,
    State,
    Txn,
    transcript_sources,
)
from ..graft.wire import DecisionJson, ForceFailureJson, OutcomeJson, PressureJson, TxnJson
from ..memory.wire import MemoryCountsJson
from ..sessions import Refresh, Source
from ..store import SQLITE_INT_MAX
from .common import (
    HARNESSES,
    ID,
    json_option,
    open_app,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stderr,
    stdout,
    when,
)
from .errors import EXIT_FAILED


def _service(state_dir: str | None, sources: Sequence[Source] | None = None) -> GraftService:
    return open_app(state_dir, sources).graft


@click.group()
def graft() -> None:
    """Context handoff: when a session should hand off to a fresh one."""


@graft.command("status")
@click.option(
    "--session", "session_id", type=ID, required=True, help="A session id or a unique prefix."
)
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def status(session_id: str, harness: str | None, state_dir: str | None, as_json: bool) -> None:
    """The session's context pressure (and its source), watermark and the decision now.

    Read-only: reads what the last scan stored, and records nothing.
    """
    service = _service(state_dir)
    shown = service.status(session_id, harness).as_json()
    if as_json:
        print_json(shown)
        return
    head = [("session", f"{shown['harness']} {shown['session']}")]
    if shown["excludedFromForcedCut"]:
        head.append(("forced cut", "excluded by a person (`dshkit graft include` undoes it)"))
    _print_decision(shown, head)
    if shown["settingsError"]:
        stdout.print(Text(f"settings refused: {shown['settingsError']}", style="red"))
    _print_outcome(shown["handoff"], shown["forcedCutFailure"])


def _print_outcome(outcome: OutcomeJson | None, failed: ForceFailureJson | None) -> None:
    """What became of the session's latest handoff, and failing forced cuts (status)."""
    if outcome is None:
        stdout.print("handoff: none from this session")
    else:
        launch = ", ".join(f"{name} {outcome[name]}" for name in ("model", "mode") if outcome[name])
        started = f" (started with {launch})" if launch and outcome["targetSessionId"] else ""
        stalled = "; no live process drives it: `dshkit graft recover` or `graft cancel`"
        stdout.print(
            Text(
                f"handoff #{outcome['txnId']} {outcome['state']}: {outcome['summary']}{started}"
                + (stalled if outcome["stalled"] else "")
                + ("; the source was released on purpose" if outcome["released"] else "")
            )
        )
    if failed is not None:
        stdout.print(
            Text(
                f"forced cut failed {failed['failures']} time(s) in a row, last at "
                f"{when(failed['at'])}: {failed['error']}; next try not before "
                f"{when(failed['retryAt'])}; the model "
                + ("was told to carry on" if failed["told"] else "has not been told yet"),
                style="red",
            )
        )


def _print_decision(decision: DecisionJson, head: list[tuple[str, str]]) -> None:
    """A decision's pressure, watermark and action as a table after the rows `head`, then what
    is wrong with the configuration and what the model would be told (status, debug-status)."""
    pressure, mark = decision["pressure"], decision["watermark"]
    table = Table(box=None, show_header=False)
    used = "unavailable (no usage reported yet)"
    if pressure["tokens"] is not None and pressure["ratio"] is not None:
        used = f"{pressure['tokens']:,} tokens ({pressure['ratio']:.1%})"
    rows = [
        *head,
        ("context in use", f"{used}, source: {pressure['source']}"),
        ("model", pressure["model"] or "not named in the log"),
        ("window", f"{pressure['window']:,} tokens ({_window_from(pressure)})"),
        ("watermark mode", mark["mode"]),
        ("warning at", _ratio(mark["warning"], "no warning window")),
        ("forced cut at", _ratio(mark["forced"], "no forced cut")),
        ("handoff fits", "yes" if mark["feasible"] else "no: the window cannot hold a handoff"),
        ("decision", f"{decision['action']}: {decision['reason']}"),
    ]
    cost = mark["cost"]
    if cost is not None:
        rows.insert(
            len(head) + 4,  # after the watermark mode
            (
                "handoff cost",
                f"{cost['totalTokens']:,} tokens ({cost['handoffTokens']:,} handoff + "
                f"{cost['reserveTurns']} turns × {cost['tokensPerTurn']:,} "
                f"{_GROWTH_FROM[cost['tokensPerTurnSource']]})",
            ),
        )
    for key, value in rows:
        table.add_row(key, Text(value))
    stdout.print(table)
    if mark["configError"]:
        stdout.print(Text(f"configuration error: {mark['configError']}", style="red"))
    if decision["text"]:
        stdout.print(Text(f"the model would be told: {decision['text']}"))


_GROWTH_FROM = {"history": "seen in recent turns", "config": "assumed by the config"}


def _window_from(pressure: PressureJson) -> str:
    model = pressure["model"]
    if pressure["windowSource"] == "log":
        return "announced by the log"
    if pressure["windowSource"] == "model-config":
        return f"[graft.windows] for {model}"
    unlisted = f", {model} not in [graft.windows]" if model else ""
    return f"[graft] window_tokens{unlisted}"


def _ratio(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.1%}"


@graft.command("prepare")
@click.option(
    "--session", "session_id", type=ID, required=True, help="A session id or a unique prefix."
)
@roots_option
@state_dir_option
@json_option
def prepare(
    session_id: str,
    roots: tuple[Path, ...],
    harness: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """The handoff SESSION would get now: task board, hard constraints and first message.

    Scans the roots first, then builds the handoff from the session's own events. Nothing is
    started or retired. Exit 1 with GRAFT_ABORTED when the person's rules do not fit whole.
    """
    service = _service(state_dir, sources_for(roots, harness))
    handoff = service.prepare(session_id, harness, refresh=Refresh.WAIT)
    if as_json:
        print_json(handoff.as_json())
        return
    stdout.print(Text(handoff.first_message))


@graft.command("audit")
@click.option(
    "--session",
    "session_id",
    type=ID,
    default=None,
    help="Only this session's records (its id).",
)
@click.option(
    "--limit",
    type=click.IntRange(1, AUDIT_LIMIT),
    default=100,
    show_default=True,
    help="Show the latest this many records.",
)
@state_dir_option
@json_option
def audit(session_id: str | None, limit: int, state_dir: str | None, as_json: bool) -> None:
    """The audit trail of graft's decisions and handoff steps, oldest first.

    How many older records the limit left out is said on stderr.
    """
    page = _service(state_dir).audit(limit, session_id)
    if as_json:
        print_json([record.as_json() for record in page.records])
    elif not page.records:
        stdout.print("no audit records" + (f" of session {session_id}" if session_id else ""))
    else:
        table = Table("time (UTC)", "kind", "harness", "session", "handoff", "detail", box=None)
        for record in page.records:
            table.add_row(
                when(record.at),
                record.kind,
                record.harness or "-",
                Text(record.session_id or "-"),
                _txn(record.txn_id),
                Text(_summary(record.detail)),
            )
        stdout.print(table)
    if page.more:
        stderr.print(
            f"{page.more} older record(s) not shown: raise --limit (now {limit}, at most "
            f"{AUDIT_LIMIT})",
            markup=False,
        )


def _summary(detail: dict[str, Any]) -> str:
    return ", ".join(
        f"{key}={value}" if isinstance(value, str) else f"{key}={orjson.dumps(value).decode()}"
        for key, value in detail.items()
    )


def _txn(txn_id: int | None) -> str:
    return "-" if txn_id is None else f"#{txn_id}"


@graft.command("debug-status")
@click.option(
    "--session",
    "session_id",
    type=ID,
    default=None,
    help="Also this session: an id or a unique prefix.",
)
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=str, resolve_path=True),
    default=None,
    help="Count memory records as of this workspace (a directory in it): same, other, none.",
)
@state_dir_option
@json_option
def debug_status_command(
    session_id: str | None,
    harness: str | None,
    workspace: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """What graft is doing: unfinished handoffs and whether a live process drives each, the
    counts of transferring and retired sources and of targets, pending handoffs and notices not
    yet shown; with --session, also its watermark, retirement and handoffs.

    Read-only: recovers nothing, shows no notice to its session, takes no lease.
    """
    if harness is not None and session_id is None:
        raise click.UsageError("--harness narrows --session: give --session too")
    # Memory's counts beside the handoffs' (the panel of both, as one read).
    panel = open_app(state_dir).debug_status(session_id, harness, workspace)
    if as_json:
        print_json(panel)
        return
    if panel["session"] is not None:
        _print_session(panel["session"])
    _print_panel(panel)
    _print_memory(panel["memory"])


def _print_memory(counts: MemoryCountsJson) -> None:
    stdout.print(
        f"memory: {counts['skills']} skills, {counts['negative']} negative paths, "
        f"{counts['facts']} facts, {counts['experiences']} experiences; {counts['queue']} "
        f"skill proposals waiting, {counts['quarantined']} quarantined"
    )
    place = counts.get("workspace")
    if place is not None:
        stdout.print(
            Text(
                f"memory of {place['root']}: {place['same']} here, {place['cross']} of other "
                f"workspaces, {place['noProvenance']} without provenance"
            )
        )


def _print_session(part: SessionPart) -> None:
    head = [("session", f"{part['harness']} {part['sessionId']}"), ("cwd", part["cwd"] or "-")]
    if part["decision"] is not None:
        _print_decision(part["decision"], head)
    else:
        stdout.print(Text(f"session {part['harness']} {part['sessionId']}"))
        stdout.print(Text(f"watermark unavailable: {part['settingsError']}", style="red"))
    retired = part["retirement"]
    if retired is None:
        stdout.print("retirement: none (the session takes work)")
    else:
        target = retired["targetSessionId"] or (
            "the next session started there" if retired["pending"] else "not known yet"
        )
        stdout.print(
            Text(
                f"retirement: {retired['kind']} by handoff #{retired['txnId']} to "
                f"{retired['targetHarness']} {target}; continue with: "
                f"{retired['command'] or 'no command (the target cannot be resumed)'}"
            )
        )
    _print_outcome(part["handoff"], part["forcedCutFailure"])
    if part["targetOf"]:
        born = ", ".join(f"#{txn}" for txn in part["targetOf"])
        stdout.print(f"carries on the work of handoff {born}")
    if part["handoffs"]:
        stdout.print("[bold]Its handoffs[/]")
        _print_txns(part["handoffs"])
    else:
        stdout.print("no handoffs from this session")
    for notice in part["notices"]:
        stdout.print(Text(f"owed notice (handoff #{notice['txnId']}): {notice['text']}"))
    stdout.print()


def _print_panel(panel: Panel) -> None:
    unfinished = panel["transactions"]
    if unfinished:
        stdout.print(f"[bold]Unfinished handoffs ({len(unfinished)})[/]")
        table = Table("#", "source", "state", "age", "attempts", "driven by", box=None)
        for txn in unfinished:
            driver = txn["driver"]
            table.add_row(
                f"#{txn['id']}",
                Text(f"{txn['harness']} {txn['sessionId']}"),
                txn["state"],
                _age(txn["ageMs"]),
                str(txn["attempts"]),
                f"pid {driver}" if driver else "no live process (`dshkit graft recover` takes it)",
            )
        stdout.print(table)
    else:
        stdout.print("no unfinished handoffs")
    counts = panel["counts"]
    by_state = ", ".join(f"{state} {n}" for state, n in counts["byState"].items() if n)
    stdout.print(
        f"sources transferring: {counts['transferring']}, retired: {counts['retired']}; "
        f"targets: {counts['targets']}; handoffs by state: {by_state or 'none'}"
    )
    if panel["pending"]:
        stdout.print(f"[bold]Pending handoffs ({len(panel['pending'])})[/]")
        table = Table("#", "source", "waits for", "in", "age", box=None)
        for row in panel["pending"]:
            table.add_row(
                f"#{row['txnId']}",
                Text(f"{row['harness']} {row['sessionId']}"),
                f"the next {row['targetHarness']} session",
                Text(row["cwd"]),
                _age(row["ageMs"]),
            )
        stdout.print(table)
    else:
        stdout.print("no pending handoffs")
    notices = panel["notices"]
    stdout.print(f"notices not yet shown: {len(notices) or 'none'}")
    for notice in notices:
        stdout.print(
            Text(f"  {notice['harness']} {notice['sessionId']} (handoff #{notice['txnId']})")
        )
    ignition = panel["ignition"]
    where = "your choice" if ignition["chosen"] is not None else "config.toml"
    stdout.print(f"ignition: {'on' if ignition['ignite'] else 'off'} ({where})")
    kept = panel["exclusions"]
    stdout.print(f"kept from the forced cut: {len(kept) or 'none'}")
    for each in kept:
        stdout.print(Text(f"  {each['harness']} {each['sessionId']}"))
    stale = panel["staleLeases"]
    stdout.print(f"stale locks (`dshkit graft recover` reclaims graft's): {len(stale) or 'none'}")
    for lease in stale:
        stdout.print(Text(f"  {lease['name']}: pid {lease['pid']}, {lease['why']}"))
    if panel["settingsError"]:
        stdout.print(Text(f"settings refused: {panel['settingsError']}", style="red"))


def _age(ms: int) -> str:
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"


def _print_txns(txns: Sequence[TxnJson]) -> None:
    table = Table(
        "#", "source", "target", "state", "attempts", "created (UTC)", "updated", box=None
    )
    table.add_column("last error")
    for txn in txns:
        target = txn["targetSessionId"] or "-"
        table.add_row(
            f"#{txn['id']}",
            Text(f"{txn['harness']} {txn['sessionId']}"),
            Text(f"{txn['targetHarness']} {target}"),
            txn["state"],
            str(txn["attempts"]),
            when(txn["createdAt"]),
            when(txn["updatedAt"]),
            Text(txn["lastError"] or "-"),
        )
    stdout.print(table)


@graft.command("recover")
@state_dir_option
@json_option
def recover_command(state_dir: str | None, as_json: bool) -> None:
    """Finish or roll back every unfinished handoff no live process drives.

    A handoff whose target was started is committed; one whose target cannot be started
    (attempts spent, directory gone) is rolled back and its source works again. This may start
    a target through its harness's CLI and wait for it. Handoffs a live process drives are left
    to it.
    """
    service = _service(state_dir)
    ended = service.recover()
    if as_json:
        print_json(ended.as_json())
        return
    if not ended.recovered:
        stdout.print("nothing to recover")
    for txn in ended.recovered:
        stdout.print(
            Text(f"handoff #{txn.id} of {txn.plan.harness} {txn.plan.session_id}: {_ending(txn)}")
        )
    if ended.driven:
        stdout.print(f"driven by live processes: {', '.join(f'#{txn}' for txn in ended.driven)}")


def _ending(txn: Txn) -> str:
    if txn.state == State.COMMITTED:
        command = txn.continue_command()
        go_on = f"; continue it with: {command}" if command else ""
        return f"committed, target {txn.plan.target} {txn.target_id}{go_on}"
    if txn.state == State.PENDING:
        return "pending: waits for the next session started in its directory"
    return f"{txn.state.lower().replace('_', ' ')}: {txn.last_error}"


@graft.command("handoffs")
@state_dir_option
@json_option
def handoffs(state_dir: str | None, as_json: bool) -> None:
    """Every handoff, newest first: source, target, state, attempts, when."""
    txns = _service(state_dir).handoffs().as_json()
    if as_json:
        print_json(txns)
    elif txns:
        _print_txns(txns)
    else:
        stdout.print("no handoffs")


@graft.command("slice")
@click.option(
    "--session", "session_id", type=ID, required=True, help="A session id or a unique prefix."
)
@click.option(
    "--transcript",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The session's own log: its harness and root are read from it (as a hook gives it).",
)
@roots_option
@click.option(
    "--forced-mark",
    default=None,
    help="JSON of a forced cut after an ignored warning (the card says the model was cut).",
)
@click.option("--allow-reslice", is_flag=True, help="Hand off a session that handed off before.")
@click.option(
    "--forced",
    is_flag=True,
    hidden=True,  # the watermark's forced cut: its failure is recorded for the model and status
)
@click.option(
    "--background", is_flag=True, help="Begin the handoff, then start the target detached."
)
@state_dir_option
@json_option
def slice_command(
    session_id: str,
    transcript: Path | None,
    roots: tuple[Path, ...],
    harness: str | None,
    forced_mark: str | None,
    allow_reslice: bool,
    forced: bool,
    background: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Hand SESSION off now: build its handoff, start the new session, retire this one.

    The handoff is built at this moment from the session's log. From the moment it begins the
    session takes no new prompt or tool call (its hooks refuse them with a pointer). The new
    session is started by the harness's own CLI in the same directory ([graft] ignite_target;
    off: the next session started there picks the handoff up). When it cannot be started the
    handoff is rolled back and the session works again, and the command exits 1.
    """
    mark = _json_object(forced_mark, "--forced-mark") if forced_mark else None
    sources = transcript_sources(transcript) if transcript else sources_for(roots, harness)
    service = _service(state_dir, sources)
    sliced = service.slice(
        session_id,
        harness,
        forced_mark=mark,
        allow_reslice=allow_reslice,
        forced=forced,
        drive="detached" if background else "now",
        refresh=Refresh.WAIT,
    )
    txn = sliced.txn
    if as_json:
        print_json(sliced.as_json())
    else:
        stdout.print(Text(f"handoff #{txn.id} of {txn.plan.harness} {txn.plan.session_id}: "))
        stdout.print(Text(_ending(txn) if not background else "begun; the target starts detached"))
    _exit_for(txn)


@graft.command("drive")
@click.option(
    "--txn",
    "txn_id",
    type=click.IntRange(0, SQLITE_INT_MAX),  # a larger number is no handoff's
    required=True,
    help="The handoff's number.",
)
@state_dir_option
@json_option
def drive_command(txn_id: int, state_dir: str | None, as_json: bool) -> None:
    """Carry a begun handoff to its end: start and verify its target, or roll it back (then
    exit 1)."""
    service = _service(state_dir)
    txn = service.drive(txn_id)
    if as_json:
        print_json(txn.as_json())
    else:
        stdout.print(Text(f"handoff #{txn.id}: {_ending(txn)}"))
    _exit_for(txn)


@graft.command("cancel")
@click.option(
    "--txn",
    "txn_id",
    type=click.IntRange(0, SQLITE_INT_MAX),
    required=True,
    help="The handoff's number (`dshkit graft handoffs`).",
)
@click.option("--reason", default=None, help="Why, for the audit trail.")
@state_dir_option
@json_option
def cancel_command(txn_id: int, reason: str | None, state_dir: str | None, as_json: bool) -> None:
    """Withdraw a handoff whose new session has not started (pending, stuck, or starting):
    the source works again and is told so once. Audited (`handoff-cancelled`).

    One a live process is starting is withdrawn by it, before its next step (exit 4, busy, if
    it has not within 15 s: the request stands); one whose new session started cannot be
    cancelled (release its source instead).
    """
    txn = _service(state_dir).cancel(txn_id, by="cli", reason=reason)
    if as_json:
        print_json(txn.as_json())
    else:
        stdout.print(
            Text(
                f"handoff #{txn.id} cancelled: {txn.plan.harness} {txn.plan.session_id} works again"
            )
        )


@graft.command("release")
@click.option("--session", "session_id", type=ID, required=True, help="The retired source's id.")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option("--reason", default=None, help="Why, for the audit trail.")
@state_dir_option
@json_option
def release_command(
    session_id: str, harness: str | None, reason: str | None, state_dir: str | None, as_json: bool
) -> None:
    """Un-retire a source whose handoff committed, on purpose: it takes prompts and tool calls
    again and is told so once; the new session stays as it is. Audited (`source-released`).
    """
    txn = _service(state_dir).release(session_id, harness, by="cli", reason=reason)
    if as_json:
        print_json(txn.as_json())
    else:
        stdout.print(
            Text(
                f"{txn.plan.harness} {txn.plan.session_id} released: it takes work again "
                f"(handoff #{txn.id}'s target {txn.target_id} is left as it is)"
            )
        )


def _exclusion_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options `graft exclude` and `graft include` share: the session (as the argument or
    `--session`), its harness, the reason for the audit trail, the state dir, `--json`."""
    for option in reversed(
        (
            click.argument("session", type=ID, required=False),
            click.option(
                "--session",
                "session_id",
                type=ID,
                default=None,
                help="A session id or a unique prefix (or the exact id of a handoff's source); "
                "or give it as the argument.",
            ),
            click.option("--harness", type=click.Choice(HARNESSES), default=None),
            click.option("--reason", default=None, help="Why, for the audit trail."),
            state_dir_option,
            json_option,
        )
    ):
        command = option(command)
    return command


@graft.command("exclude")
@_exclusion_options
def exclude_command(
    session: str | None,
    session_id: str | None,
    harness: str | None,
    reason: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Keep a session from the forced cut: its model is still warned (without end: the band
    runs to 100%), but dshkit never hands it off by itself. Audited (`forced-cut-excluded`);
    `graft include` undoes it."""
    named = _one_session(session, session_id)
    _print_exclusions(
        _service(state_dir).exclude(named, harness, keep=True, by="cli", reason=reason), as_json
    )


@graft.command("include")
@_exclusion_options
def include_command(
    session: str | None,
    session_id: str | None,
    harness: str | None,
    reason: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Give a session excluded from the forced cut back to it. Audited
    (`forced-cut-included`)."""
    named = _one_session(session, session_id)
    _print_exclusions(
        _service(state_dir).exclude(named, harness, keep=False, by="cli", reason=reason), as_json
    )


def _one_session(argument: str | None, option: str | None) -> str:
    """The session named once, as the argument or with --session."""
    if (argument is None) == (option is None):
        raise click.UsageError(
            "name the session once: as the argument or with --session"
            + (" (not both)" if argument is not None else "")
        )
    return str(argument if argument is not None else option)


@graft.command("exclusions")
@state_dir_option
@json_option
def exclusions_command(state_dir: str | None, as_json: bool) -> None:
    """The sessions kept from the forced cut (read-only)."""
    _print_exclusions(_service(state_dir).exclusions(), as_json)


def _print_exclusions(found: Exclusions, as_json: bool) -> None:
    if as_json:
        print_json(found.as_json())
        return
    if not found.sessions:
        stdout.print("No session is kept from the forced cut.")
        return
    table = Table("session", "since", "by", "reason")
    for each in found.sessions:
        table.add_row(
            Text(f"{each.harness} {each.session_id}"),
            when(each.at),
            each.by,
            Text(each.reason or ""),
        )
    stdout.print(table)


@graft.command("ignition")
@click.argument("switch", type=click.Choice(["on", "off", "config"]), required=False)
@click.option(
    "--set",
    "choice",
    type=click.Choice(["on", "off", "config"]),
    default=None,
    help="on: a handoff starts its new session at once; off: it waits for the next session "
    "started in its directory; config: back to `[graft] ignite_target`.",
)
@state_dir_option
@json_option
def ignition_command(
    switch: str | None, choice: str | None, state_dir: str | None, as_json: bool
) -> None:
    """Whether a handoff starts its new session at once (the console's switch), and where that
    comes from; with SWITCH (or --set) on, off or config, change it (audited
    `ignition-switched`)."""
    if switch is not None and choice is not None and switch != choice:
        raise click.UsageError(f"two settings given: {switch} and --set {choice}")
    choice = choice or switch
    service = _service(state_dir)
    if choice is None:
        shown = service.ignition()
    else:
        shown = service.set_ignition({"on": True, "off": False, "config": None}[choice], by="cli")
    if as_json:
        print_json(shown)
        return
    where = "your choice" if shown["chosen"] is not None else "config.toml [graft] ignite_target"
    what = "starts its new session at once" if shown["ignite"] else "waits for the next session"
    stdout.print(Text(f"a handoff {what} ({where})"))


def _exit_for(txn: Txn) -> None:
    """A handoff that ended rolled back or failed is not done: exit 1 (its state and error
    were printed, as JSON under --json)."""
    if txn.state in (State.ROLLED_BACK, State.FAILED):
        click.get_current_context().exit(EXIT_FAILED)


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=option) from None
    if not isinstance(value, dict):
        raise click.BadParameter("expected a JSON object", param_hint=option)
    return value
