"""dshkit's prompt prefix, kept clear of what each harness's own prompt input gives a meaning.

A person types into the harness's input box; some first characters make the harness do
something else with the line (Claude Code's `!` shell mode, `/` slash commands; Codex's `!`
local shell command; DSH's `@` references: each harness's module lists its own,
`Harness.prompt_prefixes`). dshkit's own prefix (skip the optimizer, mark the last run) must
start none of them and be started by none of them, or the harness would take the person's
line for its own. `》` (what `>` gives in a Chinese input method) is safe in all.
"""

from __future__ import annotations

from . import HARNESSES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .harness import Prefix

# dshkit's prefix when the config names none: a prompt starting with it is not optimized,
# and `》ok` / `》rework` alone mark the session's last run.
DEFAULT_PREFIX = "》"


def reserved(harness: str | None) -> tuple[Prefix, ...]:
    """The prefixes `harness` gives a meaning to (every harness's, when None or unknown):
    (prefix, what the harness does with it, whether the line is a command to the harness)."""
    if harness in HARNESSES:
        return HARNESSES[harness].prompt_prefixes
    return tuple(entry for h in HARNESSES.values() for entry in h.prompt_prefixes)


def collision(prefix: str, harness: str | None = None) -> str | None:
    """Why `prefix` cannot be dshkit's (None: it can): empty, leading whitespace, or it and a
    prefix of the harness (of any harness, when None) begin one another."""
    if not prefix or prefix != prefix.lstrip():
        return "it must be non-empty and start with a visible character"
    for own, meaning, _ in reserved(harness):
        if prefix.startswith(own) or own.startswith(prefix):
            return f"{own!r} is the harness's own prefix ({meaning})"
    return None


def safe_prefix(prefix: str) -> bool:
    """Whether `prefix` collides with no harness's own (the config's check); "" means the
    default."""
    return prefix == "" or collision(prefix) is None


def reserved_words() -> str:
    """The reserved prefixes, for the config's rule text."""
    seen: dict[str, str] = {}
    for own, meaning, _ in reserved(None):
        seen.setdefault(own, meaning)
    return " ".join(seen)


def is_harness_command(prompt: str, harness: str | None) -> bool:
    """Whether the harness itself takes `prompt` as a command (a slash command, shell mode):
    words for the harness, not a request for the agent to refine."""
    text = prompt.lstrip()
    return any(text.startswith(own) for own, _, command in reserved(harness) if command)
