"""Commands run on another machine or in a container (ssh, pdsh, ansible's ad-hoc modules,
kubectl exec), judged as commands whose workspace is unknown.

There, no place is known to be the project's: any delete, and anything recursive, is
destructive, and a command only known when it runs is unknown. `ssh host` alone (a login) and
copies (`scp`, `rsync`) run nothing there. ssh hands the remote shell its words joined by
spaces; the words are also judged as one would have quoted them (`ssh host bash -c 'rm -rf /'`
means the line, whatever the remote shell makes of it), the worst winning.
"""

from __future__ import annotations

from .commands import from_file
from .lexer import Word
from .options import Syntax, parse
from .paths import OUTSIDE, Places
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .commands import Command, Fed
    from .walk import Judge

    Step = Callable[["Judge", "Command"], tuple[str | None, "Fed"]]

_OPAQUE: list[Word] = [Word("\0", dynamic=True)]  # what the remote command prints: unknown
_THERE = "~"  # where a remote command starts: its user's home, whatever that is
_UNKNOWN_PART = "${__dshkit_unknown}"  # a local value only known when it runs, spelled remotely

# ssh's options that take a value (getopt letters: `-p 22`, `-p22`, `-vp 22`)
_SSH_VALUED = "BbcDEeFIiJLlmOopQRSWw"
_PDSH_VALUED = {"-w", "-x", "-g", "-X", "-l", "-t", "-u", "-f", "-R", "-h", "-H", "-p", "-o",
                "-e", "-O", "-P"}  # fmt: skip
_SSHPASS_OPTIONS = Syntax({"-p", "-f", "-d", "-P"}, stop=True)
_ANSIBLE_OPTIONS = Syntax({"-m", "--module-name", "-a", "--args", "-i", "--inventory", "-u",
                           "--user", "-e", "--extra-vars", "-f", "--forks", "-l", "--limit",
                           "--become-user", "--become-method", "-c", "--connection", "-T",
                           "--timeout", "-M", "--module-path", "-P", "--poll", "-B",
                           "--background", "--private-key", "--key-file", "--vault-id",
                           "--vault-password-file", "-t", "--tree"})  # fmt: skip
_KUBE_OPTIONS = Syntax({"-n", "--namespace", "-c", "--container", "--context", "--kubeconfig",
                        "--cluster", "--user", "-s", "--server", "--token", "--as", "-f",
                        "--filename", "--pod-running-timeout", "--request-timeout"})  # fmt: skip
# ansible's modules that run their arguments as a command line, and the words they take for
# themselves (`chdir=/srv`)
_ANSIBLE_RUNS = {"command", "shell", "raw", "win_shell", "win_command"}
_ANSIBLE_OWN = ("chdir=", "creates=", "removes=", "executable=", "warn=", "stdin=", "cmd=")


def _ssh_takes(option: str) -> bool:
    if option.startswith("--"):
        return False
    for at in range(1, len(option)):
        if option[at] in _SSH_VALUED:
            return at == len(option) - 1  # else the rest of the word is its value
    return False


def _letters(option: str) -> set[str]:
    """The options of a cluster (`-tt`, `-NfL8080:…`), up to the first that takes a value."""
    letters = set()
    for letter in option[1:]:
        letters.add(letter)
        if letter in _SSH_VALUED:
            break
    return letters


_SSH_OPTIONS = Syntax(_ssh_takes, stop=True)
_PDSH_OPTIONS = Syntax(_PDSH_VALUED, stop=True)


class Elsewhere(Places):
    """Places on a machine or in a container whose workspace is unknown: every word lands
    outside any workspace, even one only known when it runs."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("/", _THERE)

    def where(self, word: Word, cwd: str | None) -> str:
        return OUTSIDE


def judged_there(
    judge: Judge,
    where: str,
    command: Command,
    *,
    line: list[Word] | None = None,
    argv: list[Word] | None = None,
    fed: Fed = None,
) -> None:
    """Judges a command run `where` (a host, a container) and flags what it finds, named by
    `where`: `line`, words a remote shell joins into a line, or `argv`, a command and its
    arguments with no shell between; `fed`, what the local pipe sends it."""
    from .walk import Judge  # the walker imports this module only when it meets one

    there = Judge(Elsewhere(), judge.rules)  # the person's rules hold there too
    depth = command.depth + 1
    if line is not None:
        if any(w.dynamic for w in line):
            judge.hidden(f"{where}: runs a command only known when it runs")
        texts = [w.text.replace("\0", _UNKNOWN_PART) for w in line]
        there.line(" ".join(texts), "bash", _THERE, depth)
        if len(texts) > 1 and any(_needs_quotes(t) for t in texts):
            there.line(" ".join(_quoted(t) for t in texts), "bash", _THERE, depth)
        joined = " ".join(texts)
        if (
            fed is not None
            and from_file(fed) is None
            and not _needs_quotes(joined.replace(" ", ""))
        ):
            # `curl … | ssh host 'sudo bash'`: a plain remote command reads the pipe
            there.command([Word(w) for w in joined.split()], "bash", _THERE, depth, fed)
    elif argv is not None:
        there.command(argv, "bash", _THERE, depth, fed)
    for risk, reason, kind in there.findings.found:
        # A place there is no place of this workspace: whatever it deletes, it does there.
        local = kind in (Kind.OUTSIDE, Kind.WORKSPACE)
        judge.flag(risk, f"{where}: {reason}", Kind.REMOTE if local else kind)
    judge.findings.opaque.extend(f"{where}: {reason}" for reason in there.findings.opaque)
    judge.seen += there.seen
    judge.denied += there.denied
    judge.allowed += there.allowed


def _needs_quotes(text: str) -> bool:
    return any(c in text for c in " \t\n;&|<>()$`\\\"'*?")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _ssh(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`ssh [OPTIONS] HOST [OPTIONS] [--] [COMMAND…]`: with no command, a login (or, fed a
    pipe, the remote shell reads it); `-N` and `-s` (a subsystem) run none."""
    parsed = parse(command.args, _SSH_OPTIONS)
    if not parsed.operands:
        return command.cwd, _OPAQUE
    host = parsed.operands[0]
    after = parse(parsed.operands[1:], _SSH_OPTIONS)  # ssh reads options after the host too
    if any(_letters(f.name) & {"N", "s"} for f in parsed.flags + after.flags if f.short):
        return command.cwd, _OPAQUE
    _runs(judge, command, f"ssh {host.shown}", after.operands)
    return command.cwd, _OPAQUE


def _runs(judge: Judge, command: Command, where: str, words: list[Word]) -> None:
    """A remote shell given `words` as its line, or reading the pipe when there are none."""
    fed = command.fed
    script = from_file(fed)
    if script is not None:  # `ssh host < deploy.sh`: a script of one's own, run where it is not
        judge.flag(UNKNOWN, f"{where}: runs the script {script.path.shown} there, not read here")
        fed = None
    if words:
        judged_there(judge, where, command, line=words, fed=fed)
    elif fed is not None:
        if any(w.dynamic for w in fed):
            judge.hidden(f"{where}: runs what the pipe sends it")
        else:
            judged_there(judge, where, command, line=[Word("\n".join(w.text for w in fed))])


def _pdsh(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """pdsh, pssh, clush: the command line on every host named."""
    words = parse(command.args, _PDSH_OPTIONS).operands
    if words:
        judged_there(judge, f"{command.name} on its hosts", command, line=words)
    return command.cwd, _OPAQUE


_MOSH_OPTIONS = Syntax({"--client", "--server", "--ssh", "--predict", "-p", "--port", "--family",
                        "--bind-server", "--experimental-remote-ip"}, stop=True)  # fmt: skip


def _mosh(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`mosh [OPTIONS] [--] HOST [COMMAND…]`: like ssh, a login alone, or the command there."""
    words = parse(command.args, _MOSH_OPTIONS).operands
    if len(words) > 1:
        rest = words[2:] if words[1].text == "--" else words[1:]
        if rest:
            judged_there(judge, f"mosh {words[0].shown}", command, line=rest)
    return command.cwd, _OPAQUE


def _sshpass(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """sshpass only hands the password to the command it runs (ssh, mostly)."""
    rest = parse(command.args, _SSHPASS_OPTIONS).operands
    return judge.command(rest, command.shell, command.cwd, command.depth, command.fed)


def _ansible(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`ansible HOSTS -m shell -a LINE` runs LINE on each host (`command` is the default
    module); `-m file -a 'path=… state=absent'` deletes the path there."""
    parsed = parse(command.args, _ANSIBLE_OPTIONS)
    module, given = "command", None
    for flag in parsed.flags:
        if flag.value is None:
            continue
        if flag.name in ("-m", "--module-name"):
            module = flag.value.text.rsplit(".", 1)[-1]  # ansible.builtin.shell is shell
        elif flag.name in ("-a", "--args"):
            given = flag.value
    where = f"ansible {parsed.operands[0].shown if parsed.operands else ''}".rstrip()
    if given is None:
        return command.cwd, _OPAQUE
    if module in _ANSIBLE_RUNS:
        words = [w for w in given.text.split(" ") if not w.startswith(_ANSIBLE_OWN)]
        line = Word(" ".join(words), dynamic=given.dynamic)
        judged_there(judge, f"{where} -m {module}", command, line=[line])
    elif module in ("file", "win_file"):
        settings = dict(part.partition("=")[::2] for part in given.text.split())
        if settings.get("state") == "absent":
            target = settings.get("path") or settings.get("dest") or settings.get("name") or "…"
            judge.flag(DESTRUCTIVE, f"{where} -m {module}: deletes {target} there", Kind.REMOTE)
    return command.cwd, _OPAQUE


def _kubectl(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`kubectl exec POD -- COMMAND…` runs COMMAND (no shell between) in the pod; every verb
    also goes to its own rule (the cluster resources it deletes, the database a pod holds)."""
    from .commands import rule_for

    rule = rule_for(command.name, command.pwsh)
    fed = rule(judge.findings, command) if rule is not None else _OPAQUE
    parsed = parse(command.args, _KUBE_OPTIONS)
    operands = parsed.operands
    if len(operands) >= 2 and operands[0].text == "exec":
        ended = parsed.end_at
        argv = command.args[ended + 1 :] if ended is not None else operands[2:]  # or no `--`
        if argv:
            where = f"{command.name} exec {operands[1].shown}"
            judged_there(judge, where, command, argv=argv, fed=command.fed)
    return command.cwd, fed


_CONTAINER_EXEC = Syntax({"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir",
                          "--detach-keys", "--index"}, stop=True)  # fmt: skip
_CONTAINER_RUN = Syntax({"-v", "--volume", "-e", "--env", "--env-file", "-p", "--publish",
                         "--name", "-w", "--workdir", "-u", "--user", "--network", "--net",
                         "--entrypoint", "--mount", "-l", "--label", "--add-host", "--cpus",
                         "-m", "--memory", "--platform", "--pull", "--restart", "-h",
                         "--hostname", "--gpus", "--ipc", "--pid", "--shm-size", "--ulimit",
                         "--device", "--dns", "--cap-add", "--cap-drop", "--security-opt",
                         "--tmpfs", "--log-driver", "--log-opt", "--stop-signal", "--runtime",
                         "--cidfile", "--expose", "--link", "--volumes-from", "--group-add",
                         "--userns", "--uts", "--cgroupns", "-a", "--attach", "--memory-swap",
                         "-c", "--cpu-shares", "--cpuset-cpus", "--label-file", "--init-path",
                         "--service-ports"}, stop=True)  # fmt: skip
_CONTAINER_VERBS = {"exec": _CONTAINER_EXEC, "run": _CONTAINER_RUN}
_MOUNTS = {"-v", "--volume", "--mount", "--volumes-from"}
_CONTAINER_GLOBAL_VALUED = {"-H", "--host", "-c", "--context", "--config", "-f", "--file", "-p",
                            "--project-name", "--log-level"}  # fmt: skip


def _container(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`docker exec CONTAINER COMMAND…`, `docker run [OPTIONS] IMAGE COMMAND…` (podman,
    nerdctl; `container exec`, `compose exec|run SERVICE`): COMMAND runs in the container,
    whose places are not the workspace (a mount may be the host's own). Every verb also goes
    to its own rule (the resources it deletes, a database shell in the container)."""
    from .commands import rule_for

    rule = rule_for(command.name, command.pwsh)
    fed = rule(judge.findings, command) if rule is not None else _OPAQUE
    words = command.args
    at = 0
    while at < len(words) and words[at].text.startswith("-"):  # global options: `--context x`
        at += 2 if words[at].text in _CONTAINER_GLOBAL_VALUED else 1
    if at < len(words) and words[at].text in ("container", "compose"):
        at += 1
        while at < len(words) and words[at].text.startswith("-"):
            at += 2 if words[at].text in _CONTAINER_GLOBAL_VALUED else 1
    if at >= len(words) or words[at].text not in _CONTAINER_VERBS:
        return command.cwd, fed
    verb = words[at].text
    parsed = parse(words[at + 1 :], _CONTAINER_VERBS[verb])
    if verb == "run" and not any(f.name in _MOUNTS for f in parsed.flags):
        return command.cwd, fed  # a fresh container with nothing mounted: nothing kept is lost
    operands = parsed.operands
    argv = operands[1:]  # after the container (or the image, or compose's service)
    if argv and not argv[0].dynamic:
        from .commands import command_name
        from .resources import CLIENTS

        if command_name(argv[0].text, False) in CLIENTS:
            return command.cwd, fed  # a database shell there: its rule has judged it
        where = f"{command.name} {verb} {operands[0].shown}"
        judged_there(judge, where, command, argv=argv, fed=command.fed)
    elif argv:
        judge.hidden(f"{command.name} {verb}: runs a command only known when it runs")
    return command.cwd, fed


STEPS: dict[str, Step] = {
    "ssh": _ssh,
    "mosh": _mosh,
    "pdsh": _pdsh,
    "pssh": _pdsh,
    "parallel-ssh": _pdsh,
    "clush": _pdsh,
    "sshpass": _sshpass,
    "ansible": _ansible,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "docker": _container,
    "podman": _container,
    "nerdctl": _container,
    "docker-compose": _container,
    "podman-compose": _container,
}
