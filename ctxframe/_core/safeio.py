"""Opening files that may not be what they seem: a FIFO, a device, a directory or a link
loop in place of a store part, a cache file or a source file. Opened without blocking
(`O_NONBLOCK`: a FIFO with no writer answers at once) and refused unless it is a regular
file, so a read never hangs and never reads a device."""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


class NotRegular(OSError):
    """The path is not a regular file (a FIFO, a device, a directory, a socket)."""


def kind(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str) -> int:
    """A read-only descriptor of the regular file at `path` (links followed); NotRegular
    when it is anything else; the OSError of the open (missing, a link loop) as it is. The
    descriptor reads like a normal one (O_NONBLOCK has no effect on a regular file)."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, f"{kind(mode)}, not a regular file", path)
    return fd


def read_regular(path: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most `limit`); NotRegular otherwise."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        want = size if limit is None else min(size, limit)
        chunks, got = [], 0
        while got < want:
            chunk = os.pread(fd, want - got, got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
