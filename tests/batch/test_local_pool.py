"""`gosling batch` on the local process pool, end to end: the CLI as a subprocess, the
real SDKs against the loopback fake server."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.batch.local_pool import LocalPool, describe_exit
from gosling.batch.tasks import TaskSpec
from gosling.batch.worker import Job
from tests.agent.sandbox.conditions import needs_bwrap
from tests.batch.helpers import (
    batch_env,
    gosling_batch,
    portable,
    results,
    script_task_set,
    tool,
    write_tasks,
)
from tests.fakes import FakeLLMServer, Turn

RUN_JSON_KEYS = {
    "type",
    "subtype",
    "session_id",
    "result",
    "stop_reason",
    "num_turns",
    "usage",
    "permission_denials",
    "error",
}


pytestmark = pytest.mark.timeout(600)  # whole `gosling batch` runs; slow on a loaded box


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_batch_runs_every_task_and_records_each_once(tmp_path: Path, server: FakeLLMServer) -> None:
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", script_task_set(server, tmp_path, tmp_path / "killed")
    )
    out = tmp_path / "out"

    run = gosling_batch(tasks, out, server, "--workers", "2")

    assert run.returncode == 1, run.stderr  # `loop` ran out of turns
    done = results(out)
    assert set(done) == {"edit", "clone", "loop", "kill"}
    for result in done.values():
        assert set(result) >= RUN_JSON_KEYS
        assert result["duration_ms"] >= 0 and result["session_file"]
    edit, clone, loop, kill = done["edit"], done["clone"], done["loop"], done["kill"]
    assert (edit["exit_code"], edit["result"]) == (0, "Edited.")
    assert edit["tokens"]["total"] == 100 + 10 + 150 + 5
    assert edit["total_cost_usd"] == pytest.approx((250 * 3 + 15 * 15) / 1e6)
    work = Path(edit["working_dir"])
    assert (work / "hello.txt").read_text() == "hello batch\n"
    assert (work / "setup.txt").read_text() == "prepared\n"
    assert (tmp_path / "project" / "hello.txt").read_text() == "hello world\n"
    assert (clone["exit_code"], clone["result"]) == (0, "It says one.")
    assert (Path(clone["working_dir"]) / "version.txt").read_text() == "one\n"
    assert len({r["working_dir"] for r in done.values()}) == 4
    # Failed by itself (max turns): a result, not a retry.
    assert (loop["exit_code"], loop["stop_reason"], loop["attempts"]) == (3, "max_turns", 1)
    # Its worker was killed mid-task: retried once, recorded once.
    assert (kill["exit_code"], kill["result"], kill["attempts"]) == (0, "Survived.", 2)
    assert "kill: worker process died" in run.stderr and "retrying" in run.stderr
    session = Path(kill["session_file"]).read_text().splitlines()
    header = json.loads(session[0])
    assert header["format"] == "gosling-session" and header["id"] == kill["session_id"]
    assert sum(1 for line in session if '"type":"message"' in line) == 4  # one clean attempt
    assert portable(kill)["messages"].count("developer__shell") == 1

    served = len(server.model_requests())
    again = gosling_batch(tasks, out, server, "--workers", "2")
    assert again.returncode == 1
    assert "4 already done" in again.stderr
    assert len(server.model_requests()) == served
    assert results(out) == done


def test_bad_task_lines_are_refused_by_number_before_anything_runs(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "ok", "prompt": "fine"}\n'
        "{not json\n"
        '{"id": "no-prompt"}\n'
        "\n"
        '{"id": "ok", "prompt": "again"}\n'
        '{"id": "dir", "prompt": "p", "working_dir": "missing"}\n'
        '{"id": "../escape", "prompt": "p"}\n'
        '{"id": "typo", "prompt": "p", "max_turn": 3}\n'
    )
    out = tmp_path / "out"

    run = gosling_batch(tasks, out, server)

    assert run.returncode == 2
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert [e.split(":")[2] for e in errors[:-1]] == ["2", "3", "5", "6", "7", "8"]
    assert "duplicate id 'ok' (first on line 1)" in run.stderr
    assert "prompt: Field required" in run.stderr and "max_turn" in run.stderr
    assert not (out / "results.jsonl").exists()
    assert server.model_requests() == []


def test_a_task_past_its_timeout_is_cancelled_and_recorded(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.add_conversation("[slow]", tool("developer__shell", command="sleep 600"), "never")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "slow", "prompt": "[slow]", "timeout_s": 1}]
    )

    run = gosling_batch(tasks, tmp_path / "out", server)

    assert run.returncode == 1, run.stderr
    slow = results(tmp_path / "out")["slow"]
    assert (slow["exit_code"], slow["timed_out"], slow["attempts"]) == (124, True, 1)
    assert slow["error"] == "timed out after 1 s"
    session = Path(slow["session_file"]).read_text()
    assert "developer__shell" in session  # the session up to the cut is kept


def test_a_worker_that_ignores_its_task_timeout_is_killed_and_replaced(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    # The setup command stops its worker (SIGSTOP cannot be caught): the task's own timeout
    # can cancel nothing in a stopped process, so only the driver can end it.
    server.add_conversation("[after]", "Done after.")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "stuck", "prompt": "[stuck]", "setup": "kill -STOP $PPID", "timeout_s": 1},
            {"id": "after", "prompt": "[after] go on"},
        ],
    )

    run = gosling_batch(tasks, tmp_path / "out", server, "--workers", "1")

    assert run.returncode == 1, run.stderr
    done = results(tmp_path / "out")
    stuck, after = done["stuck"], done["after"]
    assert (stuck["exit_code"], stuck["timed_out"], stuck["attempts"]) == (124, True, 1)
    assert "the worker did not stop, so it was killed" in stuck["error"]
    assert (after["exit_code"], after["result"]) == (0, "Done after.")
    assert after["worker"] != stuck["worker"]  # a fresh worker took the next task


def test_a_broken_prompt_template_fails_each_task_with_its_fix_not_the_workers(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """The workers' warm-up renders the system prompt once, before any task; a user's
    override that does not parse must still be each task's own error, naming the file."""
    template = Path(os.environ["GOSLING_HOME"]) / "config" / "prompts" / "system.md"
    template.parent.mkdir(parents=True)
    template.write_text("You are {% if %} broken.\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{n}", "prompt": "[never answered]"} for n in range(2)],
    )

    run = gosling_batch(tasks, tmp_path / "out", server, "--workers", "2")

    assert run.returncode == 1, run.stderr
    done = results(tmp_path / "out")
    assert set(done) == {"t0", "t1"}
    for result in done.values():
        assert (result["exit_code"], result["attempts"]) == (1, 1)
        assert str(template) in result["error"] and "fix or delete the file" in result["error"]
    assert "worker process died" not in run.stderr
    assert server.model_requests() == []


def test_a_ca_bundle_that_cannot_be_loaded_fails_each_task_with_its_fix(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """SSL_CERT_FILE pointing at a file that is gone: the workers' warm-up meets it before
    any task; the batch must still report it per task, naming the variable, not lose its
    workers and retry."""
    missing = tmp_path / "corporate-ca.pem"
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{n}", "prompt": "[never answered]"} for n in range(2)],
    )

    run = gosling_batch(
        tasks,
        tmp_path / "out",
        server,
        "--workers",
        "2",
        env=batch_env(SSL_CERT_FILE=str(missing)),
        base_url=server.url.replace("http://", "https://"),  # plain http never reads the bundle
    )

    assert run.returncode == 1, run.stderr
    done = results(tmp_path / "out")
    assert set(done) == {"t0", "t1"}
    for result in done.values():
        assert (result["exit_code"], result["attempts"]) == (1, 1)
        assert f"SSL_CERT_FILE={missing}" in result["error"]
    assert "worker process died" not in run.stderr
    assert server.model_requests() == []


@needs_bwrap
def test_a_tasks_scratch_tmp_is_shared_by_its_commands_and_gone_when_it_ends(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.add_conversation(
        "[scratch]",
        tool("developer__shell", command="echo from-the-first-command > /tmp/notes.txt"),
        tool("developer__shell", command="cat /tmp/notes.txt"),
        Turn(text="Read the notes."),
    )
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t0", "prompt": "[scratch] go"}])

    run = gosling_batch(tasks, tmp_path / "out", server, "--workers", "1")

    assert run.returncode == 0, run.stderr
    result = results(tmp_path / "out")["t0"]
    read = json.dumps(server.model_requests()[-1].body)
    assert "from-the-first-command" in read
    state = Path(os.environ["GOSLING_HOME"]) / "state" / "sessions" / result["session_id"]
    assert not (state / "tmp").exists()


def test_a_data_directory_that_cannot_be_made_stops_the_batch_before_any_task(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    home = tmp_path / "gosling-home"
    home.write_text("a file where the directory should be\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": f"t{n}", "prompt": "[never answered]"} for n in range(3)]
    )

    run = gosling_batch(
        tasks, tmp_path / "out", server, "--workers", "2", env=batch_env(GOSLING_HOME=str(home))
    )

    assert run.returncode == 1
    [error] = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert f"Not a directory: {home})" in error  # the file in the way is named
    assert "Point GOSLING_HOME" in error
    assert not (tmp_path / "out" / "results.jsonl").exists()
    assert server.model_requests() == []


def test_a_task_that_finishes_beside_a_long_one_is_recorded_while_the_long_one_runs(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """With two workers, a task is recorded as soon as it finishes, not once the tasks
    started before it are done: the long task's setup waits for the short task's line in
    results.jsonl, so it finishes only if that line is written while it runs."""
    out = tmp_path / "out"
    server.add_conversation("[long]", Turn(text="Long done."))
    server.add_conversation("[short]", Turn(text="Short done."))
    wait = f"until grep -q short {out / 'results.jsonl'} 2>/dev/null; do sleep 0.05; done"
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            # Its timeout ends the wait if the line never comes: a failed task, not a hang.
            {"id": "long", "prompt": "[long] wait", "setup": wait, "timeout_s": 60},
            {"id": "short", "prompt": "[short] go"},
        ],
    )

    run = gosling_batch(tasks, out, server, "--workers", "2")

    assert run.returncode == 0, run.stderr
    done = results(out)
    assert list(done) == ["short", "long"]
    assert (done["long"]["exit_code"], done["long"]["result"]) == (0, "Long done.")
    assert (done["short"]["exit_code"], done["short"]["result"]) == (0, "Short done.")


def test_what_a_crashing_worker_prints_goes_to_workers_log(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """A worker's own output, outside any task's captured log, goes to logs/workers.log,
    not to the batch's terminal: here the traceback Python's fault handler prints for a
    worker that crashed (SIGSEGV, from its task's setup the first time), which the user
    looks for there when the batch says the worker died."""
    flag, outputs = tmp_path / "crashed", tmp_path / "worker-outputs"
    server.add_conversation("[crash]", Turn(text="Survived."))
    # $PPID: the worker. Where its stdout and stderr point, then the crash the first time.
    setup = (
        f"readlink /proc/$PPID/fd/1 /proc/$PPID/fd/2 >> {outputs}; "
        f"test -e {flag} || {{ touch {flag}; kill -SEGV $PPID; }}"
    )
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "crash", "prompt": "[crash] go", "setup": setup}]
    )
    out = tmp_path / "out"

    run = gosling_batch(tasks, out, server, "--workers", "1", env=batch_env(PYTHONFAULTHANDLER="1"))

    assert run.returncode == 0, run.stderr
    assert "crash: worker process died" in run.stderr and "killed by SIGSEGV" in run.stderr
    crash = results(out)["crash"]
    assert (crash["exit_code"], crash["result"], crash["attempts"]) == (0, "Survived.", 2)
    log = (out / "logs" / "workers.log").read_text()
    assert "Fatal Python error: Segmentation fault" in log
    assert "Fatal Python error" not in run.stderr
    # The first worker's and its replacement's own output: never mixed into the batch's.
    pointed = outputs.read_text().split()
    assert len(pointed) == 4 and set(pointed) == {str((out / "logs" / "workers.log").resolve())}


def test_a_worker_killed_by_a_hangup_is_reported_as_killed_by_sighup(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    flag = tmp_path / "hung-up"
    server.add_conversation("[hup]", Turn(text="Survived."))
    setup = f"test -e {flag} || {{ touch {flag}; kill -HUP $PPID; }}"  # $PPID: the worker
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "hup", "prompt": "[hup] go", "setup": setup}]
    )

    # As from a terminal: under nohup (or a CI runner that ignores it) the workers inherit
    # an ignored SIGHUP and are never hung up.
    hangups = ["env", "--default-signal=HUP"]
    run = gosling_batch(tasks, tmp_path / "out", server, "--workers", "1", launcher=hangups)

    assert run.returncode == 0, run.stderr
    assert "hup: worker process died" in run.stderr and "killed by SIGHUP" in run.stderr
    assert results(tmp_path / "out")["hup"]["attempts"] == 2


@pytest.mark.parametrize("status", [0, 3])
def test_a_worker_that_exits_by_itself_is_named_by_its_exit_status(status: int) -> None:
    """Code in a task that calls sys.exit() ends its worker with a status, not a signal; the
    batch names it (and goes on) instead of failing to name a signal 0."""
    worker = multiprocessing.get_context("spawn").Process(target=sys.exit, args=(status,))
    worker.start()
    worker.join(60)

    assert describe_exit(worker) == f"pid {worker.pid}, exit code {status}"


def test_closing_the_pool_lets_its_workers_end_by_themselves(tmp_path: Path) -> None:
    """Closing hangs up on every worker first, and nothing in a worker (its watch on the
    driver included) keeps it from ending then; a worker the pool had to wait out and kill
    would add its grace to the end of every batch."""
    pool = LocalPool(2, tmp_path / "logs", [None])
    for n in range(2):  # fail in their setup: no model needed, and each worker stays up
        pool.submit(Job(TaskSpec(id=f"t{n}", prompt="p", setup="exit 3"), str(tmp_path / "w")))
    finished: list[object] = []
    while len(finished) < 2:
        finished += pool.poll(60)
    workers = [worker.process for worker in pool._workers]

    pool.close()

    assert len(workers) == 2 and [w.exitcode for w in workers] == [0, 0]
