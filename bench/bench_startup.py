"""Start-up time of `gosling --version` and `--help`, and of the library's `import gosling`,
as ratios to a bare `python -c pass`."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RUNS = 15


def _median_seconds(cmd: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run() -> dict[str, Any]:
    gosling = str(Path(sys.executable).parent / "gosling")
    bare = _median_seconds([sys.executable, "-c", "pass"])
    version = _median_seconds([gosling, "--version"])
    help_ = _median_seconds([gosling, "--help"])
    library = _median_seconds([sys.executable, "-c", "import gosling"])
    return {
        "python_pass_ms": round(bare * 1000, 1),
        "version_ms": round(version * 1000, 1),
        "help_ms": round(help_ * 1000, 1),
        "import_gosling_ms": round(library * 1000, 1),
        "version_ratio": round(version / bare, 2),
        "help_ratio": round(help_ / bare, 2),
        "import_gosling_ratio": round(library / bare, 2),
        "targets": {"version_ratio": 3.0, "help_ratio": 7.0, "import_gosling_ratio": 2.0},
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
