"""Skills as SKILL.md files of the Agent Skills format: drafted from a session's commands and
the request they served (named and described from it, in its language), checked against the
format, and written into a harness's skills folder once accepted, with `evals/evals.json`
beside SKILL.md (skill-creator's evaluation convention: the request as the prompt, the
commands as what is expected).

The format: a file beginning with a YAML front matter block (`---` lines) holding `name`
(1 to 64 characters of lowercase letters, digits and hyphens, no hyphen first, last or
doubled, and the same as the folder's name) and `description` (1 to 1024 characters, what it
does and when to use it), and optionally `license`, `compatibility` (at most 500 characters),
`metadata` (a table of strings) and `allowed-tools`; then Markdown instructions.

Writing happens only on `accept`: into `<skills folder>/<name>/SKILL.md` (the folder the
harness reads, from its module's `skills`), never over an existing file, atomically (a
temporary file linked into place), 0644 as skills are shared
text with no one's words beyond the commands.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

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
    """A drafted skill: its name, its SKILL.md text, a one-line summary, its commands, and its
    evals (`evals/evals.json` beside SKILL.md)."""

    __slots__ = ("commands", "evals", "name", "summary", "text")

    def __init__(
        self,
        name: str,
        text: str,
        summary: str,
        commands: list[str],
        evals: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.text = text
        self.summary = summary
        self.commands = commands
        self.evals = evals or skill_evals(name, "", commands)


# Words of a request that say nothing of the task (English), and the Chinese words a task is
# named by, each with the English word a skill's name takes (no transliteration: a Chinese
# request with none of these is named from its commands).
_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and as at be by can could do does for from how i in into is it its just let me "
        "my now of on or our please run same save should skill so steps that the then these "
        "this to turn up us use want we what when will with would you your again keep make new "
        "procedure remember",
    )
)
_ZH_WORDS = (
    ("部署", "deploy"),
    ("发布", "release"),
    ("上线", "launch"),
    ("回滚", "rollback"),
    ("测试", "test"),
    ("构建", "build"),
    ("编译", "compile"),
    ("打包", "package"),
    ("检查", "check"),
    ("格式化", "format"),
    ("提交", "commit"),
    ("推送", "push"),
    ("安装", "install"),
    ("依赖", "deps"),
    ("升级", "upgrade"),
    ("更新", "update"),
    ("迁移", "migrate"),
    ("数据库", "database"),
    ("备份", "backup"),
    ("恢复", "restore"),
    ("重启", "restart"),
    ("启动", "start"),
    ("停止", "stop"),
    ("清理", "clean"),
    ("同步", "sync"),
    ("文档", "docs"),
    ("镜像", "image"),
    ("版本", "version"),
    ("基准", "benchmark"),
    ("性能", "perf"),
    ("日志", "logs"),
    ("监控", "monitor"),
    ("预发", "staging"),
    ("生产", "production"),
    ("本地", "local"),
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# The words asking to keep a procedure as a skill: not what the skill is about.
_KEEP_WORDS = re.compile(
    r"(?:(?:请|帮我)?(?:把)?(?:这些|这个|这套|上面的)?(?:步骤|流程|命令)?\s*"
    r"(?:保存|记|存|做|写|整理)(?:成|为|下来作为|作)?(?:一个)?\s*(?:技能|skill))|"
    r"\b(?:save|keep|make|turn)\s+(?:this|that|it|these\s+steps)\s+(?:as\s+|into\s+)?"
    r"(?:a\s+)?skill\b",
    re.IGNORECASE,
)


def is_chinese(text: str) -> bool:
    """Whether a request is written in Chinese (a Han character in it)."""
    return bool(_CJK.search(text))


def task_of(request: str) -> str:
    """The task a request asks for, on one line: the words asking to keep it as a skill taken
    out, its punctuation at the ends trimmed."""
    line = " ".join(_KEEP_WORDS.sub(" ", request).split())
    return line.strip(" ,.;:!?，。；：！？、然后并且再").strip()


def _request_words(request: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for match in _ASCII_WORD.finditer(request):
        word = match[0].lower()
        if len(word) >= 3 and word not in _STOP_WORDS:
            found.append((match.start(), word))
    for chinese, english in _ZH_WORDS:
        at = request.find(chinese)
        if at >= 0:
            found.append((at, english))
    return list(dict.fromkeys(word for _, word in sorted(found)))


def _command_words(commands: list[str]) -> list[str]:
    """Each command's program and its first word that is not an option (`make deploy` →
    make, deploy), in order, once each."""
    words: list[str] = []
    for command in commands:
        parts = command.split()
        if not parts:
            continue
        program = os.path.basename(parts[0])
        rest = next((p for p in parts[1:] if not p.startswith(("-", "$", "<"))), "")
        for word in (program, os.path.basename(rest)):
            slug = _WORD.sub("-", word.lower()).strip("-")
            if slug and not slug.isdigit() and slug not in words:
                words.append(slug)
    return words


def skill_name(commands: list[str], request: str = "") -> str:
    """A valid name (kebab-case, at most 64 characters) from the request the skill serves:
    its English words, or the Chinese words of `_ZH_WORDS` in English (`release-version`),
    and its commands' programs and subcommands where the request names too little; from the
    commands alone `run-make-deploy`."""
    said = _request_words(task_of(request))[:4]
    done = _command_words(commands)
    if len(said) >= 2:
        words = said
    elif said:
        words = said + [w for w in done if w not in said][:3]
    else:
        words = ["run", *done[:4]] if done else ["workspace-procedure"]
    name = "-".join(words)
    name = re.sub(r"-{2,}", "-", name)[:NAME_LIMIT].strip("-")
    return name or "workspace-procedure"


def skill_evals(name: str, request: str, commands: list[str]) -> dict[str, Any]:
    """The skill's `evals/evals.json` (the Agent Skills evaluation convention of
    skill-creator: `skill_name` and `evals`, each with `id`, `prompt`, `expected_output`,
    `files` and `expectations`): the request it was drafted from as the prompt, the commands
    it runs as the expectations."""
    task = task_of(request)
    chinese = is_chinese(request)
    if not task:
        task = " → ".join(commands[:6]) or name
        prompt = f"按 {name} 的步骤再做一遍" if chinese else f"Run the {name} steps again"
    else:
        prompt = task
    if chinese:
        expected = f"依次运行 {len(commands)} 个命令，每一步成功后才进行下一步，完成「{task}」。"
        expectations = [f"运行了 `{c}`" for c in commands]
        expectations.append("某一步失败时停下并查看输出，没有跳过它")
    else:
        expected = (
            f"The {len(commands)} commands run in order, each only after the one before it "
            f"succeeded, and the task ({task}) is done."
        )
        expectations = [f"The agent ran `{c}`" for c in commands]
        expectations.append("A failing step was looked into, not skipped")
    return {
        "skill_name": name,
        "evals": [
            {
                "id": 1,
                "prompt": prompt,
                "expected_output": expected,
                "files": [],
                "expectations": expectations,
            }
        ],
    }


def draft_skill(
    commands: list[str], *, requested: str | None = None, request: str | None = None
) -> SkillDraft:
    """The SKILL.md draft of a procedure: its commands in order, as steps (credentials in
    them redacted), named and described from the request it serves (`request`, or the
    person's words asking to keep it, `requested`), in that request's language."""
    commands = [redact(c) for c in commands]
    served = redact(request or requested or "")
    task = task_of(served)
    name = skill_name(commands, served)
    chinese = is_chinese(served) if served.strip() else False
    runs = ", ".join(f"`{' '.join(c.split())}`" for c in commands[:4]) + (
        ", …" if len(commands) > 4 else ""
    )
    short = task if len(task) <= 200 else task[:199].rstrip() + "…"
    if chinese:
        what = f"完成「{short}」的步骤" if short else "本工作区的一套固定步骤"
        description = (
            f"{what}：依次运行 {runs}（dshkit 从以往会话中整理）。"
            f"再次需要{'「' + short + '」' if short else '这套流程'}时使用。"
        )
        origin = "使用者要求保存的步骤。" if requested else "多个回合中重复出现的步骤。"
        guide = "按顺序执行，每一步成功后再进行下一步；某一步失败时先查看输出并修复，不要跳过。"
        step = "运行："
        summary = f"技能草稿 {name}：依次执行 "
    else:
        what = f"Steps to {short}" if short else "A fixed procedure of this workspace"
        description = (
            f"{what}: runs {runs} in order (gathered by dshkit from earlier sessions). "
            f"Use when asked to {short or 'run this procedure'} again."
        )
        origin = (
            "Steps the person asked to keep."
            if requested
            else "Steps that recurred in several turns."
        )
        guide = (
            "Run them in order, each only after the one before it succeeded; when a step "
            "fails, read its output and fix the cause, never skip it."
        )
        step = "Run:"
        summary = f"Skill draft {name}: runs "
    description = description[:DESCRIPTION_LIMIT]
    steps = "\n".join(f"{n}. {step}\n\n   ```\n   {c}\n   ```" for n, c in enumerate(commands, 1))
    title = short or name
    text = (
        f"---\nname: {name}\ndescription: {_yaml_string(description)}\n---\n\n"
        f"# {title}\n\n{origin}{'' if chinese else ' '}{guide}\n\n{steps}\n"
    )
    summary += " → ".join(f"`{c}`" for c in commands[:6])
    return SkillDraft(name, text, summary, commands, skill_evals(name, served, commands))


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
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
    fields: dict[str, Any] = {}
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


def write_skill(folder: str, name: str, text: str, evals: dict[str, Any] | None = None) -> str:
    """Write `text` as `<folder>/<name>/SKILL.md`, valid or refused, never over a file that
    is there, and `evals` beside it as `evals/evals.json`; the path of SKILL.md. The evals go
    first: SKILL.md, the file a harness looks for, appears last, whole."""
    problems = validate(text, name)
    if problems:
        raise Invalid(
            "the skill draft is not a valid SKILL.md: " + "; ".join(problems), field="draft"
        )
    directory = os.path.join(folder, name)
    path = os.path.join(directory, "SKILL.md")
    evals_path = os.path.join(directory, "evals", "evals.json")
    for there in (path, evals_path) if evals is not None else (path,):
        if os.path.lexists(there):
            raise Refused(
                "SKILL_EXISTS",
                f"{there} is there already: dshkit does not overwrite a skill (remove it or "
                "rename the draft first)",
            )
    os.makedirs(directory, mode=0o755, exist_ok=True)
    if evals is not None:
        os.makedirs(os.path.dirname(evals_path), mode=0o755, exist_ok=True)
        body = json.dumps(evals, ensure_ascii=False, indent=2) + "\n"
        _write_new(evals_path, body.encode())
    _write_new(path, text.encode())
    return path


def _write_new(path: str, data: bytes) -> None:
    """`data` as a new file `path` (0644), through a temporary linked into place: never over
    a file that appeared meanwhile."""
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        try:
            os.link(temp, path)  # fails if one appeared meanwhile: never replaced
        except FileExistsError:
            raise Refused(
                "SKILL_EXISTS", f"{path} appeared meanwhile: dshkit does not overwrite it"
            ) from None
    finally:
        os.unlink(temp)
