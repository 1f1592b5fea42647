"""Record what a `gosling session` looks like: run one in tmux against the fake server and
save the terminal's text.

    python -m tests.agent.interactive.capture_session [--out docs/session-capture.txt]

Needs `tmux`. The session asks a question (a read-only tool runs unasked in smart_approve
mode), runs a shell command after approval, shows `/context`, compacts, is interrupted with
Ctrl-C while a reply is on its way, is cleared, and ends at the prompt with its status line.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

REPO_ROOT = Path(__file__).resolve().parents[3]
SUMMARY = (
    '<analysis>short</analysis>\n```json\n{"user_intent": ["understand and run hello.py"], '
    '"current_work": "ran hello.py", "files": ["hello.py"]}\n```'
)
ANSWER = (
    "`hello.py` prints a greeting and exits:\n\n"
    "```python\nprint('hello, world')\n```\n\n"
    "Run it with `python hello.py`; it needs **no** dependencies."
)


def turns() -> list[Turn]:
    return [
        Turn(
            text="I'll read it first.",
            tool_calls=[FakeToolCall("developer__view", {"path": "hello.py"})],
            usage=FakeUsage(2_900, 20),
        ),
        Turn(text=ANSWER, usage=FakeUsage(3_200, 48)),
        Turn(
            tool_calls=[
                FakeToolCall("developer__shell", {"command": "python3 hello.py && seq 1 30"})
            ],
            usage=FakeUsage(3_400, 25),
        ),
        Turn(
            text="It printed **hello, world**; the other 30 lines came from `seq`.",
            usage=FakeUsage(3_700, 19),
        ),
        Turn(text=SUMMARY),
        Turn(text="An essay that never arrives", delay=60),
    ]


class Tmux:
    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str) -> str:
        done = subprocess.run(["tmux", *args], capture_output=True, text=True, check=True)
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name, "-S", "-", "-E", "-")

    def wait_for(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{text!r} never showed:\n{self.screen()}")
            time.sleep(0.1)


def capture(out: Path) -> str:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed (apt-get install -y tmux)")
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(turns()) as server:
        repo = Path(tmp) / "demo"
        (repo / ".git").mkdir(parents=True)
        (repo / "AGENTS.md").write_text("Keep answers short.\n")
        (repo / "hello.py").write_text("print('hello, world')\n")
        env = {
            "GOSLING_HOME": str(Path(tmp) / "home"),
            "ANTHROPIC_API_KEY": "test",
            "PYTHONPATH": str(REPO_ROOT),
        }
        command = " ".join(
            [
                "env",
                *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                shlex.quote(sys.executable),
                "-m gosling session --mode smart_approve --provider anthropic",
                f"--model claude-sonnet-4-5 --base-url {server.url}",
            ]
        )
        tmux = Tmux(f"gosling-capture-{os.getpid()}")
        tmux.run("new-session", "-d", "-s", tmux.name, "-x", "100", "-y", "50", "-c", str(repo))
        try:
            tmux.keys(f"clear && {command}", "Enter")
            tmux.wait_for("Ctrl-D: quit\n›")
            tmux.keys("What does hello.py do?", "Enter")
            tmux.wait_for("no dependencies")
            tmux.keys("Run it, and count to 30 while you are at it.", "Enter")
            tmux.wait_for("[a]lways")
            tmux.keys("y")
            tmux.wait_for("came from seq")
            tmux.keys("/context", "Enter")
            tmux.wait_for("/compact now would")
            tmux.keys("/compact keep the file names", "Enter")
            tmux.wait_for("Compaction complete")
            tmux.keys("Now write a long essay about greetings.", "Enter")
            server.wait_for_requests(6)
            tmux.wait_for("thinking")
            tmux.keys("C-c")
            tmux.wait_for("Interrupted")
            tmux.keys("/clear", "Enter")
            tmux.wait_for("Conversation cleared")
            tmux.wait_for("compacts in")
            at_prompt = tmux.screen()
            tmux.keys("/exit", "Enter")
            tmux.wait_for("Continue it with")
            after_exit = tmux.screen()
        finally:
            tmux.run("kill-session", "-t", tmux.name)
    lines = at_prompt.rstrip().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("gosling ·"))
    ending = after_exit.rstrip().splitlines()
    exit_at = max(i for i, line in enumerate(ending) if line.startswith("› /exit"))
    shown = "\n".join(
        [
            *(line.rstrip() for line in lines[start:]),
            "",
            "(the status line above is the prompt's toolbar; then the user types /exit:)",
            *(line.rstrip() for line in ending[exit_at:]),
        ]
    )
    shown += "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(shown)
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "session-capture.txt")
    args = parser.parse_args()
    print(capture(args.out), end="")


if __name__ == "__main__":
    main()
