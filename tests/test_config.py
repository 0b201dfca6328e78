"""`<state dir>/config.toml` and its environment overrides, checked in one place."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dshkit.config import SECTIONS, ConfigError, load_config
from dshkit.errors import Invalid
from dshkit.llm import LLMConfig, LLMConfigError

from .support.cli import run_dshkit


def write(state: Path, text: str | bytes) -> Path:
    path = state / "config.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def error(state: Path, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as raised:
        load_config(state, environ or {})
    return str(raised.value)


def test_no_file_gives_every_default(tmp_path: Path) -> None:
    config = load_config(tmp_path, {})
    assert config["llm"] == {key: s.default for key, s in SECTIONS["llm"].items()}
    assert config.path == tmp_path / "config.toml"


def test_values_are_read_and_integers_serve_as_numbers(tmp_path: Path) -> None:
    write(tmp_path, "[llm]\ntimeout_s = 5\ndeadline_s = 12.5\nmax_tokens = 64\n")
    llm = load_config(tmp_path, {})["llm"]
    assert (llm["timeout_s"], llm["deadline_s"], llm["max_tokens"]) == (5.0, 12.5, 64)
    assert isinstance(llm["timeout_s"], float)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[llm]\nmax_tokens = "lots"\n',
            "[llm] max_tokens = 'lots' (a string) is not allowed: expected an integer at least 1 "
            "and at most 1,000,000 (the most tokens one reply may have)",
        ),
        (
            "[llm]\ntimeout_s = -5\n",
            "[llm] timeout_s = -5 (an integer) is not allowed: expected a number above 0 and at "
            "most 3,600",
        ),
        ("[llm]\nmax_tokens = true\n", "[llm] max_tokens = True (a boolean) is not allowed"),
        ("[llm]\ndeadline_s = nan\n", "[llm] deadline_s = nan (a number) is not allowed"),
        ("[llm]\nmax_tokens = 2.5\n", "max_tokens = 2.5 (a number) is not allowed"),
        (
            '[llm]\nbase_url = "api.deepseek.com"\n',
            "[llm] base_url = 'api.deepseek.com' (a string) is not allowed: expected an "
            "http:// or https:// URL",
        ),
        ('[llm]\nmodel = ""\n', "[llm] model = '' (a string) is not allowed"),
        (
            "llm = 5\n",
            "[llm] must be a table (a [llm] header with keys under it), not 5 (an integer)",
        ),
        ('llm = "x"\n', "[llm] must be a table"),
        (
            "[llm]\nmodle = 'typo'\n",
            "[llm] has unknown keys ['modle']; known: base_url, api_key, model, max_tokens, "
            "timeout_s, deadline_s",
        ),
        ("[lm]\nmodel = 'x'\n", "unknown section [lm]; known: [llm]"),
        ("top = 1\n", "unknown section [top]"),
        ("[llm\n", "is not valid TOML: "),
    ],
)
def test_each_bad_config_names_the_file_key_value_and_what_is_allowed(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    message = error(tmp_path)
    assert message.startswith(str(path)) and expected in message, message


def test_invalid_utf8_names_the_file_and_the_byte(tmp_path: Path) -> None:
    path = write(tmp_path, b'[llm]\nmodel = "m\xff"\n')
    assert error(tmp_path) == f"{path} is not UTF-8 text: byte 0xff at offset 16"


def test_an_unreadable_config_is_named(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    assert error(tmp_path).startswith(f"{tmp_path / 'config.toml'} cannot be read: ")


def test_a_bad_key_is_never_echoed(tmp_path: Path) -> None:
    write(tmp_path, '[llm]\napi_key = "sk-secret with space"\n')
    message = error(tmp_path)
    assert "sk-secret" not in message
    assert "[llm] api_key = (a string of 20 characters, not shown) is not allowed" in message


def test_environment_overrides_are_checked_and_name_the_variable(tmp_path: Path) -> None:
    write(tmp_path, '[llm]\nmodel = "file-model"\n')
    config = load_config(tmp_path, {"DSHKIT_LLM_MODEL": "env-model", "DSHKIT_LLM_BASE_URL": ""})
    assert config["llm"]["model"] == "env-model"  # an empty variable is unset
    assert config["llm"]["base_url"] == SECTIONS["llm"]["base_url"].default
    assert error(tmp_path, {"DSHKIT_LLM_BASE_URL": "ftp://host"}) == (
        "DSHKIT_LLM_BASE_URL='ftp://host' (a string) is not allowed: expected an http:// or "
        "https:// URL (it overrides [llm] base_url: the OpenAI-compatible API's base URL, "
        "where chat completions live)"
    )
    message = error(tmp_path, {"DSHKIT_LLM_API_KEY": "sk-x\nInjected: 1"})
    assert message.startswith("DSHKIT_LLM_API_KEY=(a string of 16 characters, not shown)")
    assert "Injected" not in message
    assert "DSHKIT_LLM_MODEL='a b'" in error(tmp_path, {"DSHKIT_LLM_MODEL": "a b"})


def test_llm_config_errors_are_what_llm_callers_catch(tmp_path: Path) -> None:
    write(tmp_path, "[llm]\ntimeout_s = -5\n")
    with pytest.raises(LLMConfigError, match=r"\[llm\] timeout_s = -5"):
        LLMConfig.load(tmp_path, {})
    assert issubclass(LLMConfigError, Invalid) and not issubclass(LLMConfigError, ValueError)


def dshkit(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_dshkit(*args, home=home, check=False)


def test_the_commands_report_a_bad_config_without_a_traceback(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write(state, "[llm]\ntimeout_s = -5\n")
    doctor = dshkit(tmp_path, "doctor", "--json", "--port", "1", "--state-dir", str(state))
    assert "[llm] timeout_s = -5 (an integer) is not allowed" in doctor.stdout
    assert "Traceback" not in doctor.stderr
    write(state, '[llm]\nmax_tokens = "lots"\n')
    generate = dshkit(tmp_path, "profile", "generate", "--state-dir", str(state))
    assert generate.returncode != 0 and "Traceback" not in generate.stderr
    assert "[llm] max_tokens = 'lots' (a string) is not allowed" in generate.stderr


def test_graft_windows_map_model_names_to_tokens(tmp_path: Path) -> None:
    assert load_config(tmp_path, {})["graft"]["windows"] == {}
    write(
        tmp_path,
        '[graft]\nwindow_tokens = 64000\n\n[graft.windows]\n"claude-opus-4-1[1m]" = 1_000_000\n'
        'claude-sonnet-4-5 = 200000\n"deepseek v4" = 1000\n',
    )
    graft = load_config(tmp_path, {})["graft"]
    assert graft["windows"] == {
        "claude-opus-4-1[1m]": 1_000_000,
        "claude-sonnet-4-5": 200_000,
        "deepseek v4": 1_000,
    }
    assert graft["window_tokens"] == 64_000
    with pytest.raises(TypeError):
        graft["windows"]["gpt-5"] = 400_000  # settings are shared: read-only
    write(tmp_path, '[graft]\nwindows = { "gpt-5" = 100_000_000 }\n')  # inline table, top bound
    assert load_config(tmp_path, {})["graft"]["windows"] == {"gpt-5": 100_000_000}


WINDOWS_ALLOWED = (
    "expected a table of non-empty model names = an integer at least 1,000 and at most 100,000,000"
)


@pytest.mark.parametrize(
    ("entries", "shown"),
    [
        ('"claude-x" = 999', "'claude-x' = 999 (an integer)"),
        ('"claude-x" = 100_000_001', "'claude-x' = 100000001 (an integer)"),
        ('gpt = "200k"', "'gpt' = '200k' (a string)"),
        ("gpt = 2.5e5", "'gpt' = 250000.0 (a number)"),
        ("gpt = true", "'gpt' = True (a boolean)"),
        ('"" = 200000', "'' = 200000 (an integer)"),
        ('" gpt" = 200000', "' gpt' = 200000 (an integer)"),
        ("gpt.window = 200000", "'gpt' = {'window': 200000} (a table)"),
    ],
)
def test_a_bad_graft_window_names_the_file_the_table_the_key_and_the_value(
    tmp_path: Path, entries: str, shown: str
) -> None:
    path = write(tmp_path, f"[graft.windows]\nok = 128000\n{entries}\n")
    message = error(tmp_path)
    assert message.startswith(f"{path}: [graft.windows] {shown} is not allowed: "), message
    assert WINDOWS_ALLOWED in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[graft]\nwindows = 200000\n", "[graft] windows = 200000 (an integer) is not allowed"),
        ('[graft]\nwindows = ["a"]\n', "[graft] windows = ['a'] (an array) is not allowed"),
        ("[graft.sizes]\na = 1000\n", "[graft] has unknown keys ['sizes']"),
        ("[llm.windows]\na = 1000\n", "[llm] has unknown keys ['windows']"),
        ("[guard.windows]\na = 1000\n", "[guard] has unknown keys ['windows']"),
    ],
)
def test_only_graft_windows_is_a_nested_table(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    message = error(tmp_path)
    assert message.startswith(str(path)) and expected in message, message
