"""`dshkit memory …`: what sessions learned, per workspace. `list`, `show` and `search` read
records (with their times and sources), `inject` prints exactly what a new session in a
directory would be given, `harvest` reads sessions into memory, `forget` deletes a record,
`quarantine` lists, sets or lifts quarantines, `skills` / `accept` / `reject` review the
skill drafts (a draft is written into a harness's skills folder only when accepted), and
`review` the records waiting for the person (`[memory] confirm`), `rekey` moves a
workspace's memory to where its folder went."""

from __future__ import annotations

import os
import re
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from ..memory import KINDS, HarvestReport, MemoryService, RecordList, RecordView, Workspace
from ..memory.wire import ReviewJson
from ..sessions import Refresh, SessionInfo
from .common import (
    HARNESSES,
    ID,
    ROW,
    json_option,
    open_app,
    print_json,
    state_dir_option,
    stderr,
    stdout,
    visible,
    when,
)


def _service(state_dir: str | None) -> MemoryService:
    return open_app(state_dir).memory


def _where(service: MemoryService, cwd: str | None, workspace: str | None) -> Workspace:
    if cwd is not None and workspace is not None:
        raise click.UsageError("give --cwd or --workspace, not both")
    return service.workspace(cwd=cwd, root=workspace)


def _workspace_options(func: Any) -> Any:
    func = click.option(
        "--workspace",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        help="A workspace's root directory (as `list` shows it).",
    )(func)
    return click.option(
        "--cwd",
        type=click.Path(file_okay=False, path_type=str, resolve_path=True),
        default=None,
        help="A directory: its workspace [default: the current directory].",
    )(func)


@click.group()
def memory() -> None:
    """What sessions learned, kept per workspace and given to the next session there."""


class _Time(click.ParamType[int]):
    """A time: an ISO 8601 date or date and time (UTC unless it names its zone), or
    milliseconds since the epoch; given to the service as milliseconds."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if text.isdigit():
            return int(text)
        from datetime import UTC, datetime

        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{text!r} is not an ISO 8601 time nor milliseconds", param, ctx)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)


@memory.command("list")
@_workspace_options
@click.option("--all-workspaces", is_flag=True, help="Records of every workspace.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only these kinds.")
@click.option("--history", is_flag=True, help="Superseded records too.")
@click.option(
    "--as-of",
    type=_Time(),
    default=None,
    help="The records current at this time (ISO 8601, UTC unless zoned; or ms).",
)
@click.option(
    "--known-at",
    type=_Time(),
    default=None,
    help="With --as-of: as the store knew it at this time [default: now].",
)
@click.option("--limit", type=int, default=200, show_default=True)
@state_dir_option
@json_option
def list_records(
    cwd: str | None,
    workspace: str | None,
    all_workspaces: bool,
    kinds: tuple[str, ...],
    history: bool,
    as_of: int | None,
    known_at: int | None,
    limit: int,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """The workspace's records, newest first (current ones unless --history or --as-of)."""
    if known_at is not None and as_of is None:
        raise click.UsageError("--known-at goes with --as-of")
    service = _service(state_dir)
    where = None if all_workspaces else _where(service, cwd, workspace)
    found = service.records(
        where,
        kinds=kinds or KINDS,
        history=history,
        limit=limit,
        as_of=as_of,
        known_at=known_at,
    )
    if as_json:
        print_json(found.as_json())
        return
    _print_list(found)


def _print_list(found: RecordList) -> None:
    if found.workspace is not None:
        remote = f" ({found.workspace.remote})" if found.workspace.remote else ""
        stdout.print(f"workspace: {escape(found.workspace.root)}{escape(remote)}")
    if not found.records:
        stdout.print("no records")
        return
    for record in found.records:
        marks = []
        if not found.current.get(record.id, True):
            marks.append(f"superseded by {record.superseded_by}")
        if record.quarantined:
            marks.append("QUARANTINED")
        if record.state:
            marks.append(record.state)
        mark = f" [{', '.join(marks)}]" if marks else ""
        line = visible(
            f"{record.id:>5}  {record.kind:<10} {record.grade:<6} {when(record.valid_from)}  "
            f"{record.source}{mark}\n       {record.text}"
        )
        stdout.print(line)


@memory.command("show")
@click.argument("record", type=ROW)
@state_dir_option
@json_option
def show(record: int, state_dir: str | None, as_json: bool) -> None:
    """One record whole: its text, detail, times, source and supersessions."""
    view = _service(state_dir).get(record)
    if as_json:
        print_json(view.as_json())
        return
    _print_view(view)


def _print_view(view: RecordView) -> None:
    r = view.record
    rows = [
        ("id", str(r.id)),
        ("kind", r.kind),
        ("workspace", r.workspace + (f" ({r.remote})" if r.remote else "")),
        ("source", f"{r.source} (grade {r.grade})"),
        ("valid", f"{when(r.valid_from)} → {when(r.valid_to) if r.valid_to else 'now'}"),
        (
            "recorded",
            f"{when(r.recorded_at)}" + (f", expired {when(r.expired_at)}" if r.expired_at else ""),
        ),
        ("current", "yes" if view.current else f"no (superseded by {r.superseded_by})"),
    ]
    if r.quarantined:
        rows.append(("quarantined", r.quarantine_reason or "yes"))
    if r.state:
        rows.append(("state", r.state))
    for name, value in rows:
        stdout.print(visible(f"{name:>11}: {value}"))
    stdout.print(visible(f"\n{r.text}\n"))
    for key, value in r.detail.items():
        if key != "draft":
            stdout.print(visible(f"  {key}: {value}"))
    if "draft" in r.detail:
        stdout.print(visible(f"\n{r.detail['draft']}"))
    for old in view.supersedes:
        stdout.print(
            visible(
                f"supersedes {old.id} ({when(old.valid_from)} → {when(old.valid_to)}): {old.text}"
            )
        )


@memory.command("search")
@click.argument("query")
@_workspace_options
@click.option("--all-workspaces", is_flag=True, help="Search every workspace.")
@click.option("--limit", type=int, default=20, show_default=True)
@state_dir_option
@json_option
def search(
    query: str,
    cwd: str | None,
    workspace: str | None,
    all_workspaces: bool,
    limit: int,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Records whose text holds every word of QUERY (history included), best first."""
    service = _service(state_dir)
    where = None if all_workspaces else _where(service, cwd, workspace)
    found = service.search(query, where, limit=limit)
    if as_json:
        print_json(found.as_json())
        return
    _print_list(found)


@memory.command("inject")
@_workspace_options
@click.option("--request", default="", help="The session's first request, when known.")
@state_dir_option
@json_option
def inject(
    cwd: str | None, workspace: str | None, request: str, state_dir: str | None, as_json: bool
) -> None:
    """Exactly what a new session in the directory would be given (nothing is delivered)."""
    app = open_app(state_dir)
    service = app.memory
    # The profile comes first in the same answer: memory takes the room it leaves.
    shown = service.inject(_where(service, cwd, workspace), request, app.profile.effective().text)
    if as_json:
        print_json(shown.as_json())
        return
    stdout.print(visible(shown.chosen.text) if shown.chosen.text else "nothing would be given")


@memory.command("harvest")
@click.option(
    "--session",
    "sessions",
    type=ID,
    multiple=True,
    help="A session id or unique prefix (repeatable).",
)
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option("--all", "every", is_flag=True, help="Every session changed since its harvest.")
@click.option(
    "--refresh",
    type=click.Choice([r.value for r in Refresh]),
    default="try",
    show_default=True,
    help="Scan first: none, try (unless a scan is running), wait.",
)
@click.option(
    "--at",
    type=click.Choice(["stop", "end"]),
    default=None,
    hidden=True,
    help="Started by a hook (stop: skip a session harvested a short while ago).",
)
@click.option("--llm", "use_llm", is_flag=True, help="Also ask the model ([llm]) per session.")
@state_dir_option
@json_option
def harvest(
    sessions: tuple[str, ...],
    harness: str | None,
    every: bool,
    refresh: str,
    at: str | None,
    use_llm: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Read sessions into memory (and every source a handoff retired).

    With no --session, every session on disk not harvested yet (or changed since), of every
    harness (of --harness when given), after a scan; progress on stderr."""
    service = _service(state_dir)
    bare = not sessions and at is None
    every = every or bare
    llm = None
    if use_llm or (at is not None and service.settings["llm"]):
        from ..llm import LLMConfig

        llm = LLMConfig.load(service.state_dir)
    interval = service.settings["harvest_interval_s"] if at == "stop" else 0.0
    # Started by a hook: wait for the scan the pause started too (the refresh), so the turn
    # that just ended is read.
    mode = Refresh.WAIT if at is not None else Refresh(refresh)
    shown_progress = _HarvestProgress() if at is None else None
    try:
        report = service.harvest(
            sessions,
            harness=harness,
            every=every,
            refresh=mode,
            min_interval_s=interval,
            wait=60 if at else None,  # a hook's harvest waits in the background for another
            llm=llm,
            progress=shown_progress,
            scan_progress=None if shown_progress is None else shown_progress.scan,
        )
    finally:
        if shown_progress is not None:
            shown_progress.stop()
    if shown_progress is not None:
        shown_progress.done(report)
    if as_json:
        print_json(report.as_json())
        return
    shown = report.as_json()
    if report.busy:
        stdout.print("another harvest is running; nothing was harvested")
        return
    added = ", ".join(f"{n} {k}" for k, n in shown["added"].items())
    stdout.print(
        f"harvested {len(report.sessions)} session(s): {added}; {report.quarantined} quarantined, "
        f"{report.superseded} superseded, {report.skipped} unchanged"
    )
    if report.deferred:
        stdout.print(f"deferred (handoff under way): {len(report.deferred)}")


class _HarvestProgress:
    """A harvest's progress on stderr: the scan's bar and a bar of sessions on a terminal;
    elsewhere a line when it starts, every 50 sessions, and at the end."""

    EVERY = 50

    def __init__(self) -> None:
        from .scan import ScanBar

        self.scan = ScanBar()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.total = 0

    def __call__(self, done: int, total: int, info: SessionInfo) -> None:
        self.total = total
        if done == 0:
            self.scan.stop()
            if stderr.is_terminal:
                self.bar = Progress(
                    TextColumn("harvesting {task.completed}/{task.total} sessions"),
                    BarColumn(),
                    TextColumn("{task.fields[session]}"),
                    console=stderr,
                    transient=True,
                )
                self.bar.start()
                self.task = self.bar.add_task("harvest", total=total, session="")
            else:
                stderr.print(f"harvesting {total} session(s)")
        name = f"{info.harness}:{info.session_id[:12]}"
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=done, session=escape(name))
        elif done and done % self.EVERY == 0:
            stderr.print(f"harvested {done}/{total} session(s)")

    def stop(self) -> None:
        self.scan.stop()
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def done(self, report: HarvestReport) -> None:
        if report.busy:
            return
        if not self.total:
            stderr.print("nothing on disk is waiting to be harvested")
        else:
            stderr.print(f"harvested {self.total}/{self.total} session(s)")


@memory.command("forget")
@click.argument("record", type=ROW)
@state_dir_option
@json_option
def forget(record: int, state_dir: str | None, as_json: bool) -> None:
    """Delete one record, leaving no byte of it."""
    _service(state_dir).forget(record)
    if as_json:
        print_json({"forgotten": record})
    else:
        stdout.print(f"forgot record {record}")


@memory.command("redact")
@state_dir_option
@json_option
def redact(state_dir: str | None, as_json: bool) -> None:
    """Redact secrets in every stored record, in place, leaving no byte of them.

    Records harvested before secrets were redacted at write (a harvest does this once by
    itself on such a store); run it again after the detector learned more."""
    changed = _service(state_dir).redact()
    if as_json:
        print_json({"redacted": changed})
    else:
        stdout.print(f"redacted {changed} record(s)")


@memory.command("quarantine")
@click.argument("record", type=ROW, required=False)
@click.option("--reason", default="set aside by the person", help="Why (with RECORD).")
@click.option(
    "--release",
    is_flag=True,
    help="Lift RECORD's quarantine (refused while it holds injection-shaped text).",
)
@_workspace_options
@state_dir_option
@json_option
def quarantine(
    record: int | None,
    reason: str,
    release: bool,
    cwd: str | None,
    workspace: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """List quarantined records (kept, shown, never injected), or quarantine / release RECORD."""
    service = _service(state_dir)
    if record is None:
        where = None if cwd is None and workspace is None else _where(service, cwd, workspace)
        found = service.records(where, history=True, quarantined=True)
        if as_json:
            print_json(found.as_json())
        else:
            _print_list(found)
        return
    view = service.release(record) if release else service.quarantine(record, reason)
    if as_json:
        print_json(view.as_json())
    else:
        state = "quarantined" if view.record.quarantined else "released"
        stdout.print(f"record {record} {state}")


@memory.command("skills")
@_workspace_options
@state_dir_option
@json_option
def skills(cwd: str | None, workspace: str | None, state_dir: str | None, as_json: bool) -> None:
    """The workspace's skill drafts and their state (proposed, accepted, rejected)."""
    service = _service(state_dir)
    found = service.records(_where(service, cwd, workspace), kinds=("skill",), history=True)
    if as_json:
        print_json(found.as_json())
    else:
        _print_list(found)


@memory.command("accept")
@click.argument("record", type=ROW)
@click.option("--harness", type=click.Choice(HARNESSES), required=True)
@click.option(
    "--scope", type=click.Choice(["project", "user"]), default="project", show_default=True
)
@state_dir_option
@json_option
def accept(record: int, harness: str, scope: str, state_dir: str | None, as_json: bool) -> None:
    """Write the skill draft RECORD into the harness's skills folder (never over a skill)."""
    done = _service(state_dir).accept(record, harness, scope)
    if as_json:
        print_json(done.as_json())
    else:
        stdout.print(f"wrote {escape(done.path)}")


@memory.command("reject")
@click.argument("record", type=ROW)
@state_dir_option
@json_option
def reject(record: int, state_dir: str | None, as_json: bool) -> None:
    """Mark the skill draft RECORD rejected (it stays, as history)."""
    view = _service(state_dir).reject(record)
    if as_json:
        print_json(view.as_json())
    else:
        stdout.print(f"record {record} rejected")


@memory.command("review")
@_workspace_options
@click.option("--all-workspaces", is_flag=True, help="The queue of every workspace.")
@click.option(
    "--accept", "accepted", multiple=True, type=ROW, help="Accept this pending record (repeatable)."
)
@click.option(
    "--reject", "rejected", multiple=True, type=ROW, help="Reject this pending record (repeatable)."
)
@click.option("--rejected", "with_rejected", is_flag=True, help="List the rejected records too.")
@state_dir_option
@json_option
def review(
    cwd: str | None,
    workspace: str | None,
    all_workspaces: bool,
    accepted: tuple[int, ...],
    rejected: tuple[int, ...],
    with_rejected: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """The records waiting for your review ([memory] confirm = true): what a harvest learned on
    its own is given to no session until accepted. --accept/--reject ID review them; a
    rejected record is kept (shown with --rejected), never given."""
    both = set(accepted) & set(rejected)
    if both:
        raise click.UsageError(f"record {min(both)} is both accepted and rejected")
    service = _service(state_dir)
    where = None if all_workspaces else _where(service, cwd, workspace)
    done = [service.review(r, accept=True) for r in accepted]
    done += [service.review(r, accept=False) for r in rejected]
    found = service.pending(where, rejected=with_rejected)
    if as_json:
        shown: ReviewJson = {"reviewed": [v.as_json() for v in done], "pending": found.as_json()}
        print_json(shown)
        return
    for view in done:
        stdout.print(f"record {view.record.id} {view.record.state}")
    _print_list(found)
    if found.records and not done:
        stdout.print("accept or reject with: dshkit memory review --accept ID --reject ID")


@memory.command("status")
@_workspace_options
@click.option("--all-workspaces", is_flag=True, help="No workspace's injection: counts only.")
@state_dir_option
@json_option
def status(
    cwd: str | None,
    workspace: str | None,
    all_workspaces: bool,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """How memory stands: counts, workspaces (with their ids), what caps dropped and why."""
    service = _service(state_dir)
    where = None if all_workspaces else _where(service, cwd, workspace)
    found = service.status(where)
    if as_json:
        print_json(found.as_json())
        return
    shown = found.as_json()
    counts = shown["counts"]
    stdout.print(
        f"records standing: {counts['facts']} facts, {counts['negative']} negative paths, "
        f"{counts['experiences']} experiences, {counts['skills']} skills; "
        f"{counts['queue']} skill drafts waiting, {counts['quarantined']} quarantined"
    )
    for entry in shown["workspaces"]:
        remote = f" ({entry['remote']})" if entry["remote"] else ""
        stdout.print(
            visible(
                f"  {entry['id']}  {entry['root']}{remote}: {entry['current']} standing "
                f"of {entry['records']}"
            )
        )
    dropped = shown["dropped"]
    lost = {k: n for k, n in dropped["byKind"].items() if n}
    if lost:
        per = ", ".join(f"{n} {k} (cap {dropped['caps'].get(k, '?')})" for k, n in lost.items())
        stdout.print(
            f"dropped over the per-session caps: {per}, in {len(dropped['sessions'])} session(s)"
        )
        for session in dropped["sessions"][:5]:
            kinds = ", ".join(f"{n} {k}" for k, n in session["dropped"].items())
            stdout.print(visible(f"  {session['harness']}:{session['id']}: {kinds}"))
    else:
        stdout.print("no harvest dropped a record over its caps")
    injection = shown["injection"]
    if injection is not None and where is not None:
        left = {k: n for k, n in injection["leftOut"].items() if n}
        why = ", ".join(f"{n} {k}" for k, n in left.items()) or "none"
        stdout.print(
            visible(
                f"a new session in {where.root} gets {injection['records']} record(s) "
                f"({injection['chars']} characters); left out: {why}"
            )
        )


@memory.command("rekey")
@click.argument("old")
@click.argument("new")
@state_dir_option
@json_option
def rekey(old: str, new: str, state_dir: str | None, as_json: bool) -> None:
    """Move the memory of workspace OLD to NEW (a folder moved or renamed).

    Each is a workspace id (as `dshkit memory status` lists them) or a directory: OLD the
    folder where the workspace was (it may be gone), NEW where it is now."""
    moved = _service(state_dir).rekey(_spec(old), _spec(new))
    if as_json:
        print_json(moved.as_json())
        return
    stdout.print(
        visible(
            f"moved {moved.records} record(s) from {moved.old.root} ({moved.old.id}) "
            f"to {moved.new.root} ({moved.new.id})"
        )
    )


def _spec(given: str) -> str:
    """A workspace id as given, a directory made absolute."""
    if re.fullmatch(r"[0-9a-f]{12}", given) and not os.path.exists(given):
        return given
    return os.path.abspath(os.path.expanduser(given))
