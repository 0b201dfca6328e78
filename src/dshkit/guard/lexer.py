"""A shell lexer for bash and PowerShell lines: words (quotes removed, known variables
expanded, what cannot be known marked) and operators, with nested command text set aside.

Not a full shell: it knows enough to say which words are commands and which are data. A
command substitution (`$(…)`, backticks, `<(…)`; in PowerShell `$(…)`, `(…)` and `{…}`) is
itself a command line: its text goes to `nested` and the word holding it is dynamic.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

BASH_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")", "\n")
PWSH_OPERATORS = ("&&", "||", ";", "|", "\n")
REDIRECTS = ("&>>", "&>", ">>", ">|", ">&", "<&", "<<<", "<<", ">", "<")
_BREAK = " \t\r\n;&|()<>"
_PWSH_BREAK = " \t\r\n;|<>,"


class LexError(ValueError):
    """The line cannot be read (an unclosed quote or bracket)."""


_DQ_ESCAPED = ("$", "`", '"', "\\", "\n")  # what a backslash escapes inside bash's "…"


def c_escapes(text: str) -> str:
    """C's escapes decoded, as bash's `$'…'`, printf and `echo -e` do (`\\x2f` is `/`)."""
    if "\\" not in text:
        return text
    import codecs  # only for a text with escapes

    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


class Word:
    """One word: its text after quote removal and expansion. A NUL (`\\0`) in it marks a part
    only known when the line runs."""

    __slots__ = ("dynamic", "glob", "quoted", "text")

    def __init__(
        self, text: str, quoted: bool = False, dynamic: bool = False, glob: bool = False
    ) -> None:
        self.text = text
        self.quoted = quoted  # some part was quoted or escaped
        self.dynamic = dynamic  # holds a value only known when it runs
        self.glob = glob  # an unquoted wildcard

    @property
    def shown(self) -> str:
        """The text as a reason names it: `…` for what is only known when it runs."""
        return self.text.replace("\0", "…")

    def __repr__(self) -> str:
        return f"Word({self.text!r}{', dynamic' if self.dynamic else ''})"


Token = Word | str  # a str is an operator or a redirection


class Lexed:
    """A lexed line: its tokens, and the command lines nested in its substitutions."""

    __slots__ = ("nested", "tokens")

    def __init__(self) -> None:
        self.tokens: list[Token] = []
        self.nested: list[str] = []  # command lines inside substitutions


def lex(line: str, shell: str, variables: Mapping[str, str], home: str) -> Lexed:
    """`line` as tokens. `variables` maps names (PowerShell's lower-cased, `env:` prefixed
    for the environment) to values; any other variable makes its word dynamic. A leading
    `~` is `home`."""
    return _Lexer(line, shell, variables, home).run()


def _closing(text: str, at: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one before `at`, skipping quoted text."""
    end = find_closing(text, at, opening, closing, escapes="\\`")
    if end < 0:
        raise LexError(f"unclosed {opening!r}")
    return end


def find_closing(text: str, at: int, opening: str, closing: str, *, escapes: str) -> int:
    """The index of the bracket `closing` that closes the `opening` just before `at`, quoted
    text and characters after one of `escapes` skipped (PowerShell's backtick is one, bash's
    is not); -1 when it is never closed."""
    depth = 1
    quote = ""
    while at < len(text):
        char = text[at]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                at += 1
        elif char in "'\"":
            quote = char
        elif char in escapes:
            at += 1
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return -1


class _Lexer:
    def __init__(self, line: str, shell: str, variables: Mapping[str, str], home: str) -> None:
        self.text = line
        self.home = home
        self.pwsh = shell == "pwsh"
        self.variables = variables
        self.at = 0
        self.out = Lexed()
        self.heredocs: list[tuple[str, Word]] = []  # delimiter, the word its body goes in
        self.braces = not self.pwsh and "{" in line  # a brace expansion may make more words

    def run(self) -> Lexed:
        text = self.text
        operators = PWSH_OPERATORS if self.pwsh else BASH_OPERATORS
        while self.at < len(text):
            char = text[self.at]
            if char in " \t\r" or (char == "\\" and text[self.at + 1 : self.at + 2] == "\n"):
                self.at += 1 if char != "\\" else 2
                continue
            if char == "#":
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
                continue
            if char == "\n" and self.heredocs:
                self._skip_heredocs()
                self.out.tokens.append("\n")
                continue
            operator = next((op for op in operators if text.startswith(op, self.at)), None)
            if operator is not None:
                self.out.tokens.append(operator)
                self.at += len(operator)
                continue
            redirect = self._redirect()
            if redirect is not None:
                self.out.tokens.append(redirect)
                if redirect == "<<":  # the body, read when its line ends, is what it feeds
                    self.out.tokens.append(self.heredocs[-1][1])
                continue
            if self.braces and self._braced():
                continue
            if self.pwsh and char == ",":  # `a,b`: an array's elements, each a word
                self.at += 1
                continue
            self.out.tokens.append(self._word())
        return self.out

    def _braced(self) -> bool:
        """The words a brace expansion (`{a,b}`, `{1..3}`) at `self.at` stands for, each
        lexed as a word; False when there is none."""
        from .expand import braces, raw_end  # only for a bash line with a `{`

        end = raw_end(self.text, self.at)
        alternatives = braces(self.text[self.at : end])
        if alternatives is None:
            return False
        for alternative in alternatives:
            lexer = _Lexer(alternative, "bash", self.variables, self.home)
            lexer.braces = False
            self.out.tokens.append(lexer._word())
            self.out.nested.extend(lexer.out.nested)
        self.at = end
        return True

    def _redirect(self) -> str | None:
        text, at = self.text, self.at
        start = at
        while at < len(text) and (text[at].isdigit() or (self.pwsh and text[at] == "*")):
            at += 1
        if self.pwsh and text.startswith("<(", at):
            return None
        found = next((r for r in REDIRECTS if text.startswith(r, at)), None)
        if found is None or (at > start and found.startswith("&")):
            return None
        if found == "<" and text.startswith("<(", at) and not self.pwsh:
            return None  # a process substitution is a word
        self.at = at + len(found)
        if found == ">&" or found == "<&":  # 2>&1: the descriptor is no file
            while self.at < len(text) and (text[self.at].isdigit() or text[self.at] == "-"):
                self.at += 1
            return ">&1"
        if found == "<<":
            if text.startswith("-", self.at):
                self.at += 1
            while text[self.at : self.at + 1] in (" ", "\t"):
                self.at += 1
            self.heredocs.append((self._word().text, Word("", quoted=True)))
            return "<<"
        return found

    def _skip_heredocs(self) -> None:
        """Past the bodies of the here-documents opened on the line just ended, each kept in
        its word (data, unless what reads it is a shell)."""
        lines = self.text[self.at + 1 :].split("\n")
        used = 0
        for delimiter, body in self.heredocs:
            start = used
            while used < len(lines) and lines[used].strip() != delimiter:
                used += 1
            body.text = "\n".join(lines[start:used])
            used += 1
        self.heredocs = []
        self.at = min(len(self.text), self.at + 1 + sum(len(x) + 1 for x in lines[:used]))

    def _word(self) -> Word:
        text = self.text
        parts: list[str] = []
        quoted = dynamic = glob = False
        breaks = _PWSH_BREAK if self.pwsh else _BREAK
        escape = "`" if self.pwsh else "\\"
        start = self.at
        while self.at < len(text):
            char = text[self.at]
            # `<(…)` is a word in either shell: a break there would leave `at` where it is
            # and the lexer would never get past it.
            if char in breaks and not text.startswith("<(", self.at):
                break
            if char == escape:
                quoted = True
                parts.append(text[self.at + 1 : self.at + 2])
                self.at += 2
            elif char == "'":
                end = text.find("'", self.at + 1)
                while self.pwsh and end >= 0 and text.startswith("''", end):
                    end = text.find("'", end + 2)
                if end < 0:
                    raise LexError("unclosed single quote")
                body = text[self.at + 1 : end]
                parts.append(body.replace("''", "'") if self.pwsh else body)
                quoted = True
                self.at = end + 1
            elif char == '"':
                quoted = True
                self.at += 1
                while True:
                    if self.at >= len(text):
                        raise LexError("unclosed double quote")
                    inner = text[self.at]
                    if inner == '"':
                        self.at += 1
                        break
                    if inner == escape:
                        following = text[self.at + 1 : self.at + 2]
                        if not self.pwsh and following not in _DQ_ESCAPED:
                            parts.append("\\")  # `"\i"` is `\i`: only `$ ` " \` are escaped
                        parts.append(following)
                        self.at += 2
                    elif inner == "$" or (inner == "`" and not self.pwsh):
                        dynamic |= self._dollar(parts)
                    else:
                        parts.append(inner)
                        self.at += 1
            elif char == "$" or (char == "`" and not self.pwsh):
                if not self.pwsh and text.startswith("$'", self.at):
                    end = text.find("'", self.at + 2)
                    if end < 0:
                        raise LexError("unclosed $'…' quote")
                    parts.append(c_escapes(text[self.at + 2 : end].replace("\\'", "'")))
                    quoted = True
                    self.at = end + 1
                else:
                    dynamic |= self._dollar(parts)
            elif char == "<" or (self.pwsh and char in "({"):  # <(…), or a PowerShell group
                closing = ")" if char in "<(" else "}"
                opening_at = self.at + (2 if char == "<" else 1)
                dynamic |= self._nested(opening_at, "(" if char != "{" else "{", closing)
                parts.append("\0")
            else:
                if char in "*?[":
                    glob = True
                dynamic |= char == "\0"  # a part of code's string known only when it runs
                if char == "~" and self.at == start:
                    parts.append(self._tilde())
                    continue
                parts.append(char)
                self.at += 1
        return Word("".join(parts), quoted, dynamic, glob)

    def _tilde(self) -> str:
        text, at = self.text, self.at + 1
        end = at
        while end < len(text) and text[end] not in _BREAK + "/\\":
            end += 1
        self.at = end
        home = self.home
        if end == at:
            return home
        return home.rsplit("/" if "/" in home else "\\", 1)[0] + "/" + text[at:end]

    def _nested(self, body: int, opening: str, closing: str) -> bool:
        """Sets the bracketed command text from `body` aside; True (the word is dynamic)."""
        end = _closing(self.text, body, opening, closing)
        self.out.nested.append(self.text[body:end])
        self.at = end + 1
        return True

    def _dollar(self, parts: list[str]) -> bool:
        """A `$…` (or a backtick substitution) at `self.at`: its value in `parts`, or a marker
        and True when it is only known when the line runs."""
        text, at = self.text, self.at
        if text[at] == "`":
            end = text.find("`", at + 1)
            if end < 0:
                raise LexError("unclosed backtick substitution")
            self.out.nested.append(text[at + 1 : end])
            self.at = end + 1
            parts.append("\0")
            return True
        if text.startswith("$((", at):
            self.at = _closing(text, at + 3, "(", ")") + 2
            body = text[at + 3 : self.at - 2]
            if "$(" in body or "`" in body:  # `$(( $(rm -rf /) + 1 ))` runs it
                from .expand import substitutions

                self.out.nested.extend(substitutions(body))
            parts.append("\0")
            return True
        if text.startswith("$(", at):
            self._nested(at + 2, "(", ")")
            parts.append("\0")
            return True
        if text.startswith("${", at):
            end = _closing(text, at + 2, "{", "}")
            name = text[at + 2 : end]
            self.at = end + 1
            if not self.pwsh and not name.isidentifier():  # `${HOME:-/}`, `${X%/}`…
                from .expand import parameter, substitutions

                self.out.nested.extend(substitutions(name))
                value = parameter(name, self.variables)
                parts.append("\0" if value is None else value)
                return value is None or "\0" in value
        else:
            end = at + 1
            allowed = "_:" if self.pwsh else "_"
            while end < len(text) and (text[end].isalnum() or text[end] in allowed):
                end += 1
            if end == at + 1:  # a lone `$`, or `$?`, `$1`, `$_`…
                special = text[end : end + 1]
                if special and (special in "?#@*!$-_" or special.isdigit()):
                    self.at = end + 1
                    parts.append("\0")
                    return True
                parts.append("$")
                self.at = end
                return False
            name = text[at + 1 : end]
            self.at = end
        value = self.variables.get(name.lower() if self.pwsh else name)
        if value is None:
            parts.append("\0")
            return True
        parts.append(value)
        return "\0" in value  # a loop's variable: what it is fed, known when it runs
