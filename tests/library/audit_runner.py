"""Runs one example program while recording, with an audit hook, every file it opens and
every change it attempts to the file system under one directory (`$AUDIT_ROOT`); the
records go as JSON lines to `$AUDIT_LOG`. Usage: python audit_runner.py EXAMPLE.py"""

from __future__ import annotations

import json
import os
import runpy
import sys
from typing import Any

ROOT = os.path.realpath(os.environ["AUDIT_ROOT"])
LOG = open(os.environ["AUDIT_LOG"], "a", encoding="utf-8")  # noqa: SIM115 (open until exit)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CHANGES = {
    "os.mkdir",
    "os.rename",
    "os.replace",
    "os.remove",
    "os.rmdir",
    "os.symlink",
    "os.link",
    "os.chmod",
    "os.chown",
    "os.utime",
    "os.truncate",
    "shutil.rmtree",
    "shutil.copyfile",
}


def _under_root(path: Any) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    try:
        text = os.fsdecode(path)
    except TypeError:
        return None
    full = os.path.realpath(os.path.abspath(text))
    return full if full == ROOT or full.startswith(ROOT + os.sep) else None


def hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and args:
        path = _under_root(args[0])
        if path is None:
            return
        mode, flags = (args[1] if len(args) > 1 else "r") or "r", args[2] if len(args) > 2 else 0
        writes = any(c in str(mode) for c in "wax+") or bool((flags or 0) & WRITE_FLAGS)
        LOG.write(json.dumps({"event": "write" if writes else "read", "path": path}) + "\n")
    elif event in CHANGES and args:
        paths = [p for p in (_under_root(a) for a in args[:2]) if p]
        for path in paths:
            LOG.write(json.dumps({"event": event, "path": path}) + "\n")
    else:
        return
    LOG.flush()


sys.addaudithook(hook)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
