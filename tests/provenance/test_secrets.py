"""Secret redaction over the corpus of tests/data/secrets (own made-up values and public test
fixtures): every secret of a kind we cover is replaced by a marker naming it, the person's
words around it kept; benign text that looks like a secret (hashes, UUIDs, image data, long
identifiers, Chinese, paths, this repository's docs, real session logs) is left alone; any
input is safe, in linear time (the work counted here; bench/provenance_scaling.py times it);
detect-secrets is loaded on the first redaction only and never asks the network.
bench/secret_redaction.py prints the rates."""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dshkit.provenance import secrets as secrets_module
from dshkit.provenance.secrets import MARKER, Redacted, has_secret, redact

from ..support.adversarial import secret_texts
from ..support.counting import CountedPattern
from ..support.paths import PYTHONPATH
from ..support.secrets import (
    KNOWN_FALSE_POSITIVES,
    KNOWN_MISSES,
    NOT_COVERED,
    Secret,
    benign,
    secrets,
)

COVERED = [s for s in secrets() if s.kind not in NOT_COVERED and s.text not in KNOWN_MISSES]


def found(case: Secret) -> bool:
    result = redact(case.text)
    return case.kind in result.found and not any(value in result.text for value in case.values)


@pytest.mark.parametrize("case", COVERED, ids=lambda c: c.kind)
def test_every_secret_of_a_covered_kind_is_redacted_and_named(case: Secret) -> None:
    result = redact(case.text)
    assert case.kind in result.found, (case.origin, result)
    for value in case.values:
        assert value not in result.text, (case.origin, result.text)
    assert MARKER.format(kind=case.kind) in result.text


def test_the_known_misses_are_still_missed() -> None:
    # The list says what is not redacted and why; one redacted now leaves it.
    cases = {s.text: s for s in secrets()}
    assert set(KNOWN_MISSES) <= set(cases)
    assert [text for text in KNOWN_MISSES if found(cases[text])] == []


def test_the_corpus_holds_own_and_public_cases_of_every_kind_asked_for() -> None:
    kinds = {(s.kind, s.origin == "own") for s in secrets()}
    for kind in ("GitHub Token", "Slack Token", "AWS Access Key", "Private Key", "JSON Web Token"):
        assert (kind, True) in kinds and (kind, False) in kinds, kind
    for kind in ("API Key (sk-)", "Anthropic API Key", "Bearer Token", "Secret Keyword"):
        assert (kind, True) in kinds, kind
    categories = {b.category for b in benign(docs=False)}
    assert {"hashes", "uuids", "image data", "identifiers", "chinese", "paths"} <= categories


@pytest.mark.parametrize(
    "text",
    [b.text for b in benign(docs=False) if b.text not in KNOWN_FALSE_POSITIVES],
    ids=lambda t: t[:40],
)
def test_benign_text_is_left_alone(text: str) -> None:
    result = redact(text)
    assert result.found == [] and result.text == text


def test_the_repositorys_docs_and_real_session_logs_are_left_alone() -> None:
    texts = [b for b in benign() if b.category in ("repository docs", "session logs")]
    assert len(texts) > 500
    flagged = [(b.origin, redact(b.text).found, b.text[:80]) for b in texts if has_secret(b.text)]
    assert flagged == []


def test_the_known_false_positives_are_still_redacted() -> None:
    assert set(KNOWN_FALSE_POSITIVES) <= {b.text for b in benign(docs=False)}
    assert all(has_secret(text) for text in KNOWN_FALSE_POSITIVES)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "use token 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 for deploys.",
            "use token [secret: GitHub Token] for deploys.",
        ),
        ("password: hunter2 please", "password: [secret: Secret Keyword] please"),
        (
            'db = {"password": "correct horse battery staple", "port": 5432}',
            'db = {"password": "[secret: Secret Keyword]", "port": 5432}',
        ),
        (
            "clone https://deploy:pw@git.example.com/app.git then build",
            "clone https://deploy:[secret: Basic Auth Credentials]@git.example.com/app.git then "
            "build",
        ),
        (
            "密码：Qw3rty!9，登录后记得改",
            "密码：[secret: Secret Keyword]，登录后记得改",
        ),
        (
            "curl -H 'Authorization: Bearer 4f9Qx81LmZp0aT7wRk2sYc' https://api.example.com",
            "curl -H 'Authorization: Bearer [secret: Bearer Token]' https://api.example.com",
        ),
        (
            "DEEPSEEK_API_KEY=sk-3f9a1b2c4d5e6f708192a3b4c5d6e7f8 then run it",
            "DEEPSEEK_API_KEY=[secret: API Key (sk-)] then run it",
        ),
    ],
)
def test_the_persons_words_around_a_secret_are_kept(text: str, expected: str) -> None:
    assert redact(text).text == expected


def test_a_jwt_is_redacted_with_its_signature() -> None:
    token = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
        "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    # detect-secrets' pattern stops before the signature; the token runs to its end.
    assert redact(f"cookie {token}; expired?").text == "cookie [secret: JSON Web Token]; expired?"


def test_found_names_the_kinds_in_the_order_of_the_text() -> None:
    text = (
        "first sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijk"
        " then xoxb-34532454-e039d02840a0b9379c and AKIAIOSFODNN7EXAMPLE"
    )
    result = redact(text)
    assert result.found == ["Anthropic API Key", "Slack Token", "AWS Access Key"]
    assert result.text == (
        "first [secret: Anthropic API Key] then [secret: Slack Token] and [secret: AWS Access Key]"
    )
    assert result.text.isascii()


def test_a_private_key_block_is_redacted_across_lines_with_or_without_its_end() -> None:
    body = (
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\nKs14IReLcYgADhoXk56ZzXI="
    )
    whole = f"deploy key:\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nthanks"
    assert redact(whole).text == "deploy key:\n[secret: Private Key]\nthanks"
    assert redact(whole).found == ["Private Key"]
    cut = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n\nthe rest got cut off, fix it?"
    assert redact(cut).text == "[secret: Private Key]\n\nthe rest got cut off, fix it?"
    # Two keys, each its own block; the END of one is not the other's.
    two = whole.replace("PRIVATE KEY", "RSA PRIVATE KEY") + "\n" + whole
    assert redact(two).found == ["Private Key", "Private Key"]
    assert "thanks\ndeploy key:" in redact(two).text


def test_a_made_up_keyword_value_is_redacted_wherever_it_stands() -> None:
    text = "api_key: Xk29fjQ2Lm\nlater I pasted Xk29fjQ2Lm again, not Xk29fjQ2Lmn"
    assert redact(text).text == (
        "api_key: [secret: Secret Keyword]\n"
        "later I pasted [secret: Secret Keyword] again, not Xk29fjQ2Lmn"
    )
    # A quoted word is its keyword's value only where it stands.
    assert redact('password = "test"\nrun the test').text == (
        'password = "[secret: Secret Keyword]"\nrun the test'
    )


@pytest.mark.parametrize(
    "text",
    [
        "secret: patience, we rotate tomorrow",  # a word
        "password: see the vault",
        "const secretKey = process.env.SECRET_KEY;",  # a reference
        "password = get_password(user)",
        "token = os.environ['GITHUB_TOKEN']",
        "password: ${DB_PASSWORD}",  # a template
        'passwordVariable: "PASSWORD"',  # a constant's name
        "api_key: src/app/config.py",  # a path
        'api_key = "sk-..."',  # placeholders
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "Authorization: Bearer <token>",
        "the bearer of bad news: CI is red",
        "use sk-learn-compatible estimators",
        "user_id: 123456789, session_id: abcdef12345",
        "commit 8b1118b376c313ed420e5133ba91307817ed52c2 and 203db13e-70c7-462b-9a3d-bf32640cb0be",
        "ip 8.8.8.8 and 10.0.0.1",  # detect-secrets' public-IP plugin is left out
    ],
)
def test_names_references_words_and_placeholders_are_not_secrets(text: str) -> None:
    assert redact(text).found == [], redact(text)


def test_redacting_twice_changes_nothing() -> None:
    for case in secrets():
        once = redact(case.text)
        twice = redact(once.text)
        assert twice.text == once.text and twice.found == [], case.text
    typed = "the marker looks like [secret: GitHub Token] and password: [secret: Secret Keyword]"
    assert redact(typed).found == []


def test_has_secret() -> None:
    assert has_secret("password: hunter2!")
    assert not has_secret("the password is in the vault")
    assert not has_secret("")
    assert redact("").text == "" and redact("").clean


def test_odd_input_never_raises() -> None:
    rng = random.Random(30)
    alphabet = (
        [chr(c) for c in range(0, 0x80)]
        + ["\ud800", "\udfff", "\u200b", "\u202e", "\ufeff", "\u3000", "\U000e0041", "\U0001f600"]
        + list("中文密码：是＝ｐａｓｓｗｏｒｄ\u0301\u2028\u2029\r\n\t\x0b\x0c")
        + ["password=", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "://a:b@"]
        + ["sk-", "ghp_", "eyJ", "Bearer ", "xoxb-", '"', "'", "`", "\\"]
    )
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        result = redact(text)
        assert isinstance(result.text, str)
        assert redact(result.text).text == result.text


class Reads:
    """The characters each of the scan's patterns is handed, by the pattern's source (the
    keyword detector's under "keyword"): counting stand-ins for the loaded detectors while
    the test runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.chars: Counter[str] = Counter()
        self.gated: dict[str, str] = {}  # a pattern's source: the word its lines need
        redact("warm up")
        loaded = secrets_module._detectors()
        patterns: list[Any] = []
        for kind, pattern, plugin, needs in loaded.patterns:
            patterns.append((kind, self._counted(pattern), plugin, needs))
            if needs:
                self.gated[pattern.pattern] = needs
        own: list[Any] = [
            (kind, self._counted(p), group, judged) for kind, p, group, judged in loaded.own
        ]

        def keyword(line: str) -> Iterator[str]:
            self.chars["keyword"] += len(line)
            return loaded.keyword(line)

        counting = dataclasses.replace(loaded, patterns=patterns, own=own, keyword=keyword)
        monkeypatch.setattr(secrets_module, "_LOADED", [counting])

    def _counted(self, pattern: re.Pattern[str]) -> CountedPattern:
        def seen(length: int) -> None:
            self.chars[pattern.pattern] += length

        return CountedPattern(pattern, seen)


# What each long text comes to: it is read to its end, every secret in it found.
OUTCOMES: dict[str, Callable[[Redacted], bool]] = {
    "slashes": lambda r: r.clean,
    "urls": lambda r: r.found == ["Basic Auth Credentials"] * 10_000 and "Pw9999xyz" not in r.text,
    "begins": lambda r: r.found == ["Private Key"] * 10_000,
    # The keyword detector is asked again after each value on a line, a bounded number of times.
    "keywords": lambda r: 0 < len(r.found) <= secrets_module._KEYWORDS_PER_LINE,
    "han": lambda r: r.clean,
    "lines": lambda r: r.clean,
}


@pytest.mark.parametrize("name", list(OUTCOMES))
def test_long_and_adversarial_texts_are_read_a_bounded_number_of_times(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Linear time, as work counted rather than time (a loaded machine slows everything):
    # each pattern is handed each line once, one that backtracks on a long line only a line
    # holding its word, the keyword detector a line a bounded number of times.
    # bench/provenance_scaling.py times these at n and 8n.
    text = secret_texts()[name]
    reads = Reads(monkeypatch)
    assert OUTCOMES[name](redact(text))
    lines = text.split("\n")
    for source, chars in reads.chars.items():
        if source in reads.gated:
            assert chars == sum(len(line) for line in lines if reads.gated[source] in line)
        elif source == "keyword":
            assert chars <= secrets_module._KEYWORDS_PER_LINE * len(text)
        else:
            assert chars == len(text) - len(lines) + 1, source  # every line once, no newline
    assert len(reads.chars) > len(reads.gated) + 1  # (they were counted)


def test_a_pattern_that_backtracks_reads_only_lines_holding_its_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads = Reads(monkeypatch)
    assert list(reads.gated.values()) == ["_authToken"]  # detect-secrets' npm pattern
    (npm,) = reads.gated
    token = "//registry.npmjs.org/:_authToken=npm_0123456789abcdefABCDEF0123456789abcd"
    redact("//" * 100_000 + "\n" + token)
    assert reads.chars[npm] == len(token)  # not the 200,000 slashes before it


def test_no_finding_asks_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    # detect-secrets' plugins can verify a find with its provider; nothing here lets them.
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a request was made")

    monkeypatch.setattr(requests.Session, "request", refuse)
    assert all(redact(case.text).found for case in COVERED)


@pytest.mark.process
def test_detect_secrets_is_imported_on_the_first_redaction_only() -> None:
    probe = (
        "import sys\n"
        "import dshkit.provenance, dshkit.provenance.secrets, dshkit.provenance.injection\n"
        "before = 'detect_secrets' in sys.modules\n"
        "from dshkit.provenance.secrets import redact\n"
        "redact('password: hunter2!')\n"
        "print(before, 'detect_secrets' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": PYTHONPATH},
        check=True,
    )
    assert done.stdout.split() == ["False", "True"]
