"""SIGKILL `gosling run` again and again and resume the session each time, against a fake
server that reuses the tool call id `call_0` (issue 18); every request must stay valid.

    python -m bench.sigkill_resume [--kills 60] [--seed 7]

Not a timing figure, so not a `bench_<area>` module: it prints the kills, resumes, requests
checked and invalid requests as JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict
from pathlib import Path

from tests.agent.kill_resume import kill_and_resume


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = kill_and_resume(args.kills, args.seed, Path(tmp))
    print(json.dumps(asdict(report) | {"invalid_requests": len(report.invalid)}, indent=2))


if __name__ == "__main__":
    main()
