"""The background job runner: one job of a kind per store, progress events, results, followers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from dshkit.jobs import JobFailed, JobRunner, Progress


def gated(gate: threading.Event, result: object = "ok") -> Callable[[Progress], object]:
    def work(progress: Progress) -> object:
        progress("waiting", "for the gate")
        assert gate.wait(30), "the test never opened the gate"
        return result

    return work


def test_one_job_of_a_kind_per_store(tmp_path: Path) -> None:
    runner, gate = JobRunner(), threading.Event()
    first = runner.submit("profile", tmp_path / "a", gated(gate, 1))
    again = runner.submit("profile", tmp_path / "a" / ".." / "a", gated(gate, 2))
    assert first.started and not again.started and again.job is first.job  # not a second run
    other_store = runner.submit("profile", tmp_path / "b", gated(gate))
    other_kind = runner.submit("optimizer", tmp_path / "a", gated(gate))
    assert other_store.started and other_kind.started
    assert runner.current("profile", tmp_path / "a") is first.job
    gate.set()
    assert all(s.job.wait(30) for s in (first, other_store, other_kind))
    assert first.job.result == 1 and runner.current("profile", tmp_path / "a") is None
    after = runner.submit("profile", tmp_path / "a", gated(gate, 3))
    assert after.started and after.job is not first.job and after.job.wait(30)
    assert runner.latest("profile", tmp_path / "a") is after.job and after.job.result == 3


def test_progress_events_result_and_listing(tmp_path: Path) -> None:
    runner = JobRunner()

    def work(progress: Progress) -> dict[str, int]:
        progress("scanning", "reading", 0.5)
        progress("generating")
        return {"version": 7}

    submitted = runner.submit("profile", tmp_path, work, label="forced regeneration")
    assert submitted.job.wait(30)
    job = submitted.job
    stages = [(e.stage, e.message, e.fraction) for e in runner.events(job)]
    assert stages == [
        ("queued", "forced regeneration", None),
        ("scanning", "reading", 0.5),
        ("generating", "", None),
        ("done", "finished", 1.0),
    ]
    assert [e.seq for e in runner.events(job, after=2)] == [3, 4]
    view = job.as_json()
    assert (view["state"], view["stage"], view["result"], view["error"]) == (
        "done",
        "done",
        {"version": 7},
        None,
    )
    started, finished = view["startedAt"], view["finishedAt"]
    assert view["events"] == 4 and started is not None and finished is not None
    assert started <= finished
    assert [j.id for j in runner.jobs("profile")] == [job.id] and runner.jobs("gate") == []


def test_failures_are_kept_with_their_reason(tmp_path: Path) -> None:
    runner = JobRunner()

    def refused(progress: Progress) -> None:
        raise JobFailed("the model call failed (http-error)", {"ok": False})

    def buggy(progress: Progress) -> None:
        raise KeyError("oops")

    def bad_stage(progress: Progress) -> None:
        progress("done")  # the runner's own stage

    def bad_fraction(progress: Progress) -> None:
        progress("scanning", fraction=1.5)

    jobs = []
    for kind, work in (("a", refused), ("b", buggy), ("c", bad_stage), ("d", bad_fraction)):
        jobs.append(runner.submit(kind, tmp_path, work).job)
    assert all(job.wait(30) for job in jobs)
    assert [job.state for job in jobs] == ["failed"] * 4
    assert jobs[0].error == "the model call failed (http-error)"
    assert jobs[0].result == {"ok": False}
    assert jobs[1].error == "internal error: KeyError: 'oops'"
    assert "reserved" in (jobs[2].error or "") and "0..1" in (jobs[3].error or "")
    assert runner.events(jobs[0])[-1].stage == "failed"


def test_old_jobs_and_events_are_bounded_and_counted(tmp_path: Path) -> None:
    runner = JobRunner(keep=2)

    def chatty(progress: Progress) -> None:
        for n in range(1005):
            progress("generating", f"{n} characters")

    for _ in range(3):
        assert runner.submit("profile", tmp_path, chatty).job.wait(30)
    last = runner.submit("profile", tmp_path, chatty).job
    assert last.wait(30)
    assert len(runner.jobs()) == 3  # two finished ones kept, then the newest
    view = last.as_json()
    assert view["events"] == 1007 and view["droppedEvents"] == 7  # nothing dropped silently
    assert runner.events(last)[0].seq == 8


def test_a_follower_gets_each_event_as_it_happens(tmp_path: Path) -> None:
    runner = JobRunner()
    gates = [threading.Event(), threading.Event()]

    def work(progress: Progress) -> str:
        assert gates[0].wait(30)
        progress("scanning")
        assert gates[1].wait(30)
        progress("generating")
        return "ok"

    job = runner.submit("profile", tmp_path, work).job

    async def follow() -> list[str]:
        seen = []
        async for event in runner.follow(job, heartbeat=30):
            assert event is not None
            seen.append(event.stage)
            # The job goes on only once this follower has seen where it is: each event
            # arrived while the job was still waiting, not in a batch at the end.
            if event.stage == "queued":
                gates[0].set()
            elif event.stage == "scanning":
                gates[1].set()
        return seen

    seen = asyncio.run(asyncio.wait_for(follow(), 30))
    assert seen == ["queued", "scanning", "generating", "done"]


def test_a_follower_hears_heartbeats_while_nothing_happens(tmp_path: Path) -> None:
    runner, gate = JobRunner(), threading.Event()
    job = runner.submit("profile", tmp_path, gated(gate)).job

    async def follow() -> list[str | None]:
        seen: list[str | None] = []
        async for event in runner.follow(job, after=2, heartbeat=0.05):
            seen.append(None if event is None else event.stage)
            if event is None:
                gate.set()
        return seen

    seen = asyncio.run(asyncio.wait_for(follow(), 30))
    assert seen[0] is None and seen[-1] == "done" and "waiting" not in seen


@pytest.mark.parametrize("after", [0, 3])
def test_following_a_finished_job_replays_and_ends(tmp_path: Path, after: int) -> None:
    runner, gate = JobRunner(), threading.Event()
    gate.set()
    job = runner.submit("profile", tmp_path, gated(gate)).job
    assert job.wait(30)

    async def follow() -> list[int]:
        return [e.seq async for e in runner.follow(job, after) if e is not None]

    assert asyncio.run(asyncio.wait_for(follow(), 30)) == [1, 2, 3][after:]
