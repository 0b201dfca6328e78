"""Skills as SKILL.md files of the Agent Skills format: drafted from a session's commands,
checked against the format, and written into a harness's skills folder once accepted.

The format: a file beginning with a YAML front matter block (`---` lines) holding `name`
(1 to 64 characters of lowercase letters, digits and hyphens, no hyphen first, last or
doubled, and the same as the folder's name) and `description` (1 to 1024 characters, what it
does and when to use it), and optionally `license`, `compatibility` (at most 500 characters),
`metadata` (a table of strings) and `allowed-tools`; then Markdown instructions.

Writing happens only on `accept`: into `<skills folder>/<name>/SKILL.md`, never over an
existing file, atomically (a temporary file renamed into place), 0644 as skills are shared
text with no one's words beyond the commands.
"""

from __future__ import annotations

import os
import re

from ..errors import Invalid, Refused

NAME_LIMIT = 64
DESCRIPTION_LIMIT = 1024
COMPATIBILITY_LIMIT = 500
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
_WORD = re.compile(r"[^a-z0-9]+")
# What looks like a credential in a command: a skill is a file others may read (a project's
# skills folder is often committed), so it never carries one.
_SECRETS = (
    re.compile(
        r"(?i)\b([\w-]*(?:api[_-]?key|token|secret|passw(?:or)?d|credential)s?[\w-]*)(\s*[=:]\s*|\s+)"
        r"(?!\$)(['\"]?)[^\s'\"]{6,}\3"
    ),
    re.compile(
        r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|"
        r"xox[abposr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,})"
    ),
    re.compile(r"(?i)(://[^/\s:@]+:)[^/\s@]+@"),  # a password in a URL
)
REDACTED = "<redacted>"


def redact(command: str) -> str:
    """`command` with what looks like a credential replaced by REDACTED."""
    command = _SECRETS[0].sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", command)
    command = _SECRETS[1].sub(REDACTED, command)
    return _SECRETS[2].sub(lambda m: f"{m[1]}{REDACTED}@", command)


class SkillDraft:
    """A drafted skill: its name, its SKILL.md text, a one-line summary, its commands."""

    __slots__ = ("commands", "name", "summary", "text")

    def __init__(self, name: str, text: str, summary: str, commands: list[str]) -> None:
        self.name = name
        self.text = text
        self.summary = summary
        self.commands = commands


def skill_name(commands: list[str]) -> str:
    """A valid name from the commands' programs (`pytest-ruff-git`), prefixed so a drafted
    skill never takes the name of one a person wrote."""
    programs: list[str] = []
    for command in commands:
        words = command.split()
        if not words:
            continue
        program = _WORD.sub("-", os.path.basename(words[0]).lower()).strip("-")
        if program and program not in programs:
            programs.append(program)
    name = "-".join(["workspace", *programs[:4]]) if programs else "workspace-procedure"
    name = re.sub(r"-{2,}", "-", name)[:NAME_LIMIT].strip("-")
    return name


def draft_skill(commands: list[str], *, requested: str | None = None) -> SkillDraft:
    """The SKILL.md draft of a procedure: its commands in order, as steps (credentials in
    them redacted)."""
    commands = [redact(c) for c in commands]
    name = skill_name(commands)
    programs = "、".join(dict.fromkeys(c.split()[0] for c in commands if c.split()))
    description = (
        f"在本工作区依次执行 {programs} 的固定步骤（dshkit 从以往会话中整理）。"
        "需要重复这套流程时使用。"
    )[:DESCRIPTION_LIMIT]
    steps = "\n".join(f"{n}. 运行：\n\n   ```\n   {c}\n   ```" for n, c in enumerate(commands, 1))
    origin = "使用者要求保存的步骤。" if requested else "多个回合中重复出现的步骤。"
    text = (
        f"---\nname: {name}\ndescription: {_yaml_string(description)}\n---\n\n"
        f"# {name}\n\n{origin}按顺序执行，每一步成功后再进行下一步；某一步失败时先查看"
        f"输出并修复，不要跳过。\n\n{steps}\n"
    )
    summary = f"技能草稿 {name}：依次执行 " + " → ".join(f"`{c}`" for c in commands[:6])
    return SkillDraft(name, text, summary, commands)


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_front_matter(text: str) -> tuple[dict[str, object], str]:
    """The front matter's fields and the body after it; Invalid when there is none. Reads the
    subset of YAML the format uses: `key: value` (plain, single- or double-quoted) and one
    level of `metadata` entries."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise Invalid("SKILL.md must begin with a front matter block ('---')", field="draft")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise Invalid("the front matter block is not closed ('---')", field="draft") from None
    fields: dict[str, object] = {}
    table: dict[str, str] | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t")):
            if table is None:
                raise Invalid(f"unexpected indented line in front matter: {line!r}", field="draft")
            key, sep, value = line.strip().partition(":")
            if not sep:
                raise Invalid(f"not a 'key: value' line: {line!r}", field="draft")
            table[key.strip()] = _scalar(value)
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise Invalid(f"not a 'key: value' line: {line!r}", field="draft")
        key = key.strip()
        if key in fields:
            raise Invalid(f"front matter field {key!r} given twice", field="draft")
        if value.strip():
            fields[key] = _scalar(value)
            table = None
        else:
            table = {}
            fields[key] = table
    return fields, "\n".join(lines[end + 1 :])


def _scalar(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def validate(text: str, folder: str | None = None) -> list[str]:
    """What is wrong with a SKILL.md against the format (empty: it is valid); `folder`, the
    name of the directory it is (to be) in, must equal its name."""
    try:
        fields, body = parse_front_matter(text)
    except Invalid as exc:
        return [exc.message]
    problems = [f"unknown front matter field {key!r}" for key in fields if key not in _FIELDS]
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        problems.append("'name' is required")
    else:
        if len(name) > NAME_LIMIT:
            problems.append(f"'name' is longer than {NAME_LIMIT} characters")
        if not _NAME.match(name):
            problems.append(
                "'name' must be lowercase letters, digits and single hyphens, "
                "not beginning or ending with a hyphen"
            )
        if folder is not None and folder != name:
            problems.append(f"'name' ({name}) differs from its folder's name ({folder})")
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("'description' is required")
    elif len(description) > DESCRIPTION_LIMIT:
        problems.append(f"'description' is longer than {DESCRIPTION_LIMIT} characters")
    compatibility = fields.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > COMPATIBILITY_LIMIT
    ):
        problems.append(f"'compatibility' must be text of at most {COMPATIBILITY_LIMIT} characters")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        problems.append("'metadata' must be a table of names to strings")
    if not body.strip():
        problems.append("the instructions after the front matter are empty")
    return problems


def write_skill(folder: str, name: str, text: str) -> str:
    """Write `text` as `<folder>/<name>/SKILL.md`, valid or refused, never over a file that
    is there; the path written."""
    problems = validate(text, name)
    if problems:
        raise Invalid(
            "the skill draft is not a valid SKILL.md: " + "; ".join(problems), field="draft"
        )
    directory = os.path.join(folder, name)
    path = os.path.join(directory, "SKILL.md")
    if os.path.lexists(path):
        raise Refused(
            "SKILL_EXISTS",
            f"{path} is there already: dshkit does not overwrite a skill (remove it or rename "
            "the draft first)",
        )
    os.makedirs(directory, mode=0o755, exist_ok=True)
    temp = os.path.join(directory, f".SKILL.md.{os.getpid()}.tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode())
        os.link(temp, path)  # fails if one appeared meanwhile: never replaced
    finally:
        os.unlink(temp)
    return path
