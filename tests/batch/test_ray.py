"""`gosling batch --ray ADDRESS` on a real local Ray instance: the same tasks give the same
results as the local pool, a Ray worker killed mid-task has its task retried once, and a
second Ctrl-C cancels the running tasks and keeps the finished ones. `--ray` alone starts
(and stops) its own local instance.

One Ray instance serves the module (starting one takes seconds): offline, no dashboard, no
usage stats, listening on loopback, its files under the test's temp dir, HOME pointed there
too. Marked `ray` (`pytest -m "not ray"` skips it)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.helpers import (
    batch_env,
    blocking_tasks,
    ctrl_c_twice,
    gosling_batch,
    portable,
    results,
    running_batch,
    script_task_set,
    wait_for,
    write_tasks,
)
from tests.fakes import FakeLLMServer, Turn

ray = pytest.importorskip("ray")

pytestmark = [pytest.mark.ray, pytest.mark.timeout(900)]

RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # bind to 127.0.0.1 only
    "RAY_AUTH_MODE": "disabled",  # no token written to ~/.ray
}


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    base = tmp_path_factory.mktemp("ray")
    env = {**RAY_ENV, "HOME": str(base / "home"), "RAY_TMPDIR": str(base)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        context = ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            _temp_dir=str(base / "r"),
        )
        try:
            yield context.address_info["gcs_address"], env
        finally:
            ray.shutdown()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def on_cluster(address: str) -> list[str]:
    """Join the cluster at `address` (so gosling's code is shipped), passing on what the
    tasks need from this environment."""
    forwarded = ("GOSLING_HOME", "GOSLING_TESTING", "ANTHROPIC_API_KEY", "GOSLING_MAX_RETRIES")
    return ["--ray", address, "--cpus-per-task", "0.5"] + [
        arg for name in forwarded for arg in ("--ray-env", name)
    ]


def processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found


def test_ray_without_an_address_starts_a_local_instance_and_stops_it(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    # Its own RAY_TMPDIR: no running instance is found there, so `--ray` must start one.
    server.add_conversation("[local]", Turn(text="Ran on Ray."))
    tasks = [{"id": f"local-{n}", "prompt": f"[local] task {n}"} for n in (1, 2)]
    ray_tmp = Path(tempfile.mkdtemp(prefix="gr"))  # short: Ray's socket paths must fit
    env = {k: v for k, v in batch_env(**RAY_ENV).items() if k != "RAY_ADDRESS"}
    env.update(HOME=str(tmp_path / "home"), RAY_TMPDIR=str(ray_tmp))
    try:
        run = gosling_batch(
            write_tasks(tmp_path / "tasks.jsonl", tasks),
            tmp_path / "out",
            server,
            "--ray",
            "--cpus-per-task",
            "0.5",
            env=env,
        )

        assert run.returncode == 0, run.stderr
        done = results(tmp_path / "out")
        assert {(r["exit_code"], r["result"]) for r in done.values()} == {(0, "Ran on Ray.")}
        assert len(done) == 2
        assert list(ray_tmp.iterdir())  # the instance lived under our RAY_TMPDIR
        deadline = time.monotonic() + 60
        while processes_mentioning(str(ray_tmp)):  # and was stopped with the batch
            assert time.monotonic() < deadline, processes_mentioning(str(ray_tmp))
            time.sleep(0.2)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


def test_a_local_ray_that_cannot_start_is_one_clear_error(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    env = {k: v for k, v in batch_env(**RAY_ENV).items() if k != "RAY_ADDRESS"}
    env.update(HOME=str(tmp_path / "home"), RAY_TMPDIR=str(tmp_path / ("deep" * 30)))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p"}])

    run = gosling_batch(tasks, tmp_path / "out", server, "--ray", env=env)

    assert run.returncode == 1
    assert run.stderr.startswith("error: cannot start or join Ray at a new local instance")
    assert "Traceback" not in run.stderr


def test_second_ctrl_c_on_ray_cancels_running_tasks_and_keeps_finished_ones(
    tmp_path: Path, server: FakeLLMServer, ray_address: tuple[str, dict[str, str]]
) -> None:
    address, ray_env = ray_address
    started, release = blocking_tasks(server, tmp_path)
    out = tmp_path / "out"
    args = on_cluster(address)
    with running_batch(
        tmp_path / "tasks.jsonl", out, server, release, *args, env=batch_env(**ray_env)
    ) as batch:
        wait_for(started, batch)
        deadline = time.monotonic() + 120
        while not (out / "results.jsonl").exists() or len(results(out)) < 2:
            assert batch.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)

        stderr = ctrl_c_twice(batch)

    assert batch.returncode == 130, stderr
    assert "cancelling 1 running task" in stderr
    done = results(out)
    assert sorted(done) == ["later-1", "later-2"]  # `block` was cut short: not a result
    assert all((r["exit_code"], r["result"]) == (0, "Later.") for r in done.values())


def test_ray_and_local_pool_give_the_same_results(
    tmp_path: Path, server: FakeLLMServer, ray_address: tuple[str, dict[str, str]]
) -> None:
    address, ray_env = ray_address
    local_tasks = script_task_set(server, tmp_path, tmp_path / "killed-local")
    local = gosling_batch(
        write_tasks(tmp_path / "local.jsonl", local_tasks), tmp_path / "local", server
    )
    assert local.returncode == 1, local.stderr

    ray_tasks = script_task_set(server, tmp_path, tmp_path / "killed-ray")
    env = batch_env(**ray_env)
    on_ray = gosling_batch(
        write_tasks(tmp_path / "ray.jsonl", ray_tasks),
        tmp_path / "ray",
        server,
        *on_cluster(address),
        env=env,
    )

    assert on_ray.returncode == 1, on_ray.stderr
    local_results, ray_results = results(tmp_path / "local"), results(tmp_path / "ray")
    assert {k: portable(v) for k, v in ray_results.items()} == {
        k: portable(v) for k, v in local_results.items()
    }
    assert ray_results["kill"]["attempts"] == 2
    assert "kill: Ray lost the task" in on_ray.stderr
    assert all(str(tmp_path / "ray" / "work") in r["working_dir"] for r in ray_results.values())


def test_a_sigkilled_driver_on_ray_leaves_no_task_running_and_the_rerun_runs_each_once(
    tmp_path: Path, server: FakeLLMServer, ray_address: tuple[str, dict[str, str]]
) -> None:
    import os
    import signal

    from tests.agent.tools.processes import is_running, wait_until_sync
    from tests.batch.test_exactly_once import host_pid, looping_tasks

    address, env = ray_address
    one, two, release_all = looping_tasks(server, tmp_path)
    out, tasks = tmp_path / "out", tmp_path / "tasks.jsonl"
    batch_args = on_cluster(address)
    env = batch_env(**env)
    with running_batch(tasks, out, server, one / "release", *batch_args, env=env) as batch:
        for task in (one, two):
            wait_for(task / "pid", batch)
        commands = [host_pid(one / "pid"), host_pid(two / "pid")]
        os.kill(batch.pid, signal.SIGKILL)  # the cluster lives on; the job's tasks must not
        try:
            wait_until_sync(lambda: not any(is_running(p) for p in commands), within=90)
        finally:
            for pid in commands:
                if is_running(pid):
                    os.kill(pid, signal.SIGKILL)
    assert not (out / "results.jsonl").exists() or results(out) == {}
    release_all.touch()
    rerun = gosling_batch(tasks, out, server, *batch_args, env=env)
    assert rerun.returncode == 0, rerun.stderr
    done = results(out)
    assert sorted(done) == ["one", "two"]
    assert all(r["result"] == "Released." and r["attempts"] == 1 for r in done.values())
