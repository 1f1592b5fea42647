"""The programs that run another program from their arguments (the data).

Each wrapper lists its options in the syntax of `shell_policies` (`-x`, `-x:` with a value,
`-x::` an optional attached value, `--name`, `--name=`, `--name[=]`), how many operands come
before the command (`flock FILE CMD`, `chrt PRIO CMD`), which option hands a string to
`sh -c` (`flock -c`, `su -c`), whether the rest is joined into one `sh -c` string (`watch`,
`sg`), and which options mean it runs no command at all (`chrt -p`, `command -v`). Options
are read up to the first operand, as these programs do; an option not listed makes the line
unjudgeable, so it asks whenever a deny or ask rule exists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WrapperSpec:
    options: str = ""
    operands: int = 0
    """Words between the options and the command (`timeout DURATION CMD`)."""
    code_option: str | None = None
    """The option whose value is a shell command (`flock -c CMD`)."""
    joined: bool = False
    """The command words are joined and run by `sh -c` (`watch`, `sg`)."""
    no_command: frozenset[str] = frozenset()
    """Options after which no command runs (`command -v`, `taskset -p`)."""
    numeric: bool = False
    """`nice -10`: a dash and digits is an option."""
    own_allow: bool = False
    """It changes who runs the program (`sudo`): an allow rule must name it too."""


SPECS: dict[str, WrapperSpec] = {
    "command": WrapperSpec("-p -v -V", no_command=frozenset({"-v", "-V"})),
    "builtin": WrapperSpec(),
    "exec": WrapperSpec("-c -l -a:"),
    "nice": WrapperSpec("-n: --adjustment=", numeric=True),
    "nohup": WrapperSpec(),
    "time": WrapperSpec("-p"),
    "coproc": WrapperSpec(),
    "stdbuf": WrapperSpec("-i: -o: -e: --input= --output= --error="),
    "ionice": WrapperSpec("-t -c: -n: -p: -P: -u: --ignore --class= --classdata= --pid="),
    "timeout": WrapperSpec(
        "-v -s: -k: --foreground --preserve-status --verbose --signal= --kill-after=",
        operands=1,
    ),
    "sudo": WrapperSpec(
        "-A -b -E -H -k -n -P -S -l -v -V -K -i -s -C: -D: -g: -h: -p: -r: -t: -T: -U: -u: "
        "--preserve-env[=] --non-interactive --background --login --user= --group= "
        "--host= --prompt= --chdir= --chroot= --close-from= --shell",
        no_command=frozenset({"-l", "-v", "-V", "-K", "-k"}),
        own_allow=True,
    ),
    "doas": WrapperSpec("-n -s -L -u: -C:", own_allow=True),
    "setsid": WrapperSpec("-c -f -w --ctty --fork --wait"),
    "flock": WrapperSpec(
        "-s -x -e -n -u -o -F -E: -w: -c: --shared --exclusive --nonblock --nb --unlock "
        "--close --no-fork --conflict-exit-code= --timeout= --wait= --command= --verbose",
        operands=1,
        code_option="-c",
    ),
    "chrt": WrapperSpec(
        "-a -b -d -f -i -o -r -R -v -m -p -T: -P: -D: --all-tasks --batch --deadline --fifo "
        "--idle --other --rr --reset-on-fork --verbose --max --pid --sched-runtime= "
        "--sched-period= --sched-deadline=",
        operands=1,
        no_command=frozenset({"-p", "--pid", "-m", "--max"}),
    ),
    "taskset": WrapperSpec(
        "-a -c -p --all-tasks --cpu-list --pid", operands=1, no_command=frozenset({"-p"})
    ),
    "prlimit": WrapperSpec(
        "-p: --pid= -o: --output= --noheadings --raw --verbose -c:: -d:: -e:: -f:: -i:: "
        "-l:: -m:: -n:: -q:: -r:: -s:: -t:: -u:: -v:: -x:: -y:: --core[=] --data[=] "
        "--nice[=] --fsize[=] --sigpending[=] --memlock[=] --rss[=] --nofile[=] "
        "--msgqueue[=] --rtprio[=] --stack[=] --cpu[=] --nproc[=] --as[=] --locks[=] "
        "--rttime[=]"
    ),
    "setpriv": WrapperSpec(
        "-d --dump --nnp --no-new-privs --keep-groups --clear-groups --init-groups "
        "--reset-env --ruid= --euid= --rgid= --egid= --reuid= --regid= --groups= "
        "--inh-caps= --ambient-caps= --bounding-set= --securebits= --pdeathsig= "
        "--selinux-label= --apparmor-profile= --landlock-access= --landlock-rule="
    ),
    "nsenter": WrapperSpec(
        "-a --all -t: --target= -m:: --mount[=] -u:: --uts[=] -i:: --ipc[=] -n:: --net[=] "
        "-p:: --pid[=] -C:: --cgroup[=] -U:: --user[=] -T:: --time[=] -S: --setuid= "
        "-G: --setgid= --preserve-credentials -r:: --root[=] -w:: --wd[=] -W: --wdns= "
        "-e --env -F --no-fork -Z --follow-context"
    ),
    "unshare": WrapperSpec(
        "-m:: --mount[=] -u:: --uts[=] -i:: --ipc[=] -n:: --net[=] -p:: --pid[=] -U:: "
        "--user[=] -C:: --cgroup[=] -T:: --time[=] -f --fork -r --map-root-user -c "
        "--map-current-user --kill-child[=] --mount-proc[=] --propagation= --setgroups= "
        "-R: --root= -w: --wd= -S: --setuid= -G: --setgid= --keep-caps"
    ),
    "chroot": WrapperSpec("--userspec= --groups= --skip-chdir", operands=1),
    "sg": WrapperSpec("-c", operands=1, joined=True),
    "su": WrapperSpec(
        "- -l --login -m -p --preserve-environment -P --pty -c: --command= -s: --shell= "
        "-g: --group= -G: --supp-group= -w: --whitelist-environment=",
        code_option="-c",
        own_allow=True,
    ),
    "runuser": WrapperSpec(
        "- -l --login -m -p --preserve-environment -u: --user= -c: --command= -s: --shell= "
        "-g: --group= -G: --supp-group= -w: --whitelist-environment=",
        code_option="-c",
        own_allow=True,
    ),
    "script": WrapperSpec(
        "-a --append -e --return -f --flush -q --quiet -c: --command= -E: --echo= -I: "
        "--log-in= -O: --log-out= -B: --log-io= -T: --log-timing= -m: --logging-format= "
        "-o: --output-limit= -t:: --timing[=]",
        code_option="-c",
    ),
    "watch": WrapperSpec(
        "-b --beep -c --color -C --no-color -d:: --differences[=] -e --errexit -g --chgexit "
        "-n: --interval= -p --precise -t --no-title -w --no-wrap -x --exec -q: "
        "--equexit=",
        joined=True,
    ),
    "strace": WrapperSpec(
        "-f -ff -F -q -qq -qqq -r -t -tt -ttt -T -v -x -xx -y -yy -c -C -w -z -Z -n -k -i "
        "-D -DD -DDD -e: -o: -O: -p: -s: -S: -u: -a: -b: -E: -I: -P: -X: --output= "
        "--trace= --signal= --status= --string-limit= --absolute-timestamps[=] "
        "--summary-only --summary --follow-forks --output-separately --seccomp-bpf "
        "--quiet[=] --silence[=]"
    ),
    "ltrace": WrapperSpec("-f -c -C -i -S -t -tt -ttt -T -e: -o: -s: -n: -a: -l: -u:"),
    "fakeroot": WrapperSpec("-u --unknown-is-real -l: --lib= --faked= -s: -i: -b:"),
    "catchsegv": WrapperSpec(),
    "dbus-run-session": WrapperSpec("--config-file= --dbus-daemon= --session"),
    "xvfb-run": WrapperSpec(
        "-a --auto-servernum -e: --error-file= -f: --auth-file= -n: --server-num= -l "
        "--listen-tcp -p: --xauth-protocol= -s: --server-args= -w: --wait="
    ),
    "busybox": WrapperSpec(),
    "env": WrapperSpec(
        "-i --ignore-environment -0 --null -v --debug -u: --unset= -C: --chdir= -S: "
        "--split-string= -a: --argv0= --block-signal[=] --default-signal[=] "
        "--ignore-signal[=] --list-signal-handling -"
    ),
    "xargs": WrapperSpec(
        "-0 --null -r --no-run-if-empty -t --verbose -p --interactive -x --exit -o "
        "--open-tty --show-limits -a: --arg-file= -d: --delimiter= -E: -e:: --eof[=] -I: "
        "-i:: --replace[=] -L: -l:: --max-lines[=] -n: --max-args= -P: --max-procs= -s: "
        "--max-chars= --process-slot-var="
    ),
}
SHELLS = frozenset({"sh", "bash", "dash", "ash", "posh", "zsh", "ksh", "ksh93", "mksh", "yash"})
BASH_COMPATIBLE = frozenset({"bash"})
POSIX_SHELLS = frozenset({"sh", "dash", "ash", "posh"})
"""Shells whose `-c` code is parsed with the bash parser only when it holds none of the
syntax they read differently (`DASH_DIFFERENT`); any other shell's code is unjudgeable."""
DASH_DIFFERENT = ("$'", '$"', "[[", "((", "{", "}", "<<<", "&>", "|&", ";&", "<(", ">(",
                  "function", "\\", "select", "coproc", "=~")  # fmt: skip
"""Bash syntax that dash reads otherwise (`&>` is `&` then `>`, `$'...'` is `$` and a
quote, no brace expansion or `[[`), or that needs care in every shell (backslashes)."""
