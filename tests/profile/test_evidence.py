"""Only what the person said: a scripted model misbehaving the ways real ones do, end to end
against a real fake server on 127.0.0.1, over a real DSH log scanned by the real scanner."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMClient, LLMConfig
from dshkit.profile.evidence import MAX_EVIDENCE, Cited, EvidenceCheck, echoes
from dshkit.profile.generate import generate, last_run, retry_state, scan_and_generate
from dshkit.profile.model import MAX_ENTRIES
from dshkit.profile.prompt import SYSTEM, Material, build_prompt
from dshkit.profile.service import ProfileService
from dshkit.profile.state import ProfileState, latest_version
from dshkit.provenance.quotes import Message, PersonWords
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.corpus import encode_frame, header
from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import Log, session_dir
from ..support.profile import answer

SAID = [
    "先别动代码，给我讲讲你的方案。",
    "不要用 mock，直接起一个真的 sqlite 测试。",
    "你又把函数签名改了，我说过公共 API 不能随便改。",
    "ok 这样可以，提交吧。",
    "Keep commit messages in English please.",
    "这个 PR 太大了，拆成三个。",
    "为什么又加了一个依赖？能用标准库就用标准库。",
    "好的，就按你说的把 timeout 抽成配置。",
    "Tests first, then the fix.",
    "不要在没问我的情况下删文件。",
    "这段注释写得很好，保持这种风格。",
    "I review diffs in the terminal, so keep lines under 100 chars.",
    "先跑 make lint 再说完成了。",
]
README = "Project style: always indent with tabs and never run the formatter."
ASSISTANT = "我会一直用最简洁的方式回答你的问题。"
INJECTED = "<system-reminder>这位用户要求所有回答都用英文。</system-reminder>"


def write_session(root: Path, said: list[str], session: str = "s-1") -> None:
    log = Log()
    for text in said:
        log.turn_start()
        log.human(text)
        log.say(ASSISTANT)
        log.call("read_file", f"c{log.time}", {"path": "README.md"})
        log.result(f"c{log.time - 1000}", 1000, text=README)
        log.add(
            "user/message",
            {
                "role": "user",
                "content": [{"type": "text", "text": INJECTED}],
                "source": {"kind": "runtime-context"},
            },
        )
        log.add("turn/end", {"turn": log.turn})
    path = session_dir(root, session) / "session.v4.jsonl.zstd"
    path.write_bytes(
        encode_frame([header(session, 4, "/home/dev/work", 1)]) + encode_frame(log.events)
    )


@pytest.fixture
def world(tmp_path: Path) -> Any:
    root = tmp_path / "sessions"
    write_session(root, SAID)
    with FakeOpenAI() as fake, Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        yield fake, scanner, keys, llm, root


def entry(entry_id: str, claim: str, *evidence: str, category: str = "B") -> dict[str, Any]:
    return {
        "id": entry_id,
        "category": category,
        "claim": claim,
        "evidence": list(evidence),
        "confidence": "high",
    }


GOOD = entry("n1", "不要未经同意改公共 API 的签名", "公共 API 不能随便改")
CHINESE = entry("n2", "他用中文交流", "[1]", category="A")


def injected(scanner: Scanner) -> str:
    return ProfileState(scanner.store).effective().text


def first_version(world: Any) -> list[dict[str, Any]]:
    fake, scanner, keys, llm, _ = world
    fake.replies.append(answer({"entries": [GOOD, CHINESE]}))
    assert generate(scanner, keys, llm, force=True).ok
    found = latest_version(scanner.store)
    assert found is not None
    return found[1]


# -- evidence that is not the person's ------------------------------------------------------


@pytest.mark.parametrize(
    ("evidence", "what"),
    [
        (README, "a line of a file the agent read (tool output)"),
        (ASSISTANT, "the assistant's own sentence"),
        ("这位用户要求所有回答都用英文", "context the harness injected"),
        ("我最讨厌别人用 tab 缩进了", "a quote that appears nowhere"),
        ("2025-10-09", "a date"),
        ("[99]", "a number outside the material"),
        ("他的原话，一字不改地摘抄", "the template's placeholder"),
        ("ok", "a quote too short to prove anything"),
    ],
)
def test_an_entry_only_external_or_invented_words_support_is_not_injected(
    world: Any, evidence: str, what: str
) -> None:
    fake, scanner, keys, llm, _ = world
    bad = entry("n9", "他要求用 tab 缩进", evidence, category="A")
    fake.replies.append(answer({"entries": [GOOD, bad]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.ok, what
    (refused,) = run.refused
    assert refused["kind"] == "unsupported" and refused["claim"] == bad["claim"], what
    assert "tab" not in injected(scanner), what
    found = latest_version(scanner.store)
    assert found is not None and [e["claim"] for e in found[1]] == [GOOD["claim"]], what
    assert run.spurious_rate > 0  # counted as a change no material asked for
    assert last_run(scanner.store)["refused"] == run.refused  # type: ignore[index]


def test_evidence_is_stored_as_the_persons_words_with_where_they_were_said(world: Any) -> None:
    good, chinese = first_version(world)
    # "[1]" became the first message of the material, word for word, at its place.
    (source,) = chinese["sources"]
    assert source["quote"] == SAID[0] and chinese["evidence"] == [SAID[0]]
    assert source["harness"] == "dsh" and source["session"] == "s-1"
    assert isinstance(source["seq"], int) and isinstance(source["at"], int)
    # A folded quote is kept as the person typed it.
    assert good["evidence"] == ["公共 API 不能随便改"]


def test_a_claim_copied_from_the_prompt_is_refused(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    copied = entry("n3", "他纠正过、抱怨过、推翻过的东西", "[3]")
    counted = entry("n4", "一轮没调用任何工具、最后却请他自己动手：1 次", "[4]", category="D")
    fake.replies.append(answer({"entries": [GOOD, copied, counted]}))
    run = generate(scanner, keys, llm, force=True)
    assert sorted(r["kind"] for r in run.refused) == ["echo", "echo"]
    assert "推翻过" not in injected(scanner) and "动手" not in injected(scanner)


# -- the delta is safe ----------------------------------------------------------------------


def test_an_invalid_rewrite_keeps_the_entry_it_rewrites(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    first_version(world)
    for broken in (
        {"id": "n2", "category": "Z", "claim": "他用中文交流", "evidence": ["[1]"]},
        {"id": "n2", "category": "A", "claim": "他用中文交流，很少用英文", "evidence": []},
        entry("n2", "他用中文交流，很少用英文" * 20, "[1]", category="A"),
        entry("n2", "他用中文交流，偶尔英文", "他从没说过的话", category="A"),
    ):
        fake.replies.append(answer({"entries": [broken], "unchangedIds": ["n1"]}))
        run = generate(scanner, keys, llm, force=True)
        assert run.outcome == "unchanged", broken
        (refused,) = run.refused
        assert refused["kept"] == "n2" and run.diff["removed"] == []
        assert "他用中文交流" in injected(scanner)
        assert any("kept as it was" in w for w in run.warnings)


def test_a_new_entry_under_a_taken_id_replaces_nothing(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    first_version(world)
    # The literal model reuses "n1" (the scheme of the first answer) for a new entry.
    new = entry("n1", "提交信息用英文写", "Keep commit messages in English", category="A")
    fake.replies.append(answer({"entries": [new], "unchangedIds": ["n1", "n2"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.ok
    found = latest_version(scanner.store)
    assert found is not None
    claims = {e["id"]: e["claim"] for e in found[1]}
    assert claims["n1"] == GOOD["claim"] and claims["n2"] == CHINESE["claim"]
    (given,) = [i for i, c in claims.items() if c == new["claim"]]
    assert given not in ("n1", "n2")


def test_the_same_claim_under_another_id_merges_and_is_injected_once(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    first_version(world)
    twice = [
        {**GOOD, "id": "n7", "evidence": ["[3]"]},
        {**GOOD, "id": "n8", "claim": GOOD["claim"] + "。"},
    ]
    fake.replies.append(answer({"entries": twice, "unchangedIds": ["n2"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.outcome == "unchanged"
    assert injected(scanner).count("公共 API 的签名") == 1


def test_an_answer_that_changes_nothing_stores_no_version(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    first_version(world)
    before = injected(scanner)
    fake.replies.append(answer({"entries": [GOOD], "unchangedIds": ["n2"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.outcome == "unchanged" and not run.ok and not run.failed
    count = scanner.store.db.execute("SELECT count(*) FROM profile_versions").fetchone()[0]
    assert count == 1 and injected(scanner) == before


def test_a_huge_answer_is_capped_and_what_was_cut_is_named(world: Any) -> None:
    fake, scanner, keys, llm, _ = world
    flood = [
        entry(f"x{n}", hashlib.sha256(str(n).encode()).hexdigest()[:40], f"[{1 + n % 13}]")
        for n in range(3006)
    ]
    fake.replies.append(answer({"entries": flood}))
    run = generate(scanner, keys, llm, force=True)
    found = latest_version(scanner.store)
    assert found is not None and len(found[1]) == MAX_ENTRIES
    assert sum(1 for r in run.refused if r["kind"] == "over-cap") == 2 * MAX_ENTRIES - MAX_ENTRIES
    assert any("were not read" in w and "2946 more" in w for w in run.warnings)
    long_evidence = entry("y1", "他不喜欢大 PR", *[f"[{n}]" for n in range(1, 13)])
    fake.replies.append(answer({"entries": [long_evidence], "unchangedIds": []}))
    generate(scanner, keys, llm, force=True)
    found = latest_version(scanner.store)
    assert found is not None
    (kept,) = [e for e in found[1] if e["claim"] == "他不喜欢大 PR"]
    assert len(kept["sources"]) == MAX_EVIDENCE


# -- pacing ---------------------------------------------------------------------------------


def test_a_failed_generation_is_not_asked_again_by_every_refresh(world: Any) -> None:
    fake, scanner, _, _, root = world
    state = scanner.store.state_dir
    (state / "config.toml").write_text(
        f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-t"\nmodel = "m"\n'
    )
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    sources = [Source("dsh", root)]
    with Store(state) as store:
        first = scan_and_generate(store, sources)
        assert first.outcome == "http-error"
        for _ in range(3):  # Stop, SessionEnd, Stop: no new material
            assert scan_and_generate(store, sources).outcome == "backing-off"
        retry = retry_state(store)
    assert len(fake.requests) == 1
    assert retry is not None and retry["failures"] == 1 and retry["notBefore"] > first.at
    status = ProfileService(state, sources=sources).status().as_json()
    assert status["retry"] == retry
    assert status["lastRun"] is not None and status["lastRun"]["outcome"] == "http-error"
    # The person says something new: the next refresh may ask again.
    write_session(root, [*SAID, "以后都先写测试。"])
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    with Store(state) as store:
        assert scan_and_generate(store, sources).outcome == "http-error"
        assert retry_state(store)["failures"] == 2  # type: ignore[index]
        assert scan_and_generate(store, sources).outcome == "backing-off"
    assert len(fake.requests) == 2
    # The person asking is never held back, and a good run clears the wait.
    fake.replies.append(answer({"entries": [GOOD]}))
    run = ProfileService(state, sources=sources).generate(force=True)
    assert run.ok and len(fake.requests) == 3
    with Store(state) as store:
        assert retry_state(store) is None


# -- the prompt's budget --------------------------------------------------------------------


def test_the_prompt_fits_its_budget_newest_first(tmp_path: Path) -> None:
    long = "这个函数的边界条件我想再确认一下，" * 40  # ~600 characters each
    material = [Material("dsh", "s", n, 1_790_000_000_000 + n, f"{n}：{long}") for n in range(420)]
    unbudgeted = build_prompt(None, None, material, {"humanMessages": 420, "sessions": 1}, None)
    assert unbudgeted.tokens > 200_000 and len(unbudgeted.listed) == 400
    prompt = build_prompt(
        None, None, material, {"humanMessages": 420, "sessions": 1}, None, tokens=32_000
    )
    assert prompt.tokens <= 32_000 and prompt.left_out == 420 - len(prompt.listed) > 0
    assert prompt.listed[-1].seq == 419  # the newest first
    text = prompt.messages[1]["content"]
    assert f"更早的 {prompt.left_out} 条因篇幅没有列出" in text
    assert "[1] " in text and f"[{len(prompt.listed)}] " in text


def test_the_profile_prompt_budget_is_configured_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_session(root, [f"{n}：{'边界条件再确认一下，' * 20}" for n in range(40)] + SAID)
    with FakeOpenAI() as fake, Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        (store.state_dir / "config.toml").write_text("[profile]\nprompt_tokens = 3000\n")
        fake.replies.append(answer({"entries": [GOOD]}))
        run = generate(scanner, keys, llm, force=True)
        assert run.ok and run.material_left_out > 0 and run.prompt_tokens <= 3000
        recorded = last_run(scanner.store)
        assert recorded is not None and recorded["materialLeftOut"] == run.material_left_out


def test_the_client_refuses_a_prompt_over_the_window_before_any_call(tmp_path: Path) -> None:
    with FakeOpenAI() as fake, Store(tmp_path / "state") as store:
        config = LLMConfig(base_url=fake.base_url, api_key="k", model="m", context_tokens=4096)
        with LLMClient(config, store) as client:
            reply = client.complete([{"role": "user", "content": "字" * 5000}])
        assert reply.outcome == "prompt-too-large" and "context_tokens" in (reply.error or "")
        assert fake.requests == []


# -- what the agent is told -----------------------------------------------------------------


def test_entries_are_injected_as_dated_observations_the_person_overrides(world: Any) -> None:
    first_version(world)
    text = injected(world[1])
    assert "以他现在说的为准" in text and "请照此配合" not in text
    assert "- 他用中文交流（2026-" in text  # dated by when the person said it


def test_an_entry_from_before_verification_is_not_injected_until_its_words_are_found(
    world: Any,
) -> None:
    fake, scanner, keys, llm, _ = world
    legacy = [
        {**entry("a1", "他习惯用中文交流", "[5]", category="A"), "timesSeen": 1},
        {**entry("b1", "先讲方案再动代码", "先别动代码，给我讲讲你的方案"), "timesSeen": 1},
    ]
    with scanner.store.transaction() as db:
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "material_messages, reason) VALUES (1, 1, ?, '{}', 0, 0, 5, 'older dshkit')",
            (orjson.dumps(legacy).decode(),),
        )
    assert injected(scanner) == ""
    view = ProfileState(scanner.store).profile_view()
    assert view is not None and view["unsupported"] == ["a1", "b1"]
    fake.replies.append(answer({"entries": [], "unchangedIds": ["a1", "b1"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.ok  # b1's quote was found: it gains its source
    prompt = fake.requests[-1].body["messages"][1]["content"]
    assert '"unverified": true' in prompt
    text = injected(scanner)
    assert "先讲方案再动代码" in text and "他习惯用中文交流" not in text


# -- the parts ------------------------------------------------------------------------------


def test_evidence_check_resolves_numbers_and_strips_decoration() -> None:
    words = PersonWords([Message("dsh", "s", 7, 5, "不要在没问我的情况下删文件。")])
    cited = [Cited("dsh", "s", 7, 5, "不要在没问我的情况下删文件。")]
    check = EvidenceCheck(words, cited)
    for item in ("[1]", "[1] 2025-10-09 不要在没问我的情况下删文件", "「没问我的情况下删文件」"):
        checked = check.check([item])
        assert [s["seq"] for s in checked.sources] == [7], item
    assert check.check(["[1] 我从没这么说"]).untraced  # a number with words it does not hold
    assert not check.check(["[1]", "[1]"]).untraced and len(check.check(["[1]", "[1]"]).quotes) == 1


def test_echo_is_told_by_the_prompts_own_words() -> None:
    prompt = build_prompt(None, None, [], {"humanMessages": 0, "sessions": 0}, None).own_words
    assert SYSTEM in prompt
    assert echoes("他本身不随任务改变的习惯与偏好", prompt)
    assert not echoes("他习惯用中文交流，代码用英文", prompt)
    assert not echoes("Keeps commits small", prompt)


TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_secret_the_person_typed_reaches_neither_the_model_nor_the_profile(
    tmp_path: Path,
) -> None:
    root = tmp_path / "sessions"
    write_session(root, [*SAID, f"部署时用这个 token：{TOKEN}，别提交到仓库。"])
    with FakeOpenAI() as fake, Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        leaky = entry("n5", f"部署用 {TOKEN}", "[14]", f"用这个 token：{TOKEN}", category="A")
        fake.replies.append(answer({"entries": [GOOD, leaky], "notes": f"记得 {TOKEN}"}))
        run = generate(scanner, keys, llm, force=True)
        assert run.ok
        assert TOKEN not in fake.requests[0].body["messages"][1]["content"]
        assert "[secret: GitHub Token]" in fake.requests[0].body["messages"][1]["content"]
        text = injected(scanner)
        # What the profile keeps and shows: its versions, its notes, its last run; and the
        # prompt kept with the call (the reply is the model's own answer, kept as it came).
        kept = store.db.execute("SELECT entries || notes FROM profile_versions").fetchall()
        kept += store.db.execute("SELECT value FROM meta WHERE key LIKE 'profile.%'").fetchall()
        kept += store.db.execute("SELECT prompt FROM llm_calls").fetchall()
    assert "[secret: GitHub Token]" in text and TOKEN not in text
    assert kept and not [row for row in kept if TOKEN in row[0]]
    assert any("[secret: GitHub Token]" in row[0] for row in kept)
