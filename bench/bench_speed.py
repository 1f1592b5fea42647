"""What every headless run and every step pays (issue 30), for one or two source trees.

`python -m bench.bench_speed [--before REF] [--runs N] [--loop-runs N] [--steps N]`

Figures, each the median of several runs with the 1-minute load average beside it (the
machine is shared):

- `first_request_s`: from starting `gosling run` to the loopback fake server receiving the
  first model request (Anthropic and OpenAI Chat; a fresh `GOSLING_HOME` every run, so the
  state dir is cold as in a batch task or a CI job, and once more with a warm one);
- `exit_s`: from the last byte gosling wrote (stdout or stderr) to the process ending;
- `help_ratio`: `gosling --help` over a bare `python -c pass`;
- `command`: one `developer__shell` command (`true`) through `run_command`, sandbox off and
  on: the whole call, the spawn alone, and the leftovers check (`kill_leftovers`), in a
  process that has loaded what a run loads (both SDKs and the tokenizer: `fork()` copies
  its memory, so a small probe would hide what the old path cost);
- `loop`: a real `gosling run` of `--steps` shell steps (each prints 8 KB, `bench.cost_loop`'s
  outputs, through `cat`), 200k window, the loop `python -m bench cost` prices
  (`bench.wire_loop`, the fake server reporting the usage a provider would): wall time, wall
  time per step, peak RSS of the gosling process, and what the wire carried (bytes, and o200k
  tokens of every text the requests held);
- `split`: the same loop once more with tracing on, and each step's time split from the
  run's own spans into model calls, tool calls and the rest of the turn (pipeline, store,
  events), with the start and exit outside the turn.

`--before REF` measures REF too, from a detached worktree at /tmp/speed-before-<sha> run
with this venv's interpreter and its own `PYTHONPATH` (the bench and the fake server are
always this tree's), interleaved run by run with the current tree so both see the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gosling.providers.prompt_cache import CacheFamily

REPO = Path(__file__).resolve().parents[1]
WINDOW = 200_000
PARTS = ("run", "help", "command", "loop", "split")
"""What `--only` can pick; all of them by default."""


@dataclass(frozen=True)
class Tree:
    label: str
    root: Path

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as in an install
        env.update(
            PYTHONPATH=str(self.root / "src"),
            GOSLING_HOME=str(home),
            ANTHROPIC_API_KEY="bench-key",
            OPENAI_API_KEY="bench-key",
            GOSLING_MAX_RETRIES="0",
            NO_COLOR="1",
        )
        env.update(extra)
        return env


def before_tree(ref: str) -> Tree:
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    root = Path(tempfile.gettempdir()) / f"speed-before-{sha[:12]}"
    if not (root / "src" / "gosling").is_dir():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(root), sha],
            capture_output=True,
            check=True,
        )
    return Tree(f"before ({sha[:10]})", root)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _median(samples: Sequence[dict[str, float]], key: str) -> float:
    return statistics.median(s[key] for s in samples)


# -- one gosling run, timed from outside ---------------------------------------------------------


@dataclass
class TimedRun:
    started: float
    last_output: float
    ended: float
    returncode: int
    stdout: bytes
    stderr: bytes
    maxrss_kib: int


def timed_run(argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> TimedRun:
    """Run `argv`, noting when its last byte of output came and when it ended (`wait4`)."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    chunks: dict[int, list[bytes]] = {1: [], 2: []}
    last = [started]

    def drain(fd: int, stream: Any) -> None:
        while data := os.read(stream.fileno(), 65536):
            last[0] = max(last[0], time.monotonic())
            chunks[fd].append(data)

    readers = [
        threading.Thread(target=drain, args=(1, process.stdout)),
        threading.Thread(target=drain, args=(2, process.stderr)),
    ]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    ended = time.monotonic()
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    process.stderr.close()
    return TimedRun(
        started, last[0], ended, process.returncode, b"".join(chunks[1]), b"".join(chunks[2]),
        usage.ru_maxrss,
    )  # fmt: skip


def _workspace(parent: Path) -> Path:
    work = parent / "work"
    (work / ".git").mkdir(parents=True)
    (work / "README.md").write_text("A project.\n")
    return work


def _gosling(tree: Tree) -> list[str]:
    del tree  # every tree runs on this interpreter; PYTHONPATH picks its sources
    return [sys.executable, "-m", "gosling"]


# -- time to first request and exit --------------------------------------------------------------


def first_request_sample(tree: Tree, provider: str, warm_home: Path | None) -> dict[str, float]:
    from tests.fakes import FakeLLMServer, Turn

    with tempfile.TemporaryDirectory(prefix="speed-") as tmp, FakeLLMServer() as server:
        server.add(Turn(text="Hello from the fake model."))
        home = warm_home or Path(tmp) / "home"
        url = server.url if provider == "anthropic" else server.openai_url
        argv = [*_gosling(tree), "run", "--provider", provider, "--model", "bench-model"]
        argv += ["--context-limit", str(WINDOW), "--base-url", url, "-t", "say hello"]
        load = _load()
        run = timed_run(argv, cwd=_workspace(Path(tmp)), env=tree.env(home))
        if run.returncode != 0:
            raise RuntimeError(f"{tree.label}: gosling run failed: {run.stderr.decode()[-2000:]}")
        (first,) = server.model_requests()
        return {
            "first_request_s": first.received_at - run.started,
            "exit_s": run.ended - run.last_output,
            "total_s": run.ended - run.started,
            "load": load,
        }


# -- --help ------------------------------------------------------------------------------------


def _wall(argv: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def help_sample(tree: Tree, home: Path) -> dict[str, float]:
    env = tree.env(home)
    load = _load()
    bare = _wall([sys.executable, "-c", "pass"], env)
    help_ = _wall([str(Path(sys.executable).parent / "gosling"), "--help"], env)
    return {"bare_s": bare, "help_s": help_, "load": load}


# -- one shell command ---------------------------------------------------------------------------

COMMAND_PROBE = r"""
import asyncio, json, statistics, sys, time
from pathlib import Path
from gosling.agent.sandbox import choose_sandbox, plan_launch, spawn
from gosling.agent.sandbox.launch import release
from gosling.agent.tools.developer.process import run_command, shell_environment

# the size of a real run's process: what fork() copied (and vfork does not) grows with it
import anthropic, openai  # noqa: F401
from gosling.context_mgmt.tokens import TokenCounter
TokenCounter().count_text("warm up the tokenizer")
def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
work = Path(sys.argv[1]); calls = int(sys.argv[2])
async def main():
    out = {"probe_rss_mib": round(rss_mib(), 1)}
    choice = choose_sandbox("workspace-write", workspace=work)
    for name, policy in (("off", None), ("on", choice.policy)):
        if name == "on" and policy is None:
            out[name] = {"skipped": choice.warning}
            continue
        env = shell_environment()
        call, start, reap = [], [], []
        for _ in range(calls):
            t = time.perf_counter()
            result = await run_command("true", cwd=work, timeout=30, sandbox=policy, env=env)
            call.append(time.perf_counter() - t)
            assert result.exit_code == 0, result
        for _ in range(calls):
            launch = plan_launch(["true"], cwd=work, env=env, sandbox=policy)
            t = time.perf_counter()
            process = await spawn(launch)
            start.append(time.perf_counter() - t)
            await release(process)
            t = time.perf_counter()
            try:
                launch.kill_leftovers(process)  # the pid window, where the tree has one
            except TypeError:
                launch.kill_leftovers()
            reap.append(time.perf_counter() - t)
        out[name] = {"call_ms": statistics.median(call) * 1000,
                     "spawn_ms": statistics.median(start) * 1000,
                     "leftovers_ms": statistics.median(reap) * 1000}
    print(json.dumps(out))
asyncio.run(main())
"""


def command_sample(tree: Tree, home: Path, calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="speed-") as tmp:
        work = _workspace(Path(tmp))
        load = _load()
        done = subprocess.run(
            [sys.executable, "-c", COMMAND_PROBE, str(work), str(calls)],
            env=tree.env(home), capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{tree.label}: command probe failed: {done.stderr[-2000:]}")
        result: dict[str, Any] = json.loads(done.stdout)
        result["load"] = load
        return result


# -- the shell loop through a real run -------------------------------------------------------------


def loop_sample(
    tree: Tree, steps: int, provider: str = "anthropic", extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The cost loop of `bench.wire_loop` (the fake server reporting the usage a provider
    would), timed."""
    from bench.wire_loop import run_loop

    family: CacheFamily = "anthropic" if provider == "anthropic" else "openai"
    load = _load()
    loop = run_loop(steps, family, tree=tree, env=extra_env)
    run = loop.timed
    return {
        "wall_s": run.ended - run.started,
        "per_step_ms": (run.ended - run.started) / steps * 1000,
        "peak_rss_mib": run.maxrss_kib / 1024,
        "requests": loop.served,
        "wire_bytes": loop.wire_bytes,
        "wire_text_tokens": loop.wire_text_tokens,
        "load": load,
    }


def split_sample(tree: Tree, steps: int, provider: str = "anthropic") -> dict[str, Any]:
    """Where a loop step's time goes, from the run's own OpenTelemetry trace (sent to the
    loopback OTLP receiver): the model calls (`chat` spans: the SDK building, sending and
    parsing, the fake server answering at once), the tool calls (`execute_tool`: spawn,
    sandbox, wait and the tool's own handling of the output) and the rest of the turn
    (`invoke_agent` minus both: the context pipeline, the store's commits, events and
    output), each per step; plus the run's start and exit outside the turn. Tracing adds
    its own cost, so these come from a separate run from the timed loop."""
    from tests.fakes.otlp_receiver import OtlpReceiver

    with OtlpReceiver("http") as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_TRACES_EXPORTER": "otlp"}
        sample = loop_sample(tree, steps, provider, extra_env=env)
        spans = receiver.spans()

    def total_ms(prefix: str) -> float:
        chosen = [s for s in spans if s.name.startswith(prefix)]
        return sum(s.end_ns - s.start_ns for s in chosen) / 1e6

    turn, chat, tool = total_ms("invoke_agent"), total_ms("chat "), total_ms("execute_tool")
    return {
        "model_call_ms": chat / steps,
        "tool_call_ms": tool / steps,
        "rest_of_turn_ms": (turn - chat - tool) / steps,
        "outside_turn_s": sample["wall_s"] - turn / 1000,
        "traced_per_step_ms": sample["per_step_ms"],
        "spans": len(spans),
        "load": sample["load"],
    }


# -- driver ------------------------------------------------------------------------------------


def _summary(samples: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {k: round(_median(samples, k), 4) for k in keys}
    out["load"] = [s["load"] for s in samples]
    out["runs"] = len(samples)
    return out


def measure(
    trees: Sequence[Tree],
    *,
    runs: int,
    loop_runs: int,
    steps: int,
    calls: int,
    only: Sequence[str] = PARTS,
) -> dict[str, Any]:
    result: dict[str, Any] = {tree.label: {} for tree in trees}
    with tempfile.TemporaryDirectory(prefix="speed-homes-") as homes:
        warm = {tree.label: Path(homes) / tree.label.split()[0] for tree in trees}
        for tree in trees:  # a warm state dir: one run writes its caches
            first_request_sample(tree, "anthropic", warm[tree.label])
        for provider in ("anthropic", "openai") if "run" in only else ():
            for state in ("cold", "warm"):
                samples: dict[str, list[dict[str, float]]] = {t.label: [] for t in trees}
                for _ in range(runs):
                    for tree in trees:
                        home = warm[tree.label] if state == "warm" else None
                        samples[tree.label].append(first_request_sample(tree, provider, home))
                for tree in trees:
                    result[tree.label][f"run_{provider}_{state}"] = _summary(
                        samples[tree.label], ("first_request_s", "exit_s", "total_s")
                    )
        helps: dict[str, list[dict[str, float]]] = {t.label: [] for t in trees}
        for _ in range(max(runs, 9) if "help" in only else 0):
            for tree in trees:
                helps[tree.label].append(help_sample(tree, warm[tree.label]))
        for tree in trees if "help" in only else ():
            figures = _summary(helps[tree.label], ("bare_s", "help_s"))
            figures["help_ratio"] = round(figures["help_s"] / figures["bare_s"], 2)
            result[tree.label]["help"] = figures
        commands: dict[str, list[dict[str, Any]]] = {t.label: [] for t in trees}
        for _ in range(3 if "command" in only else 0):
            for tree in trees:
                commands[tree.label].append(command_sample(tree, warm[tree.label], calls))
        for tree in trees if "command" in only else ():
            figures = {}
            for name in ("off", "on"):
                picked = [s[name] for s in commands[tree.label]]
                if "skipped" in picked[0]:
                    figures[name] = picked[0]
                    continue
                figures[name] = {
                    k: round(statistics.median(p[k] for p in picked), 3)
                    for k in ("call_ms", "spawn_ms", "leftovers_ms")
                }
            figures["probe_rss_mib"] = commands[tree.label][0]["probe_rss_mib"]
            figures["load"] = [s["load"] for s in commands[tree.label]]
            result[tree.label]["command"] = figures
        if loop_runs and "loop" in only:
            loops: dict[str, list[dict[str, Any]]] = {t.label: [] for t in trees}
            for _ in range(loop_runs):
                for tree in trees:
                    loops[tree.label].append(loop_sample(tree, steps))
            for tree in trees:
                picked = loops[tree.label]
                figures = _summary(
                    picked, ("wall_s", "per_step_ms", "peak_rss_mib", "wire_bytes",
                             "wire_text_tokens", "requests"),
                )  # fmt: skip
                figures["steps"] = steps
                result[tree.label]["loop"] = figures
        if loop_runs and "split" in only:
            splits: dict[str, list[dict[str, Any]]] = {t.label: [] for t in trees}
            for _ in range(loop_runs):
                for tree in trees:
                    splits[tree.label].append(split_sample(tree, steps))
            for tree in trees:
                result[tree.label]["split"] = _summary(
                    splits[tree.label],
                    ("model_call_ms", "tool_call_ms", "rest_of_turn_ms", "outside_turn_s",
                     "traced_per_step_ms", "spans"),
                )  # fmt: skip
    return result


def run() -> dict[str, Any]:
    """The `speed` area of `python -m bench`: the current tree only, fewer runs."""
    return measure([Tree("current", REPO)], runs=3, loop_runs=1, steps=300, calls=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_speed", description=__doc__)
    parser.add_argument("--before", help="a git ref to measure too (e.g. main)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--loop-runs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--calls", type=int, default=30, help="commands per command sample")
    parser.add_argument("--only", choices=PARTS, action="append")
    args = parser.parse_args(argv)
    trees = [Tree("current", REPO)]
    if args.before:
        trees.insert(0, before_tree(args.before))
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = measure(
        trees,
        runs=args.runs,
        loop_runs=args.loop_runs,
        steps=args.steps,
        calls=args.calls,
        only=args.only or PARTS,
    )
    print(json.dumps({"started": started, "cpus": os.cpu_count(), **result}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
