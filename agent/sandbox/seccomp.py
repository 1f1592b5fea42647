"""A seccomp filter that stops sandboxed processes from opening unix sockets.

Hiding the directories that hold host sockets (`/run`, `$XDG_RUNTIME_DIR`, those found under
`$HOME`) cannot cover them all: a socket directly in `$HOME` or in the workspace, one deeper
than the look goes, one created after the sandbox started. A socket on a visible path accepts
`connect` even through a read-only mount, and behind it may be docker, the user's ssh agent
or a desktop bus. So inside the sandbox `socket(AF_UNIX, ...)` fails with `EPERM`, and so
does `io_uring_setup` (its socket operation would bypass the check). `socketpair` is a
different call and keeps working (asyncio, multiprocessing and pipes between processes use
it), as do TCP/UDP sockets (the network namespace decides those). Abstract unix sockets are
out of reach already: they belong to the network namespace, which the sandbox replaces.

The filter is a classic BPF program, assembled here (no libseccomp), for x86-64 and AArch64
and their 32-bit compat modes (i386 `socketcall` is refused whole: its arguments cannot be
looked at). bubblewrap loads it with `--seccomp FD`; the program is written once to a file
whose name carries its hash, and the command line opens it on fd 3 through `sh`.
"""

from __future__ import annotations

import hashlib
import os
import platform
import struct
from pathlib import Path

SECCOMP_FD = 3

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM = 1
_AF_UNIX = 1
_NR = 0  # offsetof(struct seccomp_data, nr)
_ARCH = 4
_ARG0 = 16  # low 32 bits of args[0] (little-endian)
_X32 = 0x40000000

_ARCHES: dict[str, tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]] = {
    # machine: (audit arch, socket syscalls, syscalls refused whole) per ABI the kernel runs
    "x86_64": (
        (0xC000003E, (41, _X32 | 41), (425, _X32 | 425)),
        (0x40000003, (359,), (102, 425)),  # i386: socket, socketcall, io_uring_setup
    ),
    "aarch64": (
        (0xC00000B7, (198,), (425,)),
        (0x40000028, (281,), (425,)),  # arm (EABI compat)
    ),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (`platform.machine()` by default); None where there is none."""
    abis = _ARCHES.get(machine or platform.machine())
    if abis is None:
        return None
    body: list[bytes] = []
    for arch, sockets, refused in abis:
        checks = [*((nr, "arg") for nr in sockets), *((nr, "deny") for nr in refused)]
        # per ABI: ld arch; jne -> next ABI; ld nr; one jeq per syscall; allow;
        # arg check (ld arg0; jeq AF_UNIX -> deny; allow); deny
        block = len(checks) + 6
        part = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ_K, arch, 0, block), _insn(_LD_W_ABS, _NR)]
        for index, (nr, action) in enumerate(checks):
            after = len(checks) - index - 1  # jeqs left after this one
            target = after + 1 if action == "arg" else after + 3  # to the arg check / deny
            part.append(_insn(_JEQ_K, nr, target, 0))
        part += [
            _insn(_RET_K, _ALLOW),
            _insn(_LD_W_ABS, _ARG0),
            _insn(_JEQ_K, _AF_UNIX, 0, 1),
            _insn(_RET_K, _ERRNO | _EPERM),
            _insn(_RET_K, _ALLOW),
        ]
        assert len(part) == block + 2, "jump offsets are computed from this layout"
        body += part
    body.append(_insn(_RET_K, _ALLOW))  # an ABI this machine does not run
    return b"".join(body)


def filter_file(directory: Path) -> Path | None:
    """The filter written under `directory` (once: the name is the program's hash); None
    when this machine has no filter or the file cannot be written."""
    program = filter_program()
    if program is None:
        return None
    path = directory / f"no-unix-sockets-{hashlib.sha256(program).hexdigest()[:16]}.bpf"
    if path.is_file() and path.read_bytes() == program:
        return path
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(program)
        partial.replace(path)
    except OSError:
        return None
    return path
