"""Run every benchmark, write bench/results.json and print a table.

python -m bench                 all benchmarks
python -m bench startup tokens  only these areas
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _areas() -> list[str]:
    return sorted(
        m.name[len("bench_") :]
        for m in pkgutil.iter_modules([str(HERE)])
        if m.name.startswith("bench_")
    )


def _flatten(prefix: str, value: Any, rows: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, rows)
    elif isinstance(value, float):
        rows.append((prefix, f"{value:.4g}"))
    else:
        rows.append((prefix, str(value)))


def main(argv: list[str]) -> int:
    wanted = argv or _areas()
    unknown = sorted(set(wanted) - set(_areas()))
    if unknown:
        print(
            f"unknown benchmark area(s): {', '.join(unknown)}; choose from {', '.join(_areas())}",
            file=sys.stderr,
        )
        return 2
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    for area in wanted:
        print(f"[bench] {area} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(f"bench.bench_{area}")
        results[area] = module.run()
    out = HERE / "results.json"
    if argv and out.exists():
        merged = json.loads(out.read_text())
        merged.update(results)
        results = merged
    out.write_text(json.dumps(results, indent=2) + "\n")
    rows: list[tuple[str, str]] = []
    for area in wanted:
        _flatten(area, results[area], rows)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"\nwrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
