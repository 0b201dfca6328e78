"""`dshkit profile …`: generate the user profile and see how it stands."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click
from rich.markup import escape
from rich.table import Table

from ..harnesses import text_length
from ..profile import (
    CATEGORY_LABELS,
    HISTORY_LIMIT,
    MAX_CUSTOM_TEXT,
    MAX_EXTRA_TEXT,
    GenerationProgress,
    Mode,
    ProfileService,
    ScanProgress,
    TextRejected,
)
from ..sessions import Refresh, ScanReport, Source
from .common import (
    ID,
    json_option,
    open_app,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stderr,
    stdout,
)
from .errors import printable
from .scan import ScanBar


def service_for(state_dir: str | None, sources: list[Source] | None = None) -> ProfileService:
    """The profile's service of the app over the state directory."""
    return open_app(state_dir, sources).profile


class ScanOnTerminal(ScanProgress):
    """The refresh's progress bar on a terminal, then its warnings on stderr."""

    def __init__(self) -> None:
        self.bar: ScanBar | None = ScanBar()

    def start(self, total_bytes: int, files: int) -> None:
        if self.bar is not None:
            self.bar.start(total_bytes, files)

    def advance(self, nbytes: int) -> None:
        if self.bar is not None:
            self.bar.advance(nbytes)

    def scanned(self, report: ScanReport) -> None:
        self.stop()
        for warning in report.warnings:
            stderr.print(f"[yellow]warning:[/] {escape(warning)}")

    def stop(self) -> None:
        """End the bar (once: the refresh is over)."""
        bar, self.bar = self.bar, None
        if bar is not None:
            bar.stop()


class _Generating(ScanOnTerminal, GenerationProgress):
    """A generation on a terminal: the refresh, the wait for another one, the model writing."""

    def __init__(self, quiet: bool) -> None:
        super().__init__()
        self.live = not quiet and stderr.is_terminal
        self.written = 0

    def waiting(self, pid: int) -> None:
        stderr.print(
            f"waiting: another profile generation (dshkit process {pid}) is running; "
            "this one checks again once it is done"
        )

    def answer(self, delta: str) -> None:
        self.written += len(delta)
        if self.live:
            stderr.print(f"\r[dim]model writing… {self.written:,} characters[/]", end="")

    def stop(self) -> None:
        super().stop()
        if self.written and self.live:
            stderr.print()
            self.written = 0


@click.group()
def profile() -> None:
    """The user profile an LLM keeps from what the person said (prompt-adapt)."""


@profile.command("generate")
@roots_option
@click.option("--force", is_flag=True, help="Generate even when too little is new.")
@click.option(
    "--history",
    type=click.IntRange(min=1),
    default=HISTORY_LIMIT,
    show_default=True,
    help="Profile versions kept.",
)
@state_dir_option
@json_option
def generate_command(
    roots: tuple[Path, ...],
    harness: str | None,
    force: bool,
    history: int,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Scan the roots, and generate a new profile version when enough is new.

    One generation runs per state directory at a time: when another is running (another
    command, the service, a hook's refresh), this one waits for it to end, then checks
    again whether enough is new.

    \b
    Exit status:
      0  a new version was stored, or too little is new (nothing to do)
      1  the generation failed; the outcome is named in the message and as
         "outcome" in --json: config-error, http-error, network-error,
         stream-error, deadline, aborted, unusable-reply or superseded
      2  bad arguments
    """
    service = service_for(state_dir, sources_for(roots, harness))
    progress = _Generating(quiet=as_json)
    try:
        result = service.generate(force, history, Refresh.WAIT, progress)
    finally:
        progress.stop()
    if as_json:
        print_json(result.as_json())
    elif result.ok:
        diff = result.diff
        stdout.print(
            f"profile v{result.version}: {result.entries} entries "
            f"(+{len(diff['added'])} -{len(diff['removed'])} ~{len(diff['modified'])}, "
            f"spurious rate {result.spurious_rate:.1%}){' (partial)' if result.partial else ''}"
        )
        stdout.print(f"[dim]{escape(result.reason)}[/]")
    elif not result.failed:
        stdout.print(f"no new version: {escape(result.reason)}")
    for warning in result.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    if result.failed:
        if not as_json:
            stderr.print(
                f"[red]profile generation failed ({result.as_json()['outcome']}):[/] "
                f"{escape(result.error or '')}"
            )
        raise click.exceptions.Exit(1)


@profile.command("status")
@state_dir_option
@json_option
def status(state_dir: str | None, as_json: bool) -> None:
    """The latest version and the last run (why it did or did not update)."""
    found = service_for(state_dir).status()
    if as_json:
        print_json(found.as_json())
        return
    if found.version is None:
        stdout.print("No profile yet.")
    else:
        table = Table(title=f"profile v{found.version}", title_justify="left", box=None)
        for column in ("id", "category", "claim", "confidence"):
            table.add_column(column, overflow="fold")
        for entry in found.entries:
            table.add_row(
                *(escape(str(entry.get(k))) for k in ("id", "category", "claim", "confidence"))
            )
        stdout.print(table)
    run = found.last_run
    if run:
        verdict = (
            "updated"
            if run["ok"]
            else f"not updated ({run.get('outcome')}): {run['error'] or run['reason']}"
        )
        stdout.print(f"last run: {escape(verdict)}")
        refused = run.get("refused") or []
        if refused:
            kinds = Counter(r["kind"] for r in refused)
            stdout.print(
                f"refused {len(refused)} entr{'y' if len(refused) == 1 else 'ies'} of its "
                f"answer: {escape(', '.join(f'{kind} {n}' for kind, n in kinds.items()))}"
            )
    if found.retry:
        stdout.print(retry_words(found.retry["failures"], found.retry["notBefore"]))


def retry_words(failures: int, not_before_ms: int, now_ms: int | None = None) -> str:
    """The hooks' wait after `failures` failed runs, in words, its time local (the day too
    when it is not today)."""
    now = time.time() if now_ms is None else now_ms / 1000
    runs = f"{failures} failed run{'s' if failures != 1 else ''} in a row"
    if not_before_ms / 1000 <= now:
        return f"after {runs}, the wait is over: the next automatic refresh tries again"
    at = time.localtime(not_before_ms / 1000)
    same_day = time.strftime("%Y-%m-%d", at) == time.strftime("%Y-%m-%d", time.localtime(now))
    when = time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", at)
    return (
        f"after {runs}: next automatic try after {when}, or when you say something new "
        "(dshkit profile generate asks now)"
    )


@profile.command("delta-size")
@json_option
def delta_size(as_json: bool) -> None:
    """How much the model must write: full contract against delta contract (static)."""
    sizes = ProfileService.delta_size()
    if as_json:
        print_json(sizes.as_json())
        return
    table = Table(box=None)
    for column in ("entries", "changed", "full contract", "delta contract", "saved"):
        table.add_column(column, justify="right")
    for r in sizes.rows:
        table.add_row(
            str(r.entries),
            str(r.changed),
            f"{r.full_tokens} tokens",
            f"{r.delta_tokens} tokens",
            f"{r.saved:.1%}",
        )
    stdout.print(table)


@profile.command("show")
@state_dir_option
@json_option
def show(state_dir: str | None, as_json: bool) -> None:
    """The text the agent is given now (exactly: the hooks inject these characters), where it
    comes from, the profile behind it and the entries left out of it to fit the budget."""
    shown = service_for(state_dir).show()
    if as_json:
        print_json(shown.as_json())
        return
    effective, view = shown.effective, shown.profile
    stdout.print(f"mode: {effective.mode.value} (text from {effective.source})")
    if effective.text:
        click.echo(effective.text)  # as it is: no markup, no emoji codes, no wrapping
    else:
        stdout.print("[dim](nothing is injected)[/]")
    if effective.withheld:
        stderr.print(f"[yellow]not injected:[/] {escape(effective.withheld)}")
    if view and view["dropped"] and effective.mode is Mode.AUTO:
        budget = view["budget"]
        stdout.print(
            f"\n{len(view['dropped'])} entries left out (the profile's budget is "
            f"{budget['entries']} entries and {budget['characters']:,} characters; the "
            "ones with the least evidence go first):"
        )
        claims = {e.get("id"): e.get("claim") for e in view["entries"]}
        for entry_id in view["dropped"]:
            stdout.print(f"  {escape(entry_id)}  {escape(str(claims.get(entry_id)))}")


@profile.command("mode")
@click.argument("mode", type=click.Choice([m.value for m in Mode]))
@state_dir_option
@json_option
def mode_command(mode: str, state_dir: str | None, as_json: bool) -> None:
    """Inject the generated profile (auto) or your own text (custom); the other is kept."""
    service_for(state_dir).set_mode(mode)
    if as_json:
        print_json({"mode": mode})
        return
    stdout.print(f"mode: {mode}")


_TEXT_FILE = click.option(
    "--file",
    "source",
    type=click.File("rb"),
    required=True,
    help="Where to read the text, UTF-8 ('-' for standard input).",
)


@profile.command(
    "custom",
    help=f"Set the text injected in custom mode (at most {MAX_CUSTOM_TEXT:,} characters).",
)
@_TEXT_FILE
@state_dir_option
@json_option
def custom(source: IO[bytes], state_dir: str | None, as_json: bool) -> None:
    _set_text(source, state_dir, ProfileService.set_custom, "custom text", as_json)


@profile.command(
    "extra",
    help="Set text added after the generated profile in auto mode (empty input clears it; "
    f"at most {MAX_EXTRA_TEXT:,} characters: the profile keeps the rest of what one hook "
    "answer delivers).",
)
@_TEXT_FILE
@state_dir_option
@json_option
def extra(source: IO[bytes], state_dir: str | None, as_json: bool) -> None:
    _set_text(source, state_dir, ProfileService.set_extra, "extra text", as_json)


def _set_text(
    source: IO[bytes],
    state_dir: str | None,
    setter: Callable[[ProfileService, Any], str],
    what: str,
    as_json: bool,
) -> None:
    data = source.read()
    name = "standard input" if source.name in ("<stdin>", "-") else printable(str(source.name))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{name} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start:,} "
            "cannot be decoded; save it as UTF-8",
            param_hint="--file",
        ) from exc
    service = service_for(state_dir)
    try:
        stored = setter(service, text)
    except TextRejected as exc:
        raise click.BadParameter(str(exc), param_hint="--file") from exc
    length = text_length(stored.strip())
    if as_json:
        print_json({"text": stored, "characters": length})
        return
    stdout.print(f"{what} set ({length:,} characters)")


@profile.command("copy")
@state_dir_option
@json_option
def copy(state_dir: str | None, as_json: bool) -> None:
    """Print the effective text and remember that it was copied (to paste into custom mode)."""
    copied = service_for(state_dir).copy()
    if as_json:
        print_json({"text": copied.text, "copiedSnapshot": copied.as_json()})
        return
    click.echo(copied.text)


@profile.group("entry")
def entry() -> None:
    """Change one entry of the profile yourself; a pinned (or edited) entry is kept as you
    left it by every later regeneration."""


def _entry_command(action: str, doc: str) -> None:
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.argument("entry_id", metavar="ID", type=ID),
        state_dir_option,
        json_option,
    ]
    if action == "edit":
        options += [
            click.option("--claim", help="The entry's new words (one line)."),
            click.option(
                "--category",
                type=click.Choice(sorted(CATEGORY_LABELS)),
                help="The entry's new category.",
            ),
        ]

    def command(
        entry_id: str,
        state_dir: str | None,
        as_json: bool,
        claim: str | None = None,
        category: str | None = None,
    ) -> None:
        changed = service_for(state_dir).change_entry(
            entry_id, action, claim=claim, category=category
        )
        if as_json:
            print_json(changed.as_json())
            return
        done = {"edit": "edited and pinned", "pin": "pinned", "unpin": "unpinned"}
        done["restore"] = "may come back: its removal is undone for later regenerations"
        words = done.get(action, "removed")
        stdout.print(f"entry {escape(entry_id)} {words}: profile v{changed.version}")
        if changed.entry is not None:
            click.echo(f"  [{changed.entry['category']}] {changed.entry['claim']}")

    command.__doc__ = doc
    for option in reversed(options):
        command = option(command)
    entry.command(action)(command)


_entry_command("edit", "Rewrite an entry's claim or category; the entry is pinned.")
_entry_command("pin", "Keep an entry as it is through regeneration.")
_entry_command("unpin", "Let regeneration change or drop an entry again.")
_entry_command("remove", "Remove an entry from the profile; no regeneration writes it again.")
_entry_command("restore", "Undo the removal of an entry: a later regeneration may write it again.")
