"""Time to load hints for the deepest directory of the cloudflare/agents corpus tree, cold.

Each run copies the corpus to a fresh temp dir (with a `.git` dir, so it is a git root) and
times the first `load_hint_files` call on it (`cold_first_call_ms`, the median;
`cold_first_run_ms` is the very first run of this process). `fresh_process_*` split a fresh
interpreter's `from gosling import hints` (mostly stdlib modules every gosling process loads
anyway) from its first call.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "hints" / "cloudflare-agents"
RUNS = 15
PROCESS_RUNS = 5
TARGET_MS = 20.0

_CHILD = """
import sys, time
start = time.perf_counter()
from gosling import hints
imported = time.perf_counter()
hints.load_hint_files(sys.argv[1], global_dir=sys.argv[2])
done = time.perf_counter()
print((imported - start) * 1000, (done - imported) * 1000)
"""


def _fresh_tree(parent: Path) -> Path:
    tree = parent / "tree"
    shutil.copytree(CORPUS, tree, copy_function=shutil.copyfile)
    for directory in [tree, *tree.rglob("*")]:
        if directory.is_dir():
            directory.chmod(0o755)
    (tree / ".git").mkdir()
    return tree


def _deepest(tree: Path) -> Path:
    dirs = [d for d in tree.rglob("*") if d.is_dir() and ".git" not in d.parts]
    return max(dirs, key=lambda d: (len(d.relative_to(tree).parts), str(d)))


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples), 2)


def run() -> dict[str, Any]:
    from gosling import hints

    first_call: list[float] = []
    with_import: list[float] = []
    process_import: list[float] = []
    process_call: list[float] = []
    tracker: list[float] = []
    deepest_rel = ""
    loaded = 0
    for index in range(RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            tree = _fresh_tree(Path(tmp))
            empty_global = Path(tmp) / "global"
            empty_global.mkdir()
            deepest = _deepest(tree)
            deepest_rel = deepest.relative_to(tree).as_posix()

            start = time.perf_counter()
            text = hints.load_hint_files(deepest, global_dir=empty_global)
            first_call.append((time.perf_counter() - start) * 1000)
            loaded = len(text.encode())

            # Every .gitignore from the root down is compiled once an import must be checked.
            (deepest / "notes.md").write_text("notes", encoding="utf-8")
            (deepest / "AGENTS.md").write_text("@notes.md", encoding="utf-8")
            start = time.perf_counter()
            hints.load_hint_files(deepest, global_dir=empty_global)
            with_import.append((time.perf_counter() - start) * 1000)

            every_dir = [d for d in tree.rglob("*") if d.is_dir() and ".git" not in d.parts]
            start = time.perf_counter()
            subdirs = hints.SubdirectoryHintTracker()
            for directory in every_dir:
                subdirs.record_tool_arguments({"path": str(directory / "x.ts")}, tree)
            subdirs.load_new_hints(tree)
            tracker.append((time.perf_counter() - start) * 1000)

            if index < PROCESS_RUNS:
                (deepest / "AGENTS.md").unlink()
                child = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(deepest), str(empty_global)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                import_ms, call_ms = map(float, child.stdout.split())
                process_import.append(import_ms)
                process_call.append(call_ms)

    return {
        "deepest_dir": deepest_rel,
        "output_bytes": loaded,
        "cold_first_call_ms": _median_ms(first_call),
        "cold_with_import_ms": _median_ms(with_import),
        "cold_first_run_ms": round(first_call[0], 2),
        "fresh_process_import_ms": _median_ms(process_import),
        "fresh_process_call_ms": _median_ms(process_call),
        "tracker_all_dirs_ms": _median_ms(tracker),
        "runs": RUNS,
        "targets": {"cold_first_call_ms": TARGET_MS},
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
