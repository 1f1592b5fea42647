"""`gosling batch --ray ADDRESS` on a real local Ray instance: the same tasks give the same
results as the local pool, and a Ray worker killed mid-task has its task retried once.

One Ray instance serves the module (starting one takes seconds): offline, no dashboard, no
usage stats, listening on loopback, its files under the test's temp dir, HOME pointed there
too. Marked `ray` (`pytest -m "not ray"` skips it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.helpers import (
    batch_env,
    gosling_batch,
    portable,
    results,
    script_task_set,
    write_tasks,
)
from tests.fakes import FakeLLMServer

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
        "--ray",
        address,
        "--cpus-per-task",
        "0.5",
        "--ray-env",
        "GOSLING_HOME",
        "--ray-env",
        "GOSLING_TESTING",
        "--ray-env",
        "ANTHROPIC_API_KEY",
        "--ray-env",
        "GOSLING_MAX_RETRIES",
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
