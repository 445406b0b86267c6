"""Where outputs go, and writing them without ever harming a file (docs/safety.md, "Files").

:func:`plan_outputs` turns the command line's ``-o``/``-i``/``--check``/``--diff`` into an
:class:`OutputPlan` (or a :class:`UsageProblem`); :meth:`OutputPlan.destination` names the
file each input's output goes to; :func:`write_file` writes one; :class:`Stdout` carries HLO
and diffs on standard output.

Writing a file:

- a regular file (new or existing) is written to a temporary file beside it and renamed over
  it, so it is replaced whole or not at all; an existing file keeps its permission bits (and,
  where allowed, its owner and group); a new file gets what ``open()`` gives under the umask;
- a symbolic link is followed: its target is rewritten atomically and the link stays;
- an existing file that is not a regular file (``/dev/null``, a FIFO, a terminal) is opened
  and written through, never replaced;
- an interrupted or failed write removes its temporary file and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from .errors import HloIOError
from .printer import Printed


class OutputMode(enum.Enum):
    """What the command does with each input's output."""

    STDOUT = "stdout"  # the HLO on standard output
    FILE = "file"  # one input, one output file (-o FILE)
    DIR = "dir"  # each output in a directory, named after its input (-o DIR)
    IN_PLACE = "in-place"  # each input rewritten in place (-i), only when it changes
    CHECK = "check"  # nothing written (--check)
    DIFF = "diff"  # a unified diff on standard output (--diff)

    @property
    def writes_files(self) -> bool:
        return self in (OutputMode.FILE, OutputMode.DIR, OutputMode.IN_PLACE)


class UsageProblem(ValueError):
    """The output options do not fit together (a usage error, exit 2)."""


class OutputPlan(NamedTuple):
    """Where each output goes (:func:`plan_outputs`)."""

    mode: OutputMode
    #: the -o file (FILE) or directory (DIR)
    target: str | None = None
    #: DIR: the directory does not exist yet and is created on the first write
    create_dir: bool = False
    #: DIR: each input's output name under ``target`` (a relative path for a file found in a
    #: directory), where it is not the input's base name
    names: Mapping[str, str] = MappingProxyType({})

    def destination(self, path: str) -> str | None:
        """Where the output of input ``path`` goes: a file path, ``-``, or None (``--check``)."""
        if self.mode is OutputMode.CHECK:
            return None
        if self.mode in (OutputMode.STDOUT, OutputMode.DIFF):
            return "-"
        if self.mode is OutputMode.IN_PLACE:
            return path
        assert self.target is not None
        if self.mode is OutputMode.FILE:
            return self.target
        return os.path.join(self.target, *self.names.get(path, os.path.basename(path)).split("/"))

    def files(self, paths: Sequence[str]) -> list[str]:
        """Every file this plan may write for ``paths``."""
        out = []
        for p in paths:
            dest = self.destination(p)
            if dest is not None and dest != "-":
                out.append(dest)
        return out


def plan_outputs(paths: Sequence[str], *, output: str | None, in_place: bool, check: bool,
                 diff: bool, names: Sequence[str] | None = None, from_directory: bool = False) -> OutputPlan:
    """Decide where outputs go; raise :class:`UsageProblem` for options that do not fit.

    ``names`` are the outputs' names under an output directory (default: the inputs' base
    names); ``from_directory`` says a directory was named as input, so ``-o`` names a
    directory (created if missing) even for one file found there.
    """
    if in_place and "-" in paths:
        raise UsageProblem("-i/--in-place needs input files, not standard input")
    if in_place and output is not None:
        raise UsageProblem("-i/--in-place and -o/--output exclude each other")
    if (check or diff) and (in_place or output is not None):
        raise UsageProblem("--check and --diff write no files; drop -i/-o")
    if diff:
        return OutputPlan(OutputMode.DIFF)
    if check:
        return OutputPlan(OutputMode.CHECK)
    if in_place:
        return OutputPlan(OutputMode.IN_PLACE)
    if output is None or output == "-":
        return OutputPlan(OutputMode.STDOUT)
    is_dir = os.path.isdir(output)
    names_dir = output.endswith(("/", os.sep)) or from_directory
    if len(paths) > 1 or is_dir or names_dir:
        if paths == ["-"]:
            raise UsageProblem(f"-o {output}: standard input needs an output file, not a directory")
        if os.path.exists(output) and not is_dir:
            raise UsageProblem(f"-o {output}: with several inputs -o names a directory, and this is a file")
        if not is_dir and not names_dir:
            raise UsageProblem(
                f"-o {output}: with several inputs -o names an existing directory "
                f"(write '{output}/' to have it created)"
            )
        outnames = list(names) if names is not None else [os.path.basename(p) for p in paths]
        dups = sorted({b for b in outnames if outnames.count(b) > 1})
        if dups:
            raise UsageProblem(f"-o {output}: several inputs have the same name: {', '.join(dups)}")
        renamed = {p: n for p, n in zip(paths, outnames, strict=True) if n != os.path.basename(p)}
        return OutputPlan(OutputMode.DIR, output, create_dir=not is_dir, names=renamed)
    return OutputPlan(OutputMode.FILE, output)


def same_file(a: str, b: str) -> bool:
    """Do the paths ``a`` and ``b`` name the same regular file (through links, ``..``, hard
    links)? A device such as /dev/null can take several outputs, so it is never the same."""
    if a == "-" or b == "-":
        return False
    try:
        sa, sb = os.stat(a), os.stat(b)
        if not (stat.S_ISREG(sa.st_mode) and stat.S_ISREG(sb.st_mode)):
            return False
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


# --------------------------------------------------------------------------- writing files


#: characters encoded and written at a time, so a big output is never held twice (as text and
#: as bytes) in memory; small enough that each piece's bytes reuse the memory the last one freed
#: (a megabyte at a time took fresh pages from the system for every piece: writing a 10 MB
#: module took 14.8 ms against 12.6 ms now, medians of 14 alternations)
_PIECE = 1 << 16


def _pieces(text: str | Printed) -> Iterator[bytes]:
    if isinstance(text, Printed):  # a printed module: its stretches, never joined
        for piece in text.pieces(_PIECE):
            yield piece.encode("utf-8")
        return
    for start in range(0, max(len(text), 1), _PIECE):
        yield text[start : start + _PIECE].encode("utf-8")


def _byte_pieces(data: bytes) -> Iterator[memoryview]:
    view = memoryview(data)
    for start in range(0, max(len(data), 1), _PIECE):
        yield view[start : start + _PIECE]


#: bytes after which a regular file's written pages are handed to the disk (see _write_all)
_WRITE_BEHIND = 1 << 20

#: starts the writing back of a file's dirty pages without waiting for it, where there is one
#: (Linux: ``POSIX_FADV_DONTNEED`` starts it and drops only pages already clean, not these)
_start_writeback = getattr(os, "posix_fadvise", None)


def _write_all(fd: int, text: str | bytes | Printed, *, behind: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``fd``. ``behind``: ``fd`` is a regular file that is then
    flushed to disk (``fsync``): each megabyte is handed to the disk as soon as it is written,
    so that the disk writes while the rest is encoded, and the ``fsync`` waits only for the
    last of it (writing and flushing the 10 MB module: 7.7 against 9.8 ms)."""
    written = handed = 0
    for piece in _byte_pieces(text) if isinstance(text, bytes) else _pieces(text):
        view = memoryview(piece)
        while view:
            n = os.write(fd, view)
            view = view[n:]
            written += n
        if behind and written - handed >= _WRITE_BEHIND and _start_writeback is not None:
            try:
                _start_writeback(fd, handed, written - handed, os.POSIX_FADV_DONTNEED)
            except OSError:
                behind = False  # (a file system that will not: the fsync does it all)
            handed = written


_umask: int | None = None


def _new_temporary(directory: str, base: str) -> tuple[int, str]:
    """A new file ``.BASE.XXXXXXXX.tmp`` in ``directory``, created (exclusively, mode 0600) and
    opened for writing, as ``tempfile.mkstemp`` does; ``tempfile`` itself is not imported
    (with ``shutil``, ``random`` and the compression modules it was a tenth of the start-up)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        path = os.path.join(directory, f".{base}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", directory)


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process umask."""
    global _umask
    if _umask is None:
        current = os.umask(0o022)
        os.umask(current)
        _umask = current
    return 0o666 & ~_umask


def _io_error(path: str, exc: OSError, what: str = "cannot write output") -> HloIOError:
    return HloIOError(f"{what}: {exc.strerror or exc}", filename=path)


def ensure_directory(path: str) -> None:
    """Create the output directory ``path`` (and its parents) if missing."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise _io_error(path, exc, "cannot create output directory") from None


def write_file(path: str, text: str | bytes | Printed) -> None:
    """Write ``text`` (UTF-8; or bytes as they are) to ``path`` without harming what is there
    (module docstring)."""
    target = os.path.realpath(path)  # a symbolic link is followed; the link itself stays
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _io_error(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _io_error(path, OSError(errno.EISDIR, os.strerror(errno.EISDIR)))
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_through(path, target, text)
        return
    _replace_atomically(path, target, text, st)


def _write_through(path: str, target: str, text: str | bytes | Printed) -> None:
    """A device, FIFO or the like: open it and write, as ``cat > target`` would."""
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _io_error(path, exc) from None
    try:
        _write_all(fd, text)
    except OSError as exc:
        raise _io_error(path, exc) from None
    finally:
        os.close(fd)


def _replace_atomically(path: str, target: str, text: str | bytes | Printed, st: os.stat_result | None) -> None:
    directory = os.path.dirname(target)
    tmp: str | None = None
    try:
        fd, tmp = _new_temporary(directory, os.path.basename(target))
        try:
            _write_all(fd, text, behind=True)
            if st is None:
                os.fchmod(fd, _new_file_mode())
            else:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
                if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                    with contextlib.suppress(OSError):  # allowed to root only; the mode is kept anyway
                        os.fchown(fd, st.st_uid, st.st_gid)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _io_error(path, exc) from None
    finally:
        if tmp is not None:  # failed or interrupted: the target is as it was
            with contextlib.suppress(OSError):
                os.unlink(tmp)


# --------------------------------------------------------------------------- standard output


class StdoutError(Exception):
    """Standard output cannot be written (full disk, I/O error); the run stops (exit 4)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot write standard output: {exc.strerror or exc}")


def write_stdout_bytes(data: bytes) -> None:
    """Write to standard output's file descriptor; a full disk raises :class:`StdoutError`."""
    try:
        out = sys.stdout.buffer
    except AttributeError:  # a text-only stream (tests)
        sys.stdout.write(data.decode("utf-8"))
        return
    try:
        out.write(data)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc) from None


def flush_stdout() -> None:
    """Flush standard output; a full disk raises :class:`StdoutError`, a closed pipe is quiet."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        silence_stdout()
        raise StdoutError(exc) from None
    except ValueError:  # already closed
        pass


def silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class Stdout:
    """Standard output for HLO and diffs; a closed pipe (``| head``) ends writing quietly."""

    def __init__(self) -> None:
        self.closed = False
        self.count = 0
        self._last = ""

    @property
    def at_line_start(self) -> bool:
        return self._last in ("", "\n")

    def write(self, text: str | Printed) -> None:
        if isinstance(text, Printed):
            for part in text.pieces(_PIECE):
                self.write(part)
            return
        if not text:
            return
        self._last = text[-1]
        if self.closed:
            return
        try:
            for data in _pieces(text):
                write_stdout_bytes(data)
            flush_stdout()
        except BrokenPipeError:
            self.closed = True
            silence_stdout()

    def write_data(self, data: bytes) -> None:
        """Bytes as they are (a proto, gzip: ``--output-format``), for one input only."""
        if not data or self.closed:
            return
        try:
            for piece in _byte_pieces(data):
                write_stdout_bytes(bytes(piece))
            flush_stdout()
        except BrokenPipeError:
            self.closed = True
            silence_stdout()
        self.count += 1

    def write_module(self, text: str | Printed) -> None:
        """One module; several are separated like ``--split-input-file`` chunks."""
        if self.count:
            self.write("// -----\n" if self.at_line_start else "\n// -----\n")
        self.write(text)
        self.count += 1


# --------------------------------------------------------------------------- diffs


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff, labelled ``NAME<tab>(original)`` / ``NAME<tab>(rewritten)`` (``patch -p0`` applies it)."""
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    out = []
    import difflib  # only for --diff

    for line in difflib.unified_diff(a, b, f"{name}\t(original)", f"{name}\t(rewritten)"):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def color_diff(diff: str) -> str:
    """The diff with ANSI colours: headers bold, hunks cyan, additions green, removals red."""
    import click

    out = []
    for line in diff.splitlines(keepends=True):
        body, nl = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if line.startswith(("+++", "---")):
            out.append(click.style(body, bold=True) + nl)
        elif line.startswith("@@"):
            out.append(click.style(body, fg="cyan") + nl)
        elif line.startswith("+"):
            out.append(click.style(body, fg="green") + nl)
        elif line.startswith("-"):
            out.append(click.style(body, fg="red") + nl)
        else:
            out.append(line)
    return "".join(out)
