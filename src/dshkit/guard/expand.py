"""What a line expands to before its commands run, and the commands that run others in ways
the plain wrappers do not: brace and parameter expansion, substitutions inside arithmetic,
look-alike command names, and the steps for watch, parallel, find's -exec, alias, tar
--remove-files, truncate, writes onto disk devices, Start-Process and cipher.

The lexer and the walker call in here only for what needs it (a `{` in a bash line, a `${…}`
beyond a plain name, a non-ASCII command name), so a plain line never pays for it.
"""

from __future__ import annotations

from .commands import OPAQUE, Command, dispatch_table, overwritten, rule_for
from .lexer import Word, find_closing
from .options import Syntax, parse
from .paths import NOWHERE, OUTSIDE, device
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .commands import Fed
    from .walk import Judge

    Step = Callable[[Judge, Command], tuple[str | None, Fed]]

MAX_WORDS = 256  # a brace expansion (or parallel's items) beyond this is cut
_BREAK = " \t\r\n;&|()<>"

# -- brace expansion ----------------------------------------------------------------------


def raw_end(text: str, at: int) -> int:
    """Where the bash word starting at `at` ends in the raw text (quotes, escapes and
    substitutions skipped); `at` itself when it cannot be read (the lexer will say why)."""
    start = at
    while at < len(text):
        char = text[at]
        if char in _BREAK and not text.startswith("<(", at):
            break
        if char == "\\":
            at += 2
        elif char == "'":
            end = text.find("'", at + 1)
            if end < 0:
                return start
            at = end + 1
        elif char == '"':
            at += 1
            while at < len(text) and text[at] != '"':
                at += 2 if text[at] == "\\" else 1
            if at >= len(text):
                return start
            at += 1
        elif text.startswith(("$(", "${", "<("), at):
            end = _close(text, at + 2, text[at + 1])
            if end < 0:
                return start
            at = end + 1
        elif char == "`":
            end = text.find("`", at + 1)
            if end < 0:
                return start
            at = end + 1
        else:
            at += 1
    return min(at, len(text))


def _close(text: str, at: int, opening: str) -> int:
    """The index of the bracket closing `opening` (just before `at`), or -1."""
    closing = ")" if opening in "(<" else "}"
    opening = "(" if opening == "<" else opening
    return find_closing(text, at, opening, closing, escapes="\\")


def _active(raw: str) -> list[bool]:
    """Which characters of a raw word the shell reads as syntax: not quoted, escaped or inside
    a `${…}`, `$(…)` or backtick substitution."""
    mask = [True] * len(raw)
    at = 0
    while at < len(raw):
        char = raw[at]
        if char == "\\":
            end = at + 1
        elif char == "'":
            end = raw.find("'", at + 1)
        elif char == '"':
            end = at + 1
            while end < len(raw) and raw[end] != '"':
                end += 2 if raw[end] == "\\" else 1
        elif char == "$" and raw[at + 1 : at + 2] in ("{", "("):
            end = _close(raw, at + 2, raw[at + 1])
        elif char == "`":
            end = raw.find("`", at + 1)
        else:
            at += 1
            continue
        end = len(raw) - 1 if end < 0 else min(end, len(raw) - 1)
        for index in range(at, end + 1):
            mask[index] = False
        at = end + 1
    return mask


def braces(raw: str) -> list[str] | None:
    """The words a raw bash word with a brace expansion (`{a,b}`, `{1..3}`) stands for, quotes
    still in them; None when it has none."""
    if "{" not in raw:
        return None
    done: list[str] = []
    pending = [raw]
    expanded = False
    while pending and len(done) < MAX_WORDS:
        word = pending.pop(0)
        parts = _first_brace(word)
        if parts is None:
            done.append(word)
            continue
        expanded = True
        prefix, alternatives, suffix = parts
        pending[:0] = [prefix + a + suffix for a in alternatives]
    return done[:MAX_WORDS] if expanded else None


def _first_brace(word: str) -> tuple[str, list[str], str] | None:
    """The first brace expansion in a raw word: its prefix, alternatives and suffix."""
    mask = _active(word)
    for start, char in enumerate(word):
        if char != "{" or not mask[start] or (start and word[start - 1] == "$"):
            continue
        depth = 0
        commas: list[int] = []
        for at in range(start, len(word)):
            if not mask[at]:
                continue
            if word[at] == "{":
                depth += 1
            elif word[at] == "}":
                depth -= 1
                if depth == 0:
                    body = word[start + 1 : at]
                    if commas:
                        cuts = [start, *commas, at]
                        alternatives = [word[a + 1 : b] for a, b in _pairs(cuts)]
                    else:
                        alternatives = _sequence(body) or []
                    if alternatives:
                        return word[:start], alternatives, word[at + 1 :]
                    break
            elif word[at] == "," and depth == 1:
                commas.append(at)
    return None


def _pairs(cuts: list[int]) -> list[tuple[int, int]]:
    return [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]


def _sequence(body: str) -> list[str] | None:
    """`1..5`, `a..e`, `10..1..3`: the sequence, or None."""
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    step = 1
    if len(parts) == 3:
        if not parts[2].lstrip("-").isdigit():
            return None
        step = abs(int(parts[2])) or 1
    first, last = parts[0], parts[1]
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        low, high = int(first), int(last)
        numbers = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
        return [str(n) for n in numbers[:MAX_WORDS]]
    if len(first) == len(last) == 1 and first.isalpha() and last.isalpha():
        low, high = ord(first), ord(last)
        letters = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
        return [chr(c) for c in letters[:MAX_WORDS]]
    return None


# -- what runs inside an expansion ------------------------------------------------------


def substitutions(body: str) -> list[str]:
    """The command lines in the `$(…)` and backtick substitutions of `body` (an arithmetic
    expansion's text, a parameter's word)."""
    found: list[str] = []
    at = 0
    while at < len(body):
        if body.startswith("$(", at) and not body.startswith("$((", at):
            end = _close(body, at + 2, "(")
            if end < 0:
                break
            found.append(body[at + 2 : end])
            at = end + 1
        elif body[at] == "`":
            end = body.find("`", at + 1)
            if end < 0:
                break
            found.append(body[at + 1 : end])
            at = end + 1
        else:
            at += 1
    return found


def parameter(expression: str, variables: Mapping[str, str]) -> str | None:
    """The value of a bash `${…}` (its text between the braces) when it is known: a known
    variable with a default, a check, a pattern removed, a case change, a slice; None when it
    is only known when the line runs (an unknown variable, whatever its default)."""
    if expression.startswith(("#", "!")):
        return None  # a length or an indirection: not a place
    end = 0
    while end < len(expression) and (expression[end].isalnum() or expression[end] == "_"):
        end += 1
    name, operator = expression[:end], expression[end:]
    value = variables.get(name)
    if value is None or not name:
        return None
    if not value and operator[:2] in (":-", ":="):  # empty (`$TMPDIR` unset): the default
        default = operator[2:]
        return variables.get(default[1:], None) if default[:1] == "$" else default
    if not value and operator[:2] == ":?":  # the line stops there: judged as if it were set
        return "/tmp" if name == "TMPDIR" else None
    if not operator or operator[:2] in (":-", ":=", ":?") or operator[:1] in "-=?":
        return value  # set: the value itself
    if operator in ("[@]", "[*]", "[0]"):
        return value  # a plain variable as an array: its one element
    if operator[:2] == ":+" or operator[:1] == "+":
        word = operator[2:] if operator[1:2] == "+" else operator[1:]
        return word if _literal(word) else None
    for remove in ("%%", "##", "%", "#"):
        if operator.startswith(remove):
            return _removed(value, operator[len(remove) :], remove)
    if operator[:1] in ("^", ","):
        every = operator[1:2] == operator[:1]
        if operator[2 if every else 1 :]:
            return None
        change = str.upper if operator[0] == "^" else str.lower
        return change(value) if every else change(value[:1]) + value[1:]
    if operator.startswith("/"):
        pattern, _, replacement = operator.lstrip("/#%").partition("/")
        if not (_literal(pattern) and _literal(replacement)):
            return None
        if operator.startswith("//"):
            return value.replace(pattern, replacement)
        return value.replace(pattern, replacement, 1)
    if operator.startswith(":"):
        offsets = operator[1:].split(":")
        if all(o.strip().lstrip("-").isdigit() for o in offsets) and len(offsets) <= 2:
            offset = int(offsets[0])
            if len(offsets) == 1:
                return value[offset:]
            length = int(offsets[1])
            return value[offset : offset + length] if length >= 0 else value[offset:length]
    return None


def _literal(text: str) -> bool:
    return not any(c in text for c in "$`'\"\\*?[")


def _removed(value: str, pattern: str, how: str) -> str | None:
    """`value` with the shortest (`%`, `#`) or longest (`%%`, `##`) match of a glob `pattern`
    removed from its end (`%`) or start (`#`)."""
    if any(c in pattern for c in "$`'\"\\"):
        return None
    suffix = how[0] == "%"
    cuts = range(len(value) + 1)
    # the shortest suffix is found cutting from the end, the longest prefix too
    order = reversed(cuts) if suffix == (len(how) == 1) else iter(cuts)
    from fnmatch import fnmatchcase  # only for a pattern removal

    for cut in order:
        part = value[cut:] if suffix else value[:cut]
        if fnmatchcase(part, pattern):
            return value[:cut] if suffix else value[cut:]
    return value


# -- command names that are not what they look like ---------------------------------------


def look_alike(text: str) -> str | None:
    """The plain ASCII name a non-ASCII command word folds to (fullwidth `ｒｍ` is rm, a
    zero-width space dropped), or None when it folds to none."""
    from unicodedata import normalize  # only for a command name that is not plain ASCII

    folded = normalize("NFKC", text)
    folded = "".join(c for c in folded if c not in "\u200b\u200c\u200d\u2060\ufeff\u00ad")
    return folded if folded.isascii() and folded != text else None


# -- the steps: each (judge, command) -> the directory after it, what it pipes on -----------


def _watch(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """watch runs its words as one line through `sh -c` (with -x, as a command)."""
    parsed = parse(command.args, _WATCH_OPTIONS)
    rest = parsed.operands
    if not rest:
        return command.cwd, None
    if any(f.name in ("-x", "--exec") for f in parsed.flags) or len(rest) > 1:
        judge.command(rest, command.shell, command.cwd, command.depth + 1, None)
    elif rest[0].dynamic:
        judge.hidden(f"{command.name} runs a command only known when it runs")
    else:
        judge.line(rest[0].text, command.shell, command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _parallel(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """GNU parallel runs its command line once per item (after `:::`, from `::::` files, or
    what the pipe sends), the item in place of `{}` or appended."""
    parsed = parse(command.args, _PARALLEL_OPTIONS)
    template: list[Word] = []
    items: list[Word] = []
    group = ""
    for word in parsed.operands:
        if word.text in (":::", ":::+", "::::", "::::+") and not word.quoted:
            group = word.text
        elif not group:
            template.append(word)
        elif group.startswith("::::"):
            items = [*items, *OPAQUE]
        else:
            items.append(word)
    if any(f.name in ("-a", "--arg-file") or f.name.startswith("-a") for f in parsed.flags):
        items.extend(OPAQUE)
    if not template:
        return command.cwd, OPAQUE
    if not group and not items:
        items = command.fed if command.fed is not None else OPAQUE
    replace = next((f.value.text for f in parsed.flags if f.name == "-I" and f.value), "{}")
    line = " ".join(w.text for w in template)
    for item in items[:MAX_WORDS]:
        text = item.text
        if replace in line or "{" in line:
            ran = line.replace(replace, text)
            for marker in ("{.}", "{/}", "{//}", "{/.}"):
                ran = ran.replace(marker, text)
            if "{" in ran:  # `{1}`, `{2.}`: an input source's item (each tried in each)
                import re

                ran = re.sub(r"\{\d+(?:\.|/|//|/\.)?\}", text.replace("\\", "\\\\"), ran)
        else:
            ran = f"{line} {text}"
        judge.line(ran, "bash", command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _find(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """find's own rule (a global search, -delete), then each `-exec`/`-ok` command judged with
    the entries below the roots in place of `{}`."""
    rule = rule_for("find", command.pwsh)
    fed = rule(judge.findings, command) if rule is not None else OPAQUE
    below = fed if fed is not None else OPAQUE
    args = command.args
    at = 0
    while at < len(args):
        text = args[at].text
        at += 1
        if text not in ("-exec", "-execdir", "-ok", "-okdir"):
            continue
        clause: list[Word] = []
        while (
            at < len(args)
            and args[at].text != ";"
            and not (args[at].text == "+" and clause and clause[-1].text == "{}")
        ):
            clause.append(args[at])
            at += 1
        at += 1
        for entry in below[:MAX_WORDS]:
            words = [Word(w.text.replace("{}", entry.text), w.quoted, w.dynamic or "{}" in w.text)
                     if "{}" in w.text else w for w in clause]  # fmt: skip
            if words:
                judge.command(words, command.shell, command.cwd, command.depth + 1, None)
    return command.cwd, fed


def _alias(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`alias x='…'`: what the alias runs is judged where it is defined (a later `x` would
    run it, and aliases are not followed to their use)."""
    for word in command.args:
        name, equal, value = word.text.partition("=")
        if equal and value and name and not name.startswith("-"):
            if word.dynamic:
                judge.flag(UNKNOWN, f"alias {name} runs a command only known when it runs")
            else:
                judge.line(value, command.shell, command.cwd, command.depth + 1)
    return command.cwd, None


def _tar(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """tar --remove-files deletes what it archives: its sources, judged like rm -r's."""
    args = command.args
    if any(w.text.startswith("--remove-f") for w in args):
        sources, directory = _tar_sources(args)
        places = judge.places
        if directory is not None and command.cwd is not None and not directory.dynamic:
            base = places.resolve(directory.text, command.cwd)
            sources = [Word(places.resolve(w.text, base), w.quoted, w.dynamic, w.glob)
                       if not w.dynamic else w for w in sources]  # fmt: skip
        from .commands import deleted

        deleted(judge.findings, "tar --remove-files", sources, True, command.cwd)
    return _rule(judge, command)


def _tar_sources(args: list[Word]) -> tuple[list[Word], Word | None]:
    """tar's operands that are files to archive, and the `-C` directory they are read from."""
    sources: list[Word] = []
    directory: Word | None = None
    at = 0
    while at < len(args):
        text = args[at].text
        at += 1
        takes = ""
        if text.startswith("--"):
            name, equal, _ = text.partition("=")
            if not equal and name in _TAR_LONG_VALUED:
                takes = name
        elif text.startswith("-") or (at == 1 and text.isalpha()):  # `-cf`, old style `cf`
            letters = text.lstrip("-")
            for index, letter in enumerate(letters):
                if letter in "fCTXbHgKLNV":
                    if index + 1 == len(letters):
                        takes = letter
                    elif letter == "C":
                        directory = Word(letters[index + 1 :])
                    break
        else:
            sources.append(args[at - 1])
            continue
        if takes and at < len(args):
            if takes in ("C", "--directory"):
                directory = args[at]
            at += 1
    return sources, directory


_TAR_LONG_VALUED = {"--file", "--directory", "--files-from", "--exclude-from", "--exclude",
                    "--blocking-factor", "--format", "--listed-incremental", "--newer",
                    "--label", "--volno-file", "--transform", "--xform", "--owner",
                    "--group", "--mode", "--mtime", "--use-compress-program"}  # fmt: skip


def _truncate(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """truncate cuts a file to a size: outside the workspace (or a disk) it destroys what the
    file held, unless the size only grows it (`+N`, `>N`)."""
    parsed = parse(command.args, _TRUNCATE_OPTIONS)
    sizes = parsed.values(lambda o: o in ("-s", "--size"))
    if sizes and all(s.text.startswith(("+", ">")) for s in sizes):
        return _rule(judge, command)
    for target in parsed.operands:
        place = judge.places.where(target, command.cwd)
        if device(target.text) or place == OUTSIDE:
            kind = Kind.DISK if device(target.text) else Kind.OUTSIDE
            judge.flag(DESTRUCTIVE, f"truncate: cuts {target.shown} outside the workspace", kind)
        elif place == NOWHERE:
            judge.flag(UNKNOWN, f"truncate: cuts {target.shown}, only known when it runs")
    return _rule(judge, command)


def _device_write(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """cp onto a disk device (its destination), tee onto one (any file it writes)."""
    name = command.name
    parsed = parse(command.args, _COPY_OPTIONS)
    targets = parsed.operands
    if name in ("cp", "copy-item", "copy", "cpi", "install"):
        named = parsed.values(
            lambda o: o in ("-t", "--target-directory") or o.lower() == "-destination"
        )
        targets = named[-1:] if named else targets[-1:] if len(targets) > 1 else []
    elif (
        parsed.letters("a")
        or parsed.longs(("--append",))
        or "-append" in (f.name for f in parsed.flags)
    ):
        targets = []  # tee -a appends: nothing written over
    for target in targets:
        if device(target.text):
            judge.flag(DESTRUCTIVE, f"{name} writes over the disk device {target.text}", Kind.DISK)
        elif not (parsed.letters("nd") or parsed.longs(("--no-clobber", "--directory"))):
            overwritten(judge.findings, f"{name} writes over", [target], command.cwd)
    return _rule(judge, command)


def _link(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`ln -f` (`-sf`) replaces what its link's name already names (without -f, ln refuses)."""
    parsed = parse(command.args, _LINK_OPTIONS)
    if not (parsed.letters("f") or parsed.longs(("--force",))):
        return command.cwd, OPAQUE
    named = parsed.values(lambda o: o in ("-t", "--target-directory"))
    operands = parsed.operands
    target = named[-1:] or (operands[-1:] if len(operands) > 1 else [])
    overwritten(judge.findings, f"{command.name} -f replaces", target, command.cwd)
    return command.cwd, OPAQUE


def _start_process(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """Start-Process runs its -FilePath with its -ArgumentList: judged as that command line."""
    parsed = parse(command.args, _START_OPTIONS)
    program = parsed.values(lambda o: o in ("-filepath", "-pspath", "-path"))
    arguments = parsed.values(lambda o: o in ("-argumentlist", "-args"))
    positional = list(parsed.operands)
    if not program and positional:
        program = [positional.pop(0)]
    if not program:
        return command.cwd, OPAQUE
    words = [*program, *arguments, *positional]
    if any(w.dynamic for w in words):
        judge.hidden(f"{command.name} runs a command only known when it runs")
    first, *rest = (w.text for w in words)
    line = " ".join([f"'{first}'" if " " in first else first, *rest])
    judge.line(line, "pwsh", command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _cipher(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """cipher /w overwrites a volume's free space: what was deleted there is gone for good."""
    for word in command.args:
        if word.text.lower().startswith("/w"):
            judge.flag(
                DESTRUCTIVE, f"cipher {word.text} wipes the free space of a volume", Kind.DISK
            )
    return _rule(judge, command)


def _rule(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """The command's own rule, if it has one (a step here never hides it)."""
    rule = rule_for(command.name, command.pwsh)
    return command.cwd, (rule(judge.findings, command) if rule is not None else OPAQUE)


def _pwsh_start_takes(name: str) -> bool:
    return name in ("-filepath", "-pspath", "-path", "-argumentlist", "-args",
                    "-workingdirectory", "-verb", "-windowstyle", "-credential",
                    "-redirectstandardoutput", "-redirectstandarderror",
                    "-redirectstandardinput")  # fmt: skip


_WATCH_OPTIONS = Syntax({"-n", "--interval", "-q", "--equexit"}, stop=True)
_PARALLEL_OPTIONS = Syntax(
    {"-j", "-P", "--jobs", "-S", "--sshlogin", "-n", "-N", "--max-args", "-L", "-l", "-d",
     "--delimiter", "-a", "--arg-file", "-I", "-C", "--colsep", "--delay", "--timeout",
     "--results", "--joblog", "--tmpdir", "-E", "--env", "--workdir", "--wd", "--halt",
     "--retries", "--memfree", "--load", "--sshloginfile", "--basefile"},
    stop=True,
)  # fmt: skip
_TRUNCATE_OPTIONS = Syntax({"-s", "--size", "-r", "--reference"})
_COPY_VALUED = {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "-g"}
_COPY_OPTIONS = Syntax(lambda o: o in _COPY_VALUED or o.lower() == "-destination")
_START_OPTIONS = Syntax(_pwsh_start_takes, colon=True)
_LINK_OPTIONS = Syntax({"-t", "--target-directory", "-S", "--suffix"})

STEPS: dict[str, Step] = dispatch_table(  # the walker's `EXPANDED` names these
    (("watch",), _watch),
    (("parallel",), _parallel),
    (("find",), _find),
    (("alias",), _alias),
    (("tar", "bsdtar", "gtar"), _tar),
    (("truncate",), _truncate),
    (("cp", "tee", "install", "copy-item", "cpi", "copy", "tee-object"), _device_write),
    (("start-process", "saps", "start"), _start_process),
    (("cipher",), _cipher),
    (("ln",), _link),
)
