"""`dshkit doctor`: what works on this machine and what is broken, per harness and scope.

Every way dshkit reaches a harness is recognised: the settings `install-hooks` wrote (DSH's:
through its hook bridge), dshkit's Claude Code and Codex plugins; where two of them would run
the same hook twice, a warning names the one to remove (`install.check_harness`).

Per harness, first whether it is installed on this machine (`install.absent`: its config
directory is there or its CLI is on PATH; one that is not is left alone by `install-hooks`,
and its checks are absent, whatever dshkit left in its files). Exits 1 when something is
broken: an install that lacks an event the hook registry has, runs a `dshkit` that is
missing or feeds another state directory, a DSH patch block without the bridge it mounts,
an MCP server registration that runs such a `dshkit` (a missing one, where the hooks are
installed, is a warning), a database that is newer, unreadable, empty, truncated, damaged
or cannot be written (saying how to recover; on a read-only file system, that), an unusable
LLM configuration. What cannot be told is said to be unknown, never that it works. The
service is the one this state directory's `dshkit serve` recorded (`web.link.recorded`),
up when it answers there at all.

Resident hooks (`install-hooks --resident`) are asked whether the service answers at their
URL; where it does not, the command hooks are installed back in their place (the agent would
otherwise go without dshkit's hooks, silently: a failed HTTP hook is a non-blocking error),
and a warning says so and how to return to the resident path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import httpx
from rich.markup import escape
from rich.table import Table

from .. import __version__, harnesses
from ..hookspec import extra_entries
from ..install import ABSENT, BROKEN, OK, UNKNOWN, WARN, Inspection, absent, check_harness
from ..install.plugin import InstalledPlugin
from ..llm import LLMConfig, LLMConfigError
from ..paths import state_dir as resolve_state_dir
from ..store import DB_NAME, Store, StoreBusy, StoreError, recovery, write_problem
from ..web import link
from .common import json_option, print_json, state_dir_option, stdout


@click.command()
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Probe this port on 127.0.0.1 for the service [default: the port this state "
    "directory's running `dshkit serve` recorded].",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project whose project-scope hooks to check.",
)
@click.option(
    "--dsh-profile",
    default="headless",
    show_default=True,
    help="The DSH profile whose patch layer should mount the hook bridge.",
)
@state_dir_option
@json_option
def doctor(
    port: int | None, project: Path, dsh_profile: str, state_dir: str | None, as_json: bool
) -> None:
    """Per harness: whether it is installed here, its sessions root, hooks (user and project
    scope), dshkit's plugin (Claude Code, Codex), and a warning where two of those would run
    the same hook twice, naming the one to remove; then the database, the LLM and the service.
    Exits 1 when something is broken."""
    state = resolve_state_dir(state_dir)
    try:
        extra = extra_entries(os.environ.get("DSHKIT_HOOK_HANDLERS", ""))
        extra_problem = None
    except ValueError as exc:
        extra, extra_problem = (), str(exc)
    checks: list[dict[str, Any]] = []
    report_harnesses: dict[str, dict[str, Any]] = {}
    asked: set[Path] = set()  # the settings files whose resident hooks were asked after
    for harness in harnesses.all_harnesses():
        why = absent(harness.name)
        found = harness.found() if why is None else None
        checks.append(
            _check(
                "harness",
                ABSENT if why else OK,
                f"{why}: install-hooks skips it" if why else f"found: {found}",
                harness=harness.name,
            )
        )
        root = Path(harness.sessions_root())
        checks.append(
            _check(
                "sessionsRoot",
                OK if root.is_dir() else ABSENT,
                str(root) if root.is_dir() else f"{root} (no sessions yet)",
                harness=harness.name,
            )
        )
        installed = check_harness(harness.name, project.resolve(), state, dsh_profile, extra)
        checks += [_hooks_check(inspection) for inspection in installed.hooks]
        checks += [_hooks_check(inspection, "mcpServer") for inspection in installed.mcp_servers]
        checks += [_plugin_check(found_plugin) for found_plugin in installed.plugins]
        checks += [_check("doubled", WARN, m, harness=harness.name) for m in installed.doubled]
        report_harnesses[harness.name] = {
            "found": found,  # where it shows it is installed here (None: it is not)
            "sessionsRoot": str(root),
            "sessionsRootFound": root.is_dir(),
            "hooksInstalled": installed.hooks_installed,
            "hooks": [inspection.to_json() for inspection in installed.hooks],
            "mcpServer": [inspection.to_json() for inspection in installed.mcp_servers],
            "plugins": [found_plugin.to_json() for found_plugin in installed.plugins],
            "routes": installed.routes,  # every way dshkit reaches it
            "doubled": installed.doubled,  # what runs twice, and which to remove
        }
        for inspection in installed.hooks:  # a project in the home: one file, both scopes
            if inspection.path is not None and inspection.path not in asked:
                asked.add(inspection.path)
                checks += _resident(
                    harness, inspection, project.resolve(), state, dsh_profile, extra
                )
    if extra_problem:
        checks.append(_check("hookHandlers", BROKEN, extra_problem))
    checks.append(_database(state))
    llm = _llm(state)
    checks.append(llm)
    service = _service(port, state)
    checks.append(service)
    broken = [c for c in checks if c["status"] == BROKEN]
    report = {
        "ok": not broken,
        "stateDir": str(state),
        "checks": checks,
        "harnesses": report_harnesses,
        "llmConfigured": llm["status"] == OK,
        "llmProblem": None if llm["status"] == OK else llm["message"],
        "service": {
            "url": service["url"],
            "reachable": service["reachable"],
            "servesThisStateDir": {OK: True, UNKNOWN: None}.get(service["status"], False),
        },
    }
    if as_json:
        print_json(report)
    else:
        _print(checks, state)
    if broken:
        raise SystemExit(1)


def _resident(
    harness: harnesses.Harness,
    found: Inspection,
    project: Path,
    state: Path,
    profile: str,
    extra: Any,
) -> list[dict[str, Any]]:
    """Whether the service answers the resident hooks in `found`'s settings; where it does
    not, the command hooks are put back, and a warning says so."""
    from ..install import InstallError, apply, plan_install
    from ..install.hooks import resident_urls

    if found.path is None or found.away is not None:
        return []
    urls = resident_urls(harness, found.path)
    if not urls:
        return []
    where = {"harness": harness.name, "scope": found.scope}
    try:  # any answer will do (401 without the credential): the service is there
        httpx.post(urls[0], content=b"{}", timeout=2.0)
        return [_check("residentHooks", OK, f"the service answers at {urls[0]}", **where)]
    except httpx.HTTPError as exc:
        why = str(exc) or type(exc).__name__
    try:
        plan = plan_install(harness.name, found.scope, project, state, profile, extra, True)
        apply(plan.changes, True, state)
    except (OSError, InstallError) as exc:
        message = f"the service does not answer at {urls[0]} ({why}) and the command hooks "
        message += f"could not be put back: {exc}"
        return [_check("residentHooks", BROKEN, message, **where)]
    message = (
        f"the service does not answer at {urls[0]} ({why}): the command hooks are back in "
        f"{found.path}; once `dshkit service status` says it runs, "
        f"`dshkit install-hooks --harness {harness.name} --resident` returns to it"
    )
    return [_check("residentHooks", WARN, message, fellBack=True, **where)]


def _check(name: str, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"check": name, "status": status, "message": message, **extra}


def _hooks_check(found: Inspection, name: str = "hooks") -> dict[str, Any]:
    """One inspection as a check; of a harness not on this machine, absent (its `harness`
    check says why) with what dshkit left there."""
    where = {"harness": found.harness, "scope": found.scope}
    if found.away is not None:
        message = f"not checked: {harnesses.get(found.harness).label} is not installed here"
        if found.installed:
            message += (
                f"; dshkit's entries left in {found.path} do nothing "
                f"(`dshkit uninstall-hooks --harness {found.harness}` removes them)"
            )
        return _check(name, ABSENT, message, **where)
    if found.problems:
        message = "; ".join(p.message for p in found.problems)
    else:
        message = f"installed in {found.path}" if found.installed else "not installed"
    return _check(name, found.status, message, **where)


def _plugin_check(found: InstalledPlugin) -> dict[str, Any]:
    """dshkit's plugin in a harness: enabled (its hooks run), disabled, or of another version
    than this dshkit (the plugin's version is dshkit's: update one to match the other)."""
    where = {"harness": found.harness, "scope": "plugin"}
    if not found.enabled:
        message = f"{found.ident} is installed but disabled ({found.where}): its hooks do not run"
        return _check("plugin", ABSENT, message, **where)
    message = f"{found.ident} {found.version or ''} enabled ({found.where})".replace("  ", " ")
    if found.version is not None and found.version != __version__:
        message += (
            f"; its version is not this dshkit's ({__version__}): update the one that is "
            f"older (the plugin: reinstall it from this checkout's marketplace)"
        )
        return _check("plugin", WARN, message, **where)
    return _check("plugin", OK, message, **where)


def _database(state: Path) -> dict[str, Any]:
    """The state database: there, readable, whole (SQLite's quick_check) and writable; what is
    wrong says how to recover. On a read-only file system no chmod helps: that is said."""
    path = state / DB_NAME
    mount = _read_only(state)
    read_only = None
    if mount is not None:
        read_only = (
            f"the file system holding {mount} is mounted read-only; remount it read-write, "
            "or point --state-dir at a writable directory"
        )
    if not os.path.lexists(path):
        if read_only is not None:
            return _check("database", BROKEN, f"{path} cannot be created: {read_only}")
        return _check("database", ABSENT, f"{path} (none yet: `dshkit scan` creates it)")
    try:
        with Store(state, busy_timeout=5.0) as store:
            verdict = store.db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                return _check("database", BROKEN, f"{path} is damaged: {verdict}. {recovery(path)}")
            problem = _unwritable(store)
    except StoreBusy as exc:
        return _check("database", UNKNOWN, f"{exc.message} (cannot tell whether it is whole)")
    except StoreError as exc:
        if read_only is not None:  # its own advice (chmod) cannot help here
            return _check("database", BROKEN, f"cannot open the state database {path}: {read_only}")
        return _check("database", BROKEN, exc.message)
    if problem is not None:
        return _check("database", BROKEN, f"the store cannot be written: {read_only or problem}")
    return _check("database", OK, str(path))


def _read_only(directory: Path) -> Path | None:
    """The place (`directory`, else the nearest parent there) when the file system holding it
    is mounted read-only (None: it is not, or that cannot be told)."""
    for place in (directory, *directory.parents):
        try:
            flags = os.statvfs(place).f_flag
        except FileNotFoundError:
            continue
        except OSError:
            return None
        return place if flags & os.ST_RDONLY else None
    return None


def _unwritable(store: Store) -> str | None:
    """Why the store cannot be written, or None. The state directory and the database's files
    must be writable (the plaintext cache, screenshots and SQLite's WAL live there too), and
    SQLite must grant the write lock (taken and given back: nothing is written)."""
    problem = write_problem(store.path)
    if problem is not None:
        return problem
    try:
        store.db.execute("BEGIN IMMEDIATE")
        store.db.execute("ROLLBACK")
    except StoreBusy:
        return None  # another process is writing: the lock is taken, not refused
    except StoreError as exc:
        return exc.message
    return None


def _llm(state: Path) -> dict[str, Any]:
    try:
        config = LLMConfig.load(state)
    except LLMConfigError as exc:
        return _check("llm", BROKEN, str(exc))
    try:
        config.check()
    except LLMConfigError as exc:
        return _check("llm", ABSENT if not config.api_key else BROKEN, str(exc))
    return _check("llm", OK, f"{config.model} at {config.base_url}")


def _service(port: int | None, state: Path) -> dict[str, Any]:
    """This state directory's service: where its running `dshkit serve` recorded it is
    (`--port`: that port instead), up when anything answers there at all (a refusal for want
    of the token, 401, is an answer too)."""
    served = link.recorded(state)
    if served is not None and port in (None, served.port):
        answers = _answers(served.url)
        fields = {"url": served.url, "reachable": answers}
        if answers:
            return _check("service", OK, f"serving {state} at {served.url}", **fields)
        message = f"`dshkit serve` (pid {served.pid}) recorded {served.url} but does not answer"
        return _check("service", UNKNOWN, message, **fields)
    if port is None:
        message = "not running (`dshkit serve` starts it)"
        return _check("service", ABSENT, message, url=None, reachable=False)
    url = f"http://127.0.0.1:{port}/"
    if not _answers(url):
        return _check("service", ABSENT, f"nothing answers at {url}", url=url, reachable=False)
    where = f"that answers at {served.url}" if served is not None else "that is not running"
    message = f"something answers at {url}, not this state directory's `dshkit serve` ({where})"
    return _check("service", WARN, message, url=url, reachable=True)


def _answers(url: str) -> bool:
    """Whether anything answers HTTP at `url`: a bare GET, no token sent, through no proxy
    (a proxy's own answer would pass for the service's)."""
    try:
        httpx.get(url, timeout=2.0, trust_env=False)
    except httpx.HTTPError:
        return False
    return True


_STYLE = {OK: "green", ABSENT: "dim", WARN: "yellow", UNKNOWN: "yellow", BROKEN: "bold red"}


def _print(checks: list[dict[str, Any]], state: Path) -> None:
    stdout.print(f"state directory: {escape(str(state))}")
    table = Table(box=None)
    for column in ("check", "harness", "scope", "status", "detail"):
        table.add_column(column, overflow="fold")
    for check in checks:
        status = check["status"]
        table.add_row(
            check["check"],
            check.get("harness", ""),
            check.get("scope", ""),
            f"[{_STYLE[status]}]{status}[/]",
            escape(check["message"]),
        )
    stdout.print(table)
    broken = sum(1 for c in checks if c["status"] == BROKEN)
    if broken:
        stdout.print(f"[bold red]{broken} broken[/]: see the details above")
