"""The real Claude Code, resumed run after run (`claude -p --resume`), answered by the lean path
(`dshkit.hooks.lean`): what it sends anew with every call (a prompt's `prompt_id`, a resumed
start's timing, each process's pid and messaging token) holds no hint back, and the model is
told what the full path would tell it: the profile and the capability facts, no more often.

Which path answered is seen from inside the hook processes Claude Code starts, by a shim on
their path that notes each `lean.answer`'s outcome (nothing else changes), imported by the hook
lines `install-hooks` wrote: they start Python without `site` (`install.launcher`), so a
`sitecustomize` alone would never be run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dshkit.capability.text import HEADING

from ..support.fakes import RefusingProxy, fake_anthropic, fake_chat
from ..support.paths import PYTHONPATH
from ..support.real import World, dsh_world, run_claude_raw, run_dsh, texts

pytestmark = pytest.mark.real

SHIM = """
import os
_log = os.environ.get("DSHKIT_TEST_LEAN_LOG")
if _log:
    from dshkit.hooks import lean
    _answer = lean.answer
    def _noted(event, *args, **kwargs):
        code = _answer(event, *args, **kwargs)
        with open(_log, "a") as handle:
            full = code is None or code is False  # (None here; False from older releases)
            handle.write(f"{event} {'full' if full else 'hint'}\\n")
        return code
    lean.answer = _noted
"""


def settled(world: World) -> None:
    """Until no process dshkit started for the world's state is left (the probes, the hints'
    steps, a Stop's refresh and harvest): what they write can void a hint, legitimately."""
    state = str(world.home / ".dsh" / "dshkit")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = []
        for entry in Path("/proc").iterdir():
            try:
                line = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if state.encode() in line:
                running.append(line)
        if not running:
            return
        time.sleep(0.1)
    raise AssertionError(f"still running: {running}")


def noting(tmp_path: Path, world: World) -> tuple[Path, dict[str, str]]:
    """Where the hook processes note how each call was answered (`SHIM`), and the variables
    that put the shim on their path; the world's installed hook lines import it first (a
    console script's `site` imports it by itself)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM)
    started = "from dshkit.cli import main"
    for name, text in world.settings_files().items():
        if text is not None and started.encode() in text:
            spliced = text.replace(started.encode(), b"import sitecustomize;" + started.encode())
            Path(name).write_bytes(spliced)
    noted = tmp_path / "lean.log"
    return noted, {"DSHKIT_TEST_LEAN_LOG": str(noted), "PYTHONPATH": f"{shim}:{PYTHONPATH}"}


def told_facts(text: str) -> list[str]:
    """The capability facts in what the model was sent: each block, from its heading to the
    blank line after it (the harness's own text follows, which may differ from run to run:
    the tools it lists)."""
    blocks = text.split(HEADING)[1:]
    return [HEADING + block.split("\n\n")[0] for block in blocks]


def test_resumed_claude_code_sessions_are_answered_from_their_hints(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "claude")
    world.install_hooks()
    noted, extra = noting(tmp_path, world)

    with fake_anthropic() as fake:
        said = run_claude_raw(world, fake, proxy, "say hi", **extra)
        session = json.JSONDecoder().raw_decode(said)[0]["session_id"]  # (stdout's JSON first)
        for words in ("again", "and again", "more", "once more"):
            settled(world)  # as a person's next run comes: what the last one started is done
            run_claude_raw(world, fake, proxy, words, resume=session, **extra)
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
    answers = noted.read_text().split("\n")[:-1]
    assert len(answers) == 10, answers  # a start and a prompt in each of the five runs
    # The first run's deliveries and the second's (the probes' results, news) leave no hint;
    # the third run's start keeps one, its prompt one too. From the fourth run on, every start
    # and every prompt is answered from its hint: graft's live check finds the transcript
    # quiet by its room hint or, where that cannot tell (a person's message after a request
    # since the hint, in a run with no tool call), by the store's last fold (`graft.fold`).
    later = ["SessionStart hint", "UserPromptSubmit hint"]
    assert answers[6:] == [*later, *later]
    conversation = [body for body in bodies if "title" not in texts(body)[:400].lower()]
    # The profile reached the model once (each request replays the session so far); the facts
    # three times: at the first start (modes unknown, probes pending), with the first prompt
    # (its mode reported), at the second start (the probes' results); never again.
    assert all(texts(body).count(world.text) == 1 for body in conversation)
    assert texts(conversation[-1]).count(HEADING) == 3
    assert "failed" not in world.hook_log()


def test_new_claude_code_sessions_start_and_first_prompt_from_their_templates(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    # Every new session's start tells the capability facts (its mode unknown: Claude Code's
    # SessionStart reports none) and its first prompt tells them again with the mode. Once
    # the probes' results are in, each is the same in every new session of the project: the
    # templates the last new session left answer them, and the model is told the same.
    world = World(tmp_path, "claude")
    world.install_hooks()
    noted, extra = noting(tmp_path, world)

    told = []
    with fake_anthropic() as fake:
        for words in ("say hi", "hello", "hi again", "and once more"):
            settled(world)  # (the probes the first run started are done by the second)
            before = len(fake.requests)
            run_claude_raw(world, fake, proxy, words, **extra)
            bodies = [r.body for r in fake.requests[before:] if r.path.startswith("/v1/messages")]
            conversation = [body for body in bodies if "title" not in texts(body)[:400].lower()]
            told.append(texts(conversation[0]))
    answers = noted.read_text().split("\n")[:-1]
    assert len(answers) == 8, answers  # a start and a first prompt in each of four sessions
    # The first session's start and prompt tell the probes pending (and start them); the
    # second's tell their results, in full; the third's and the fourth's are its templates'.
    assert answers[4:] == ["SessionStart hint", "UserPromptSubmit hint"] * 2
    assert all(text.count(HEADING) == 2 for text in told)  # at the start, with the prompt
    facts = [told_facts(text) for text in told]
    assert facts[1] == facts[2] == facts[3] and facts[0] != facts[1]
    assert "failed" not in world.hook_log()


def test_new_dsh_sessions_first_prompt_from_their_template(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    # DSH's first prompt carries the session's first context: the profile, and the
    # capability facts with the modes its log set at its start (events with sequence numbers
    # and times of their own). Once the probes' results are in, it is the same in every new
    # session of the project: the template the last new session left answers it.
    world = dsh_world(tmp_path, dsh_profile_template)
    noted, extra = noting(tmp_path, world)

    told = []
    with fake_chat() as fake:
        for words in ("say hi", "hello", "hi again", "and once more"):
            settled(world)  # (the probes the first session started are done by the second)
            fake.requests.clear()
            run_dsh(world, fake, proxy, words, **extra)
            # (the session's first request to its agent, which offers it tools: DSH may ask
            # for a title first, with the person's words too)
            asked = [texts(r.body) for r in fake.requests if r.body.get("tools")]
            told.append(asked[0] if asked else "")
            with noted.open("a") as marks:  # (where a session's calls end)
                marks.write("-\n")
    runs = noted.read_text().split("-\n")[:-1]
    prompts = [
        [line for line in run.split("\n") if line.startswith("UserPromptSubmit")] for run in runs
    ]
    assert all(prompts), runs
    # The first prompts of the third and fourth sessions: from the template.
    assert [run[0] for run in prompts] == [
        "UserPromptSubmit full",
        "UserPromptSubmit full",
        "UserPromptSubmit hint",
        "UserPromptSubmit hint",
    ], runs
    assert all(world.text in text for text in told), [text[:300] for text in told]  # (profile)
    facts = [told_facts(text) for text in told]
    assert facts[1] == facts[2] == facts[3] and facts[0] != facts[1]
    assert "failed" not in world.hook_log()
