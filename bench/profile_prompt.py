"""The profile prompt's size and build time against the size of the person's corpus.

For corpora of 100 to 5,000 of the person's messages (Chinese and English, from a one-line
ask to a pasted log of tens of thousands of characters, deterministic from --seed), the
prompt of a regeneration over a previous profile of --entries entries is built with
`prompt.build_prompt` directly, under the default `[profile] prompt_tokens`
(`prompt.PROMPT_TOKENS`) and, for contrast, with no budget (only the 400-message and
600-character caps). Printed per corpus and budget: the messages listed, those left out, the
prompt's token estimate and characters, and the build time (median of --repeat runs).

Then one end-to-end row, unless --store-messages is 0: the largest corpus written as DSH logs,
scanned into a real Store, and the material read back as a generation reads it
(`Catalog.human_messages`, the newest 400) before the budgeted build; its time is the read
and the build together (the scan before it is not timed into the row, only printed).

    python bench/profile_prompt.py [--sizes 100,500,1000,2000,5000] [--repeat 9] [--json]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict, TypeVar

import orjson

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import encode_frame, header
from tests.support.logs import event, session_dir

from dshkit.profile.prompt import MAX_MATERIAL, PROMPT_TOKENS, Material, Prompt, build_prompt
from dshkit.profile.signals import SIGNALS
from dshkit.profile.wire import Entry
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

T = TypeVar("T")

START_MS = 1_790_000_000_000
PER_SESSION = 40  # the person's messages in one session

# fmt: off
_ZH = (
    "帮我看一下这个报错，跑 tests/profile 的时候一直超时，是不是假的模型服务没起来？",
    "先别改代码，先把你的分析写出来，我确认了再动手。",
    "这个函数太长了，拆成两三个小函数，每个只做一件事，名字起得直白一点。",
    "用中文回答，代码里的注释和提交信息保持英文。",
    "不要升级依赖，锁文件里的版本就是线上在用的版本，要升级单独走评审。",
    "提交信息第一行不超过 72 个字符，正文写清楚为什么改，而不是改了什么。",
    "测试要用真实的数据跑，不要把数据库 mock 掉，上次就是因为 mock 漏掉了迁移的问题。",
    "你刚才的改动把 CI 搞挂了：ruff 报了三个没用到的导入，mypy 说返回类型不对，先修这个。",
    "这段 SQL 在五千个会话的时候要跑两秒多，看看是不是少了索引，别一上来就加缓存。",
    "把控制台的画像页面在手机宽度下看一眼，390 像素的时候表格溢出了。",
    "改完之后把相关的测试跑一遍再告诉我好了，不要只说应该没问题。",
    "这个命名我不喜欢，handler 太泛了，叫它 refresh_profile 吧。",
    "日志里不要打印用户说的原话，隐私问题，打个长度就行。",
    "我刚才说错了，不是 v3 的格式，是 v4，v3 早就不用了。",
    "别动 generate.py，那边另一个同事在改，冲突了很麻烦。",
    "能不能把这个逻辑放到 service 层，路由里只做参数转换。",
    "先写一个能复现问题的测试，确认它在现在的代码上失败，再修。",
    "这个方案太重了，我们只是要一个计数，不需要再建一张表。",
    "文档也要跟着改，docs/design/profile.md 里那段描述已经过时了。",
    "超时时间写成配置项，默认 30 秒，别写死在代码里。",
)
_EN = (
    "Can you look at why the scan takes so long on my machine? It used to be under a second.",
    "Don't touch the lock file. If a dependency really needs bumping, tell me first.",
    "Keep the commit small and write the why in the body, not a list of files.",
    "Run the whole test suite before you say it's done, not just the file you changed.",
    "Please stop adding comments that restate the code; explain why when it isn't obvious.",
    "That's not what I asked. I wanted the CLI to print the wait, not the raw timestamp.",
    "Use the existing helper in tests/support instead of writing another fake server.",
    "The console looks broken in dark mode: the muted text is unreadable on the panel.",
    "Let's not cache this yet. Measure first, then we can talk about caching.",
    "I prefer explicit names over abbreviations, even if they're a bit longer.",
    "Before refactoring, write down in two lines what you're going to change and why.",
    "This needs to work offline; no network calls in the hot path, please.",
    "OK, that works. Now do the same for the Codex adapter.",
    "Revert that last change, it made the hook slower by about 40 ms.",
    "When you're unsure, ask me instead of guessing what the config should be.",
    "Mypy strict has to stay clean, no type: ignore unless there's really no other way.",
    "Put the benchmark numbers in the commit message so we can compare later.",
    "The error message should tell a person what to do next, not just what went wrong.",
    "I'll review the diff myself; just push it to the branch when the tests pass.",
    "Why does this read the whole file again? The cursor should let us read only new bytes.",
)
_LOG_LINES = (
    '  File "/home/dev/work/src/dshkit/profile/generate.py", line {n}, in _generate',
    "    prompt = build_prompt(previous, version, material, totals, signals, removed)",
    "sqlite3.OperationalError: database is locked (after {n} ms)",
    "2026-11-{d:02d}T04:{m:02d}:58.688Z WARN scan: session {n} torn tail at offset {o}",
    "E       AssertionError: assert {n} == {o}",
    "FAILED tests/web/test_console_removed.py::test_case_{n} - TimeoutError: {o} ms exceeded",
    "npm ERR! code ERESOLVE while resolving: @scope/pkg@{n}.{m}.{d}",
    "{n} passed, {d} failed, {m} skipped in {o}.21s",
    "警告：第 {n} 行的配置项 prompt_tokens 超出范围，已使用默认值 {o}",
    "错误：会话 {n} 的日志第 {o} 帧校验失败，已跳过",
)
_CLAIMS = (
    ("A", "用中文交流，代码注释和提交信息用英文"),
    ("A", "习惯一句话下达任务，细节在后续追问里补充"),
    ("A", "希望先看到分析，再决定是否动手改代码"),
    ("B", "不要在他没要求时升级依赖"),
    ("B", "不要 mock 数据库，测试要用真实数据"),
    ("B", "日志里不要记录用户的原话"),
    ("C", "改完要跑完整的测试再报告完成"),
    ("C", "提交要小，正文写清为什么改"),
    ("C", "先写能复现问题的测试，再修"),
    ("C", "性能问题先测量，再考虑缓存"),
    ("D", "对命名的偏好是直白优先于简短"),
    ("D", "可能更在意离线可用"),
)
# fmt: on


def sentence(rng: random.Random, chinese: bool) -> str:
    return rng.choice(_ZH if chinese else _EN)


def pasted(rng: random.Random, chars: int) -> str:
    """A pasted log or traceback of about `chars` characters, its numbers varying."""
    lines: list[str] = []
    size = 0
    while size < chars:
        line = rng.choice(_LOG_LINES).format(
            n=rng.randrange(1, 100_000),
            o=rng.randrange(1, 10_000_000),
            d=rng.randrange(1, 29),
            m=rng.randrange(0, 60),
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def message(rng: random.Random) -> str:
    """One of the person's messages: mostly a line or a few, some long, a few with a paste
    of thousands to tens of thousands of characters."""
    chinese = rng.random() < 0.55
    kind = rng.random()
    if kind < 0.5:  # a one- or two-line ask
        count, paste = rng.randint(1, 2), 0
    elif kind < 0.8:  # an explanation
        count, paste = rng.randint(3, 8), 0
    elif kind < 0.95:  # a long message, maybe with a bit of output
        count, paste = rng.randint(10, 30), rng.choice((0, rng.randint(300, 2_000)))
    else:  # a very long paste
        count, paste = rng.randint(1, 3), rng.randint(4_000, 40_000)
    text = ("" if chinese else " ").join(sentence(rng, chinese) for _ in range(count))
    if paste:
        text += ("\n报错如下：\n" if chinese else "\nHere's the output:\n") + pasted(rng, paste)
    return text


def corpus(size: int, seed: int) -> list[Material]:
    """`size` of the person's messages, oldest first, each said in a DSH session."""
    rng = random.Random(seed)
    material = []
    at = START_MS
    for index in range(size):
        at += rng.randint(20_000, 30 * 60_000)
        seq = 2 * (index % PER_SESSION) + 1
        session = f"bench-{index // PER_SESSION:04d}"
        material.append(Material("dsh", session, seq, at, message(rng)))
    return material


def previous_profile(count: int) -> list[Entry]:
    """A previous version of `count` entries, each with a traced quote (the delta contract)."""
    entries: list[Entry] = []
    for index in range(count):
        category, claim = _CLAIMS[index % len(_CLAIMS)]
        suffix = f"（{index // len(_CLAIMS) + 1}）" if index >= len(_CLAIMS) else ""
        source = {"quote": _ZH[index % len(_ZH)], "harness": "dsh", "session": "bench-0000"}
        entries.append(
            {
                "id": f"p{index + 1}",
                "category": category,
                "claim": claim + suffix,
                "evidence": [source["quote"]],
                "confidence": ("high", "medium", "low")[index % 3],
                "sources": [{**source, "seq": 2 * index + 1, "at": START_MS + index}],
            }
        )
    return entries


def timed(build: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The median of `repeat` runs of `build`, in ms, after one untimed run (which compiles
    and caches what a long-lived process would have), and what the last one built."""
    result: T = build()
    runs = []
    for _ in range(max(1, repeat)):
        gc.collect()
        started = time.perf_counter()
        result = build()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs), result


class Row(TypedDict):
    """One line of the table (and of --json's rows)."""

    source: str  # "direct": build_prompt on the corpus; "store": read from a Store, then built
    budget: int | None  # the prompt_tokens the prompt was built with; None: unbudgeted
    messages: int  # the person's messages in the corpus
    listed: int
    leftOut: int  # the corpus's messages not listed (the store row reads only the newest 400)
    tokens: int  # the prompt's estimate
    characters: int
    buildMs: float  # median; the store row's includes the read


def row(source: str, budget: int | None, messages: int, prompt: Prompt, ms: float) -> Row:
    return {
        "source": source,
        "budget": budget,
        "messages": messages,
        "listed": len(prompt.listed),
        "leftOut": messages - len(prompt.listed),
        "tokens": prompt.tokens,
        "characters": sum(len(m["content"]) for m in prompt.messages),
        "buildMs": round(ms, 2),
    }


def build(
    previous: list[Entry], material: list[Material], tokens: int | None
) -> Callable[[], Prompt]:
    totals = {"humanMessages": len(material), "sessions": -(-len(material) // PER_SESSION)}
    signals = dict.fromkeys(SIGNALS, 3)
    return lambda: build_prompt(previous, 7, material, totals, signals, (), tokens=tokens)


def write_logs(root: Path, material: list[Material]) -> None:
    """The corpus as DSH logs: one session per PER_SESSION messages, a turn start before
    each message, one frame per turn."""
    by_session: dict[str, list[Material]] = {}
    for item in material:
        by_session.setdefault(item.session_id, []).append(item)
    for session_id, items in by_session.items():
        frames = [encode_frame([header(session_id, 4, "/home/dev/work", START_MS)])]
        for turn, item in enumerate(items, 1):
            assert item.seq is not None and item.time is not None
            said = {
                "role": "user",
                "content": [{"type": "text", "text": item.text}],
                "source": {"kind": "user"},
            }
            frames.append(
                encode_frame(
                    [
                        event("turn/start", item.seq - 1, {"turn": turn}, item.time - 1),
                        event("user/message", item.seq, said, item.time),
                    ]
                )
            )
        path = session_dir(root, session_id) / "session.v4.jsonl.zstd"
        path.write_bytes(b"".join(frames))


def from_store(
    tmp: Path, previous: list[Entry], material: list[Material], repeat: int
) -> tuple[Row, float]:
    """The end-to-end row (material read from a scanned Store, then the budgeted build) and
    the scan's seconds."""
    root = tmp / "sessions"
    write_logs(root, material)
    with Store(tmp / "state") as store:
        scanner = Scanner(store)
        started = time.perf_counter()
        keys = scanner.scan([Source("dsh", root)]).keys
        scan_s = time.perf_counter() - started
        totals = {"humanMessages": len(material), "sessions": len(keys)}
        signals = dict.fromkeys(SIGNALS, 3)

        def read_and_build() -> Prompt:
            newest = scanner.catalog.human_messages(keys, newest=MAX_MATERIAL)
            found = [Material(m.harness, m.session_id, m.seq, m.time, m.text) for m in newest]
            return build_prompt(previous, 7, found, totals, signals, (), tokens=PROMPT_TOKENS)

        ms, prompt = timed(read_and_build, repeat)
    return row("store", PROMPT_TOKENS, len(material), prompt, ms), scan_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500,1000,2000,5000", help="corpus sizes")
    parser.add_argument("--entries", type=int, default=20, help="the previous profile's entries")
    parser.add_argument("--repeat", type=int, default=9, help="runs per build (median)")
    parser.add_argument(
        "--store-messages", type=int, default=None, help="the end-to-end corpus (0: skip)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    store_messages = max(sizes) if args.store_messages is None else args.store_messages
    previous = previous_profile(args.entries)
    largest = corpus(max([*sizes, store_messages]), args.seed)
    rows: list[Row] = []
    for size in sizes:
        material = largest[-size:]  # the newest `size` messages of one history
        for budget in (PROMPT_TOKENS, None):
            ms, prompt = timed(build(previous, material, budget), args.repeat)
            rows.append(row("direct", budget, size, prompt, ms))
    scan_s = None
    if store_messages > 0:
        with tempfile.TemporaryDirectory(prefix="dshkit-bench-") as tmp:
            store_row, scan_s = from_store(
                Path(tmp), previous, largest[-store_messages:], args.repeat
            )
        rows.append(store_row)
    corpus_chars = sum(len(m.text) for m in largest)
    if args.json:
        report: dict[str, Any] = {
            "promptTokens": PROMPT_TOKENS,
            "previousEntries": args.entries,
            "repeat": args.repeat,
            "corpusCharacters": corpus_chars,
            "storeScanMs": None if scan_s is None else round(scan_s * 1000, 1),
            "rows": rows,
        }
        sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(
        f"corpus: {len(largest):,} of the person's messages, {corpus_chars:,} characters "
        f"(longest {max(len(m.text) for m in largest):,}); previous profile of "
        f"{args.entries} entries; [profile] prompt_tokens {PROMPT_TOKENS:,}"
    )
    header_line = (
        f"{'source':<7}{'budget':>9}{'messages':>10}{'listed':>8}{'left out':>10}"
        f"{'est. tokens':>13}{'characters':>12}{'build ms':>10}"
    )
    print(header_line)
    for r in rows:
        shown = "none" if r["budget"] is None else f"{r['budget']:,}"
        print(
            f"{r['source']:<7}{shown:>9}{r['messages']:>10,}{r['listed']:>8,}"
            f"{r['leftOut']:>10,}{r['tokens']:>13,}{r['characters']:>12,}{r['buildMs']:>10.2f}"
        )
    if scan_s is not None:
        print(
            f"(store: {store_messages:,} messages scanned from DSH logs in {scan_s:.1f} s, not "
            f"timed into the row; its time reads the newest {MAX_MATERIAL} and builds)"
        )
    print(f"(build time: median of {args.repeat}; python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
