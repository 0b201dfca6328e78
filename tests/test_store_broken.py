"""A broken state store is said, never silently replaced: an empty, truncated or damaged
database, a read-only state directory, a full disk, an id larger than SQLite holds. Each gets
a clear error (exit 5 or 2 on the command line, 503, 404 or 400 on the web) and what was
stored before is still there afterwards."""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from dshkit.errors import Invalid
from dshkit.optimizer import Run
from dshkit.optimizer.runs import save_run
from dshkit.profile.state import ProfileState
from dshkit.store import DB_NAME, SCHEMA_VERSION, Store, StoreDamaged

from .support.cli import run_dshkit
from .support.disks import read_only, small_disk

DSHKIT = str(Path(sys.executable).parent / "dshkit")
BEFORE = "the words before"
RUNS = 300
HUGE = "99999999999999999999999"


def cli(
    state: Path,
    *args: str,
    input: str | None = None,
    prefix: tuple[str, ...] = (),
    preexec: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`dshkit ARGS --state-dir STATE` in STATE's parent, in this process; in a process of its
    own under `prefix` (a command it runs under) or `preexec` (run in the child first)."""
    home = state.parent / "home"
    if not prefix and preexec is None:
        return run_dshkit(
            *args, "--state-dir", str(state), home=home, input=input, cwd=state.parent, check=False
        )
    env = {**os.environ, "HOME": str(home), "DSH_HOME": str(home / ".dsh")}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "DSHKIT_HOOK_HANDLERS"):
        env.pop(name, None)
    return subprocess.run(
        [*prefix, DSHKIT, *args, "--state-dir", str(state)],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        cwd=state.parent,
        timeout=120,
        preexec_fn=preexec,
    )


def said_clearly(done: subprocess.CompletedProcess[str], code: int) -> str:
    """The error's text, once it is known to be one line of an error and not a traceback."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stderr.startswith("Error: "), done.stderr
    return done.stderr


def seed(state: Path) -> Path:
    """A store holding custom text and RUNS optimizer runs, its WAL folded in (the database
    file alone holds everything)."""
    with Store(state) as store:
        ProfileState(store).set_custom_text(BEFORE)
        for n in range(RUNS):
            save_run(store, Run(tier="off", form="plain", raw=f"raw {n} " * 60, output="o" * 400))
    with closing(sqlite3.connect(state / DB_NAME)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return state / DB_NAME


def kept(state: Path) -> None:
    """What `seed` stored is all there, and the database is whole."""
    with Store(state) as store:
        assert ProfileState(store).custom_text == BEFORE
        assert store.db.execute("SELECT count(*) FROM optimizer_runs").fetchone()[0] == RUNS
        assert store.db.execute("PRAGMA quick_check").fetchone()[0] == "ok"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- an empty or truncated database is refused, never started afresh -----------------------


def test_an_empty_database_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    database = seed(tmp_path / "state")
    os.truncate(database, 0)
    with pytest.raises(StoreDamaged, match=r"is empty \(0 bytes\)"):
        Store(tmp_path / "state")
    message = said_clearly(cli(tmp_path / "state", "profile", "show"), 5)
    assert "empty (0 bytes)" in message and "custom text" in message
    assert (
        "restore dshkit.db from a backup" in message and "mv dshkit.db dshkit.db.broken" in message
    )
    assert database.stat().st_size == 0  # not made a new store in place of the old one
    shown = cli(tmp_path / "state", "runs", "list", "--json")
    assert shown.returncode == 5 and orjson.loads(shown.stdout)["kind"] == "unavailable"
    assert database.stat().st_size == 0
    database.rename(database.with_name("dshkit.db.broken"))  # as the message says
    assert cli(tmp_path / "state", "profile", "show").returncode == 0  # a new store


def test_a_truncated_database_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    database = seed(tmp_path / "state")
    os.truncate(database, database.stat().st_size // 2)
    before = digest(database)
    with pytest.raises(StoreDamaged, match=r"truncated: its header says [\d,]+ bytes"):
        Store(tmp_path / "state")
    message = said_clearly(cli(tmp_path / "state", "profile", "custom", "--file", "-"), 5)
    assert "truncated" in message and ".recover" in message
    assert digest(database) == before


@pytest.mark.process
def test_a_fresh_store_is_whole_whenever_its_name_is_there(tmp_path: Path) -> None:
    # Processes starting at once on a fresh state directory: none may ever see the database
    # empty or half made (it would be refused as broken), each one's write lands in the one
    # store, and no temporary store is left behind.
    script = (
        "import sys\nfrom dshkit.store import Store\n"
        "with Store(sys.argv[1]) as store:\n    store.set_meta(sys.argv[2], 'mine')\n"
    )
    for attempt in range(6):
        state = tmp_path / f"s{attempt}"
        headers: set[bytes] = set()
        done = threading.Event()

        def watch(
            path: Path = state / DB_NAME,
            done: threading.Event = done,
            headers: set[bytes] = headers,
        ) -> None:
            while not done.is_set():
                try:
                    with open(path, "rb") as file:
                        headers.add(file.read(16))
                except FileNotFoundError:
                    continue

        watcher = threading.Thread(target=watch)
        watcher.start()
        children = [
            subprocess.Popen(
                [sys.executable, "-c", script, str(state), f"k{n}"], stderr=subprocess.PIPE
            )
            for n in range(4)
        ]
        errors = [child.communicate(timeout=120)[1].decode() for child in children]
        done.set()
        watcher.join()
        assert [child.returncode for child in children] == [0] * 4, errors
        assert headers == {b"SQLite format 3\x00"}, headers
        assert not [name for name in os.listdir(state) if name.startswith(".")]
        with Store(state) as store:
            assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert [store.get_meta(f"k{n}") for n in range(4)] == ["mine"] * 4
        assert stat.S_IMODE((state / DB_NAME).stat().st_mode) == 0o600


@pytest.mark.process
def test_a_temporary_store_left_by_a_killed_process_is_removed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    abandoned = state / f".{DB_NAME}.{gone.pid}.0badcafe.new"
    abandoned.write_bytes(b"half made")
    Store(state).close()
    assert not abandoned.exists()


# -- a database damaged inside: whatever query reaches the damage says so ------------------


def damage(database: Path) -> None:
    """Overwrite eight pages in the middle of the runs with garbage, as a failing disk or a
    stray write would."""
    size = database.stat().st_size
    with open(database, "r+b") as file:
        file.seek((size // 2) // 4096 * 4096)
        file.write(bytes(range(256)) * 128)


def test_a_database_damaged_inside_is_a_clear_error_and_is_not_touched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    database = seed(state)
    damage(database)
    before = digest(database)
    with Store(state) as store, pytest.raises(StoreDamaged, match="malformed"):
        store.db.execute("SELECT id, record FROM optimizer_runs").fetchall()
    message = said_clearly(cli(state, "runs", "list"), 5)
    assert "is damaged (database disk image is malformed)" in message
    assert "restore dshkit.db from a backup" in message and ".recover" in message
    shown = cli(state, "runs", "list", "--json")
    assert shown.returncode == 5 and orjson.loads(shown.stdout)["kind"] == "unavailable"
    with Store(state) as store:  # what the damage spares is still read
        assert ProfileState(store).custom_text == BEFORE
    assert digest(database) == before  # nothing repaired, replaced or written


# -- a read-only state directory -----------------------------------------------------------


def unprivileged(tmp_path: Path) -> tuple[str, ...]:
    """A command prefix under which file modes hold: none when not root; as root, setpriv
    without the capabilities that override them (skipped when that cannot be had here)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, which ignores file modes, and there is no setpriv")
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable")
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o500)
    tried = subprocess.run([*prefix, "--", "touch", str(probe / "x")], capture_output=True)
    if tried.returncode == 0 or (probe / "x").exists():
        pytest.skip("cannot drop root's capabilities here: file modes would not hold")
    return (*prefix, "--")


@contextmanager
def holding(state: Path) -> Iterator[None]:
    """A process keeping the store open (as `dshkit serve` does): its WAL and shared-memory
    files stay beside the database."""
    script = "import sys\nfrom dshkit.store import Store\ns = Store(sys.argv[1])\n"
    script += "s.get_meta('x')\nprint('open', flush=True)\nsys.stdin.read()\n"
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def database_check(state: Path, prefix: tuple[str, ...]) -> dict[str, Any]:
    done = cli(state, "doctor", "--json", "--port", "1", prefix=prefix)
    (found,) = [c for c in orjson.loads(done.stdout)["checks"] if c["check"] == "database"]
    assert (done.returncode == 1) == (found["status"] == "broken")
    return dict(found)


@pytest.mark.process
def test_a_read_only_state_directory_is_said_and_nothing_is_lost(tmp_path: Path) -> None:
    prefix = unprivileged(tmp_path)
    state = tmp_path / "state"
    seed(state)
    roots = Path(__file__).parent / "data" / "fixtures" / "codex" / "sessions"
    try:
        os.chmod(state, 0o500)
        found = database_check(state, prefix)
        assert found["status"] == "broken"
        assert found["message"].startswith(f"cannot write the state database {state / DB_NAME}")
        assert f"its directory {state} is not writable by you" in found["message"]
        custom = cli(state, "profile", "custom", "--file", "-", input="new", prefix=prefix)
        message = said_clearly(custom, 5)
        assert f"cannot write the state database {state / DB_NAME}" in message
        assert f"its directory {state} is not writable by you" in message
        os.chmod(state, 0o700)
        with holding(state):  # its WAL open: SQLite could write there, nothing else can be made
            os.chmod(state, 0o500)
            found = database_check(state, prefix)
            assert found["status"] == "broken"
            assert found["message"] == (
                f"the store cannot be written: its directory {state} is not writable by you"
            )
            scan = cli(state, "scan", "--root", str(roots), "--harness", "codex", prefix=prefix)
            assert f"{state / 'plain'}: Permission denied" in said_clearly(scan, 5)
        os.chmod(state, 0o700)
        os.chmod(state / DB_NAME, 0o400)  # the directory writable, the database not
        found = database_check(state, prefix)
        assert found["status"] == "broken"
        assert found["message"] == (
            f"the store cannot be written: {state / DB_NAME} is not writable by you"
        )
        custom = cli(state, "profile", "custom", "--file", "-", input="new", prefix=prefix)
        assert f"{state / DB_NAME} is not writable by you" in said_clearly(custom, 5)
    finally:
        os.chmod(state, 0o700)
        for file in state.iterdir():  # SQLite made the WAL as read-only as the database
            os.chmod(file, 0o600)
    found = database_check(state, prefix)
    assert found["status"] == "ok", found
    kept(state)


# -- a full disk -----------------------------------------------------------------------------


def file_size_limit(limit: int) -> Callable[[], None]:
    """A child's file size limit: a write past `limit` bytes fails (EFBIG, SIGXFSZ ignored),
    as on a disk that is full."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return limited


def fill(disk: Path) -> None:
    descriptor = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(descriptor, b"\0" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(descriptor, b"\0" * 512)
    except OSError:
        pass
    os.close(descriptor)


# 9,900 three-byte characters: under the custom text's limit of 10,000, and with the pages
# around them well over the 32,800 bytes a file may have under `file_size_limit(32_800)`.
LARGE = "界" * 9900


@pytest.mark.process
def test_a_full_disk_is_said_and_what_was_stored_is_kept(tmp_path: Path) -> None:
    state = tmp_path / "state"
    seed(state)
    roots = Path(__file__).parent / "data" / "fixtures" / "codex" / "sessions"
    limit = file_size_limit(32_800)  # room for SQLite's 32 kB shared memory, not for the text
    custom = cli(state, "profile", "custom", "--file", "-", input=LARGE, preexec=limit)
    message = said_clearly(custom, 5)
    assert f"cannot read or write the state database {state / DB_NAME}" in message
    assert "full, over a file size limit" in message and "What was stored before is kept" in message
    scan = cli(state, "scan", "--root", str(roots), "--harness", "codex", preexec=limit)
    said_clearly(scan, 5)
    kept(state)


@pytest.mark.process
def test_a_disk_that_fills_up_is_said_and_what_was_stored_is_kept(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        state = disk / "state"
        seed(state)
        roots = Path(__file__).parent / "data" / "fixtures" / "codex" / "sessions"
        with holding(state):  # its WAL there already, as under a running `dshkit serve`
            fill(disk)
            custom = cli(state, "profile", "custom", "--file", "-", input=LARGE)
            assert "the disk is full" in said_clearly(custom, 5)
            scan = cli(state, "scan", "--root", str(roots), "--harness", "codex")
            said_clearly(scan, 5)
        (disk / "filler").unlink()
        kept(state)


# -- ids and limits larger than SQLite holds -------------------------------------------------


def test_ids_and_limits_too_large_are_usage_errors_on_the_command_line(tmp_path: Path) -> None:
    state = tmp_path / "state"
    seed(state)
    # The same number is the same usage error in every command taking a row's id.
    for words, name in (
        (("runs", "show", HUGE), "RUN_ID"),
        (("outcome", HUGE, "ok"), "RUN_ID"),
        (("memory", "show", HUGE), "RECORD"),
    ):
        refused = cli(state, *words)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert f"Error: Invalid value for '{name}': {HUGE} is not in the range" in refused.stderr
    drive = cli(state, "graft", "drive", "--txn", HUGE)
    assert drive.returncode == 2 and "Traceback" not in drive.stderr
    assert "Invalid value for '--txn'" in drive.stderr
    for numbers in (
        ("runs", "list", "--limit", HUGE),
        ("sessions", "list", "--limit", HUGE),
        ("signals", "--long-tool-ms", HUGE),
        ("signals", "--answer-window-ms", HUGE),
        ("signals", "--repeat-fail-min", HUGE),
    ):
        refused = cli(state, *numbers)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert f"Invalid value for '{numbers[-2]}': {HUGE} is not in the range" in refused.stderr
    with Store(state) as store, pytest.raises(Invalid, match="larger than the state database"):
        store.db.execute("SELECT * FROM optimizer_runs WHERE id = ?", (int(HUGE),))


class Served:
    """`dshkit serve` on a port of its own, over a state directory, as a person runs it."""

    def __init__(self, tmp_path: Path) -> None:
        self.state_dir = tmp_path / "state"
        seed(self.state_dir)
        home = tmp_path / "home"
        env = {**os.environ, "HOME": str(home), "DSH_HOME": str(home / ".dsh")}
        env.pop("DSHKIT_LLM_API_KEY", None)  # an optimization started here fails at once
        roots = tmp_path / "no-sessions"
        roots.mkdir()
        self.child = subprocess.Popen(
            [
                DSHKIT,
                "serve",
                "--port",
                "0",
                "--root",
                str(roots),
                "--state-dir",
                str(self.state_dir),
            ],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.child.stderr is not None
        line = self.child.stderr.readline()
        found = re.search(r"serving http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{found.group(1)}",
            headers={"x-dshkit-token": (self.state_dir / "token").read_text().strip()},
            timeout=30,
        )

    def get(self, path: str) -> httpx.Response:
        return self.http.get(path)

    def close(self) -> None:
        self.http.close()
        self.child.terminate()
        self.child.communicate(timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path)
    yield server
    server.close()


@pytest.mark.process
def test_ids_and_numbers_no_row_can_have_are_404_or_400_on_the_web(served: Served) -> None:
    started = served.http.post("/api/optimizer/optimize", json={"raw": "把按钮改蓝"})
    assert started.status_code == 202, started.text
    job = started.json()["job"]["id"]
    not_found = (
        f"/api/gate/{HUGE}/screenshot",
        "/api/gate/%C2%B2/screenshot",
        "/api/optimizer/runs/%C2%B2",
        f"/api/optimizer/runs/{HUGE}",
        "/api/optimizer/runs/9223372036854775807",  # as large as an id can be: just not there
        f"/api/optimizer/runs/{'9' * 5000}",  # more digits than int() takes
    )
    bad_input = (
        "/api/gate/?limit=%C2%B2",
        "/api/optimizer/runs?limit=%C2%B2",
        f"/api/optimizer/runs?limit={HUGE}",
        "/api/profile/versions?limit=%C2%B2",
        "/api/graft/audit?limit=%C2%B2",
        "/api/sessions/?limit=%C2%B2",
        f"/api/sessions/dsh/x?around={HUGE}",
        "/api/sessions/dsh/x?offset=%C2%B2",
        "/api/signals/hits?signal=longTools&limit=%C2%B2",
        f"/api/signals/hits?signal=longTools&offset={HUGE}",
        f"/api/jobs/{job}/events?after=%C2%B2",
    )
    for path in not_found + bad_input:
        answer = served.get(path)
        assert answer.status_code == (404 if path in not_found else 400), (path, answer.text)
        assert answer.json()["ok"] is False and answer.json()["error"], path
    listed = served.get("/api/optimizer/runs")
    assert listed.status_code == 200 and len(listed.json()["runs"]) == 50


@pytest.mark.process
def test_a_damaged_store_is_503_on_the_web_naming_the_file(served: Served) -> None:
    damage(served.state_dir / DB_NAME)
    answer = served.get("/api/optimizer/runs")
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["kind"] == "unavailable" and "is damaged" in body["error"]
    assert str(served.state_dir / DB_NAME) in body["error"]


@pytest.mark.process
def test_a_read_only_mount_is_said_as_such_not_chmod(tmp_path: Path) -> None:
    """A store on a file system mounted read-only: chmod cannot help, and the error says so."""
    with small_disk(tmp_path) as disk:
        state = disk / "state"
        seed(state)
        read_only(disk)
        for words in (("profile", "mode", "custom"), ("scan",)):
            refused = cli(state, *words)
            assert refused.returncode != 0 and "Traceback" not in refused.stderr
            assert "mounted read-only: remount it read-write" in refused.stderr, refused.stderr
            assert "chmod" not in refused.stderr
