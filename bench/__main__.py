"""Run every benchmark, write bench/results.json and print a table.

Each area runs in a fresh interpreter, so one area's warm caches (the tokenizer, imported
modules) never flatter another's cold figures.

python -m bench                 all benchmarks
python -m bench startup tokens  only these areas
python -m bench --corpus DIR    replay the transcripts in DIR (default corpus/transcripts)
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import tempfile
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


_CHILD = """
import importlib, json, sys
result = importlib.import_module(sys.argv[1]).run()
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump(result, out)
"""


def _run_area(area: str) -> Any:
    """`bench.bench_<area>.run()` in a fresh interpreter; its output goes to a temp file so
    that anything the benchmark prints cannot corrupt the result."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "result.json"
        subprocess.run(
            [sys.executable, "-c", _CHILD, f"bench.bench_{area}", str(target)],
            cwd=HERE.parent,
            check=True,
        )
        return json.loads(target.read_text(encoding="utf-8"))


def _options(argv: list[str]) -> tuple[list[str], str | None]:
    """Areas named on the command line, and the `--corpus` directory if given."""
    areas: list[str] = []
    corpus = None
    args = iter(argv)
    for arg in args:
        if arg == "--corpus":
            corpus = next(args, None)
            if corpus is None:
                raise SystemExit("--corpus needs a directory: python -m bench --corpus DIR")
        elif arg.startswith("--corpus="):
            corpus = arg.removeprefix("--corpus=")
        else:
            areas.append(arg)
    return areas, corpus


def main(argv: list[str]) -> int:
    areas, corpus = _options(argv)
    if corpus is not None:
        os.environ["GOSLING_BENCH_CORPUS"] = str(Path(corpus).resolve())
    wanted = areas or _areas()
    unknown = sorted(set(wanted) - set(_areas()))
    if unknown:
        print(
            f"unknown benchmark area(s): {', '.join(unknown)}; choose from {', '.join(_areas())}",
            file=sys.stderr,
        )
        return 2
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "started": started,
        "area_started": {},
    }
    modules = {}
    for area in wanted:
        print(f"[bench] {area} ...", file=sys.stderr, flush=True)
        results["area_started"][area] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        results[area] = _run_area(area)
        modules[area] = importlib.import_module(f"bench.bench_{area}")
    out = HERE / "results.json"
    if areas and out.exists():
        # A partial run replaces only its areas; `started` stays the last full run's, and
        # `area_started` says when each area's figures were taken.
        merged = json.loads(out.read_text())
        merged.setdefault("area_started", {}).update(results["area_started"])
        merged.update({k: v for k, v in results.items() if k not in ("started", "area_started")})
        results = merged
    out.write_text(json.dumps(results, indent=2) + "\n")
    rows: list[tuple[str, str]] = []
    for area in wanted:
        custom = getattr(modules[area], "table_rows", None)
        if custom is not None:
            rows.extend((f"{area}.{name}", value) for name, value in custom(results[area]))
        else:
            _flatten(area, results[area], rows)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"\nwrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
