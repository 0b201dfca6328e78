"""Secret redaction: the one detector run before anything is stored for injection, shown in the
console or put on a handoff card.

A value found is replaced by a marker naming its kind, `[secret: GitHub Token]`; the person's
words around it stay ("use token [secret: GitHub Token] for deploys" still says what to do):
docs/design/provenance.md#a-secret-becomes-a-marker-naming-its-kind.

The pattern sets are detect-secrets' (Yelp), not ours: every provider plugin it ships (AWS,
GitHub, GitLab, Slack, Stripe, Twilio, OpenAI, private keys, JWTs, credentials in URLs, ...)
and its keyword detector (`password = ...`, `api_key: ...`), with the heuristic filters its ad
hoc scan applies (UUIDs, templates such as `${VAR}`, sequences, ids). Left out: its
high-entropy plugins (they flag the git SHAs, digests and base64 data a person pastes on
purpose: measured by bench/secret_redaction.py) and the public-IP plugin (an address is not a
secret). What a person pastes that its plugins miss is ours, and kept few (`_OWN`): `sk-...`
keys of OpenAI-compatible providers (DeepSeek and others) and Anthropic's, fine-grained GitHub
tokens, Bearer credentials, passwords in URLs its pattern refuses (one with a `!`, one with
no user), curl's `-u user:password`, Google API keys, Hugging Face tokens, `token`
and `credentials` as keywords, the same in Chinese (`密码：...`), and private key blocks
across lines (its plugins read one line at a time).

A keyword's value runs to the first blank unless quoted (`password: hunter2 please` loses
"hunter2" only), and an unquoted one must look made up rather than like a word or a name
(`secret: patience`, `key = process.env.KEY` are kept); placeholders (`sk-...`, `ghp_xxxxxxxx`)
are not secrets. Any input is safe: the scan goes line by line and every pattern is linear on
a line (detect-secrets' npm pattern is not, and runs only on a line naming `_authToken`); a
marker already in the text is never matched again, so redacting twice changes nothing.
detect-secrets is imported on the first redaction, never when this module is.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

MARKER = "[secret: {kind}]"
# A marker in the text (ours, or typed by someone): never a finding itself.
_MARKER = re.compile(r"\[secret: [A-Za-z0-9 ()._-]{1,60}\]")

# detect-secrets' plugins left out, by class name, with why (the module docstring).
LEFT_OUT = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"})
# Plugins whose pattern backtracks on long lines, run only on a line holding the word: the npm
# pattern (`//.+/:_authToken=`) took minutes on a line of 100,000 slashes.
_NEEDS = {"NpmDetector": "_authToken"}
KEYWORD_KIND = "Secret Keyword"  # detect-secrets' name for its keyword detector's finds
PRIVATE_KEY_KIND = "Private Key"

# Ours: (kind, pattern, the group holding the value (0: the match), whether the value is judged
# as a keyword's: quoted, or unquoted and made up, and no filter refusing it).
_OWN: tuple[tuple[str, str, int, bool], ...] = (
    # OpenAI-compatible keys (DeepSeek, Moonshot, OpenAI's own without the marker detect-secrets
    # looks for); a digit and a letter, so "sk-learn-compatible-estimators" is not one.
    (
        "API Key (sk-)",
        r"(?<![\w-])sk-(?!ant-)(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9_-]{20,}",
        0,
        False,
    ),
    ("Anthropic API Key", r"(?<![\w-])sk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}", 0, False),
    ("GitHub Token", r"(?<![\w-])github_pat_[A-Za-z0-9_]{22,}", 0, False),
    ("Bearer Token", r"\b[Bb]earer[ \t]+((?=[\w.~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)", 1, False),
    # (an empty user too: `redis://:password@cache:6379`)
    ("Basic Auth Credentials", r"://[^\s:/?#@]*:([^\s/?#@]+)@", 1, True),
    # curl's and wget's user and password on the command line: `curl -u admin:s3cret …`
    (
        "Basic Auth Credentials",
        r"(?:^|[ \t])(?:-u|--user|--proxy-user)(?:[ \t]+|=)([\"']?)[\w.@+-]+:"
        r"(?![$<\[{])([^\s\"'<>\[\]]+)\1(?=\s|$)",
        2,
        True,
    ),
    # Google's API keys (Maps, Gemini, Firebase): AIza and 35 more.
    ("Google API Key", r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])", 0, False),
    # Hugging Face access tokens.
    ("Hugging Face Token", r"(?<![\w-])hf_[A-Za-z0-9]{30,}(?![\w-])", 0, False),
    (
        KEYWORD_KIND,
        r"\b(?:\w*[_-]|\w*[a-z](?=[TC]))?(?:[Tt]oken|TOKEN|[Cc]redentials?|CREDENTIALS?)[\"']?"
        r"[ \t]*[:=][ \t]*([\"'`]?)([^\s\"'`,;]+)\1",
        2,
        True,
    ),
    (
        KEYWORD_KIND,
        r"(?:密码|口令|密钥|秘钥|令牌)[ \t]*(?:是|为|[:：=])[ \t]*([^\s，。；;,]+)",
        1,
        True,
    ),
)
_PRIVATE_KEY_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
_PRIVATE_KEY_END = re.compile(r"-----END ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
# A key cut short (pasted without its END): the base64 and header lines after its BEGIN.
_PRIVATE_KEY_BODY = re.compile(
    r"(?:(?:[ \t]*\r?\n)+[ \t]*(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info):[^\n]*))*"
)
# A value from a provider's pattern continues to the end of its token (a JWT's pattern stops
# before the signature; a token longer than the pattern says is still one token).
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_+/=.-]*")
_QUOTES = "\"'`"
# Not secrets: an elision or a run of one filler character (`sk-...`, `ghp_xxxxxxxx`).
_PLACEHOLDER = re.compile(r"\.\.\.|…|([xX*])\1{5,}")
# Names rather than values: a dotted path (`process.env.KEY`) unquoted, a constant's name
# (`PASSWORD`, `NEXUS-GPT4-API-KEY`) quoted or not.
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CONSTANT = re.compile(r"[A-Z]+|[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+")
# Per line, the keyword detector is asked again after each value it finds, at most this often.
_KEYWORDS_PER_LINE = 32
# How many keyword values are also looked for elsewhere in the text (past this, a text is a
# dump of them, each redacted where it stands).
_SPREAD = 64
# What the id heuristic reads before a value (`user_id: ...`).
_ID_WINDOW = 40

Span = tuple[int, int, str]  # start, end, kind


@dataclass(frozen=True)
class Redacted:
    """A text with every secret found replaced by a marker, and the kinds found, in order."""

    text: str
    found: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.found


def redact(text: str) -> Redacted:
    """`text` with each secret replaced by `[secret: <kind>]`, and the kinds, in text order."""
    if not text:
        return Redacted(text)
    protected = [m.span() for m in _MARKER.finditer(text)]
    spans = _merge(_find(text, protected), protected)
    if not spans:
        return Redacted(text)
    parts: list[str] = []
    at = 0
    for start, end, kind in spans:
        parts += (text[at:start], MARKER.format(kind=kind))
        at = end
    parts.append(text[at:])
    return Redacted("".join(parts), [kind for _, _, kind in spans])


def has_secret(text: str) -> bool:
    """Whether `redact` would replace anything in `text`."""
    return not redact(text).clean


def _find(text: str, protected: list[tuple[int, int]]) -> Iterator[Span]:
    """Every secret's span, overlapping ones and ones in a marker (`protected`) included; a
    value found in a marker is not looked for elsewhere (the marker's own words are not one)."""
    detectors = _detectors()
    starts = [start for start, _ in protected]
    yield from _private_keys(text)
    spread: dict[str, None] = {}  # (in the order found)
    for offset, line in _lines(text):
        indirect = _Once(detectors.indirect, line)  # asked only of a line holding a value
        for kind, pattern, plugin, needs in detectors.patterns:
            if needs and needs not in line:
                continue
            for match in pattern.finditer(line):
                where = detectors.span(match, plugin, line)
                if where is not None:
                    yield where[0] + offset, where[1] + offset, kind
        for kind, pattern, group, judged in detectors.own:
            for match in pattern.finditer(line):
                start, end = match.span(group)
                if start == end or _PLACEHOLDER.search(match.group(group)):
                    continue
                if judged and not detectors.keyword_value(line, start, end, indirect):
                    continue
                found = (start + offset, end + offset, kind)
                yield found
                if judged and _made_up(line[start:end]) and not _touches(found, protected, starts):
                    spread.setdefault(line[start:end])
        for start, end in detectors.keyword_values(line, indirect):
            found = (start + offset, end + offset, KEYWORD_KIND)
            yield found
            if _made_up(line[start:end]) and not _touches(found, protected, starts):
                spread.setdefault(line[start:end])
    # A made-up keyword value is redacted wherever it stands, with its keyword or without (a
    # quoted word, `password = "test"`, only where it was found).
    for value in list(spread)[:_SPREAD]:
        for match in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", text):
            yield match.start(), match.end(), KEYWORD_KIND


def _lines(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.split("\n"):
        yield offset, line.removesuffix("\r")
        offset += len(line) + 1


def _private_keys(text: str) -> Iterator[Span]:
    """Private key blocks, BEGIN to its END (found by bisecting the ENDs, so a text of many
    BEGINs with no END is still read once), or BEGIN and the key's lines after it."""
    if "PRIVATE KEY" not in text:
        return
    ends: dict[str, list[tuple[int, int]]] = {}
    for match in _PRIVATE_KEY_END.finditer(text):
        ends.setdefault(match.group(1), []).append(match.span())
    done = 0
    for begin in _PRIVATE_KEY_BEGIN.finditer(text):
        if begin.start() < done:
            continue
        label_ends = ends.get(begin.group(1), [])
        index = bisect.bisect_left(label_ends, (begin.end(), 0))
        if index < len(label_ends):
            done = label_ends[index][1]
        else:
            body = _PRIVATE_KEY_BODY.match(text, begin.end())
            done = body.end() if body is not None else begin.end()
        yield begin.start(), done, PRIVATE_KEY_KIND


def _merge(spans: Iterable[Span], protected: list[tuple[int, int]]) -> list[Span]:
    """The spans in text order, overlapping ones joined (the first one's kind kept, the longer
    one's when they start together), none touching a marker already there."""
    starts = [start for start, _ in protected]
    ordered = sorted(
        (s for s in spans if s[1] > s[0] and not _touches(s, protected, starts)),
        key=lambda s: (s[0], -s[1]),
    )
    merged: list[Span] = []
    for start, end, kind in ordered:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


def _touches(span: Span, protected: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether `span` overlaps one of `protected` (apart, in order; `starts` their starts)."""
    before = bisect.bisect_left(starts, span[1]) - 1  # the last one starting before its end
    return before >= 0 and protected[before][1] > span[0]


def _made_up(value: str) -> bool:
    """Whether an unquoted value looks made up rather than like a word or a name: six
    characters at least, of two kinds of lower case, upper case, digits and symbols ('-', '_',
    '.', '/' and '\\' are how names and paths are spelled, not symbols), not a dotted path or
    a constant's name."""
    if len(value) < 6 or _DOTTED.fullmatch(value) or _CONSTANT.fullmatch(value):
        return False
    classes = (
        any(c.islower() and c.isascii() for c in value),
        any(c.isupper() and c.isascii() for c in value),
        any(c.isdigit() and c.isascii() for c in value),
        any(
            c.isascii() and not c.isalnum() and not c.isspace() and c not in "-_./\\" for c in value
        ),
    )
    return sum(classes) >= 2


Plugin = tuple[str, re.Pattern[str], "Callable[[str], Iterator[str]]", str]


@dataclass(frozen=True)
class _Detectors:
    """detect-secrets' plugins and filters, loaded once, and ours compiled."""

    patterns: list[Plugin]  # kind, pattern, the plugin's own check, a word the line needs
    keyword: Callable[[str], Iterator[str]]
    secret_filters: list[Callable[[str], bool]]
    likely_id: Callable[[str, str], bool]
    indirect: Callable[[str], bool]
    own: list[tuple[str, re.Pattern[str], int, bool]]

    def refused(self, value: str) -> bool:
        """Whether detect-secrets' filters (or ours for placeholders) refuse `value`."""
        return bool(_PLACEHOLDER.search(value)) or any(f(value) for f in self.secret_filters)

    def span(
        self, match: re.Match[str], plugin: Callable[[str], Iterator[str]], line: str
    ) -> tuple[int, int] | None:
        """Where the value of a provider pattern's match is in its line, or None when the
        plugin (its own checks: a JWT's parts must decode) or a filter refuses it.

        A pattern with a group holding the value (a URL's password, a quoted AWS secret key:
        not at the match's start, and four characters long or at its end) names it; one whose
        groups only tell prefixes apart (`(ghp|gho|...)_`) does not, and the match is the
        value, to the end of its token."""
        if not any(True for _ in plugin(match.group())):
            return None
        groups = [
            g
            for g in range(1, match.re.groups + 1)
            if match.group(g)
            and match.start(g) > match.start()
            and (len(match.group(g)) >= 4 or match.end(g) >= match.end() - 1)
        ]
        if groups:
            start, end = match.span(max(groups, key=lambda g: match.end(g) - match.start(g)))
        else:
            start, end = match.span()
            while start < end and line[start] in " \t=:" + _QUOTES:
                start += 1
            while end > start and line[end - 1] in " \t" + _QUOTES:
                end -= 1
            if end > start and _TOKEN_CHARS.fullmatch(line, end - 1, end):
                tail = _TOKEN_CHARS.match(line, end)
                end = tail.end() if tail is not None else end
                while end > start and line[end - 1] == ".":
                    end -= 1
        if end <= start or self.refused(line[start:end]):
            return None
        return start, end

    def keyword_value(self, line: str, start: int, end: int, indirect: _Once) -> bool:
        """Whether the value at `line[start:end]`, after a keyword, is taken: quoted, or
        unquoted and made up; no filter refusing it, not an id, not on a line that reads a
        secret from elsewhere (`indirect`: `password = get_password()`)."""
        value = line[start:end]
        quoted = start > 0 and line[start - 1] in _QUOTES and line[end : end + 1] == line[start - 1]
        return (
            (_made_up(value) if not quoted else not _CONSTANT.fullmatch(value))
            and not self.refused(value)
            and not self.likely_id(value, line[max(0, start - _ID_WINDOW) : end])
            and not indirect()
        )

    def keyword_values(self, line: str, indirect: _Once) -> Iterator[tuple[int, int]]:
        """Where the values detect-secrets' keyword detector finds in `line` are, each asked
        again on the rest of the line after the value: quoted ones whole, unquoted ones to the
        first blank."""
        done = 0
        for _ in range(_KEYWORDS_PER_LINE):
            found = next(iter(self.keyword(line[done:])), None)
            at = line.find(found, done) if found else -1
            if found is None or at < 0:
                return
            after = at + len(found)
            quoted = at > 0 and line[at - 1] in _QUOTES and line[after : after + 1] == line[at - 1]
            value = found if quoted else found.split()[0].rstrip(":;,.)]}")
            if value and self.keyword_value(line, at, at + len(value), indirect):
                yield at, at + len(value)
            done = at + len(value) if value else after


class _Once:
    """`check(line)`, asked at most once, when first needed (detect-secrets' check for a line
    reading a secret from elsewhere costs more than all the patterns on a line)."""

    __slots__ = ("_answer", "_check", "_line")

    def __init__(self, check: Callable[[str], bool], line: str) -> None:
        self._check, self._line = check, line
        self._answer: bool | None = None

    def __call__(self) -> bool:
        if self._answer is None:
            self._answer = self._check(self._line)
        return self._answer


_LOADED: list[_Detectors] = []


def _detectors() -> _Detectors:
    if not _LOADED:
        _LOADED.append(_load())
    return _LOADED[0]


def _load() -> _Detectors:
    # detect-secrets loads requests and its whole plugin set (~0.1 s): only here, on the first
    # redaction. Its plugins are used directly, not through `scan_line`, which changes the
    # package's global settings on every call and verifies a find over the network when those
    # settings ask for it.
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
    from detect_secrets.plugins.keyword import REGEX_BY_FILETYPE, KeywordDetector
    from detect_secrets.util.filetype import FileType

    patterns: list[Plugin] = []
    keyword: Callable[[str], Iterator[str]] | None = None
    # Keyword assignments as in a config file (quotes optional: `password = hunter2`), the
    # way a person pastes them.
    config = REGEX_BY_FILETYPE[FileType.YAML]
    plugins: dict[str, type[BasePlugin]] = dict(get_mapping_from_secret_type_to_class())
    for kind, plugin_class in sorted(plugins.items()):
        name = plugin_class.__name__
        if name in LEFT_OUT:
            continue
        plugin = plugin_class()
        if isinstance(plugin, RegexBasedDetector):
            needs = _NEEDS.get(name, "")
            patterns += [(kind, p, plugin.analyze_string, needs) for p in plugin.denylist]
        elif isinstance(plugin, KeywordDetector):
            detector = plugin

            def keyword_search(line: str, detector: KeywordDetector = detector) -> Iterator[str]:
                return detector.analyze_string(line, denylist_regex_to_group=config)

            keyword = keyword_search
        # A plugin of another shape (none in 1.5) is left out until it is looked at.
    assert keyword is not None, "detect-secrets without its keyword detector"
    return _Detectors(
        patterns=patterns,
        keyword=keyword,
        secret_filters=[
            heuristic.is_sequential_string,
            heuristic.is_potential_uuid,
            heuristic.is_templated_secret,
            heuristic.is_prefixed_with_dollar_sign,
            heuristic.is_not_alphanumeric_string,
        ],
        likely_id=lambda secret, line: heuristic.is_likely_id_string(secret, line),
        indirect=heuristic.is_indirect_reference,
        own=[(kind, re.compile(source), group, judged) for kind, source, group, judged in _OWN],
    )
