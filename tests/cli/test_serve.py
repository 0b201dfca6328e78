"""`dshkit serve` as a person runs it: it says only what is true, after the port is its own."""

from __future__ import annotations

import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from ..support.cli import COMMAND, environment, run_dshkit

pytestmark = pytest.mark.process


def serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, "serve", "--root", str(tmp_path), *args],
        env=environment(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_non_loopback_bind_is_refused_without_allow_remote(tmp_path: Path) -> None:
    child = serve(tmp_path, "--host", "0.0.0.0", "--port", "0")
    _, err = child.communicate(timeout=60)
    assert child.returncode == 1
    assert "0.0.0.0" in err and "not a loopback address" in err and "--allow-remote" in err
    assert "serving" not in err


def test_a_busy_port_is_an_error_not_a_claim(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        child = serve(tmp_path, "--port", str(port))
        _, err = child.communicate(timeout=60)
    assert child.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err and "in use" in err
    assert "serving" not in err


def test_port_zero_prints_the_port_it_got(tmp_path: Path) -> None:
    child = serve(tmp_path, "--port", "0")
    try:
        assert child.stderr is not None
        first = child.stderr.readline()  # printed once the socket is bound and listening
        found = re.search(r"serving http://127\.0\.0\.1:(\d+)/", first)
        assert found, first
        port = int(found.group(1))
        assert port != 0
        assert "only this machine can connect" in child.stderr.readline()
        token = (tmp_path / ".dsh" / "dshkit" / "token").read_text().strip()
        response = httpx.get(
            f"http://127.0.0.1:{port}/api/profile/state",
            headers={"x-dshkit-token": token},
            timeout=20,
        )
        assert response.status_code == 200 and response.json()["mode"] == "auto"
    finally:
        child.terminate()
        child.communicate(timeout=20)


def test_doctor_sees_that_the_running_service_is_this_installs(tmp_path: Path) -> None:
    # Once it printed its login link, its link is recorded: "serving" comes before that.
    child, url, _ = _started(tmp_path)
    try:
        for state, ours in ((None, True), (tmp_path / "elsewhere", False)):
            extra = ["--state-dir", str(state)] if state else []
            done = run_dshkit(
                "doctor", "--json", "--port", url.rsplit(":", 1)[1], *extra,
                home=tmp_path, timeout=60, check=False,
            )  # fmt: skip
            report = orjson.loads(done.stdout)
            assert report["service"]["servesThisStateDir"] is ours, report["service"]
    finally:
        child.terminate()
        child.communicate(timeout=20)


def _started(tmp_path: Path) -> tuple[subprocess.Popen[str], str, str]:
    """A `dshkit serve --port 0` of `tmp_path`'s home: the process, its URL and the one-time
    login link it printed."""
    child = serve(tmp_path, "--port", "0")
    assert child.stderr is not None
    port = re.search(r"serving (http://127\.0\.0\.1:\d+)/", child.stderr.readline())
    assert port
    child.stderr.readline()
    printed = re.search(r"open the console: (\S+) ", child.stderr.readline())
    assert printed, "serve printed no login link"
    return child, port.group(1), printed.group(1)


def _signs_in(link: str) -> bool:
    """Whether `link` signs a browser in: the console page with the tab's credential."""
    answer = httpx.get(link, timeout=20)
    return answer.status_code == 200 and 'name="dshkit-console"' in answer.text


def test_serve_records_its_link_for_dshkit_open_and_forgets_it_on_exit(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    nothing = run_dshkit("open", "--print", home=tmp_path, check=False)
    assert nothing.returncode == 5 and "no `dshkit serve` is running" in nothing.stderr
    unavailable = run_dshkit("open", "--json", home=tmp_path, check=False)
    assert orjson.loads(unavailable.stdout)["kind"] == "unavailable"
    child, url, printed = _started(tmp_path)
    try:
        token = (state / "token").read_text().strip()
        assert printed.startswith(f"{url}/?login=") and token not in printed
        record = state / "serve.json"
        assert stat.S_IMODE(record.stat().st_mode) == 0o600 and token not in record.read_text()
        shown = run_dshkit("open", "--print", home=tmp_path, check=False)
        link = shown.stdout.strip()
        assert shown.returncode == 0 and link.startswith(f"{url}/?login=") and token not in link
        as_json = orjson.loads(run_dshkit("open", "--json", home=tmp_path).stdout)
        assert as_json["oneTime"] and as_json["url"] not in (link, printed)
        # Each link signs in once.
        assert _signs_in(printed) and not _signs_in(printed)
        assert _signs_in(link) and not _signs_in(link)
        # Opened as the browser would be ($BROWSER is what `webbrowser` runs first): on a
        # private redirect file, so that its command line holds no secret.
        opened = tmp_path / "opened"
        browser = f"{sys.executable} -c \"import sys; open('{opened}', 'w').write(sys.argv[1])\" %s"
        done = run_dshkit("open", home=tmp_path, env={"BROWSER": browser}, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        argv = opened.read_text()
        assert argv.startswith("file://") and "login=" not in argv and token not in argv
        redirect = Path(argv.removeprefix("file://"))
        assert stat.S_IMODE(redirect.stat().st_mode) == 0o600
        assert stat.S_IMODE(redirect.parent.stat().st_mode) == 0o700
        sent_on = re.search(r'url=([^"]+)"', redirect.read_text())
        assert sent_on and sent_on.group(1).startswith(f"{url}/?login=")
        assert _signs_in(sent_on.group(1).replace("&amp;", "&"))
    finally:
        child.terminate()
        child.communicate(timeout=20)
    assert not (state / "serve.json").exists()
    gone = run_dshkit("open", "--print", home=tmp_path, check=False)
    assert gone.returncode == 5 and "no `dshkit serve` is running" in gone.stderr


def test_a_new_start_draws_new_secrets(tmp_path: Path) -> None:
    """What the last start handed out (its token, an unused link) opens nothing after a
    restart; the new start's do."""
    state = tmp_path / ".dsh" / "dshkit"
    child, url, unused = _started(tmp_path)
    try:
        old = (state / "token").read_text().strip()
        assert httpx.get(f"{url}/api/status", headers={"x-dshkit-token": old}).status_code == 200
    finally:
        child.terminate()
        child.communicate(timeout=20)
    child, url, printed = _started(tmp_path)
    try:
        new = (state / "token").read_text().strip()
        assert new != old and stat.S_IMODE((state / "token").stat().st_mode) == 0o600
        stale = httpx.get(f"{url}/api/status", headers={"x-dshkit-token": old})
        assert stale.status_code == 401
        assert httpx.get(f"{url}/api/status", headers={"x-dshkit-token": new}).status_code == 200
        assert not _signs_in(unused.replace(unused.split("/?")[0], url))
        assert _signs_in(printed)
    finally:
        child.terminate()
        child.communicate(timeout=20)


def test_a_service_asked_to_stop_exits_0(tmp_path: Path) -> None:
    """SIGTERM is how a service is stopped (`make run` under a supervisor, `kill`): a clean
    stop, exit 0, the record gone; `make run` then reports no error."""
    child, _, _ = _started(tmp_path)
    child.terminate()
    _, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert not (tmp_path / ".dsh" / "dshkit" / "serve.json").exists()
