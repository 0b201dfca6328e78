"""The state the console tests look at: a session with friction, optimizer runs, a gate
verdict with its screenshot, a pending handoff and an audit record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dshkit.gate.judge import Verdict
from dshkit.gate.rework import shots_dir
from dshkit.gate.verdicts import save_verdict
from dshkit.graft import ledger
from dshkit.graft.lifecycle import begin
from dshkit.optimizer.runs import Run, save_run
from dshkit.paths import private_dir
from dshkit.sessions import Catalog, Scanner, Source
from dshkit.store import Store

from .graft_driver import plan_for
from .logs import MINUTE, Log, session_dir, write_log

SESSION = "console-friction-1"
LONG_OUTPUT = "输出" * 1500  # 3,000 characters: over the text limit
# A PNG of one pixel: what a gate screenshot is.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415478"
    "9c63f8cfc0000003010100c9fe92ef0000000049454e44ae426082"
)


def friction_session(root: Path, session_id: str = SESSION, cwd: str = "/home/dev/work") -> None:
    """A DSH session (working in `cwd`) with one hit of three signals: three failed writes in
    a row, a command running two minutes, and a turn that ends asking the person to act."""
    log = Log()
    log.turn_start()
    log.human("帮我把构建修好，用中文回答")
    for n in range(3):
        log.call("write", f"w{n}", {"path": "src/main.py"})
        log.result(f"w{n}", 100, failed=True, code="E_WRITE", text="写入失败：权限不足")
    log.call("bash", "b1", {"command": "make test"})
    log.result("b1", 2 * MINUTE, text=LONG_OUTPUT)
    log.turn_start()
    log.human("继续")
    log.say("请你重试一下构建命令，然后告诉我结果。")
    path = session_dir(root, session_id, cwd) / "session.v4.jsonl.zstd"
    write_log(path, [[e] for e in log.events], session_id=session_id, cwd=cwd)


def build_world(state_dir: Path, root: Path) -> dict[str, object]:
    """The state a console test looks at: sessions scanned (the corpus and the friction
    session), two optimizer runs, a gate verdict with its screenshot, a pending handoff and an
    audit record. Returns what the tests refer to."""
    friction_session(root)
    with Store(state_dir) as store:
        Scanner(store).scan([Source("dsh", root)])
        corpus = next(s for s in Catalog(store).recent("dsh") if s.session_id != SESSION)
        off = save_run(store, Run(tier="off", form="ptc", raw="修一下登录", output="修一下登录"))
        advanced = save_run(
            store,
            Run(
                tier="advanced",
                form="ptc",
                raw="修一下登录",
                output="修复 src/login.py 中的登录失败：……完成后运行测试。",
                length_gate={"ok": True, "ratio": 2.1},
                audit={"counts": {"traced": 3, "untraced": 1}},
            ),
        )
        shots = shots_dir(state_dir)
        private_dir(shots)
        (shots / "shot-1.png").write_bytes(PNG)
        verdict = save_verdict(
            store,
            Verdict(
                path="/home/dev/work/tank.html",
                sha256="0" * 64,
                verdict="blank-canvas-0",
                recovered=False,
                elapsed_ms=4000,
                screenshot=str(shots / "shot-1.png"),
                canvas=[{"width": 0, "height": 0}],
                errors=[],
                overlay_text=None,
            ),
        )
        plan = dataclasses.replace(
            plan_for(corpus.session_id, str(root)), harness="dsh", target_harness="dsh"
        )
        txn = begin(store, plan, ignite=False)
        ledger.audit(store, "model-nudge", harness="dsh", session_id=corpus.session_id, turn=3)
    return {
        "corpus": corpus.session_id,
        "runs": (off.id, advanced.id),
        "verdict": verdict.id,
        "txn": txn.id,
    }
