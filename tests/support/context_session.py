"""A session whose context crosses its warning line and that a handoff cut: what the console's
context chart and timeline marks are tested on, with a profile entry quoting it.

The log announces a window of 100,000 tokens; the last request of each of its five turns
holds 30k, 40k, 50k, 57k and 57.5k tokens. Under the default `[graft]` settings (dynamic, a
handoff of 12,000 tokens, 3 reserve turns) the lines each turn ends with are, by
`watermark.calculate_safe_watermark`:

- turn 1: no growth seen yet, the configured 4,000 a turn: cost 24,000, forced 0.75 (the
  ceiling), warning 0.70;
- turns 2 and 3: 10,000 a turn: cost 42,000, forced 0.58, warning 0.53;
- turn 4: rises 10k, 10k, 7k, a mean of 9,000: cost 39,000, forced 0.61, warning 0.56; at
  0.57 it is in the warning band (the first turn to be), below the forced cut;
- turn 5: rises 10k, 10k, 7k, 0.5k, a mean of 6,875: cost 32,625, forced 0.67375, warning
  0.62375.

A handoff (pending) names the end of turn 3 as its boundary. Turn 2 runs a command for 90 s
(a long tool: a signal hit), and its message is quoted by the profile entry QUOTE_ENTRY.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dshkit.graft.lifecycle import Txn, begin
from dshkit.store import Store

from .graft_driver import plan_for
from .logs import Log, session_dir, write_log
from .profile import store_version

CONTEXT_SESSION = "context-use-1"
CONTEXT_CWD = "/home/dev/ctx"
WINDOW = 100_000
CONTEXTS = (30_000, 40_000, 50_000, 57_000, 57_500)
# (forced, warning) at the end of each turn, as the docstring works them out
LINES = ((0.75, 0.70), (0.58, 0.53), (0.58, 0.53), (0.61, 0.56), (0.67375, 0.62375))
QUOTED = "把图表的预警线画出来"
QUOTE_ENTRY = "Q1"


@dataclasses.dataclass(frozen=True)
class ContextWorld:
    boundary_seq: int  # the last event of turn 3
    quoted_seq: int  # the human message QUOTE_ENTRY quotes
    long_call_seq: int  # the 90 s command of turn 2
    txn: Txn


def context_log() -> tuple[Log, int, int, int]:
    """The session's events; the seqs of the end of turn 3, the quoted message and the long
    command's call."""
    log = Log()
    boundary = quoted = long_call = -1
    for turn, tokens in enumerate(CONTEXTS, start=1):
        log.turn_start()
        log.add("request/context", {"contextWindow": WINDOW, "model": "deepseek-v4-flash"})
        log.human(QUOTED + "，然后继续" if turn == 2 else f"第 {turn} 步：继续做")
        if turn == 2:
            quoted = log.events[-1]["seq"]
            log.call("bash", "long-1", {"command": "make all"})
            long_call = log.events[-1]["seq"]
            log.result("long-1", 90_000, text="构建完成")
        else:
            log.call("read", f"r{turn}", {"path": f"src/part{turn}.py"})
            log.result(f"r{turn}", 800, text="内容")
        usage = {"inputTokens": tokens - 20_000, "cacheReadTokens": 20_000, "outputTokens": 300}
        log.add(
            "assistant/message",
            {
                "turn": log.turn,
                "message": {"role": "assistant", "content": [{"type": "text", "text": "好的"}]},
                "usage": usage,
            },
        )
        log.add("turn/end", {"turn": log.turn})
        if turn == 3:
            boundary = log.events[-1]["seq"]
    return log, boundary, quoted, long_call


def write_context_session(root: Path) -> tuple[int, int, int]:
    log, boundary, quoted, long_call = context_log()
    path = session_dir(root, CONTEXT_SESSION, CONTEXT_CWD) / "session.v4.jsonl.zstd"
    write_log(path, [[e] for e in log.events], session_id=CONTEXT_SESSION, cwd=CONTEXT_CWD)
    return boundary, quoted, long_call


def cut_and_quote(store: Store, cwd: Path, boundary: int, entries: list[dict[str, object]]) -> Txn:
    """A pending handoff of the scanned context session cut at `boundary`, and a profile whose
    entry QUOTE_ENTRY quotes its turn-2 message (besides `entries`)."""
    plan = plan_for(CONTEXT_SESSION, str(cwd), boundary=boundary)
    plan = dataclasses.replace(plan, harness="dsh", target_harness="dsh")
    txn = begin(store, plan, ignite=False)
    quoting: dict[str, object] = {
        "id": QUOTE_ENTRY,
        "category": "C",
        "claim": "要求图表画出预警线",
        "evidence": [QUOTED],
        "confidence": "high",
    }
    store_version(store, [*entries, quoting], version=1)
    return txn
