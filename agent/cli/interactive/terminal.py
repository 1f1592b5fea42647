"""Where the session reads and writes, so tests can drive it through pipes.

`styled` output (colour, live markdown, spinner) needs a real terminal; with `NO_COLOR`,
`TERM=dumb` or when stdout is not a TTY the session writes plain text as it arrives.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output


def wants_style(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Colour and live rendering only on a terminal that has not opted out."""
    isatty = getattr(stream, "isatty", None)
    return bool(
        isatty is not None
        and isatty()
        and not environ.get("NO_COLOR")
        and environ.get("TERM") != "dumb"
    )


@dataclass
class Terminal:
    out: TextIO
    """Where replies, tool calls and command output go."""
    styled: bool
    width: int | None = None
    """Fixed width for plain output (None: ask the terminal, 100 when it cannot say)."""
    pt_input: Input | None = None
    """prompt_toolkit input (None: the process's stdin)."""
    pt_output: Output | None = None
    """prompt_toolkit output for the prompt itself (None: the process's stdout)."""

    @classmethod
    def from_environment(cls) -> Terminal:
        return cls(sys.stdout, wants_style(sys.stdout, os.environ))
