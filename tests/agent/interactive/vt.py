"""A tiny terminal emulator: enough of VT100 to replay what rich's `Live` writes.

Live redraws its region by moving the cursor up and erasing lines, so the raw byte stream
holds every intermediate frame. Replaying it gives the screen the user ends up seeing, which
is what "nothing is printed twice" is about.
"""

from __future__ import annotations

import re

_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


def screen_lines(raw: str) -> list[str]:
    """The lines left on screen (and in the scrollback) after writing `raw`."""
    lines: list[list[str]] = [[]]
    row = col = 0
    position = 0
    while position < len(raw):
        match = _CSI.match(raw, position)
        if match is not None:
            params, command = match.groups()
            count = int(params) if params.isdigit() else 1
            if command == "A":
                row = max(row - count, 0)
            elif command == "B":
                row += count
            elif command == "C":
                col += count
            elif command == "D":
                col = max(col - count, 0)
            elif command == "K":
                line = lines[row]
                del line[0 if params == "2" else col :]
            elif command == "J":
                del lines[row + 1 :]
                del lines[row][col:]
            position = match.end()
            while len(lines) <= row:
                lines.append([])
            continue
        char = raw[position]
        position += 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row += 1
            col = 0
            while len(lines) <= row:
                lines.append([])
        elif char == "\x1b":
            continue
        else:
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = char
            else:
                line.append(char)
            col += 1
    return ["".join(line).rstrip() for line in lines]
