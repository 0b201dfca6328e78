"""The delegate signal's patterns come from config.toml's [signals], checked where the file is
read, and every reader of the signals counts with them: `dshkit signals`, a profile
generation (whose counts the console then reads) and the console's own reads."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.config import ConfigError, load_config
from dshkit.llm import LLMConfig
from dshkit.profile.generate import generate
from dshkit.profile.service import ProfileService
from dshkit.profile.signals import DELEGATE_PATTERNS, configured
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.fakes import FakeOpenAI
from ..support.logs import Log, session_dir, write_log
from ..support.profile import A1, answer

# Asks the person to act in words no built-in pattern knows.
ASK = "The fix is ready; kick off the deploy pipeline when it suits you."
OWN = "(?i)kick off the deploy"


def write_config(state: Path, text: str) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    path = state / "config.toml"
    path.write_text(text)
    return path


def write_session(root: Path, name: str = "s-1") -> None:
    log = Log()
    log.turn_start()
    log.human("deploy the fix")
    log.say(ASK)
    write_log(session_dir(root, name) / "session.v4.jsonl.zstd", [log.events], session_id=name)


def test_the_patterns_are_the_builtin_ones_and_those_config_adds(tmp_path: Path) -> None:
    assert configured(tmp_path).delegate_patterns == DELEGATE_PATTERNS
    assert any("你" in p for p in DELEGATE_PATTERNS) and any("you" in p for p in DELEGATE_PATTERNS)
    write_config(tmp_path, f"[signals]\ndelegate_patterns = ['{OWN}']\n")
    assert configured(tmp_path).delegate_patterns == (*DELEGATE_PATTERNS, OWN)
    write_config(tmp_path, f"[signals]\ndelegate_builtin = false\ndelegate_patterns = ['{OWN}']\n")
    assert configured(tmp_path).delegate_patterns == (OWN,)
    write_config(tmp_path, "[signals]\ndelegate_builtin = false\n")
    assert configured(tmp_path).delegate_patterns == ()  # the signal is off


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "['you can run', 'please (run']",
            "[signals] delegate_patterns = ['you can run', 'please (run'] (an array) is not "
            "allowed (pattern 2, 'please (run', is not a valid regular expression: missing ), "
            "unterminated subpattern at position 7): expected an array of regular expressions",
        ),
        ("['']", "(pattern 1 is not a string of 1 to 1000 characters)"),
        ("[3]", "(pattern 1 is not a string of 1 to 1000 characters)"),
        ("'please run'", "delegate_patterns = 'please run' (a string) is not allowed"),
        ("[" + ", ".join(["'x'"] * 201) + "]", "(201 patterns): expected an array"),
    ],
)
def test_a_bad_pattern_is_an_error_naming_the_setting(
    tmp_path: Path, value: str, expected: str
) -> None:
    path = write_config(tmp_path, f"[signals]\ndelegate_patterns = {value}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, {})
    assert str(raised.value).startswith(f"{path}: ") and expected in str(raised.value)


def test_every_reader_counts_with_the_configured_patterns(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    write_session(root)
    command = ["signals", "--root", str(root), "--state-dir", str(state), "--json"]

    def cli_count() -> int:
        report = orjson.loads(run_dshkit(*command, home=tmp_path).stdout)
        return int(report["totals"]["delegateRuns"])

    assert cli_count() == 0  # no built-in pattern knows these words
    write_config(state, f"[signals]\ndelegate_patterns = ['{OWN}']\n")
    assert cli_count() == 1

    # The console's reads (the service the web's /api/signals routes call).
    service = ProfileService(state, sources=[Source("dsh", root)])
    assert service.signal_totals().totals["delegateRuns"] == 1
    (hit,) = service.signal_hits("delegateRuns").hits
    assert hit["match"] == "kick off the deploy"

    # A generation counts with them too, and what it stores is what the console reads.
    with Store(state) as store, FakeOpenAI() as fake:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        store.db.execute("DELETE FROM session_signals")
        fake.replies.append(answer({"entries": [{**A1, "evidence": ["[1]"]}]}))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        assert generate(scanner, keys, llm, force=True).ok
        (knobs,) = store.db.execute("SELECT config FROM session_signals").fetchone()
        assert OWN in orjson.loads(knobs)["delegate"]
        assert orjson.loads(knobs)["delegate"] == list(service.signal_config().delegate_patterns)
    assert service.signal_totals().totals["delegateRuns"] == 1


def test_a_bad_pattern_stops_each_reader_with_the_settings_name(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    write_session(root)
    write_config(state, "[signals]\ndelegate_patterns = ['kick (off']\n")
    command = ["signals", "--root", str(root), "--state-dir", str(state), "--json"]
    failed = run_dshkit(*command, home=tmp_path, check=False)
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert "[signals] delegate_patterns = ['kick (off']" in failed.stdout + failed.stderr
    with Store(state) as store, FakeOpenAI() as fake:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        run = generate(scanner, keys, llm, force=True)
        assert run.outcome == "config-error" and "[signals] delegate_patterns" in (run.error or "")
        assert fake.requests == []
