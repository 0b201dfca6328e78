"""The guard sees through expansions and the commands that run others: brace and parameter
expansion, substitutions in arithmetic, xargs and find's -exec, watch, parallel, wrappers,
aliases and functions, tar --remove-files, truncate, writes onto disk devices, Windows' cmd
and Start-Process, and command names spelled in another case or with look-alike characters.
Each class has its safe look-alikes: a guard that asks about them gets turned off."""

from __future__ import annotations

import pytest

from dshkit.guard import DESTRUCTIVE, SAFE, UNKNOWN, classify
from dshkit.guard.expand import braces, parameter

WORK, HOME = "/home/dev/proj", "/home/dev"
MAC_WORK, MAC_HOME = "/Users/dev/proj", "/Users/dev"
WIN_WORK, WIN_HOME = "C:\\Users\\dev\\proj", "C:\\Users\\dev"

# (command, shell, workspace, risk)
CASES = [
    # brace expansion
    ("rm -rf {/etc,/usr}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf {~,}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf /{a,b}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf {build,../other}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf {a,{b,/etc}}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf /srv/x{1..3}", "bash", WORK, DESTRUCTIVE),
    ("rm -f '{/etc,/usr}'", "bash", WORK, SAFE),  # quoted: one odd name, here
    ("rm -rf {build,dist}", "bash", WORK, SAFE),
    ("rm -rf out/{a,b}/cache", "bash", WORK, SAFE),
    ("mv notes.txt{,.bak}", "bash", WORK, SAFE),
    ("cp src/{a,b}.py tmp/", "bash", WORK, SAFE),
    ("echo {1..5}", "bash", WORK, SAFE),
    ("{ rm -rf build; }", "bash", WORK, SAFE),
    ("{ rm -rf /; }", "bash", WORK, DESTRUCTIVE),
    ("awk '{print $1, $2}' data.txt", "bash", WORK, SAFE),
    ("find . -name '*.pyc' -exec rm {} +", "bash", WORK, SAFE),
    # arithmetic and command substitution
    ("echo $(( $(rm -rf /) + 1 ))", "bash", WORK, DESTRUCTIVE),
    ("echo $(( `rm -rf ~` * 2 ))", "bash", WORK, DESTRUCTIVE),
    ("x=$(rm -rf ~)", "bash", WORK, DESTRUCTIVE),
    ("echo $(( 1 + 2 ))", "bash", WORK, SAFE),
    ("echo $(( $n + 1 ))", "bash", WORK, SAFE),
    ("n=$(( $(wc -l < a.txt) + 1 ))", "bash", WORK, SAFE),
    # parameter forms: known variables expand, unknown ones are only known when it runs
    ("rm -rf ${HOME:?}/", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${HOME:-/}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${HOME}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${HOME%/}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${HOME%/*}", "bash", WORK, DESTRUCTIVE),  # /home
    ("rm -rf ${HOME:+/etc}", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${PWD}/../x", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${PWD}/build", "bash", WORK, SAFE),
    ("rm -rf ${PWD:?}/build", "bash", WORK, SAFE),
    ("D=build; rm -rf ${D:?}/out", "bash", WORK, SAFE),
    ("D=/etc; rm -rf ${D:?}/", "bash", WORK, DESTRUCTIVE),
    ("rm -rf ${FOO:-/}", "bash", WORK, UNKNOWN),
    ("rm -rf ${FOO:?}/", "bash", WORK, UNKNOWN),
    ('rm -rf "${BUILD_DIR:-build}"', "bash", WORK, UNKNOWN),
    ("rm -rf ${X:-$(rm -rf /)}", "bash", WORK, DESTRUCTIVE),
    ("echo ${#HOME} ${HOME^^}", "bash", WORK, SAFE),
    # xargs, every spelling
    ("echo / | xargs -i rm -rf {}", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs -I{} rm -rf {}", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs -I % rm -rf %", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs --replace rm -rf {}", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs --replace=X rm -rf X", "bash", WORK, DESTRUCTIVE),
    ("echo ~ | xargs -0 rm -rf", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs --delimiter=, rm -rf", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs -d , rm -rf", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs -n1 -P4 rm -rf", "bash", WORK, DESTRUCTIVE),
    ("echo / | xargs -n 1 -P 4 rm -rf", "bash", WORK, DESTRUCTIVE),
    ("echo build | xargs -a list.txt rm -rf", "bash", WORK, UNKNOWN),  # the file, not the pipe
    ("xargs --arg-file list.txt rm -rf", "bash", WORK, UNKNOWN),
    ("xargs --arg-file=list.txt rm -rf", "bash", WORK, UNKNOWN),
    ("echo build | xargs -i rm -rf {}", "bash", WORK, SAFE),
    ("echo build | xargs -n1 -P4 rm -rf", "bash", WORK, SAFE),
    ("git ls-files | xargs -0 wc -l", "bash", WORK, SAFE),
    ("find . -name '*.o' -print0 | xargs -0 rm -f", "bash", WORK, SAFE),
    # find -exec / -execdir / -ok / -okdir, find -delete
    ("find / -exec rm -rf {} \\;", "bash", WORK, DESTRUCTIVE),
    ("find /etc -execdir rm {} +", "bash", WORK, DESTRUCTIVE),
    ("find /etc -ok rm {} \\;", "bash", WORK, DESTRUCTIVE),
    ("find /etc -okdir rm {} ';'", "bash", WORK, DESTRUCTIVE),
    ("find /etc -delete", "bash", WORK, DESTRUCTIVE),
    ("find /var/log -exec truncate -s 0 {} \\;", "bash", WORK, DESTRUCTIVE),
    ("find /srv -exec mv {} /tmp \\;", "bash", WORK, DESTRUCTIVE),
    ("find . -exec sh -c 'rm -rf /' \\;", "bash", WORK, DESTRUCTIVE),
    ("find /tmp -exec unlink {} +", "bash", WORK, DESTRUCTIVE),
    ("find . -delete", "bash", WORK, DESTRUCTIVE),  # every entry of the workspace
    ("find . -exec rm {} \\;", "bash", WORK, DESTRUCTIVE),
    ("find build -exec rm {} \\;", "bash", WORK, SAFE),
    ("find build -type f -exec shred -u {} +", "bash", WORK, SAFE),
    ("find . -name '*.py' -exec grep -l TODO {} +", "bash", WORK, SAFE),
    ("find /etc -name '*.conf' -exec cat {} \\;", "bash", WORK, SAFE),
    # watch, timeout, nice, ionice, nohup, stdbuf, time, parallel, busybox, command…
    ("watch rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("watch -n 1 'rm -rf ~'", "bash", WORK, DESTRUCTIVE),
    ("watch -n 5 -d 'ls -la'", "bash", WORK, SAFE),
    ("watch git status", "bash", WORK, SAFE),
    ("timeout -s KILL 5 rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("timeout --signal=TERM 5s rm -rf ~", "bash", WORK, DESTRUCTIVE),
    ("timeout 60 pytest -q", "bash", WORK, SAFE),
    ("nice -n 10 rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("nice -10 rm -rf /etc", "bash", WORK, DESTRUCTIVE),
    ("ionice -c3 rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("ionice -c 2 -n 7 rm -rf ~", "bash", WORK, DESTRUCTIVE),
    ("nice make -j4", "bash", WORK, SAFE),
    ("nohup rm -rf / > /dev/null 2>&1 &", "bash", WORK, DESTRUCTIVE),
    ("nohup python serve.py &", "bash", WORK, SAFE),
    ("stdbuf -oL rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("stdbuf -o L rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("stdbuf -oL tail -f log.txt", "bash", WORK, SAFE),
    ("time rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("time -p rm -rf ~", "bash", WORK, DESTRUCTIVE),
    ("time -f %e rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("time make", "bash", WORK, SAFE),
    ("parallel rm -rf ::: /etc /usr", "bash", WORK, DESTRUCTIVE),
    ("parallel 'rm -rf {}' ::: ~", "bash", WORK, DESTRUCTIVE),
    ("parallel -j4 rm -rf {} ::: build /var", "bash", WORK, DESTRUCTIVE),
    ("echo / | parallel rm -rf", "bash", WORK, DESTRUCTIVE),
    ("parallel rm -rf :::: dirs.txt", "bash", WORK, UNKNOWN),
    ("parallel gzip ::: a.log b.log", "bash", WORK, SAFE),
    ("parallel -j4 'rm -rf {}' ::: build dist", "bash", WORK, SAFE),
    ("busybox rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("busybox ls", "bash", WORK, SAFE),
    ("command rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("command -p rm -rf ~", "bash", WORK, DESTRUCTIVE),
    ("command -v rm", "bash", WORK, SAFE),
    ("builtin rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("exec rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("exec -a name rm -rf /", "bash", WORK, DESTRUCTIVE),
    ("exec python app.py", "bash", WORK, SAFE),
    # aliases and functions defined on the line
    ("alias x='rm -rf /'; x", "bash", WORK, DESTRUCTIVE),
    ("alias nuke='rm -rf ~'", "bash", WORK, DESTRUCTIVE),
    ("alias ll='ls -la'; ll", "bash", WORK, SAFE),
    ("alias", "bash", WORK, SAFE),
    ("f(){ rm -rf /; }; f", "bash", WORK, DESTRUCTIVE),
    ("f() { rm -rf ~; }; f", "bash", WORK, DESTRUCTIVE),
    ("function f { rm -rf /; }; f", "bash", WORK, DESTRUCTIVE),
    ("function f() { rm -rf /etc; }; f", "bash", WORK, DESTRUCTIVE),
    ("function clean { rm -rf build; }; clean", "bash", WORK, SAFE),
    ("f() { echo hi; }; f", "bash", WORK, SAFE),
    # tar --remove-files, truncate, shred
    ("tar --remove-files -cf a.tar /etc", "bash", WORK, DESTRUCTIVE),
    ("tar -czf backup.tgz --remove-files ~/Documents", "bash", WORK, DESTRUCTIVE),
    ("tar -C / --remove-files -cf a.tar etc", "bash", WORK, DESTRUCTIVE),
    ("tar cf a.tar --remove-files ../other", "bash", WORK, DESTRUCTIVE),
    ("tar --remove-files -cf /tmp/a.tar build", "bash", WORK, SAFE),
    ("tar -czf /tmp/etc.tgz /etc", "bash", WORK, SAFE),
    ("tar -xzf archive.tgz -C out", "bash", WORK, SAFE),
    ("truncate -s 0 /etc/passwd", "bash", WORK, DESTRUCTIVE),
    ("truncate --size=0 ~/.bash_history", "bash", WORK, DESTRUCTIVE),
    ("truncate -s 0 /dev/sda", "bash", WORK, DESTRUCTIVE),
    ("truncate -s 0 log.txt", "bash", WORK, SAFE),
    ("truncate -s +1M /tmp/disk.img", "bash", WORK, SAFE),
    ("shred -u /etc/passwd", "bash", WORK, DESTRUCTIVE),
    ("shred /dev/sda", "bash", WORK, DESTRUCTIVE),
    ("shred -u secrets.txt", "bash", WORK, SAFE),
    # writes onto block devices
    ("cp /dev/zero /dev/sda", "bash", WORK, DESTRUCTIVE),
    ("cp disk.img /dev/nvme0n1", "bash", WORK, DESTRUCTIVE),
    ("cat image.iso | tee /dev/sdb > /dev/null", "bash", WORK, DESTRUCTIVE),
    ("tee /dev/disk2 < image.iso", "bash", WORK, DESTRUCTIVE),
    ("dd if=/dev/zero of=/dev/nvme0n1 bs=1M", "bash", WORK, DESTRUCTIVE),
    ("cat x > /dev/sda", "bash", WORK, DESTRUCTIVE),
    ("cp /dev/sda disk.img", "bash", WORK, SAFE),  # reads the disk
    ("dd if=/dev/sda of=disk.img", "bash", WORK, SAFE),
    ("echo hi | tee out.log", "bash", WORK, SAFE),
    ("echo hi > /dev/null", "bash", WORK, SAFE),
    ("cp a.txt /tmp/", "bash", WORK, SAFE),
    # command names in another case
    ("RM -rf /", "bash", MAC_WORK, DESTRUCTIVE),
    ("Rm -rf ~", "bash", WORK, DESTRUCTIVE),
    ("FIND / -delete", "bash", WORK, DESTRUCTIVE),
    ("RM -rf build", "bash", MAC_WORK, SAFE),
    ("LS -la", "bash", WORK, SAFE),
    ("REMOVE-ITEM -Recurse C:\\Windows", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("Rm -r C:\\Windows", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("RD /S /Q C:\\", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("Remove-ITEM -Recurse build", "pwsh", WIN_WORK, SAFE),
    # look-alike characters where a command name stands: never safe
    ("ｒｍ -rf /", "bash", WORK, DESTRUCTIVE),
    ("ｒｍ -rf build", "bash", WORK, UNKNOWN),
    ("гm -rf /", "bash", WORK, UNKNOWN),  # a Cyrillic г
    ("r\u200bm -rf /", "bash", WORK, DESTRUCTIVE),
    ("rm\u00a0-rf /", "bash", WORK, UNKNOWN),
    ("ｌｓ", "bash", WORK, UNKNOWN),
    ("echo 'ｒｍ -rf /'", "bash", WORK, SAFE),  # data, not a command name
    ("git commit -m 'Gr\u00fc\u00dfe'", "bash", WORK, SAFE),
    # Windows: cmd, del, rd, cipher, format, Start-Process
    ("cmd /c del /s /q C:\\", "pwsh", WIN_WORK, DESTRUCTIVE),
    ('cmd /c "rd /s /q C:\\Users"', "pwsh", WIN_WORK, DESTRUCTIVE),
    ("del /s /q C:\\", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("rd /s /q C:\\Windows", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("rmdir /s C:\\Windows", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("cipher /w:C:\\", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("format C:", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("Start-Process cmd -ArgumentList '/c rd /s /q C:\\'", "pwsh", WIN_WORK, DESTRUCTIVE),
    (
        "Start-Process powershell -ArgumentList '-Command Remove-Item -Recurse -Force C:\\'",
        "pwsh",
        WIN_WORK,
        DESTRUCTIVE,
    ),
    (
        'Start-Process -FilePath cmd.exe -ArgumentList "/c","del /s /q C:\\"',
        "pwsh",
        WIN_WORK,
        DESTRUCTIVE,
    ),
    ("saps cmd '/c rd /s /q C:\\Windows'", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("Remove-Item build,C:\\Windows -Recurse", "pwsh", WIN_WORK, DESTRUCTIVE),
    ("Start-Process notepad.exe -ArgumentList 'readme.txt'", "pwsh", WIN_WORK, SAFE),
    ("Start-Process cmd -ArgumentList '/c rd /s /q build'", "pwsh", WIN_WORK, SAFE),
    ("cipher /e secret", "pwsh", WIN_WORK, SAFE),
    ("del build\\x.txt", "pwsh", WIN_WORK, SAFE),
    ("rd /s /q build", "pwsh", WIN_WORK, SAFE),
    ("Get-ChildItem -Include *.txt,*.log -Recurse", "pwsh", WIN_WORK, SAFE),
    ("Remove-Item a.txt,b.txt", "pwsh", WIN_WORK, SAFE),
    # the everyday look-alikes stay safe
    ("git status", "bash", WORK, SAFE),
    ("git reset --soft HEAD~1", "bash", WORK, SAFE),
    ("git checkout -b new", "bash", WORK, SAFE),
    ("kubectl get pods", "bash", WORK, SAFE),
    ("docker ps", "bash", WORK, SAFE),
    ("ssh host ls", "bash", WORK, SAFE),
    ("ls -la src", "bash", WORK, SAFE),
]


@pytest.mark.parametrize(("command", "shell", "work", "risk"), CASES)
def test_risk(command: str, shell: str, work: str, risk: str) -> None:
    home = {WORK: HOME, MAC_WORK: MAC_HOME, WIN_WORK: WIN_HOME}[work]
    found = classify(command, shell, work, home=home)
    assert found.risk == risk, found.reason


def test_brace_expansion_keeps_quotes_and_substitutions_whole() -> None:
    assert braces("{a,b}") == ["a", "b"]
    assert braces("x{1..3}") == ["x1", "x2", "x3"]
    assert braces("{a,{b,c}}d") == ["ad", "bd", "cd"]
    assert braces("'{a,b}'") is None
    assert braces("${HOME}") is None
    assert braces("$(echo {a,b})") is None
    assert braces("{}") is None and braces("{a}") is None
    assert len(braces("{1..100000}") or []) == 256  # cut, never a line's worth of millions


def test_parameter_forms() -> None:
    known = {"HOME": "/home/dev", "D": "a/b/c"}
    assert parameter("HOME:-/", known) == "/home/dev"
    assert parameter("HOME:?", known) == "/home/dev"
    assert parameter("HOME:+/etc", known) == "/etc"
    assert parameter("D%/*", known) == "a/b"
    assert parameter("D%%/*", known) == "a"
    assert parameter("D#*/", known) == "b/c"
    assert parameter("D##*/", known) == "c"
    assert parameter("D/b/x", known) == "a/x/c"
    assert parameter("D:2:1", known) == "b"
    assert parameter("HOME^^", known) == "/HOME/DEV"
    assert parameter("UNSET:-/", known) is None
    assert parameter("!HOME", known) is None


def test_the_reason_names_what_the_expansion_reached() -> None:
    found = classify("rm -rf {build,/etc}", "bash", WORK, home=HOME)
    assert "/etc" in found.reason
    look = classify("ｒｍ -rf build", "bash", WORK, home=HOME)
    assert "not plain ASCII" in look.reason


@pytest.mark.process
def test_the_walker_names_every_step_of_expand_and_loads_it_only_for_them() -> None:
    from dshkit.guard import expand, walk

    assert set(expand.STEPS) == walk.EXPANDED
    import subprocess
    import sys

    probe = (
        "import sys; from dshkit.guard import classify\n"
        "classify('ls -la src && git status', 'bash', '/w', home='/h')\n"
        "print('dshkit.guard.expand' in sys.modules)\n"
        "classify('watch ls', 'bash', '/w', home='/h')\n"
        "print('dshkit.guard.expand' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.split() == ["False", "True"]
