"""What each harness's own prompt input gives a meaning to, and dshkit's prefix that none does.

A person types into the harness's input box; some first characters make the harness do
something else with the line (Claude Code's `!` shell mode, `/` slash commands, `#` memory,
`@` file paths; Codex's `!` local shell command and `$` apps; DSH's `/` commands and `@`
references — read from the shipped CLIs). dshkit's own prefix (skip the optimizer, mark the
last run) must start none of them and be started by none of them, or the harness would take
the person's line for its own. `》` (what `>` gives in a Chinese input method) is safe in all.

Plain data, no imports: the hook path reads it.
"""

from __future__ import annotations

# dshkit's prefix when the config names none: a prompt starting with it is not optimized,
# and `》ok` / `》rework` alone mark the session's last run.
DEFAULT_PREFIX = "》"

# Per harness: (prefix, what the harness does with it, whether the line is a command to the
# harness itself rather than words for the agent).
RESERVED: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "dsh": (
        ("/", "slash command", True),
        ("@", "file or session reference", False),
    ),
    "claude": (
        ("!", "shell mode", True),
        ("/", "slash command", True),
        ("#", "memory", True),
        ("@", "file path mention", False),
        ("?", "shortcuts", True),
    ),
    "codex": (
        ("!", "local shell command", True),
        ("/", "slash command", True),
        ("@", "file search", False),
        ("$", "app or skill mention", False),
    ),
}


def reserved(harness: str | None) -> tuple[tuple[str, str, bool], ...]:
    """The prefixes `harness` gives a meaning to (every harness's, when None or unknown)."""
    if harness in RESERVED:
        return RESERVED[harness]
    return tuple(entry for entries in RESERVED.values() for entry in entries)


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
    for entries in RESERVED.values():
        for own, meaning, _ in entries:
            seen.setdefault(own, meaning)
    return " ".join(seen)


def is_harness_command(prompt: str, harness: str | None) -> bool:
    """Whether the harness itself takes `prompt` as a command (a slash command, shell mode):
    words for the harness, not a request for the agent to refine."""
    text = prompt.lstrip()
    return any(text.startswith(own) for own, _, command in reserved(harness) if command)
