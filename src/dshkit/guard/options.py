"""One option parser for every command the guard reads: short options and their clusters, long
ones with `=value`, PowerShell's `-Name:value`, Windows `/x` switches, and the options that take
the next word as their value.

Each command says how it spells its options in a `Syntax` (built once, at import); `parse`
splits its arguments into flags and operands, and the rules ask the result what they need
(`letters`, `longs`, a flag's value) instead of scanning words themselves.
"""

from __future__ import annotations

from .lexer import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection

NO_SLASH, SLASH_LETTER, SLASH_ANY = 0, 1, 2  # which `/…` words are switches


class Syntax:
    """How one command spells its options.

    `valued`: the options that take the next word as their value (a set of names, or a test
    of a name); `binds`: those that take it as an operand (PowerShell's `-Path X` is `X`);
    `fold`: names are case-insensitive (lower-cased); `colon`: PowerShell's `-Name:value`;
    `quoted`: a quoted word may be an option (else it is data, like a pattern '-v');
    `slash`: Windows switches (`/s`: SLASH_LETTER, any `/word`: SLASH_ANY); `end`: `--`
    ends the options; `stop`: so does the first operand (what follows is another
    command's); `dash`: a lone `-` is an option, not an operand; `plus`: `+x` is an option
    too (a shell's `+o`)."""

    __slots__ = (
        "binds",
        "colon",
        "dash",
        "end",
        "fold",
        "plus",
        "quoted",
        "slash",
        "stop",
        "takes",
    )

    def __init__(
        self,
        valued: Collection[str] | Callable[[str], bool] = (),
        *,
        binds: Collection[str] = (),
        fold: bool = False,
        colon: bool = False,
        quoted: bool = True,
        slash: int = NO_SLASH,
        end: bool = True,
        stop: bool = False,
        dash: bool = False,
        plus: bool = False,
    ) -> None:
        self.takes: Callable[[str], bool] = (
            valued if callable(valued) else frozenset(valued).__contains__
        )
        self.binds = frozenset(binds)
        self.fold = fold or colon  # PowerShell's parameters are case-insensitive
        self.colon = colon
        self.quoted = quoted
        self.slash = slash
        self.end = end
        self.stop = stop
        self.dash = dash
        self.plus = plus


class Flag:
    """One option: its name (up to `=`, or `:` with `colon`; lower-cased with `fold`), its
    value (attached, or the next word when the syntax says it takes one), whether it takes
    one (even when none followed), and where it stands among the arguments."""

    __slots__ = ("at", "name", "takes", "value")

    def __init__(self, name: str, value: Word | None, takes: bool, at: int) -> None:
        self.name = name
        self.value = value
        self.takes = takes
        self.at = at

    @property
    def short(self) -> bool:
        """A `-x` option or a cluster of them (`-rf`), not a long one."""
        return self.name.startswith("-") and not self.name.startswith("--")

    def __repr__(self) -> str:
        return f"Flag({self.name!r}, {self.value!r})"


class Parsed:
    """A command's arguments read: its flags and operands in order, and the index of the `--`
    that ended the options (None when none did)."""

    __slots__ = ("end_at", "flags", "operands")

    def __init__(self) -> None:
        self.flags: list[Flag] = []
        self.operands: list[Word] = []
        self.end_at: int | None = None

    def letters(self, wanted: str) -> bool:
        """Whether a short option (alone or in a cluster) is one of the letters `wanted`."""
        return any(flag.short and any(c in flag.name for c in wanted) for flag in self.flags)

    def longs(self, names: tuple[str, ...]) -> set[str]:
        """The long options among `names` given, each spelled out or abbreviated."""
        found = set()
        for flag in self.flags:
            if flag.name.startswith("--"):
                name = abbreviation(flag.name, names)
                if name is not None:
                    found.add(name)
        return found

    def values(self, test: Callable[[str], bool]) -> list[Word]:
        """The values of the flags whose names pass `test`, in order."""
        return [f.value for f in self.flags if f.value is not None and test(f.name)]


def parse(args: list[Word], syntax: Syntax) -> Parsed:
    """`args` read with `syntax`."""
    out = Parsed()
    flags, operands = out.flags, out.operands
    count = len(args)
    at = 0
    while at < count:
        word = args[at]
        start = at
        text = word.text
        if syntax.end and text == "--":
            out.end_at = at
            operands.extend(args[at + 1 :])
            break
        if not _is_option(word, syntax):
            if syntax.stop:
                operands.extend(args[at:])
                break
            operands.append(word)
            at += 1
            continue
        if syntax.fold:
            text = text.lower()
        value: Word | None = None
        cut = text.find(":") if syntax.colon else text.find("=") if text.startswith("--") else -1
        if cut > 0:
            name = text[:cut]
            value = Word(word.text[cut + 1 :], word.quoted, word.dynamic, word.glob)
        else:
            name = text
        if name in syntax.binds:
            if value is None and at + 1 < count:
                at += 1
                value = args[at]
            if value is not None:
                operands.append(value)
            value = None
        takes = syntax.takes(name)
        if not takes and value is None and _cluster(name, syntax):
            # getopt: in `-of`, `-o` takes a value, so `f` is it (not a flag `-f`)
            for letter in range(2, len(name) + 1):
                if syntax.takes("-" + name[letter - 1]):
                    rest = word.text[letter:]
                    name, takes = name[:letter], True
                    if rest:
                        value = Word(rest, word.quoted, word.dynamic, word.glob)
                    break
        if takes and value is None and at + 1 < count:
            at += 1
            value = args[at]
        flags.append(Flag(name, value, takes, start))
        at += 1
    return out


def _cluster(name: str, syntax: Syntax) -> bool:
    """Whether `name` is a cluster of short options (`-rf`, `-of`), read as getopt does."""
    return (
        len(name) > 2
        and name[1] != "-"
        and name[0] == "-"
        and not syntax.fold
        and name[1:].isalnum()
        and name.isascii()
    )


def _is_option(word: Word, syntax: Syntax) -> bool:
    text = word.text
    if word.quoted and not syntax.quoted:
        return False
    first = text[:1]
    if first == "-":
        return len(text) > 1 or syntax.dash
    if first == "/" and syntax.slash:
        return len(text) == 2 or syntax.slash == SLASH_ANY
    return first == "+" and syntax.plus and len(text) > 1


def abbreviation(option: str, names: tuple[str, ...]) -> str | None:
    """The long option `option` (up to any `=`) stands for: itself, or the one of `names` it
    is an unambiguous abbreviation of (getopt's rule)."""
    option = option.split("=", 1)[0]
    if option in names:
        return option
    found = [name for name in names if name.startswith(option) and len(option) > 2]
    return found[0] if len(found) == 1 else None
