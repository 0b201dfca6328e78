"""The guard on the tools that are not a shell: where a write, an edit or a patch lands, whether
a read opens a credential file, and whether an MCP tool's name says it deletes.

A file tool names its paths outright, so no lexer is needed: Claude Code's Write, Edit,
MultiEdit and NotebookEdit and DSH's write and edit name one path; Codex's `apply_patch`
carries a raw patch in `tool_input.command` (a string, or `["apply_patch", patch]`), read here
as a patch, its `*** Add/Update/Delete File:` and `*** Move to:` lines, never as a shell line.
A write is judged by where it lands (`judge_write`):

- a credential file, a shell's start-up file, a git hook or config, a system directory, a
  harness's own settings and hook files (the registry names them) or dshkit's state (its
  config and the guard's mode: an agent rewriting its own guard) is `destructive`, kind
  `config`: it changes every later run;
- a patch deleting a file outside the workspace is `destructive`, kind `outside`;
- any other write outside the workspace (a temporary directory apart) is `unknown`, kind
  `outside`: the mode decides (balanced asks).

A read (`judge_read`) of a credential file (an SSH private key, a cloud CLI's credentials,
netrc, a dotenv file, a harness's own credentials) is `unknown`, kind `secret`: milder than a
write, since nothing is lost, but the key would be in the model's context. An MCP tool whose
name says delete, drop or destroy is `destructive`, kind `remote` (`judge_tool`); the
person's `[guard] allow` rules match its name as a one-word command, so a false alarm can be
turned into a rule.

Kept light: the Read hook runs this for every read its quick byte scan (`quiet_read`) cannot
rule out, and loads the mode and the message only for a verdict that is not allow.
"""

from __future__ import annotations

import os

from .policy import DESTRUCTIVE, SAFE, UNKNOWN, Kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every file tool)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..hookio import Answer, Call
    from .rules import Pattern, Rules

# Below the home directory: what a write there changes for every later run (credentials,
# a shell's start-up, git's own hooks and config). A trailing `/` names a directory.
HOME_CONFIG = (
    ".ssh/", ".gnupg/", ".aws/", ".azure/", ".config/gcloud/", ".kube/", ".docker/config.json",
    ".netrc", ".git-credentials", ".config/gh/", ".npmrc", ".pypirc", ".password-store/",
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zprofile", ".zshenv", ".zlogin", ".config/fish/", ".gitconfig", ".config/git/",
    ".config/autostart/", ".config/systemd/", "Library/LaunchAgents/",
    "Documents/PowerShell/", "Documents/WindowsPowerShell/",
)  # fmt: skip
SYSTEM = ("/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/boot/", "/opt/",
          "/var/", "/System/", "/Library/", "C:\\Windows\\", "C:\\Program Files")  # fmt: skip
# An MCP tool named for one of these deletes something on the server it speaks to.
DELETE_WORDS = frozenset(("delete", "drop", "destroy", "purge", "wipe", "erase", "truncate"))
_QUIET_READ = (b".ssh", b".env", b"cred", b".aws", b".netrc", b".kube", b"id_", b".pem",
               b".key", b".gnupg", b".azure", b"gcloud", b".docker", b"npmrc", b"pypirc",
               b"/gh/", b"auth", b"shadow", b".p12", b".pfx", b"password", b"keystore",
               b".jks")  # fmt: skip
_QUIET_TOOL = tuple(word.encode() for word in DELETE_WORDS)
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath")
_PATCH_HEADS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


class Verdict:
    """A file tool's risk, the kind of harm (`policy.Kind`), why (in English, naming the path),
    and the path or tool it is about."""

    __slots__ = ("kind", "reason", "risk", "subject")

    def __init__(self, risk: str, kind: str, reason: str, subject: str) -> None:
        self.risk, self.kind, self.reason, self.subject = risk, kind, reason, subject

    def __repr__(self) -> str:
        return f"Verdict({self.risk!r}, {self.kind!r}, {self.reason!r})"


SAFE_VERDICT = Verdict(SAFE, SAFE, "", "")


# -- what a call names ---------------------------------------------------------------------


def patch_paths(patch: str) -> list[tuple[str, str]] | None:
    """(verb, path) of each file a Codex patch touches (`add`, `update`, `delete`, `move`), or
    None when the text holds no patch (`*** Begin Patch`). Read as a patch, never as shell."""
    start = patch.find("*** Begin Patch")
    if start < 0:
        return None
    found = []
    for line in patch[start:].splitlines():
        for head in _PATCH_HEADS:
            if line.startswith(head):
                path = line[len(head) :].strip()
                if path:
                    found.append((head[4:].split(" ", 1)[0].lower(), path))
                break
    return found


def written_paths(tool_input: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(verb, path) of what a write tool's input writes: its path field, or the files of a
    patch in `command` (or `input`); None when it names none the guard can read."""
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return [("update", value)]
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = "\n".join(value)
        if isinstance(value, str):
            return patch_paths(value)
    return None


# -- judging -------------------------------------------------------------------------------


class Places:
    """The workspace, the home directory, dshkit's state directory and the harness settings
    files a path is judged against (POSIX or Windows, by the workspace's spelling)."""

    __slots__ = ("confined", "home", "nt", "settings", "state", "workspace")

    def __init__(
        self,
        workspace: str,
        home: str | None = None,
        state: str | None = None,
        settings: Iterable[str] = (),
    ) -> None:
        from .paths import Places as Model

        model = Model(workspace, home)  # the command guard's rules of a home and a workspace
        self.nt, self.workspace, self.home = model.nt, model.workspace, model.home
        self.confined = model.confined
        self.state = self.resolve(state) if state else None
        self.settings = tuple(self.resolve(path) for path in settings)

    def resolve(self, path: str) -> str:
        if self.nt:
            import ntpath

            path = path.replace("/", "\\")
            if path.startswith("~"):
                path = self.home + path[1:]
            return ntpath.normpath(ntpath.join(self.workspace, path))
        import posixpath

        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        return posixpath.normpath(posixpath.join(self.workspace, path))

    def key(self, path: str) -> str:
        return path.lower().replace("\\", "/") if self.nt else path

    def within(self, path: str, root: str) -> bool:
        path, root = self.key(path), self.key(root).rstrip("/")
        return path == root or path.startswith(root + "/")

    def below_home(self, path: str, names: tuple[str, ...]) -> str | None:
        """The entry of `names` (home-relative, `/` ending a directory) `path` is or is in."""
        home = self.key(self.home).rstrip("/")
        key = self.key(path)
        if not key.startswith(home + "/"):
            return None
        rest = key[len(home) + 1 :]
        for name in names:
            wanted = self.key(name)
            if rest == wanted.rstrip("/") or (wanted.endswith("/") and rest.startswith(wanted)):
                return name
        return None


def _protected(path: str, places: Places) -> str | None:
    """Why a write to `path` changes every later run, or None."""
    key = places.key(path)
    parts = key.split("/")
    if ".git" in parts:
        at = len(parts) - 1 - parts[::-1].index(".git")
        rest = parts[at + 1 :]
        if rest[:1] == ["hooks"] and len(rest) > 1:
            return "a git hook (runs at every commit, checkout or push)"
        if rest == ["config"]:
            return "a repository's git config (can name programs git runs)"
    if places.state is not None and places.within(path, places.state):
        return "dshkit's own state (its config and the guard's mode)"
    for settings in places.settings:
        if places.key(settings) == key:
            return "a coding agent's own settings or hooks file"
        folder, name = os.path.split(key)
        if os.path.split(places.key(settings))[0] == folder and name.startswith(
            ("settings", "hooks")
        ):
            return "a coding agent's own settings or hooks file"
    named = places.below_home(path, HOME_CONFIG)
    if named is not None:
        return f"~/{named} (credentials or what starts with every shell or login)"
    for system in SYSTEM:
        if places.within(path, system.rstrip("/\\")):
            return "a system directory"
    return None


def _temporary(path: str, places: Places) -> bool:
    """Below a temporary directory, and not in the home directory (a home below /tmp is
    still a home)."""
    if places.within(path, places.home):
        return False
    if places.nt:
        return places.within(path, os.path.join(places.home, "AppData", "Local", "Temp"))
    return any(places.within(path, temp) for temp in ("/tmp", "/var/tmp", "/private/tmp"))


def judge_write(paths: list[tuple[str, str]], places: Places) -> Verdict:
    """The worst of what a write tool's paths risk (see the module docstring)."""
    worst = SAFE_VERDICT
    for verb, given in paths:
        path = places.resolve(given)
        why = _protected(path, places)
        if why is not None:
            return Verdict(DESTRUCTIVE, Kind.CONFIG, f"{verb} {path}: {why}", path)
        inside = places.confined and places.within(path, places.workspace)
        if inside or _temporary(path, places):
            continue
        if verb == "delete":
            reason = f"delete {path}: a file outside the workspace"
            return Verdict(DESTRUCTIVE, Kind.OUTSIDE, reason, path)
        if places.confined and worst.risk == SAFE:
            reason = f"{verb} {path}: writes outside the workspace"
            worst = Verdict(UNKNOWN, Kind.OUTSIDE, reason, path)
    return worst


def judge_read(given: str, places: Places) -> Verdict:
    """Whether reading `given` puts a credential in the agent's context: one of the
    credential stores the command guard knows (`leaks.store`, the one list), key material
    included (a file tool reading a key is asked about, wherever it lies)."""
    from .leaks import store

    path = places.resolve(given)
    why = store(path, places.home, keys=True)
    if why is None:
        return SAFE_VERDICT
    return Verdict(UNKNOWN, Kind.SECRET, f"read {path}: {why}", path)


def judge_tool(name: str) -> Verdict:
    """Whether an MCP tool's name says it deletes (`delete_issue`, `dropTable`, `destroy`)."""
    words = set()
    word = ""
    for char in name:
        if char.isupper() and word and not word[-1].isupper():
            words.add(word.lower())
            word = char
        elif char.isalnum():
            word += char
        else:
            words.add(word.lower())
            word = ""
    words.add(word.lower())
    said = sorted(words & DELETE_WORDS)
    if not said:
        return SAFE_VERDICT
    reason = f"the tool {name} says {said[0]}: deletes on the server it speaks to"
    return Verdict(DESTRUCTIVE, Kind.REMOTE, reason, name)


# -- the hook face -------------------------------------------------------------------------


def quiet_read(state: str, raw: bytes) -> bool:
    """True when a read's payload surely names no credential file (a byte scan: most reads
    are never parsed by the guard)."""
    lowered = raw.lower()
    return not any(mark in lowered for mark in _QUIET_READ)


def quiet_tool(state: str, raw: bytes) -> bool:
    """True when no tool name in the payload can say delete, drop or destroy."""
    lowered = raw.lower()
    return not any(word in lowered for word in _QUIET_TOOL)


def places_for(call: Call) -> Places | None:
    """The places of a call: its workspace (None without one), dshkit's state and every
    harness's settings files (the registry's, user and project scope)."""
    cwd = call.payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    return Places(cwd, None, call.state, settings_files(call.state, cwd))


def settings_files(state: str, workspace: str) -> list[str]:
    """Every harness's own settings and hooks files (`Harness.user_settings`,
    `project_settings`, the config its capability reads modes from)."""
    from .. import harnesses

    found: list[str] = []
    for harness in harnesses.all_harnesses():
        modes = harness.capability.config_modes if harness.capability else None
        for kind in ("user", "project", "config"):
            path: str | None
            try:  # (no functools on this path: it loads collections and operator)
                if kind == "user":
                    path = harness.user_settings(state)
                elif kind == "project":
                    made = harness.project_settings
                    path = made(workspace) if made else None
                else:
                    path = modes[0]() if modes else None
            except Exception:  # a harness whose home cannot be found names none
                continue
            if path:
                found.append(os.fspath(path))
    return found


def on_write(call: Call) -> Answer | None:
    """PreToolUse of a write tool: where it lands (a patch's files read as a patch)."""
    from .hook import unjudged

    tool_input = call.payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return unjudged(call, "why.write_input")
    paths = written_paths(tool_input)
    if paths is None:
        return unjudged(call, "why.patch")
    places = places_for(call)
    if places is None:
        return None  # no workspace: nothing to be outside of
    verdict = judge_write(paths, places)
    subject = " ".join(f"{verb} {path}" for verb, path in paths[:20])
    words = [call.tool_name, verdict.subject]
    return _answer(call, verdict, "file.write", f"{call.tool_name} {subject}", words)


def patch_answer(call: Call, text: str) -> Answer | None:
    """A Codex patch run through the shell tool: judged as the patch it is."""
    from .hook import unjudged

    paths = patch_paths(text)
    if paths is None:
        return unjudged(call, "why.patch")
    places = places_for(call)
    if places is None:
        return None
    verdict = judge_write(paths, places)
    subject = "apply_patch " + " ".join(f"{verb} {path}" for verb, path in paths[:20])
    return _answer(call, verdict, "file.write", subject, ["apply_patch", verdict.subject])


def on_read(call: Call) -> Answer | None:
    """PreToolUse of a read tool: whether it reads a credential file into the context."""
    tool_input = call.payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = next((tool_input[k] for k in _PATH_KEYS if isinstance(tool_input.get(k), str)), None)
    places = places_for(call)
    if not path or places is None:
        return None
    verdict = judge_read(path, places)
    return _answer(call, verdict, "file.read", f"{call.tool_name} {path}", [call.tool_name, path])


def on_tool(call: Call) -> Answer | None:
    """PreToolUse of any other tool (MCP's): whether its name says it deletes."""
    info = call.harness_info
    name = call.tool_name
    if info is not None and any(name in names for names in info.tools.values()):
        return None  # one of the harness's own tools: judged by its kind's handler
    verdict = judge_tool(name)
    return _answer(call, verdict, "file.call", name, [name])


def _ruled(rules: Rules | None, words: list[str]) -> Pattern | None:
    """The person's first rule (deny first) matching a tool call's words: its name, then the
    path (`Write /etc/hosts`, `mcp__db__drop_table`)."""
    if rules is None:
        return None
    return next((p for p in rules.patterns if p.matches(words, False)), None)


def _answer(
    call: Call, verdict: Verdict, action: str, subject: str, rule_words: list[str]
) -> Answer | None:
    """The mode's answer to a verdict (None for allow), said as the command guard says it
    (`action`: texts.py's `file.…` key of what the tool does), in the person's language, and
    audited as it is."""
    if verdict.risk == SAFE:
        return None
    from .hook import _advice_of, _delivered, _noted, _settings, audited
    from .policy import decide

    cwd = call.payload.get("cwd")
    mode, rules, problem = _settings(call, cwd if isinstance(cwd, str) and cwd else None)
    ruled = _ruled(rules, rule_words)
    if ruled is not None and not ruled.deny:
        return None  # the person's own allow rule for this tool or path
    decision = "deny" if ruled is not None else decide(verdict.risk, False, mode)
    if decision == "allow":
        return None
    from .intent import language as of
    from .texts import join, say

    language = of(call)  # (read only now: the call is denied or asked about)
    what = say(language, "file.destructive" if verdict.risk == DESTRUCTIVE else "file.confirm")
    if ruled is not None:
        rule = say(language, "rule.person_from", pattern=repr(ruled.text), origin=ruled.origin)
    else:
        rule = say(language, "rule.builtin", name=f"file-{verdict.kind}")
    said = say(language, "file", mode=mode, verb=say(language, decision),
               action=say(language, action), what=what, reason=verdict.reason,
               rule=rule)  # fmt: skip
    advice = ""
    if decision == "deny" or verdict.kind == Kind.SECRET:
        advice = _advice_of(language, verdict.kind)
    reason = join(language, [said, _noted(language, problem), advice])
    decision, reason = _delivered(call, decision, reason, language)
    commit = audited(
        call,
        decision,
        subject,
        verdict.risk,
        mode,
        reason=verdict.reason,
        rule=ruled.text if ruled is not None else None,
        builtin=None if ruled is not None else f"file-{verdict.kind}",
        words=rule_words,
        tool=call.tool_name,
    )
    from ..hookio import Answer

    return Answer("guard", decision=(decision, reason), commit=commit)
