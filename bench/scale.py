"""Benchmark at scale: 2,000 sessions and at least 1 GiB of logs over DSH, Claude Code and Codex.

Generates the corpus once into a cache directory (deterministic from --seed, streamed to disk,
reused while its manifest matches the arguments and the generator's source), then runs each
step in a fresh process, so that each peak RSS is the step's own: the first scan, a
no-growth rescan, `sessions list` (default limit, then all), `signals` (the first count, then
from the stored results) and one profile generation's material assembly. The same steps run
again on the first --small share of the sessions (hard links, no new bytes), and the table
shows how each figure grows against how the data grows.

    python bench/scale.py [--sessions 2000] [--gib 1.0] [--seed 1] [--small 0.25] [--dir D]
                          [--clean]

Targets (issue 8, item 17): peak RSS under 300 MiB in every step, and no figure growing
faster than the data. The material step calls `dshkit.profile.generate._material` through
`assemble_material` below: adjust that one function when its name or signature changes.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus_multi import (
    ROOTS,
    Made,
    Planned,
    link_subset,
    scale_corpus,
    write_session,
)

RSS_TARGET_MIB = 300
# Timing noise on a shared 2-core VM: a figure may grow up to this much faster than the data
# before it is flagged.
_TOLERANCE = 1.15
_HERE = Path(__file__).resolve().parent
_GENERATORS = _HERE.parent / "tests" / "support"  # the corpus writers: a change makes a new corpus


def assemble_material(state_dir: Path, roots: list[Path]) -> dict[str, Any]:
    """One profile generation's material assembly, as `generate` does it: the session keys
    from a (no-growth) scan, then the material. The one place to adjust when it changes."""
    from dshkit.profile.generate import _material
    from dshkit.sessions import Scanner, Source
    from dshkit.store import Store

    with Store(state_dir) as store:
        scanner = Scanner(store)
        sources = [Source(harness, root) for root in roots for harness in ROOTS]
        keys = scanner.scan(sources).keys
        started = time.perf_counter()
        material = _material(scanner, keys)
        seconds = time.perf_counter() - started
    return {
        "sessions": len(keys),
        "material": len(material),
        "chars": sum(len(m.text) for m in material),
        "seconds": seconds,
    }


class StepFailed(Exception):
    """A step's process failed; the message has its command and the end of its stderr."""


@dataclass
class Step:
    name: str
    seconds: float
    peak_mib: float
    work_s: float | None  # the step's own figure for its work, where it reports one
    note: str = ""


@dataclass
class Corpus:
    directory: Path
    made: list[Made]
    key_text: str  # what it was generated from (arguments, generator source)

    @property
    def roots(self) -> list[Path]:
        return [self.directory / name for name in ROOTS.values()]

    def total(self, attribute: str) -> int:
        return sum(getattr(m, attribute) for m in self.made)

    def describe(self) -> str:
        files = sum(len(m.files) for m in self.made)
        by = {h: sum(m.bytes for m in self.made if m.harness == h) for h in ROOTS}
        share = ", ".join(f"{h} {b / 2**20:,.0f} MiB" for h, b in by.items())
        largest = max(m.bytes for m in self.made)
        return (
            f"{len(self.made):,} sessions, {files:,} files, {self.total('bytes') / 2**30:.3f} GiB "
            f"({share}; largest session {largest / 2**20:.1f} MiB), "
            f"{self.total('events'):,} events, {self.total('human_messages'):,} human messages"
        )


def _generator_digest() -> str:
    digest = hashlib.sha256()
    for name in ("corpus.py", "corpus_multi.py"):
        digest.update((_GENERATORS / name).read_bytes())
    return digest.hexdigest()[:16]


def _load_or_generate(directory: Path, sessions: int, total: int, seed: int) -> Corpus:
    manifest = directory / "manifest.json"
    key = {"sessions": sessions, "bytes": total, "seed": seed, "generator": _generator_digest()}
    key_text = orjson.dumps(key).decode()
    if manifest.exists():
        stored = orjson.loads(manifest.read_bytes())
        if stored["key"] == key_text:
            print(f"corpus: reusing {directory}")
            return Corpus(directory, [Made(**m) for m in stored["made"]], stored["key"])
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    _check_disk(directory, total)
    print(f"corpus: generating {sessions:,} sessions, {total / 2**30:.2f} GiB into {directory}")
    started = time.perf_counter()
    written = 0

    def progress(made: Made) -> None:
        nonlocal written
        written += made.bytes
        if (made.index + 1) % 200 == 0 or made.index + 1 == sessions:
            rate = written / 2**20 / (time.perf_counter() - started)
            print(f"  {made.index + 1:,} sessions, {written / 2**20:,.0f} MiB ({rate:.0f} MiB/s)")

    made = scale_corpus(directory, sessions, total, seed, on_session=progress)
    document = {"key": key_text, "made": [asdict(m) for m in made]}
    manifest.write_bytes(orjson.dumps(document))  # written last: marks the corpus complete
    return Corpus(directory, made, key_text)


def _subset(corpus: Corpus, share: float) -> Corpus:
    """The first sessions of each harness holding `share` of that harness's bytes, hard-linked
    into a corpus of their own: the same mix and kinds of sessions, a `share` of the data."""
    chosen: list[Made] = []
    for harness in ROOTS:
        sessions = [m for m in corpus.made if m.harness == harness]
        wanted = share * sum(m.bytes for m in sessions)
        taken = 0
        for made in sessions:
            if taken + made.bytes / 2 > wanted:
                break
            chosen.append(made)
            taken += made.bytes
    chosen.sort(key=lambda m: m.index)
    directory = corpus.directory.parent / f"share-{share:g}"
    marker = directory / "complete"
    if not marker.exists() or marker.read_text() != corpus.key_text:
        if directory.exists():
            shutil.rmtree(directory)
        link_subset(corpus.directory, chosen, directory)
        marker.write_text(corpus.key_text)
    return Corpus(directory, chosen, corpus.key_text)


def _big_session(base: Path, harness: str, mib: int, seed: int) -> Corpus:
    """One session of `mib` MiB of `harness`'s logs, alone in a corpus of its own."""
    directory = base / f"big-{mib}-{harness}"
    key_text = orjson.dumps({"mib": mib, "seed": seed, "generator": _generator_digest()}).decode()
    manifest = directory / "manifest.json"
    if manifest.exists() and orjson.loads(manifest.read_bytes())["key"] == key_text:
        made = Made(**orjson.loads(manifest.read_bytes())["made"])
    else:
        if directory.exists():
            shutil.rmtree(directory)
        for name in ROOTS.values():
            (directory / name).mkdir(parents=True)
        made = write_session(directory, Planned(0, harness, mib << 20), seed)
        manifest.write_bytes(orjson.dumps({"key": key_text, "made": asdict(made)}))
    return Corpus(directory, [made], key_text)


def _check_disk(directory: Path, total: int) -> None:
    # The corpus, then each state directory: plaintext caches (DSH logs about twice their
    # compressed size, the others their own size) and the database.
    needed = total + 2 * 2 * total
    free = shutil.disk_usage(directory).free
    print(f"disk: {free / 2**30:.1f} GiB free under {directory}, about {needed / 2**30:.1f} needed")
    if free < needed:
        raise SystemExit(
            f"not enough disk under {directory}: {free / 2**30:.1f} GiB free, about "
            f"{needed / 2**30:.1f} GiB needed (use --dir elsewhere, or lower --gib)"
        )


# Runs a module (`dshkit`) or a script in this process, and at exit writes the process's own
# peak RSS (VmHWM) to the file named by DSHKIT_BENCH_HWM. The kernel's ru_maxrss of a child
# would not do: it counts the parent's RSS at the fork, before the exec.
_CHILD = """
import atexit, os, runpy, sys

def _peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["DSHKIT_BENCH_HWM"], "w") as out:
        out.write(kib)

atexit.register(_peak)
target, sys.argv = sys.argv[1], sys.argv[1:]
if target.endswith(".py"):
    runpy.run_path(target, run_name="__main__")
else:
    runpy.run_module(target, run_name="__main__", alter_sys=True)
"""


def _run(name: str, argv: list[str], scratch: Path, env: dict[str, str]) -> tuple[Step, bytes]:
    """Run `argv` (a module or script, then its arguments) in a fresh process: its wall time
    and its own peak RSS."""
    out_path, err_path, peak_path = (scratch / n for n in ("stdout", "stderr", "peak"))
    peak_path.unlink(missing_ok=True)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *argv],
            stdout=out,
            stderr=err,
            env={**env, "DSHKIT_BENCH_HWM": str(peak_path)},
            check=False,
        )
        seconds = time.perf_counter() - started
    if done.returncode != 0 or not peak_path.exists():
        tail = err_path.read_bytes()[-1500:].decode(errors="replace")
        raise StepFailed(f"exit {done.returncode}: {' '.join(argv)}\n{tail}")
    peak_mib = int(peak_path.read_text()) / 1024
    return Step(name, seconds, peak_mib, None), out_path.read_bytes()


def _measure(
    corpus: Corpus, state: Path, env: dict[str, str], only: tuple[str, ...] | None = None
) -> list[Step]:
    """Every step on `corpus` (or those named in `only`), in order, from a fresh state
    directory; each result is checked against the corpus's ground truth, and a step that
    fails is reported and passed over."""
    if state.exists():
        shutil.rmtree(state)
    scratch = corpus.directory.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    roots = [arg for root in corpus.roots for arg in ("--root", str(root))]
    at = ["--state-dir", str(state)]
    sessions, humans = len(corpus.made), corpus.total("human_messages")
    truth = {"sessions": sessions, "events": corpus.total("events"), "humanMessages": humans}
    problems: list[str] = []

    def expect(step: Step, what: str, got: Any, wanted: Any) -> None:
        if got != wanted:
            problems.append(f"{step.name}: {what} {got!r}, expected {wanted!r}")
            step.note = "WRONG"

    def scan(step: Step, report: Any) -> None:
        step.work_s = report["elapsedMs"] / 1000
        for name, wanted in truth.items():
            expect(step, name, report[name], wanted)
        expect(step, "errors", report["errors"][:3], [])
        if step.name == "no-growth rescan":
            expect(step, "bytes read", report["bytesRead"], 0)

    def material(step: Step, report: Any) -> None:
        step.work_s = report["seconds"]
        step.note = f"{report['material']:,} messages"
        if not 0 < report["material"] <= humans:
            expect(step, "material", report["material"], f"1..{humans}")

    child = [str(Path(__file__).resolve()), "--material-child", str(state)]
    steps: list[tuple[str, list[str], Callable[[Step, Any], None] | None]] = [
        ("dshkit --help (startup)", ["dshkit", "--help"], None),
        ("first scan", ["dshkit", "scan", *roots, *at, "--json"], scan),
        ("no-growth rescan", ["dshkit", "scan", *roots, *at, "--json"], scan),
        (
            "sessions list",
            ["dshkit", "sessions", "list", *at, "--json"],
            lambda step, rows: expect(step, "rows", len(rows), min(50, sessions)),
        ),
        (
            "sessions list --limit all",
            ["dshkit", "sessions", "list", "--limit", "1000000", *at, "--json"],
            lambda step, rows: expect(step, "rows", len(rows), sessions),
        ),
    ]
    for name in ("signals (first count)", "signals (stored)"):
        steps.append(
            (
                name,
                ["dshkit", "signals", *roots, *at, "--json"],
                lambda step, report: expect(step, "humanMessages", report["humanMessages"], humans),
            )
        )
    steps.append(("profile material", [*child, *map(str, corpus.roots)], material))
    measured: list[Step] = []
    for name, argv, check in steps:
        if only is not None and name not in only:
            continue
        try:
            step, out = _run(name, argv, scratch, env)
            if check is not None:
                check(step, orjson.loads(out))
        except (StepFailed, orjson.JSONDecodeError, KeyError, TypeError) as exc:
            problems.append(f"{name}: {exc}")
            step = Step(name, math.nan, math.nan, None, "FAILED")
        measured.append(step)
    for problem in problems:
        print(f"  PROBLEM {problem}")
    return measured


def _best(a: Step, b: Step) -> Step:
    """Two runs of one step: timing noise only ever adds, so the faster time counts; the
    higher peak RSS counts."""
    if "FAILED" in (a.note, b.note):
        return a if b.note == "FAILED" else b
    work = [w for w in (a.work_s, b.work_s) if w is not None]
    note = "WRONG" if "WRONG" in (a.note, b.note) else b.note
    return Step(
        a.name,
        min(a.seconds, b.seconds),
        max(a.peak_mib, b.peak_mib),
        min(work, default=None),
        note,
    )


def _print_table(full: list[Step], small: list[Step], data_ratio: float) -> None:
    print(
        f"\n{'step':<32}{'full: time':>11}{'work':>9}{'peak RSS':>10}"
        f"{'small: time':>13}{'peak RSS':>10}{'time x':>8}{'RSS x':>7}  verdict"
    )
    for big, little in zip(full, small, strict=True):
        time_ratio = big.seconds / little.seconds
        # The work alone, without the process's startup, where it is long enough to tell.
        big_work, little_work = big.work_s or 0.0, little.work_s or 0.0
        if min(big_work, little_work) >= 0.05:
            time_ratio = big_work / little_work
        rss_ratio = big.peak_mib / little.peak_mib
        verdict = []
        if max(big.peak_mib, little.peak_mib) > RSS_TARGET_MIB:
            verdict.append(f"RSS over {RSS_TARGET_MIB} MiB")
        if time_ratio > data_ratio * _TOLERANCE:
            verdict.append("time grows faster than the data")
        if rss_ratio > data_ratio * _TOLERANCE:
            verdict.append("RSS grows faster than the data")
        for what in ("WRONG", "FAILED"):
            if what in (big.note, little.note):
                verdict.append(what)
        work = f"{big.work_s:.2f}s" if big.work_s is not None else "-"
        print(
            f"{big.name:<32}{big.seconds:>10.2f}s{work:>9}{big.peak_mib:>7.0f}MiB"
            f"{little.seconds:>12.2f}s{little.peak_mib:>7.0f}MiB{time_ratio:>7.2f}x"
            f"{rss_ratio:>6.2f}x  {'; '.join(verdict) or 'ok'}"
            + (f" ({big.note})" if big.note not in ("", "WRONG", "FAILED") else "")
        )


def _print_big(base: Path, mib: int, seed: int, env: dict[str, str]) -> None:
    """One big session per harness, alone: what one long session costs by itself."""
    print(f"\none session of {mib} MiB per harness, alone (a long-lived session):")
    print(f"{'harness':<10}{'step':<24}{'time':>9}{'peak RSS':>10}  verdict")
    for harness in ROOTS:
        corpus = _big_session(base, harness, mib, seed)
        state = base / f"state-big-{harness}"
        steps = _measure(corpus, state, env, only=("first scan", "signals (first count)"))
        shutil.rmtree(state)
        for step in steps:
            verdict = [step.note] if step.note in ("WRONG", "FAILED") else []
            if step.peak_mib > RSS_TARGET_MIB:
                verdict.append(f"RSS over {RSS_TARGET_MIB} MiB")
            print(
                f"{harness:<10}{step.name:<24}{step.seconds:>8.2f}s{step.peak_mib:>7.0f}MiB  "
                f"{'; '.join(verdict) or 'ok'}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--gib", type=float, default=1.0, help="log bytes on disk, in GiB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--small", type=float, default=0.25, help="share of sessions, 0..1")
    parser.add_argument("--dir", type=Path, default=None, help="cache directory for the corpus")
    parser.add_argument("--repeat", type=int, default=1, help="runs per scale; the best counts")
    parser.add_argument(
        "--big-mib",
        type=int,
        default=64,
        help="also scan one session this big per harness, alone (0: skip)",
    )
    parser.add_argument("--clean", action="store_true", help="delete the cache directory after")
    parser.add_argument("--material-child", type=Path, default=None, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.material_child is not None:
        roots = [Path(p) for p in rest]
        sys.stdout.buffer.write(orjson.dumps(assemble_material(args.material_child, roots)))
        return
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.sessions < 4 or args.gib <= 0 or not 0 < args.small < 1 or args.repeat < 1:
        parser.error(
            "--sessions must be at least 4, --gib above 0, --small between 0 and 1, "
            "--repeat at least 1"
        )
    if args.big_mib < 0:
        parser.error("--big-mib must be 0 (skip) or more")
    total = int(args.gib * 2**30)
    base = args.dir or Path("/tmp") / f"dshkit-scale-{args.seed}-{args.sessions}-{args.gib:g}"
    base.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    full = _load_or_generate(base / "corpus", args.sessions, total, args.seed)
    small = _subset(full, args.small)
    print(f"full:  {full.describe()}")
    print(f"small: {small.describe()}")
    # The data grows by its bytes and by its events: a figure is held to the larger of the two.
    data_ratio = max(full.total(a) / small.total(a) for a in ("bytes", "events"))
    home = base / "home"  # nothing of the person running the bench is read or written
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "DSH_HOME": str(home / ".dsh")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    results: dict[str, list[Step]] = {}
    for run in range(args.repeat):
        for label, corpus in (("small", small), ("full", full)):
            print(f"measuring {label} ({run + 1} of {args.repeat}) ...")
            steps = _measure(corpus, base / f"state-{label}", env)
            shutil.rmtree(base / f"state-{label}")
            results[label] = (
                [_best(a, b) for a, b in zip(results[label], steps, strict=True)]
                if label in results
                else steps
            )
    print(
        f"\ndata grows {data_ratio:.2f}x from small to full (bytes "
        f"{full.total('bytes') / small.total('bytes'):.2f}x, events "
        f"{full.total('events') / small.total('events'):.2f}x, sessions "
        f"{len(full.made) / len(small.made):.2f}x); target peak RSS < "
        f"{RSS_TARGET_MIB} MiB per step; best of {args.repeat} run(s)"
    )
    _print_table(results["full"], results["small"], data_ratio)
    print(
        f"(time: wall clock of the process; work: the step's own figure where it has one "
        f"(scan elapsedMs, the material assembly alone), used for 'time x' then; RSS: the "
        f"process's VmHWM; python {sys.version.split()[0]}, {os.cpu_count()} CPUs)"
    )
    if args.big_mib:
        _print_big(base, args.big_mib, args.seed, env)
    print(f"\nbench total {time.perf_counter() - started:.0f}s")
    if args.clean:
        shutil.rmtree(base)
        print(f"removed {base}")


if __name__ == "__main__":
    main()
