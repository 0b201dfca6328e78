"""Deletes of remote and cloud resources: each tool's destructive verbs as rows of a table read
by one engine, and the statements a database client is handed (SQL, Redis, MongoDB).

A row of `TOOLS` names a tool's option words that take a value (so a value is never taken for
a subcommand) and its destructive verbs: a subcommand path (`s3 rm`, `* delete-*`, `... delete`)
with, optionally, the options that make it destructive (`apply -destroy`), and what decides it
(`sync`: the destination is deleted below, like rsync's `--delete`; `exec`: the command run in a
container is judged in turn; `sql`: the operands are statements; `unknown`: it may well stop,
undo or delete what others rely on, yet is routine often enough not to be called a destruction).
Preview options (`--dry-run`) and `--help` make any verb safe. These deletes leave no copy
behind: no workspace, no history, no checkpoint of the harness holds a bucket, a cluster's
namespace or a dropped table.

`CLIENTS` are the database shells: the code given on the command line (`psql -c`, `mysql -e`,
`mongosh --eval`, `sqlite3 DB SQL`, `redis-cli FLUSHALL`) or fed on stdin (a here-document, an
echo) is classified; a script file they are told to run cannot be seen, so it is unknown.

commands.py hands `judge` the tools named in its `RESOURCE_TOOLS` (a new row's name goes there
too; a test holds both equal) and imports this module only when one of them is met.
"""

from __future__ import annotations

from .commands import from_file
from .lexer import Word
from .options import Syntax, parse
from .paths import remote
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hook's hot path)
if TYPE_CHECKING:
    from typing import TypedDict

    from .commands import Command, Fed, Findings
    from .options import Flag, Parsed

    VerbRow = str | tuple[str, tuple[str, ...]] | tuple[str, tuple[str, ...], str]

    class ToolRow(TypedDict, total=False):
        what: str  # required: what its verbs delete
        verbs: tuple[VerbRow, ...]  # required
        valued: tuple[str, ...]  # the options taking a value
        preview: tuple[str, ...]  # the options that only preview (default: --dry-run)
        clusters: bool  # `-fv` is `-f -v`
        depth: int  # how many operands a `...` path spans (default 5)
        unsure: str  # what its `unknown` verbs may do (the reason's words)

    class ClientRow(TypedDict, total=False):
        language: str  # required: SQL, REDIS, MONGO or TRANSFER
        code: tuple[str, ...]  # the options whose value is code
        files: tuple[str, ...]  # the options naming a script file
        valued: tuple[str, ...]  # the other options taking a value
        positional: int  # where its operands start being code


_OUTPUT: list[Word] = [Word("\0", dynamic=True)]  # what a client prints: known when it runs
_ANY_RUN = "..."  # a path word matching any run of words (up to the tool's depth)
_FALSE = ("false", "none", "0", "no")  # `--dry-run=none` runs for real
_HELP = ("--help", "-help")
_EXEC_DEPTH = 8  # a container's exec inside one's exec… no deeper than the walker's shells


class Verb:
    """One destructive verb: its subcommand path (words: literal, `*` any, `x*` / `*x` a prefix
    or suffix, `...` any run), the options any of which it needs (none: always), and what
    decides it ("": the verb itself; "sync": the destination; "exec": the command it runs in a
    container; "sql": its operands are statements; "every": an operand a substitution listing
    every container or image gives)."""

    __slots__ = ("kind", "path", "when")

    def __init__(self, path: str, when: tuple[str, ...], kind: str) -> None:
        self.path = tuple(path.split())
        self.when = when
        self.kind = kind


class Tool:
    """One row of `TOOLS` read: the options that take a value (as a `Syntax`), its verbs, the
    options that only preview (any verb is then safe), whether `-fv` is `-f -v`, how many
    leading operands a `...` path may span, and what its verbs delete (the reason's words)."""

    __slots__ = ("clusters", "depth", "preview", "syntax", "unsure", "verbs", "what")

    def __init__(self, row: ToolRow) -> None:
        self.what = row["what"]
        self.unsure = row.get("unsure", "may stop, undo or delete what others rely on")
        self.verbs = [
            Verb(path, *_verb_parts(spec)) for spec in row["verbs"] for path in _paths(spec)
        ]
        self.syntax = Syntax(frozenset(row.get("valued", ())), end=False)
        self.preview = row.get("preview", ("--dry-run",))
        self.clusters = row.get("clusters", False)
        self.depth = row.get("depth", 5)


def _paths(spec: VerbRow) -> list[str]:
    return (spec if isinstance(spec, str) else spec[0]).split("|")


def _verb_parts(spec: VerbRow) -> tuple[tuple[str, ...], str]:
    if isinstance(spec, str):
        return (), ""
    if len(spec) == 2:
        return spec[1], ""
    return spec[1], spec[2]


# The table. A verb row is its paths (`|` between several), or (paths, the options any of which
# it needs), or (paths, options, what decides it). Plain literals: the hook imports this
# module for every shell command, and a row is read into a `Tool` only when its tool is met.
_KUBE_VALUED = ("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s",
                "--server", "--token", "--as", "-l", "--selector", "-o", "--output", "-f",
                "--filename", "-c", "--container", "--field-selector", "--timeout",
                "--grace-period", "--request-timeout")  # fmt: skip
_KUBE: ToolRow = {
    "what": "deletes cluster resources",
    "verbs": (
        "delete|drain|adm drain",
        ("replace", ("--force",)),
        ("apply", ("--prune",)),  # deletes what the manifests no longer name
        ("exec", (), "exec"),
        # a node emptied of new work, a live edit of an object (scaling to zero keeps every
        # object and volume: scaling back restores it)
        ("cordon|taint|patch|replace", (), "unknown"),
    ),
    "valued": _KUBE_VALUED,
}
_DOCKER: ToolRow = {
    "what": "deletes containers' data",
    "verbs": (
        "system prune|system reset|volume rm|volume remove|volume prune|container prune",
        "network prune|stack rm|service rm",
        ("rm|container rm|rmi|image rm|pod rm", ("-f", "--force")),
        ("rm|container rm", ("-v", "--volumes")),  # a container's anonymous volumes
        ("rm|container rm|rmi|image rm", (), "every"),  # `docker rm $(docker ps -aq)`
        ("image prune", ("-a", "--all")),  # without -a: only dangling images, rebuilt at will
        ("compose ... down", ("-v", "--volumes")),  # without: the volumes, the data, stay
        ("compose ... exec|container exec|exec", (), "exec"),
        ("secret rm|config rm|node rm|swarm leave|volume ... rm|compose ... rm", (), "unknown"),
        ("context rm|plugin rm|secret remove|node remove", (), "unknown"),
        ("kill|container kill|compose ... kill", (), "unknown"),
    ),
    "valued": ("-H", "--host", "--context", "--config", "-l", "--log-level", "-e", "--env",
               "--env-file", "-u", "--user", "-w", "--workdir", "-p", "--project-name",
               "--file", "--profile", "--project-directory", "--filter"),
    "clusters": True,
}  # fmt: skip
_COMPOSE: ToolRow = {
    "what": "deletes containers' data",
    "verbs": (
        ("... down", ("-v", "--volumes")),
        ("... exec", (), "exec"),
        ("... rm", (), "unknown"),
        ("... kill", (), "unknown"),
    ),
    "valued": _DOCKER["valued"],
    "clusters": True,
    "depth": 4,
}
_TERRAFORM: ToolRow = {
    "what": "destroys infrastructure",
    "verbs": (
        "destroy|state rm|workspace delete",
        ("apply", ("-destroy", "--destroy")),
        # the state written over or unlocked under a running apply (an apply, even approved,
        # and a taint only plan what the configuration says)
        ("state push|state replace-provider|force-unlock", (), "unknown"),
    ),
    "valued": ("-var", "-var-file", "-target", "-replace", "-state", "-state-out", "-backup",
               "-lock-timeout", "-parallelism"),
    "preview": (),
}  # fmt: skip
_FLY: ToolRow = {"what": "destroys apps", "verbs": ("... destroy|... delete|... remove|... rm",),
                 "depth": 3}  # fmt: skip
_DB_VALUED = ("-h", "--host", "-p", "--port", "-U", "--username", "-d", "--dbname")

TOOLS: dict[str, ToolRow] = {
    "kubectl": _KUBE,
    "oc": _KUBE,
    "helm": {
        "what": "uninstalls a release",
        "verbs": ("uninstall|delete|del|un",),
        "valued": ("-n", "--namespace", "--kube-context", "--kubeconfig"),
    },
    "helmfile": {"what": "deletes releases", "verbs": ("destroy|delete",), "valued": ("-f", "-e")},
    "terraform": _TERRAFORM,
    "tofu": _TERRAFORM,
    "terragrunt": {
        **_TERRAFORM,
        "verbs": (
            "... destroy|destroy-all|... state rm|... workspace delete",
            ("... apply", ("-destroy", "--destroy")),
        ),
    },
    "pulumi": {
        "what": "destroys infrastructure",
        "verbs": (
            "destroy|down|stack rm|state delete",
            ("cancel|state unprotect", (), "unknown"),
        ),
        "valued": ("-s", "--stack", "-C", "--cwd"),
        "preview": ("--preview-only",),
    },
    "aws": {
        "what": "deletes cloud resources",
        "verbs": (
            # every service spells its deletes `delete-…`, `remove-…`, `terminate-…`, …
            "* delete-*|* batch-delete-*|* remove-*|* terminate-*|* deregister-*|* purge-*",
            "* schedule-key-deletion|s3 rm|s3 rb",
            ("s3 sync", ("--delete",), "sync"),
            ("* stop-*|* disable-*|* reboot-*|* revoke-*|* detach-*|s3 mv", (), "unknown"),
            ("ssm send-command|ecs execute-command", (), "unknown"),  # commands run there
            ("* modify-*", ("--no-deletion-protection",), "unknown"),
            ("* put-bucket-acl|* put-bucket-policy|* delete-public-access-block", (), "unknown"),
            (
                "* change-resource-record-sets|* put-bucket-lifecycle*|* update-service",
                (),
                "unknown",
            ),
        ),
        "valued": (
            "--profile",
            "--region",
            "--output",
            "--endpoint-url",
            "--query",
            "--color",
            "--ca-bundle",
            "--cli-read-timeout",
            "--cli-connect-timeout",
        ),
        "preview": ("--dryrun", "--dry-run"),
    },
    "gcloud": {
        "what": "deletes cloud resources",
        "verbs": (
            "... delete|... storage rm|... purge|... destroy",
            ("... rsync", ("--delete-unmatched-destination-objects",), "sync"),
            ("... stop|... reset|... disable|... suspend|... mv|storage mv", (), "unknown"),
            ("compute ssh", ("--command",), "unknown"),  # a command run on the instance
            ("... remove-*", (), "unknown"),  # an IAM binding, a member, a label removed
        ),
        "valued": (
            "--project",
            "--account",
            "--configuration",
            "--format",
            "--zone",
            "--region",
            "--verbosity",
            "--impersonate-service-account",
            "--filter",
        ),
    },
    "gsutil": {
        "what": "deletes cloud storage",
        "verbs": ("rm|rb", ("rsync", ("-d",), "sync")),
        "valued": ("-o", "-h", "-u"),
        "preview": ("-n",),
        "clusters": True,
    },
    "az": {
        "what": "deletes cloud resources",
        "verbs": (
            "... delete|... delete-batch|... purge",
            ("deployment ... create", ("--mode=complete",)),  # deletes what the template lacks
            ("... sync", ("--delete-destination=true",)),  # the destination: a container
            ("... stop|... deallocate|... restart|... disable|vm run-command", (), "unknown"),
        ),
        "valued": (
            "-n",
            "--name",
            "-g",
            "--resource-group",
            "--subscription",
            "-o",
            "--output",
            "--query",
            "-l",
            "--location",
            "--mode",
            "--delete-destination",
        ),
    },
    "azcopy": {
        "what": "deletes cloud storage",
        "verbs": ("rm|remove", ("sync", ("--delete-destination=true",), "sync")),
        "valued": ("--delete-destination",),
    },
    "doctl": {
        "what": "deletes cloud resources",
        "verbs": ("... delete|... rm|... destroy",),
        "depth": 4,
    },
    "flyctl": _FLY,
    "fly": _FLY,
    "heroku": {
        "what": "destroys apps or their data",
        "verbs": ("*:destroy|destroy|pg:reset|addons:remove|apps:delete",),
        "valued": ("-a", "--app", "-r", "--remote", "--confirm"),
    },
    "vercel": {"what": "removes deployments", "verbs": ("... remove|... rm",), "depth": 2},
    "netlify": {
        "what": "deletes sites",
        "verbs": ("*:delete", ("*:unset", (), "unknown")),
        "depth": 1,
    },
    "firebase": {
        "what": "deletes project data",
        "verbs": ("*:delete|*:remove", ("*:disable", (), "unknown")),
        "valued": ("--project", "-P"),
    },
    "gh": {
        "what": "deletes a repository's resources",
        "verbs": (
            "... delete",
            ("api", ("-X=delete", "--method=delete", "-XDELETE", "-Xdelete")),
            ("... remove|workflow disable|repo archive|... rm", (), "unknown"),
            ("repo edit", ("--visibility",), "unknown"),  # private code made public
        ),
        "valued": ("-R", "--repo", "-X", "--method"),
        "depth": 2,
    },
    "glab": {
        "what": "deletes a repository's resources",
        "verbs": (
            "... delete",
            ("api", ("-X=delete", "--method=delete", "-XDELETE", "-Xdelete")),
            ("repo archive|... remove|... rm", (), "unknown"),
        ),
        "valued": ("-R", "--repo"),
        "depth": 2,
    },
    "docker": _DOCKER,
    "podman": _DOCKER,
    "nerdctl": _DOCKER,
    "docker-compose": _COMPOSE,
    "podman-compose": _COMPOSE,
    "rclone": {
        "what": "deletes remote files",
        "verbs": ("delete|deletefile|purge|rmdir|rmdirs|cleanup", ("sync", (), "sync")),
        "valued": ("--config", "--include", "--exclude", "--filter", "--min-age", "--max-age"),
        "preview": ("--dry-run", "-n"),
        "clusters": True,
    },
    "s3cmd": {
        "what": "deletes cloud storage",
        "verbs": ("del|rm|rb", ("sync", ("--delete-removed",), "sync")),
        "valued": ("-c", "--config"),
        "preview": ("--dry-run", "-n"),
    },
    "mc": {"what": "deletes object storage", "verbs": ("rm|rb", ("mirror", ("--remove",)))},
    "restic": {
        "what": "deletes backups",
        "verbs": ("forget|prune",),
        "valued": ("-r", "--repo"),
        "preview": ("--dry-run", "-n"),
    },
    "borg": {
        "what": "deletes backups",
        "verbs": ("delete|prune",),
        "preview": ("--dry-run", "-n"),
    },
    "bq": {"what": "deletes datasets or tables", "verbs": ("rm", ("query", (), "sql"))},
    "dropdb": {"what": "drops a database", "verbs": ("",), "valued": _DB_VALUED},
    "dropuser": {"what": "drops a role", "verbs": ("",), "valued": _DB_VALUED},
    "pg_dropcluster": {"what": "drops a database cluster", "verbs": ("",)},
    "mysqladmin": {
        "what": "drops a database",
        "verbs": ("drop",),
        "preview": (),
        "valued": ("-u", "--user", "-h", "--host", "-P", "--port"),
    },
    "pg_restore": {
        "what": "drops objects before restoring them",
        "verbs": (("", ("-c", "--clean")),),
        "valued": _DB_VALUED,
        "preview": (),
        "clusters": True,
    },
    "mongorestore": {
        "what": "drops collections before restoring them",
        "verbs": (("", ("--drop",)),),
    },
}

# The machine's own services, processes, users and packages, and the key-value stores beside
# the databases: what stops or removes what other work relies on. Stopping a service or a
# process by name is routine enough in development to be asked about (`unknown`), not refused;
# a power-off, a deleted user or a yanked release is no one's routine.
_PACKAGES = "removes system packages"
_PROCESSES: ToolRow = {
    "what": "signals processes by name",
    "verbs": (("", (), "unknown"),),
    "unsure": "signals every process of that name, other people's work too",
}
_PACKAGE_REMOVAL: ToolRow = {
    "what": _PACKAGES,
    "verbs": (("remove|purge|autoremove|autopurge|erase|uninstall|rm|del|untap", (), "unknown"),),
    "valued": ("-o", "-c", "-t", "--setopt", "-n", "--name", "-p", "--prefix"),
    "preview": ("-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--assumeno"),
    "unsure": _PACKAGES,
}
_USERS: ToolRow = {"what": "deletes users or groups", "verbs": ("",)}
_ANY_UNKNOWN: tuple[VerbRow, ...] = (("", (), "unknown"),)
HOST_TOOLS: dict[str, ToolRow] = {
    "systemctl": {
        "what": "stops the machine or takes it to a rescue state",
        "verbs": (
            "poweroff|reboot|halt|kexec|emergency|rescue|soft-reboot",
            # (a restart brings the service back: routine)
            ("stop|disable|mask|kill|isolate|suspend|hibernate|hybrid-sleep|revert|freeze", (),
             "unknown"),
        ),
        "valued": ("-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property",
                   "-s", "--signal", "--state", "-n", "--lines", "-o", "--output", "--root"),
        "unsure": "stops or disables a service that other work may rely on",
    },
    "service": {
        "what": "stops a service",
        "verbs": (("* stop|* force-stop", (), "unknown"),),
        "unsure": "stops a service that other work may rely on",
    },
    "launchctl": {
        "what": "restarts the machine",
        "verbs": ("reboot", ("unload|bootout|remove|disable|kill|stop", (), "unknown")),
        "unsure": "stops or removes a service that other work may rely on",
    },
    "init": {"what": "changes the machine's run level", "verbs": ("0|1|6|s|single",)},
    "telinit": {"what": "changes the machine's run level", "verbs": ("0|1|6|s|single",)},
    "pkill": _PROCESSES,
    "killall": _PROCESSES,
    "skill": _PROCESSES,
    "killall5": {"what": "signals every process", "verbs": ("",)},
    "fuser": {"what": "kills processes", "verbs": (("", ("-k", "--kill"), "unknown"),),
              "clusters": True, "unsure": "kills every process using the file or port"},
    "ufw": {"what": "changes the firewall", "verbs": (("disable|reset|delete", (), "unknown"),),
            "unsure": "drops or resets the firewall's rules"},
    "ip": {
        "what": "changes the network",
        "verbs": (("link set ... down|... flush|route del|addr del|link del|link delete", (),
                   "unknown"),),
        "valued": ("-n", "-netns", "-f", "-family"),
        "unsure": "takes a network link or its routes down",
    },
    "ifconfig": {"what": "changes the network", "verbs": (("* down", (), "unknown"),),
                 "unsure": "takes a network link down"},
    "swapoff": {"what": "turns swap off", "verbs": _ANY_UNKNOWN},
    "umount": {"what": "unmounts file systems", "verbs": _ANY_UNKNOWN,
               "unsure": "unmounts a file system others may be using"},
    "sysctl": {"what": "changes the kernel", "verbs": (("", ("-w", "--write", "-p", "--load"),
                                                          "unknown"),),
               "unsure": "changes a kernel setting"},
    "modprobe": {"what": "unloads a kernel module", "verbs": (("", ("-r", "--remove"),
                                                                "unknown"),)},
    "rmmod": {"what": "unloads a kernel module", "verbs": _ANY_UNKNOWN},
    "userdel": _USERS,
    "deluser": _USERS,
    "groupdel": _USERS,
    "delgroup": _USERS,
    "passwd": {"what": "changes an account", "verbs": (("", ("-d", "--delete", "-l", "--lock",
                                                             "-e", "--expire"), "unknown"),),
               "clusters": True, "unsure": "locks, expires or empties an account's password"},
    "usermod": {"what": "changes an account", "verbs": (("", ("-L", "--lock", "-e",
                                                              "--expiredate"), "unknown"),),
                "unsure": "locks or expires an account"},
    "chpasswd": {"what": "changes passwords", "verbs": _ANY_UNKNOWN},
    "history": {"what": "clears the shell's history", "verbs": (("", ("-c", "-d"), "unknown"),),
                "clusters": True, "unsure": "clears the shell's history"},
    "apt": _PACKAGE_REMOVAL,
    "apt-get": _PACKAGE_REMOVAL,
    "aptitude": _PACKAGE_REMOVAL,
    "yum": _PACKAGE_REMOVAL,
    "dnf": _PACKAGE_REMOVAL,
    "zypper": _PACKAGE_REMOVAL,
    "apk": _PACKAGE_REMOVAL,
    "brew": _PACKAGE_REMOVAL,
    "snap": _PACKAGE_REMOVAL,
    "flatpak": _PACKAGE_REMOVAL,
    "port": _PACKAGE_REMOVAL,
    "choco": _PACKAGE_REMOVAL,
    "winget": _PACKAGE_REMOVAL,
    "scoop": _PACKAGE_REMOVAL,
    "pacman": {"what": _PACKAGES, "verbs": (("", ("-R", "--remove"), "unknown"),),
               "clusters": True, "unsure": _PACKAGES},
    "conda": {**_PACKAGE_REMOVAL, "verbs": (("remove|uninstall|env remove", (), "unknown"),)},
    "mamba": {**_PACKAGE_REMOVAL, "verbs": (("remove|uninstall|env remove", (), "unknown"),)},
    # a release taken back from a registry: every project depending on it breaks
    "cargo": {"what": "yanks a published release",
              "verbs": ("yank", ("owner", ("--remove", "-r"), "unknown")),
              "preview": ("--undo", "--dry-run"), "unsure": "removes an owner of a crate"},
    "gem": {"what": "yanks a published release",
            "verbs": ("yank", ("owner", ("-r", "--remove"), "unknown")),
            "unsure": "removes an owner of a gem"},
    "influx": {"what": "deletes time series data",
               "verbs": ("delete|* delete", ("", ("-execute",), "unknown")),
               "unsure": "runs InfluxQL statements (DROP among them)"},
    "dpkg": {**_PACKAGE_REMOVAL, "verbs": (("", ("-r", "--remove", "-P", "--purge"),
                                              "unknown"),)},
    "rpm": {**_PACKAGE_REMOVAL, "verbs": (("", ("-e", "--erase"), "unknown"),)},
    # disks and volumes beyond the `mkfs` family
    "nvme": {"what": "wipes a disk", "verbs": ("format|sanitize",)},
    "cryptsetup": {"what": "wipes a disk's encryption keys",
                   "verbs": ("luksformat|erase|lukserase|luksremovekey|lukskillslot",)},
    "lvremove": {"what": "deletes a logical volume", "verbs": ("",)},
    "vgremove": {"what": "deletes a volume group", "verbs": ("",)},
    "pvremove": {"what": "wipes a physical volume", "verbs": ("",)},
    "mdadm": {"what": "wipes a RAID member", "verbs": (("", ("--zero-superblock", "--remove",
                                                               "--fail")),)},
    "dmsetup": {"what": "removes device mappings",
                "verbs": ("remove|remove_all|wipe_table|clear", ("reload|load", (), "unknown"))},
    "lvreduce": {"what": "shrinks a volume, cutting what lay beyond", "verbs": ("",)},
    "vgreduce": {"what": "removes a disk from a volume group", "verbs": ("",)},
    "lvresize": {"what": "resizes a volume", "verbs": _ANY_UNKNOWN},
    "pvmove": {"what": "moves a volume's data", "verbs": _ANY_UNKNOWN},
    "nbd-client": {"what": "detaches a network disk", "verbs": (("", ("-d",), "unknown"),)},
    "mount": {"what": "mounts over a directory", "verbs": (("*", (), "unknown"),),
              "unsure": "mounts over (or remounts) what a directory held"},
    "tmutil": {"what": "deletes backups",
               "verbs": ("delete|deletelocalsnapshots|thinlocalsnapshots",)},
    "salt": {"what": "runs commands on minions", "verbs": (("* cmd.*|* state.*", (),
                                                             "unknown"),),
             "unsure": "runs a command on every minion named"},
    "etcdctl": {
        "what": "deletes keys",
        "verbs": (("del", ("--prefix", "--from-key")), ("del|rm|rmdir", (), "unknown")),
        "valued": ("--endpoints", "--cacert", "--cert", "--key", "--user"),
        "unsure": "deletes a key",
    },
    "consul": {
        "what": "deletes keys",
        "verbs": (("kv delete", ("-recurse",)), "snapshot restore",
                  ("kv delete|... deregister", (), "unknown")),
        "unsure": "deletes a key or deregisters a service",
    },
    "vault": {
        "what": "destroys secrets",
        "verbs": ("kv destroy|kv metadata delete|secrets disable|auth disable|policy delete",
                  ("kv delete|delete|lease revoke|token revoke", (), "unknown")),
        "unsure": "deletes or revokes a secret",
    },
    # Windows
    "stop-process": _PROCESSES,
    "spps": _PROCESSES,
    "taskkill": _PROCESSES,
    "stop-service": {"what": "stops a service", "verbs": _ANY_UNKNOWN,
                     "unsure": "stops a service that other work may rely on"},
    "spsv": {"what": "stops a service", "verbs": _ANY_UNKNOWN,
             "unsure": "stops a service that other work may rely on"},
    "set-service": {"what": "changes a service", "verbs": _ANY_UNKNOWN,
                    "unsure": "disables or stops a service"},
    "remove-itemproperty": {"what": "deletes registry values", "verbs": _ANY_UNKNOWN,
                            "unsure": "deletes registry values"},
    "rp": {"what": "deletes registry values", "verbs": _ANY_UNKNOWN,
           "unsure": "deletes registry values"},
    "reg": {"what": "deletes registry keys", "verbs": ("delete",
                                                       ("import|add|restore|load", (), "unknown")),
            "unsure": "writes over registry keys"},
    "vssadmin": {"what": "deletes shadow copies (the machine's backups)",
                 "verbs": ("delete|resize",)},
    "wmic": {"what": "deletes system objects", "verbs": ("... delete",
                                                         ("... terminate", (), "unknown"))},
    "wbadmin": {"what": "deletes backups", "verbs": ("delete",)},
    "bcdedit": {"what": "changes how the machine boots", "verbs": ("/delete|/delete*",
                                                                   ("/set*", (), "unknown"))},
    "wevtutil": {"what": "clears event logs", "verbs": ("cl|clear-log",)},
    "clear-eventlog": {"what": "clears event logs", "verbs": ("",)},
    "netsh": {"what": "changes the network", "verbs": (("... reset|... delete|... set", (),
                                                         "unknown"),),
              "unsure": "resets or changes the network or the firewall"},
    "clear-recyclebin": {"what": "empties the recycle bin", "verbs": ("",)},
    "remove-localuser": _USERS,
    "remove-localgroup": _USERS,
    "disable-localuser": {"what": "disables an account", "verbs": _ANY_UNKNOWN},
    "uninstall-module": {"what": "removes modules", "verbs": _ANY_UNKNOWN},
    "uninstall-package": {"what": _PACKAGES, "verbs": _ANY_UNKNOWN, "unsure": _PACKAGES},
    "sdelete": {"what": "wipes files past any recovery", "verbs": ("",)},
    "logoff": {"what": "logs the user off, unsaved work with it", "verbs": ("",)},
    "net": {"what": "deletes accounts or shares",
            "verbs": ("user ... /delete|localgroup ... /delete|share ... /delete",
                      ("stop|user|localgroup", (), "unknown")),
            "unsure": "stops a service or changes an account"},
    "sc": {"what": "deletes a service", "verbs": ("delete", ("stop|config|failure", (), "unknown")),
           "unsure": "stops or reconfigures a service"},
    "schtasks": {"what": "deletes scheduled tasks", "verbs": (("/delete|/change", (), "unknown"),),
                 "unsure": "deletes or changes scheduled tasks"},
    "set-executionpolicy": {"what": "changes the script policy", "verbs": _ANY_UNKNOWN},
    "set-itemproperty": {"what": "writes over a property", "verbs": _ANY_UNKNOWN,
                         "unsure": "writes over a registry value or a file's property"},
    "disable-windowsoptionalfeature": {"what": "removes a Windows feature", "verbs": _ANY_UNKNOWN},
    "disable-netadapter": {"what": "takes a network link down", "verbs": _ANY_UNKNOWN},
    "set-netfirewallprofile": {"what": "changes the firewall", "verbs": _ANY_UNKNOWN},
    "remove-appxpackage": {"what": "removes apps", "verbs": _ANY_UNKNOWN},
    # archivers told to delete what they archived: the sources go
    "zip": {"what": "deletes what it archives", "verbs": (("", ("-m", "--move"), "unknown"),),
            "clusters": True, "unsure": "deletes the files it archives (-m)"},
    "7z": {"what": "deletes what it archives", "verbs": (("", ("-sdel",), "unknown"),),
           "unsure": "deletes the files it archives (-sdel)"},
}  # fmt: skip
TOOLS.update(HOST_TOOLS)

# Admin CLIs of secret stores, CI servers, search services, DNS and smaller clouds: their
# deletes, whatever global options come before the verb (their values are `valued`).
_CLOUD_DELETES: ToolRow = {
    "what": "deletes cloud resources",
    "verbs": ("... delete|... destroy|... terminate|... rm|... *-delete|... delete-*",),
    "depth": 4,
}
ADMIN_TOOLS: dict[str, ToolRow] = {
    "cmdkey": {"what": "deletes saved Windows credentials", "verbs": ("/delete|/delete*",)},
    "remove-storedcredential": {"what": "deletes saved Windows credentials", "verbs": ("",)},
    "b2": {"what": "deletes cloud storage", "verbs": ("delete-*|rm|... delete",)},
    "kopia": {"what": "deletes backups", "verbs": ("... delete",)},
    "duplicity": {"what": "deletes backups", "verbs": ("remove-*|cleanup",),
                  "preview": ("--dry-run",)},
    "security": {"what": "deletes keychain items",
                 "verbs": ("delete-generic-password|delete-internet-password|delete-keychain"
                           "|delete-certificate|delete-identity",)},
    "doppler": {"what": "deletes secrets", "verbs": ("... delete",),
                "valued": ("-p", "--project", "-c", "--config", "--token")},
    "op": {"what": "deletes secrets", "verbs": ("... delete",),
           "valued": ("--vault", "--account", "--session")},
    "bw": {"what": "deletes secrets", "verbs": ("delete",), "valued": ("--session",)},
    "infisical": {"what": "deletes secrets", "verbs": ("... delete",),
                  "valued": ("--env", "--projectId", "--token", "--domain")},
    "pass": {"what": "deletes secrets", "verbs": ("rm|remove|delete",)},
    "gopass": {"what": "deletes secrets", "verbs": ("rm|remove|delete",)},
    "sops": {"what": "deletes keys", "verbs": (("unset", (), "unknown"),)},
    "jenkins-cli": {"what": "deletes CI jobs, builds or nodes",
                    "verbs": ("delete-*", ("disable-*|clear-queue|shutdown|safe-shutdown"
                                           "|restart|safe-restart|reload-*", (), "unknown")),
                    "valued": ("-s", "-auth", "-i", "-webSocket", "-http", "-ssh", "-user",
                               "-logger")},
    "circleci": {"what": "deletes CI settings", "verbs": ("... delete|... remove-secret",)},
    "argocd": {"what": "deletes deployed apps", "verbs": ("... delete|... rm",),
               "valued": ("--server", "--auth-token", "--grpc-web-root-path")},
    "flux": {"what": "deletes cluster resources", "verbs": ("delete|uninstall",),
             "valued": ("-n", "--namespace", "--context", "--kubeconfig")},
    "nomad": {"what": "stops and purges jobs",
              "verbs": (("job stop|stop", ("-purge",)), "... delete|var purge",
                        ("job stop|stop|node drain", (), "unknown")),
              "valued": ("-address", "-namespace", "-region", "-token")},
    "cf": {"what": "deletes apps or services", "verbs": ("delete|delete-*|purge-*",)},
    "algolia": {"what": "deletes search indices",
                "verbs": ("... delete|indices clear|... clear",)},
    "meilisearch": {"what": "deletes search indices", "verbs": ("... delete",)},
    "typesense": {"what": "deletes search collections", "verbs": ("... delete|... drop",)},
    "nsupdate": {"what": "changes DNS records", "verbs": (("", (), "unknown"),),
                 "unsure": "sends DNS updates (deletes among them)"},
    "cli53": {"what": "deletes DNS records", "verbs": ("rrdelete|rrpurge|delete",)},
    "flarectl": {"what": "deletes DNS records or zones", "verbs": ("... delete|... d",)},
    "oci": _CLOUD_DELETES,
    "ibmcloud": _CLOUD_DELETES,
    "linode-cli": _CLOUD_DELETES,
    "hcloud": _CLOUD_DELETES,
    "scw": _CLOUD_DELETES,
    "vultr-cli": _CLOUD_DELETES,
    "exo": _CLOUD_DELETES,
    "upctl": _CLOUD_DELETES,
    "wrangler": {"what": "deletes Workers, buckets or databases",
                 "verbs": ("delete|... delete",), "depth": 4},
    "railway": {"what": "deletes a deployment or its services", "verbs": ("down|... delete",)},
    "supabase": {"what": "deletes projects or data",
                 "verbs": ("... delete", ("db reset", (), "unknown")),
                 "unsure": "resets the database, its data with it"},
    "neonctl": {"what": "deletes databases or branches", "verbs": ("... delete",)},
    "pscale": {"what": "deletes databases or branches", "verbs": ("... delete",)},
    "turso": {"what": "destroys databases", "verbs": ("... destroy|... delete",)},
    "atlas": {"what": "deletes clusters", "verbs": ("... delete",)},
    "databricks": {"what": "deletes workspace objects", "verbs": ("... delete|... rm",)},
    "tea": {"what": "deletes a repository's resources", "verbs": ("... delete",)},
}  # fmt: skip
TOOLS.update(ADMIN_TOOLS)

# -- database shells --------------------------------------------------------------------

SQL, REDIS, MONGO = "sql", "redis", "mongo"
TRANSFER = "transfer"  # a file-transfer client's commands: sftp's batch, lftp's, smbclient's


class Client:
    """One row of `CLIENTS` read: its language, the options whose value is code, those naming
    a script file, and where its operands start being code (sqlite3: after the database file;
    redis-cli: all of them; None: operands are no code)."""

    __slots__ = ("code", "files", "language", "positional", "syntax")

    def __init__(self, row: ClientRow) -> None:
        self.language = row["language"]
        self.code = row.get("code", ())
        self.files = row.get("files", ())
        self.positional = row.get("positional")
        self.syntax = Syntax(frozenset((*self.code, *self.files, *row.get("valued", ()))),
                             end=False)  # fmt: skip


_PSQL: ClientRow = {
    "language": SQL,
    "code": ("-c", "--command"),
    "files": ("-f", "--file"),
    "valued": ("-h", "--host", "-p", "--port", "-U", "--username", "-d", "--dbname", "-v",
               "--set", "--variable", "-o", "--output", "-P", "--pset", "-T", "-F", "-R", "-L",
               "--log-file"),
}  # fmt: skip
_MYSQL: ClientRow = {
    "language": SQL,
    "code": ("-e", "--execute"),
    "valued": ("-h", "--host", "-u", "--user", "-P", "--port", "-D", "--database", "-S",
               "--socket", "--default-character-set"),
}  # fmt: skip
_REDIS: ClientRow = {
    "language": REDIS,
    "valued": ("-h", "-p", "-a", "-n", "-u", "--user", "--pass", "-s", "-r", "-i", "-d"),
    "positional": 0,
}
_MONGO: ClientRow = {
    "language": MONGO,
    "code": ("--eval",),
    "files": ("-f", "--file"),
    "valued": ("--host", "--port", "-u", "--username", "-p", "--password",
               "--authenticationDatabase"),
}  # fmt: skip

# File-transfer clients run commands on another machine: from a batch file (`sftp -b F`), a
# command line (`lftp -c`, `smbclient -c`) or what they are fed (`sftp host <<< 'rm x'`).
_SFTP: ClientRow = {
    "language": TRANSFER,
    "files": ("-b",),
    "valued": ("-B", "-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-R", "-S", "-s", "-X"),
}

CLIENTS: dict[str, ClientRow] = {
    "psql": _PSQL,
    "pgcli": _PSQL,
    "mysql": _MYSQL,
    "mariadb": _MYSQL,
    "sqlite3": {
        "language": SQL,
        "code": ("-cmd",),
        "files": ("-init",),
        "positional": 1,
        "valued": ("-separator", "-newline", "-nullvalue"),
    },
    "duckdb": {"language": SQL, "code": ("-c", "-cmd"), "files": ("-init",), "positional": 1},
    "redis-cli": _REDIS,
    "valkey-cli": _REDIS,
    "mongosh": _MONGO,
    "mongo": _MONGO,
    "cqlsh": {
        "language": SQL,
        "code": ("-e", "--execute"),
        "files": ("-f", "--file"),
        "valued": ("-u", "-p", "-k"),
    },
    "clickhouse-client": {
        "language": SQL,
        "code": ("-q", "--query"),
        "valued": ("-h", "--host", "-u", "--user"),
    },
    "sqlcmd": {
        "language": SQL,
        "code": ("-Q", "-q"),
        "files": ("-i",),
        "valued": ("-S", "-U", "-P", "-d"),
    },
    "snowsql": {
        "language": SQL,
        "code": ("-q", "--query"),
        "files": ("-f", "--filename"),
        "valued": ("-a", "-u", "-d", "-s"),
    },
    "sftp": _SFTP,
    "lftp": {
        "language": TRANSFER,
        "code": ("-c", "-e"),
        "files": ("-f",),
        "valued": ("-p", "-u", "--user", "--password", "--env-password"),
    },
    "smbclient": {
        "language": TRANSFER,
        "code": ("-c", "--command"),
        "valued": (
            "-U",
            "--user",
            "-W",
            "--workgroup",
            "-I",
            "--ip-address",
            "-p",
            "--port",
            "-A",
            "--authentication-file",
            "-m",
            "--max-protocol",
            "-n",
            "-O",
            "-s",
            "-l",
            "-D",
            "--directory",
            "-T",
            "-t",
        ),
    },
}

NAMES = frozenset(TOOLS) | frozenset(CLIENTS)  # what the dispatch table hands `judge`
_READ_TOOLS: dict[str, Tool] = {}  # the rows read so far
_READ_CLIENTS: dict[str, Client] = {}


def judge(findings: Findings, command: Command) -> Fed:
    """The rule of every tool in `TOOLS` and `CLIENTS`: flags the destructive verbs and
    statements; a client pipes on what it prints (only known when it runs)."""
    name = command.name
    row = TOOLS.get(name)
    if row is not None:
        tool = _READ_TOOLS.get(name)
        if tool is None:
            tool = _READ_TOOLS[name] = Tool(row)
        _tool(findings, command, tool)
        if name in ("gh", "glab") and command.args[:1] and command.args[0].text == "api":
            from .commands import _http_delete  # a GraphQL mutation or a URL naming a delete

            said = _http_delete([Word(w.text.partition("=")[2] or w.text) for w in command.args])
            if said is not None:
                findings.flag(UNKNOWN, f"{name} api: {said}, deleting what it names")
        return _OUTPUT
    client = _READ_CLIENTS.get(name)
    if client is None:
        client = _READ_CLIENTS[name] = Client(CLIENTS[name])
    _client(findings, command, client)
    return _OUTPUT


def _tool(findings: Findings, command: Command, tool: Tool) -> None:
    parsed = parse(command.args, tool.syntax)
    if _given(parsed, _HELP, False) or _given(parsed, tool.preview, False):
        return
    words = [w.text.lower() for w in parsed.operands[: tool.depth + 2]]
    for row in tool.verbs:
        used = _match(row.path, words, tool.depth)
        if used is None or (row.when and not _given(parsed, row.when, tool.clusters)):
            continue
        said = " ".join(w for w in words[:used] if _command_word(w))  # not `-f`'s file
        shown = f"{command.name} {said}".rstrip()
        if row.kind == "sync":
            _synced(findings, command, shown, parsed.operands[used:])
        elif row.kind == "exec":
            _exec(findings, command, parsed.operands[used - 1] if used else None)
        elif row.kind == "sql":
            text = " ".join(w.text for w in parsed.operands[used:])
            _statements(findings, shown, SQL, text, any(w.dynamic for w in parsed.operands))
        elif row.kind == "unknown":
            findings.flag(UNKNOWN, f"{shown}: {tool.unsure}")
        elif row.kind == "every":  # the operands a substitution listing every one gives
            if findings.every and any(w.dynamic for w in parsed.operands[used:]):
                findings.flag(DESTRUCTIVE, f"{shown}: every container or image, {tool.what}")
        else:
            findings.flag(DESTRUCTIVE, f"{shown}: {tool.what}, beyond any undo")
        return


def _command_word(word: str) -> bool:
    return all(c.isalnum() or c in "-_:" for c in word)


def _match(path: tuple[str, ...], words: list[str], depth: int) -> int | None:
    """How many leading `words` the path spans, or None when it does not match them."""
    if not path:
        return 0
    head, rest = path[0], path[1:]
    if head == _ANY_RUN:
        for skip in range(min(depth, len(words)) + 1):
            used = _match(rest, words[skip:], depth)
            if used is not None:
                return skip + used
        return None
    if not words or not _word(head, words[0]):
        return None
    used = _match(rest, words[1:], depth)
    return None if used is None else used + 1


def _word(pattern: str, word: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1]) and len(word) > len(pattern) - 1
    if pattern.startswith("*"):
        return word.endswith(pattern[1:]) and len(word) > len(pattern) - 1
    return word == pattern


def _given(parsed: Parsed, wanted: tuple[str, ...], clusters: bool) -> bool:
    """Whether any of the options `wanted` is given: by name (`--force`, `-destroy`), a short
    one inside a cluster (`-fv` with `clusters`), or with a value (`--mode=complete`, any
    case); an option set to false (`--dry-run=none`) is not given."""
    for flag in parsed.flags:
        name, _, attached = flag.name.partition("=")  # `-destroy=true`: parse splits `--x=`
        if flag.value is not None and not attached:
            attached = flag.value.text if not flag.takes else ""
        value = attached or (flag.value.text if flag.value is not None else "")
        for option in wanted:
            option_name, _, option_value = option.partition("=")
            if option_value:
                if name == option_name and value.lower() == option_value:
                    return True
            elif (
                name == option_name or _in_cluster(flag, option_name, clusters)
            ) and attached.lower() not in _FALSE:
                return True
    return False


def _in_cluster(flag: Flag, option: str, clusters: bool) -> bool:
    name = flag.name
    return (
        clusters
        and len(option) == 2
        and flag.short
        and name[1:].isalpha()
        and option[1] in name[1:]
    )


def _synced(findings: Findings, command: Command, shown: str, operands: list[Word]) -> None:
    """A sync deleting what its destination (the last operand) has and the source lacks: on
    another machine or in a bucket, beyond any undo; on this one, judged like rm's."""
    if not operands:
        return
    destination = operands[-1]
    if remote(destination.text, findings.places.nt):
        findings.flag(DESTRUCTIVE, f"{shown}: deletes below {destination.shown}, beyond any undo")
        return
    findings.landing(
        [destination],
        command.cwd,
        f"{shown}: deletes below {{}}, outside the workspace",
        f"{shown}: deletes below {{}}: the whole workspace",
        f"{shown}: deletes below {{}}, only known when it runs",
    )


_EXEC_OPTIONS = Syntax(
    frozenset(("-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys",
               "-c", "--container", "-n", "--namespace", "--index")),
    stop=True,
)  # fmt: skip


def _exec(findings: Findings, command: Command, verb_word: Word | None) -> None:
    """`docker exec CONTAINER COMMAND…`, `kubectl exec POD -- COMMAND…`: the command, run in
    the container, is judged by this table (a database shell there is the same database)."""
    args = command.args
    start = next((i for i, w in enumerate(args) if w is verb_word), None)
    if start is None or command.depth >= _EXEC_DEPTH:
        return
    rest = args[start + 1 :]
    ended = next((i for i, w in enumerate(rest) if w.text == "--"), None)
    # after `--`, or after the container
    inner = rest[ended + 1 :] if ended is not None else parse(rest, _EXEC_OPTIONS).operands[1:]
    if not inner or inner[0].dynamic:
        return
    name = inner[0].text.rsplit("/", 1)[-1]
    if name in NAMES:
        ran = type(command)(name, inner[1:], command.shell, command.cwd, command.depth + 1,
                            command.fed)  # fmt: skip
        judge(findings, ran)


def _client(findings: Findings, command: Command, client: Client) -> None:
    name = command.name
    parsed = parse(command.args, client.syntax)
    code: list[Word] = []
    for flag in parsed.flags:
        if flag.name in client.code:
            if flag.value is not None:
                code.append(flag.value)
        elif flag.short and flag.name[:2] in client.code and len(flag.name) > 2:
            code.append(Word(flag.name[2:]))  # `-cDROP…`, `-e"…"`: the value attached
        elif flag.name in client.files and flag.value is not None:
            if flag.value.text not in ("-", "/dev/stdin"):
                shown = flag.value.shown
                what = "commands" if client.language == TRANSFER else "statements"
                findings.flag(UNKNOWN, f"{name} runs the {what} in {shown}, not read here")
                return
            code.extend(command.fed or _OUTPUT)
    operands = parsed.operands
    if client.positional is not None and len(operands) > client.positional:
        code.extend(operands[client.positional :])
    elif client.language == MONGO and any(w.text.endswith(".js") for w in operands):
        findings.flag(UNKNOWN, f"{name} runs a script file, not read here")
        return
    if not code and command.fed is not None:
        given = from_file(command.fed)
        if given is not None:  # `psql < dump.sql`
            what = "commands" if client.language == TRANSFER else "statements"
            findings.flag(UNKNOWN, f"{name} runs the {what} in {given.path.shown}, not read here")
            return
        code = command.fed  # a here-document, an echo, or what another command prints
    if not code:
        return
    dynamic = any(w.dynamic for w in code)
    if client.language == REDIS and client.positional == 0 and code is not command.fed:
        text = " ".join(w.text for w in code)  # redis-cli's operands are one command
    else:
        text = "\n".join(w.text for w in code)
    _statements(findings, name, client.language, text, dynamic)


def _statements(findings: Findings, name: str, language: str, text: str, dynamic: bool) -> None:
    """Flags the destructive statements of `text`; one only known when it runs (its first
    word, or all of it, a variable or another command's output) is unknown. A value only
    known when it runs (`WHERE id = $ID`) leaves the statement what it is."""
    if language == TRANSFER:
        _escaped(findings, name, text)
        found = transfer_destructive(text)
        if found is not None:
            findings.flag(DESTRUCTIVE, f"{name}: {found}, beyond any undo", Kind.REMOTE)
            return
    elif language == SQL:
        found = sql_destructive(text)
    elif language == REDIS:
        found = redis_destructive(text)
    else:
        found = mongo_destructive(text)
    if found is not None:
        findings.flag(DESTRUCTIVE, f"{name}: {found}, beyond any undo")
        return
    unsure = {SQL: sql_unsure, REDIS: redis_unsure, TRANSFER: transfer_unsure}.get(language)
    doubt = unsure(text) if unsure is not None else None
    if doubt is not None:
        findings.flag(UNKNOWN, f"{name}: {doubt}")
    elif dynamic and _opaque(text, language):
        shown = text.replace("\0", "…").strip()[:60]
        what = "commands" if language == TRANSFER else "statements"
        findings.flag(UNKNOWN, f"{name} runs {what} only known when it runs ({shown})")


def _opaque(text: str, language: str) -> bool:
    """Whether a statement of `text` starts with a part only known when it runs."""
    if language == SQL:
        return any(s[0][0] == "\0" for s in _sql_statements(text))
    if language in (REDIS, TRANSFER):
        return any(line.split()[0].startswith("\0") for line in _lines(text, language))
    return not text.replace("\0", "").strip()


# -- the statements ---------------------------------------------------------------------

# A file-transfer client's commands deleting on the other machine (sftp, lftp, smbclient;
# lftp's `mrm`, smbclient's `deltree`), and those writing a file there (over what it runs on).
_TRANSFER_DELETES = {"rm", "rmdir", "del", "delete", "mdelete", "mrm", "deltree", "rmd"}
_TRANSFER_WRITES = {"put", "reput", "mput", "rename", "mv", "ln", "symlink", "chmod", "chown",
                    "chgrp", "setmode"}  # fmt: skip


def _lines(text: str, language: str) -> list[str]:
    """The commands of `text`, one a line; lftp's and smbclient's `;` separates them too."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if language == TRANSFER:
        lines = [part.strip() for line in lines for part in line.split(";") if part.strip()]
    return lines


def _escaped(findings: Findings, name: str, text: str) -> None:
    """The local shell commands a file-transfer client runs (`!rm -rf ~`), judged as a line
    run here: what it destroys is destroyed (at most unknown when only known when it runs)."""
    lines = [line[1:].strip() for line in _lines(text, TRANSFER) if line.startswith("!")]
    if not lines:
        return
    from .walk import Judge  # (the walker imports this module lazily: no cycle at import)

    local = Judge(findings.places)
    for line in lines:
        local.line(line, "bash", None, 1)
    for risk, reason, kind in local.findings.found:
        findings.flag(risk, f"{name} !: {reason}", kind)


def transfer_destructive(text: str) -> str | None:
    """What a file-transfer client's commands destroy on the other machine: a delete (`rm`,
    `rmdir`, `del`, `deltree`; lftp's `mirror --delete` of an upload, `-R`), or a file written
    over what that machine runs on (`put x /etc/passwd`); None otherwise."""
    for line in _lines(text, TRANSFER):
        words = line.lstrip("-@").split()  # sftp's `-rm x`: go on if it fails
        verb = words[0].lower()
        if verb in _TRANSFER_DELETES:
            return f"{verb} {' '.join(words[1:])}: deletes files on another machine".replace(
                "\0", "…"
            )
        if verb == "mirror" and "-R" in words and ("--delete" in words or "-e" in words):
            return "mirror -R --delete: deletes on another machine what is not here"
        if verb in _TRANSFER_WRITES and len(words) > 1:
            from .commands import runs_on

            target = words[-1]
            if runs_on(target):
                return f"{verb}: writes over {target} on another machine, what it runs on"
    return None


def transfer_unsure(text: str) -> str | None:
    """A file-transfer command worth a question: lftp's `mirror --delete` of a download,
    deleting here what the other side lacks."""
    for line in _lines(text, TRANSFER):
        if line.startswith("!"):
            continue  # judged as a line run here (`_escaped`)
        words = line.split()
        if words[0].lower() == "mirror" and ("--delete" in words or "-e" in words):
            return "mirror --delete: deletes local files the other side lacks"
    return None


_STATEMENT_VERBS = ("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE")
# `ALTER … DROP x`: these drop no data (a constraint, a default, NOT NULL…)
_ALTER_DROPS_NO_DATA = {"CONSTRAINT", "DEFAULT", "NOT", "INDEX", "KEY", "PRIMARY", "FOREIGN",
                        "CHECK", "IDENTITY", "EXPRESSION", "TRIGGER"}  # fmt: skip
_CLAUSE_ENDS = {"ORDER", "LIMIT", "RETURNING", "GROUP", "OFFSET"}


def sql_destructive(text: str) -> str | None:
    """The first destructive statement of `text` in words ("DROP TABLE", "DELETE without
    WHERE"…), or None: any DROP, TRUNCATE, `ALTER … DROP COLUMN`, and a DELETE or UPDATE
    without a WHERE (or with one every row meets, `WHERE 1=1`)."""
    for statement in _sql_statements(text):
        found = _sql_statement(statement)
        if found is not None:
            return found
    return None


def _sql_statement(tokens: list[tuple[str, int]]) -> str | None:
    top = [token for token, depth in tokens if depth == 0]
    if not top:
        return None
    main = top[0]
    if main == "WITH":  # the statement a CTE's names lead to
        main = next((t for t in top[1:] if t in _STATEMENT_VERBS), "WITH")
    if main == "DROP":
        return " ".join(top[:2])  # DROP TABLE, DROP DATABASE…
    if main == "TRUNCATE":
        return main
    if main == "ALTER":
        for at, token in enumerate(top[:-1]):
            if token == "DROP" and top[at + 1] not in _ALTER_DROPS_NO_DATA:
                return f"{' '.join(top[:2])} … DROP {top[at + 1]}"
        return None
    if main not in ("DELETE", "UPDATE"):
        return None
    after = top[top.index(main) :]
    if "WHERE" not in after:
        return f"{main} without WHERE (every row)"
    condition = after[after.index("WHERE") + 1 :]
    for at, token in enumerate(condition):
        if token in _CLAUSE_ENDS:
            condition = condition[:at]
            break
    if _always(condition):
        return f"{main} … WHERE {' '.join(condition)} (every row)"
    return None


# A client's own commands that run the statements of a file (psql's `\i`, mysql's `source`,
# sqlite3's `.read`) or put a saved database in place of this one (`.restore`).
_SQL_FILE_COMMANDS = ("\\i ", "\\ir ", "\\include", "\\. ", "source ", ".read ", ".restore",
                      ".open ")  # fmt: skip
_SQL_UNSURE = {"REVOKE": "revokes access", "RENAME": "renames a table its users name",
               "SOURCE": "runs the statements of a file, not read here",
               "REASSIGN": "reassigns ownership"}  # fmt: skip


def sql_unsure(text: str) -> str | None:
    """What of `text` may lose data or access yet is not plainly a destruction, or None."""
    for line in text.splitlines():
        if line.strip().lower().startswith(_SQL_FILE_COMMANDS):
            return f"runs {line.strip()[:40]!r}: a file's statements, not read here"
    for statement in _sql_statements(text):
        top = [token for token, depth in statement if depth == 0]
        if top and top[0] in _SQL_UNSURE:
            return f"{top[0]}: {_SQL_UNSURE[top[0]]}"
    return None


def _always(condition: list[str]) -> bool:
    """A condition every row meets: `1=1`, `TRUE`, `1`, `'a'='a'`."""
    if condition in (["TRUE"], ["1"]):
        return True
    return len(condition) == 3 and condition[1] == "=" and condition[0] == condition[2]


def _sql_statements(text: str) -> list[list[tuple[str, int]]]:
    """`text` split into statements at `;`, each a list of (token, bracket depth): keywords
    upper-cased, a string literal as `'…'` (its text kept for `'a'='a'`), a quoted name as
    `"`, comments skipped. A backslash escapes nothing (the reading that hides no statement)."""
    statements: list[list[tuple[str, int]]] = [[]]
    at, count, depth = 0, len(text), 0
    while at < count:
        char = text[at]
        if char.isspace():
            at += 1
        elif text.startswith("--", at) or char == "#":
            end = text.find("\n", at)
            at = count if end < 0 else end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            at = count if end < 0 else end + 2
        elif char in "'\"`":
            end = at + 1
            while end < count:
                if text[end] == char:
                    if text.startswith(char * 2, end):
                        end += 2
                        continue
                    break
                end += 1
            token = text[at : end + 1] if char == "'" else '"'
            statements[-1].append((token, depth))
            at = end + 1
        elif char == "$" and _dollar_tag(text, at):
            tag = _dollar_tag(text, at)
            end = text.find(tag, at + len(tag))
            statements[-1].append(("'$'", depth))
            at = count if end < 0 else end + len(tag)
        elif char == ";":
            statements.append([])
            depth = 0
            at += 1
        elif char.isalnum() or char == "_":
            end = at
            while end < count and (text[end].isalnum() or text[end] in "_.$"):
                end += 1
            statements[-1].append((text[at:end].upper(), depth))
            at = end
        else:
            if char == "(":
                statements[-1].append((char, depth))
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
                statements[-1].append((char, depth))
            else:
                statements[-1].append((char, depth))
            at += 1
    return [s for s in statements if s]


def _dollar_tag(text: str, at: int) -> str:
    """PostgreSQL's `$tag$` opening a dollar-quoted string at `at`, or ""."""
    end = at + 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    if end < len(text) and text[end] == "$" and not text[at + 1 : end].isdigit():
        return text[at : end + 1]
    return ""


_REDIS_WIPES = {"FLUSHALL": "FLUSHALL", "FLUSHDB": "FLUSHDB"}


def redis_destructive(text: str) -> str | None:
    """FLUSHALL or FLUSHDB, as a command of its own (one a line), or None."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0].upper() in _REDIS_WIPES:
            return f"{words[0].upper()} empties the database"
    return None


# Redis commands that stop the server, change where it writes or drop its scripts; and those
# deleting keys, when the keys are only known when it runs (`KEYS '*' | xargs redis-cli DEL`).
_REDIS_UNSURE = {"CONFIG", "SHUTDOWN", "SCRIPT", "FUNCTION", "SWAPDB", "DEBUG", "MIGRATE",
                 "REPLICAOF", "SLAVEOF", "ACL", "EVAL", "EVALSHA", "FCALL"}  # fmt: skip
_REDIS_DELETES = {"DEL", "UNLINK", "GETDEL"}


def redis_unsure(text: str) -> str | None:
    """A Redis command that deletes keys or changes the server (DEL, CONFIG…), or None."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0].upper() in _REDIS_UNSURE:
            return f"{words[0].upper()} changes or stops the server"
        if words and words[0].upper() in _REDIS_DELETES and "\0" in line:
            return f"{words[0].upper()} deletes keys only known when it runs"
    return None


def mongo_destructive(text: str) -> str | None:
    """A drop (`dropDatabase()`, `coll.drop()`, `dropIndexes()`…) or a delete or update of
    every document (`deleteMany({})`, `remove({})`, `updateMany({}, …)`), or None."""
    import re  # only for a MongoDB shell's code

    found = re.search(r"\.\s*(drop\w*)\s*\(", text)
    if found is not None:
        return f"{found.group(1)}()"
    found = re.search(r"\.\s*(deleteMany|remove|updateMany)\s*\(\s*(\{\s*\})?\s*[,)]", text)
    if found is not None:
        return f"{found.group(1)}({{}}) of every document"
    found = re.search(r"\.\s*(shutdownServer|fsyncLock|renameCollection)\s*\(", text)
    if found is not None:  # the server stopped or locked, a collection renamed away
        return f"{found.group(1)}()"
    return None
