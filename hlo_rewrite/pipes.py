"""Messages on the pipes between the command and the processes it forks (the reading's
workers, ``reader/parallel.py``; the workers of ``-j``, ``pool.py``): each message is its
length, then its bytes, so that the reader of a pipe knows when it has one whole without
waiting for the pipe to end, and a message cut short is no message."""

from __future__ import annotations

import os

#: a message starts with its length in this many bytes (little-endian)
LENGTH_BYTES = 8

#: the most a pipe is asked to hold (what Linux lets any process ask for)
PIPE_BYTES = 1 << 20


def send(fd: int, payload: bytes) -> None:
    """Write one message: its length, then ``payload`` (not copied behind the length)."""
    for part in (len(payload).to_bytes(LENGTH_BYTES, "little"), payload):
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


def message_end(pending: bytearray, at: int) -> int:
    """Where the message at offset ``at`` of ``pending`` ends, when it is there whole (its
    bytes are ``pending[at + LENGTH_BYTES : end]``); -1 when it is not, yet."""
    if len(pending) - at < LENGTH_BYTES:
        return -1
    end = at + LENGTH_BYTES + int.from_bytes(pending[at : at + LENGTH_BYTES], "little")
    return end if end <= len(pending) else -1


def grow(fd: int) -> None:
    """Ask for a pipe that holds :data:`PIPE_BYTES`, so that its writer need not wait for its
    reader to send a message of that size (where that cannot be asked: a smaller pipe, and the
    writer waits)."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
