"""Marked blocks: dshkit's part of a person's text file, between a begin and an end comment
line, so that taking it out leaves every other byte of the file as it was.

For formats whose own writer would rewrite the whole file (Codex's config.toml, DSH's patch
layers): dshkit writes its block and never re-serialises the person's part.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import InstallError


@dataclass(frozen=True)
class Block:
    begin: str  # the first line starts with this (dshkit may add a note after it)
    end: str  # the last line

    def span(self, text: str, path: object = "the file") -> tuple[int, int] | None:
        """Where the block is in `text` (the file `path`): its first character and the one
        after its end line (None: there is none). A block without its end line is refused."""
        start = text.find(self.begin)
        if start < 0:
            return None
        end = text.find(self.end, start)
        if end < 0:
            raise InstallError(
                f"{path}: dshkit's block has no end line ({self.end}); fix it by hand first"
            )
        after = text.find("\n", end)
        return start, len(text) if after < 0 else after + 1

    def body(self, text: str) -> str | None:
        """What the block holds between its marker lines (None: no whole block)."""
        try:
            span = self.span(text)
        except InstallError:
            return None
        if span is None:
            return None
        inside = text[span[0] : span[1]]
        return inside.partition("\n")[2].rpartition(self.end)[0]

    def around(self, body: str, note: str = "") -> str:
        """The whole block holding `body` (which ends with a newline)."""
        return f"{self.begin}{note}\n{body}{self.end}\n"

    def put(self, text: str, body: str, path: object = "the file") -> str:
        """`text` with the block holding `body`: replaced where it is (its begin line kept),
        else appended."""
        span = self.span(text, path)
        if span is not None:
            first = text.find("\n", span[0]) + 1
            return text[:first] + self.around(body).partition("\n")[2] + text[span[1] :]
        prefix = text if not text or text.endswith("\n") else text + "\n"
        return prefix + self.around(body)

    def remove(self, text: str) -> str:
        """`text` without the block (unchanged when there is none)."""
        try:
            span = self.span(text)
        except InstallError:
            return text  # no end line: nothing dshkit can take out safely
        return text if span is None else text[: span[0]] + text[span[1] :]
