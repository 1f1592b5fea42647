"""Shared by the batch tests: a small task set scripted on the fake server, the `gosling
batch` subprocess, and the parts of a result line that must not depend on where it ran."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

REPO = Path(__file__).resolve().parents[2]


def batch_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"ANTHROPIC_API_KEY": "test-key", "GOSLING_MAX_RETRIES": "0", "NO_COLOR": "1"})
    env.update(extra)
    return env


def gosling_batch(
    tasks: Path,
    out: Path,
    server: FakeLLMServer,
    *args: str,
    env: dict[str, str] | None = None,
    base_url: str | None = None,
    launcher: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """`gosling batch` as a user runs it; `launcher` goes before the interpreter."""
    command = [*launcher, sys.executable, "-m", "gosling", "batch", str(tasks), "-o", str(out)]
    command += ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
    command += ["--base-url", base_url or server.url, *args]
    return subprocess.run(
        command, cwd=REPO, env=env or batch_env(), capture_output=True, text=True, timeout=300
    )


def write_tasks(path: Path, tasks: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


def git_repo(path: Path) -> Path:
    """A repository whose tag v1 says `one` and whose main branch says `two`."""
    path.mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (path / "version.txt").write_text("one\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    git("tag", "v1")
    (path / "version.txt").write_text("two\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")
    return path


def tool(name: str, usage: FakeUsage | None = None, **arguments: Any) -> Turn:
    return Turn(tool_calls=[FakeToolCall(name, arguments)], usage=usage)


def script_task_set(server: FakeLLMServer, tmp: Path, kill_flag: Path) -> list[dict[str, Any]]:
    """Four tasks: an edit in a copied directory (with a setup command), a clone at a tag,
    one that runs out of turns (fails by itself), and one whose worker is killed the first
    time it runs (by its setup command: tool commands run sandboxed, where the worker is out
    of reach)."""
    source = tmp / "project"
    if not source.exists():
        source.mkdir()
        (source / "hello.txt").write_text("hello world\n")
    repo = tmp / "origin" if (tmp / "origin").exists() else git_repo(tmp / "origin")
    server.add_conversation(
        "[edit]",
        tool("developer__edit", FakeUsage(100, 10), path="hello.txt", old="world", new="batch"),
        Turn(text="Edited.", usage=FakeUsage(150, 5)),
    )
    server.add_conversation(
        "[clone]",
        tool("developer__shell", FakeUsage(120, 8), command="cat version.txt"),
        Turn(text="It says one.", usage=FakeUsage(160, 6)),
    )
    server.add_conversation(
        "[loop]",
        tool("developer__shell", FakeUsage(90, 4), command="echo again"),
        tool("developer__shell", FakeUsage(95, 4), command="echo again"),
    )
    server.add_conversation(
        "[kill]",
        tool("developer__shell", FakeUsage(80, 3), command="echo survived"),
        Turn(text="Survived.", usage=FakeUsage(130, 4)),
    )
    return [
        {
            "id": "edit",
            "prompt": "[edit] change world to batch",
            "working_dir": str(source),
            "setup": "echo prepared > setup.txt",
        },
        {"id": "clone", "prompt": "[clone] read the version", "repo": str(repo), "ref": "v1"},
        {"id": "loop", "prompt": "[loop] keep going", "max_turns": 2},
        {
            "id": "kill",
            "prompt": "[kill] run the command",
            # The setup runs in the worker's own child: $PPID is the worker, killed mid-task.
            "setup": f"test -e {kill_flag} || {{ touch {kill_flag}; kill -9 $PPID; }}",
        },
    ]


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text().splitlines()
    parsed = [json.loads(line) for line in lines]
    by_id = {r["task_id"]: r for r in parsed}
    assert len(by_id) == len(parsed), "a task appears twice in results.jsonl"
    return by_id


def portable(result: dict[str, Any]) -> dict[str, Any]:
    """What a result says about the task itself, not about the machine or the moment."""
    session = (
        Path(result["session_file"]).read_text().splitlines() if result["session_file"] else []
    )
    texts = [
        part.get("text") or part.get("name") or part.get("type")
        for line in session[1:]
        if json.loads(line)["type"] == "message"
        for part in json.loads(line)["message"]["content"]
    ]
    keep = ("task_id", "exit_code", "result", "stop_reason", "num_turns", "usage", "tokens")
    return {
        **{k: result[k] for k in keep},
        "total_cost_usd": result["total_cost_usd"],
        "attempts": result["attempts"],
        "error": result["error"],
        "messages": texts,
    }


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def start_batch(
    tasks: Path, out: Path, server: FakeLLMServer, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`gosling batch` in its own session (a terminal's Ctrl-C reaches its whole group);
    `--workers 1` unless `args` are given."""
    command = [sys.executable, "-m", "gosling", "batch", str(tasks), "-o", str(out)]
    command += ["--provider", "anthropic", "--model", "m", "--base-url", server.url]
    command += list(args) or ["--workers", "1"]
    return subprocess.Popen(
        command,
        cwd=REPO,
        env=env or batch_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@contextmanager
def running_batch(
    tasks: Path,
    out: Path,
    server: FakeLLMServer,
    release: Path,
    *args: str,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[str]]:
    """The batch, and on the way out nothing left blocked or running."""
    batch = start_batch(tasks, out, server, *args, env=env)
    try:
        yield batch
    finally:
        (release.parent.parent.parent.parent / "released-all").touch()
        if release.parent.exists():
            release.touch()
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
        batch.communicate()


def read_until(batch: subprocess.Popen[str], text: str) -> str:
    assert batch.stderr is not None
    seen = ""
    while text not in seen:
        line = batch.stderr.readline()
        assert line, f"the batch ended before saying {text!r}: {seen}"
        seen += line
    return seen


def ctrl_c_twice(batch: subprocess.Popen[str]) -> str:
    """Ctrl-C to the batch's group, then again once it says it is stopping; its stderr."""
    os.killpg(batch.pid, signal.SIGINT)
    said = read_until(batch, "Ctrl-C again cancels them")
    os.killpg(batch.pid, signal.SIGINT)
    _, rest = batch.communicate(timeout=120)
    return said + rest


def blocking_tasks(server: FakeLLMServer, tmp_path: Path) -> tuple[Path, Path]:
    """The `block` task's tool waits for a file; both files are in its working directory,
    the one place its sandboxed command can write and the test can see. Its setup (not
    sandboxed) makes a rerun's fresh directory released from the start once `released-all`
    exists."""
    work = tmp_path / "out" / "work" / "block"
    started, release = work / "started", work / "release"
    wait = "touch started; while [ ! -e release ]; do sleep 0.05; done; echo released"
    release_all = tmp_path / "released-all"
    server.add_conversation(
        "[block]", tool("developer__shell", command=wait), Turn(text="Released.")
    )
    server.add_conversation("[later]", Turn(text="Later."))
    tasks = [
        {
            "id": "block",
            "prompt": "[block] wait",
            "setup": f"if [ -e {release_all} ]; then touch release; fi",
        },
        {"id": "later-1", "prompt": "[later] one"},
        {"id": "later-2", "prompt": "[later] two"},
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    return started, release
