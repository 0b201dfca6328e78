"""The optional model pass: a delta by id through the one client (a real fake server on
127.0.0.1), written as the model's own grade, checked against what the model was shown."""

from __future__ import annotations

from pathlib import Path

import orjson

from dshkit.llm import LLMConfig
from dshkit.memory import records as rec
from dshkit.memory.judge import parse_delta
from dshkit.memory.records import FACT, MODEL, PERSON, Draft
from dshkit.memory.service import MemoryService
from dshkit.memory.workspace import identify
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import Log
from ..support.memory import make_repo, scan, write_session


def reply(delta: object) -> Reply:
    return Reply(deltas=[orjson.dumps(delta).decode()])


def session(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "work" / "app")
    log = Log()
    log.human("我们决定把配置文件都放在 conf/ 目录下")
    log.human("API 的基础路径是 /v2")
    root = tmp_path / "sessions"
    write_session(root, "s-talk", repo, log)
    with Store(tmp_path / "state") as store:
        scan(store, root)
    return repo, tmp_path / "state"


def test_the_delta_adds_records_of_the_models_grade_with_their_evidence(tmp_path: Path) -> None:
    repo, state = session(tmp_path)
    with FakeOpenAI() as fake:
        fake.replies.append(
            reply(
                {
                    "add": [
                        {
                            "kind": "fact",
                            "text": "配置文件放在 conf/",
                            "subject": "配置目录",
                            "evidenceSeq": 0,
                        },
                        {"kind": "fact", "text": "编造的事实", "evidenceSeq": 999},
                        {"kind": "skill", "text": "not allowed", "evidenceSeq": 1},
                    ],
                    "supersede": [{"id": 4242, "text": "x", "evidenceSeq": 1}],
                }
            )
        )
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        report = MemoryService(state).harvest(["s-talk"], llm=llm)
        prompt = fake.requests[0].body["messages"][1]["content"]
    assert "[seq 0] 我们决定把配置文件都放在 conf/ 目录下" in prompt
    judged = report.sessions[0]["llm"]
    assert judged["outcome"] == "ok" and judged["added"] == 1 and len(judged["notes"]) == 3
    (fact,) = MemoryService(state).records(MemoryService(state).workspace(str(repo))).records
    assert (fact.text, fact.grade, fact.seq, fact.subject) == (
        "配置文件放在 conf/",
        MODEL,
        0,
        "topic:配置文件",
    )
    with Store(state) as store:  # the call is kept, linked to the session it carries
        linked = store.db.execute(
            "SELECT session_id FROM llm_call_sessions JOIN llm_calls ON id = call_id "
            "WHERE purpose = 'memory-judge'"
        ).fetchall()
    assert [row[0] for row in linked] == ["s-talk"]


def test_a_model_supersession_never_closes_what_the_person_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    workspace = identify(str(repo))
    with Store(tmp_path / "state") as store:
        with store.transaction():
            said = rec.add(
                store,
                workspace,
                ("dsh", "s-1"),
                Draft(FACT, "基础路径是 /v2", grade=PERSON, seq=3, valid_from=1000),
            )
            weak = rec.add(
                store,
                workspace,
                ("dsh", "s-1"),
                Draft(
                    FACT, "端口是 8080", grade=MODEL, seq=4, valid_from=1000, subject="model:端口"
                ),
            )
        current = rec.select(store, workspace)
        drafts, notes = parse_delta(
            orjson.dumps(
                {
                    "supersede": [
                        {"id": said, "text": "基础路径是 /v3", "evidenceSeq": 9},
                        {"id": weak, "text": "端口是 9090", "evidenceSeq": 9},
                    ]
                }
            ).decode(),
            {9},
            current,
            5000,
        )
        assert notes == []
        with store.transaction():
            for draft in drafts:
                rec.add(store, workspace, ("dsh", "s-2"), draft)
        texts = sorted(r.text for r in rec.select(store, workspace))
    assert texts == ["基础路径是 /v2", "端口是 9090"]


def test_an_unusable_reply_adds_nothing(tmp_path: Path) -> None:
    assert parse_delta("sorry, no JSON here", {1}, [], 0) == (
        [],
        ["the reply holds no JSON object"],
    )
    _repo, state = session(tmp_path)
    with FakeOpenAI() as fake:
        fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        report = MemoryService(state).harvest(["s-talk"], llm=llm)
    assert report.sessions[0]["llm"]["outcome"] == "http-error"
    assert sum(report.added.values()) == 0


def test_a_correction_quoting_the_person_is_the_persons_grade_and_wins(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "work" / "app")
    state = tmp_path / "state"
    workspace = identify(str(repo))
    with Store(state) as store, store.transaction():
        old = rec.add(
            store,
            workspace,
            ("dsh", "s-0"),
            Draft(FACT, "API 的基础路径是 /v2", grade=PERSON, seq=1, valid_from=1000,
                  subject="topic:api 的基础路径"),
        )  # fmt: skip
    log = Log()
    log.human("不对，API 的基础路径已经换成 /v3，别再用 /v2 了")
    log.human("另外端口随便")
    root = tmp_path / "sessions"
    write_session(root, "s-fix", repo, log)
    with Store(state) as store:
        scan(store, root)
    with FakeOpenAI() as fake:
        fake.replies.append(
            reply(
                {
                    "supersede": [
                        {
                            "id": old,
                            "text": "API 的基础路径是 /v3",
                            "evidenceSeq": 0,
                            "quote": "API 的基础路径已经换成 /v3",
                        }
                    ],
                    "add": [
                        {
                            "kind": "fact",
                            "text": "端口是 9090",
                            "evidenceSeq": 1,
                            "quote": "端口改成 9090",  # never said
                        }
                    ],
                }
            )
        )
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        MemoryService(state).harvest(["s-fix"], llm=llm)
    service = MemoryService(state)
    facts = {r.text: r for r in service.records(service.workspace(str(repo))).records}
    assert "API 的基础路径是 /v2" not in facts  # the person's correction closed it
    fixed = facts["API 的基础路径是 /v3"]
    assert fixed.grade == PERSON and fixed.detail["quote"] == "API 的基础路径已经换成 /v3"
    assert fixed.detail["quoteSeq"] == 0
    port = facts["端口是 9090"]
    assert port.grade == MODEL and port.detail["quoteUnverified"] == "端口改成 9090"


def test_a_quote_is_looked_up_folded_never_paraphrased() -> None:
    from dshkit.provenance.quotes import Message, PersonWords

    words = PersonWords([Message("dsh", "s", 3, None, "Remember: deploys go through `make ship`!")])
    delta = {
        "add": [
            {"kind": "fact", "text": "deploy via make ship", "evidenceSeq": 3,
             "quote": "deploys go through make ship"},
            {"kind": "fact", "text": "deploy via make ship fast", "evidenceSeq": 3,
             "quote": "deploys always go through make ship"},
        ]
    }  # fmt: skip
    drafts, notes = parse_delta(orjson.dumps(delta).decode(), {3}, [], 0, words)
    assert notes == [] and [d.grade for d in drafts] == [PERSON, MODEL]
