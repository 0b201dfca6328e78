"""Running an event's handlers: parse the payload, call each within the budget, answer.

Reached only for events that have handlers (see `hooks.run`). Every failure is logged and
becomes "no opinion"; one handler failing leaves the others their say.
"""

from __future__ import annotations

import importlib
import json
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from ..harnesses import detect as detect_harness
from ..paths import state_dir
from .protocol import HookInput, answer

MAX_PAYLOAD_BYTES = 8 << 20
DEFAULT_BUDGET_S = 8.0  # well inside the harnesses' own hook timeouts
_LOG_LIMIT = 1 << 20


class _OutOfTime(Exception):
    pass


def run(event: str, names: tuple[str, ...], env: Mapping[str, str], directory: str | None) -> int:
    """Answer `event` with the handlers `names`; always exits 0."""
    state = state_dir(directory)
    try:
        result = _answer(event, names, env, state)
    except BaseException as exc:  # even SystemExit or Ctrl-C: nothing may reach the agent
        log(state, event, f"{type(exc).__name__}: {exc}")
        return 0
    if result:
        sys.stdout.write(json.dumps(result, ensure_ascii=False))
        sys.stdout.flush()
    return 0


def _answer(
    event: str, names: tuple[str, ...], env: Mapping[str, str], directory: Path
) -> dict[str, Any]:
    raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"payload over {MAX_PAYLOAD_BYTES} bytes")
    payload = json.loads(raw or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    hook = HookInput(event, payload, detect_harness(payload, env), directory, env)
    budget = float(env.get("DSHKIT_HOOK_BUDGET_S") or DEFAULT_BUDGET_S)
    results = []
    with _deadline(budget):
        for name in names:
            try:
                result = _load(name)(hook)
            except _OutOfTime:
                raise
            except Exception as exc:
                log(directory, event, f"handler {name} failed: {type(exc).__name__}: {exc}")
                continue
            if result:
                results.append(result)
    return answer(event, results)


def _load(name: str) -> Callable[[HookInput], dict[str, Any] | None]:
    module, _, function = name.partition(":")
    handler: Callable[[HookInput], dict[str, Any] | None] = getattr(
        importlib.import_module(module), function
    )
    return handler


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise _OutOfTime in the main thread once the budget is spent (SIGALRM, Unix)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _OutOfTime(f"handlers took more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def log(directory: Path, event: str, message: str) -> None:
    """One line in <state dir>/hooks.log; never raises (the log must not break a hook)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "hooks.log"
        if path.exists() and path.stat().st_size > _LOG_LIMIT:
            path.replace(path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp}Z {event or '-'} {message}\n")
    except OSError:
        pass
