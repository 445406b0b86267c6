"""The work per input: read, parse (each ``--split-input-file`` chunk on its own), run the
passes, print, and in safe mode check the output.

An input may be any format ``formats/`` reads (gzip, a torch_xla dump, a proto, StableHLO):
:func:`process_data` rewrites each HLO module in it and, when the output is not the plain
text, encodes it as its :class:`Target` says (docs/formats.md).

:func:`process_path` / :func:`process_text` return a :class:`~hlo_rewrite.report.FileResult`
and never raise, so one bad file never stops the others, and they run the same in this process
and in ``--jobs`` worker processes (:func:`iter_results`). Writing the outputs is the command
line's (``outputs.py``); nothing here writes a file.
"""

from __future__ import annotations

import gc
import signal
import time
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import early, formats
from .errors import ExitCode, HloError, HloInternalError, clarified
from .io import check_not_foreign
from .passes import PassOptions, anchor_opcodes
from .pipeline import run_passes
from .printer import Printed, render
from .reader import parse_module
from .reader.parallel import usable_cpus
from .report import ErrorInfo, FileResult, ModuleResult

if TYPE_CHECKING:
    from .pool import Results

#: a UTF-8 byte-order mark: accepted before a module, and kept in its output
BOM = "\ufeff"


class Job(NamedTuple):
    """Everything the per-file work needs; picklable, for worker processes."""

    names: tuple[str, ...]
    options: PassOptions
    strict: bool = False
    safe: bool = False
    split: bool = False
    keep_input: bool = False
    #: processes one module's reading may use (:func:`hlo_rewrite.reader.parse_module`)
    processes: int = 1


class Target(NamedTuple):
    """How one input's output is encoded: a format (``formats.OUTPUT_FORMATS``) asked for
    (``output_format``) or named by the destination (``named_format``: not for a torch_xla
    dump, which stays one), else HLO text (or the torch_xla dump); ``keep_format``: the
    input's own. gzip: ``compress`` (None: as the input). ``encode=False`` when nothing is
    written (``--check``, ``--diff``)."""

    output_format: str | None = None
    named_format: str | None = None
    compress: bool | None = None
    keep_format: bool = False
    encode: bool = True


#: HLO text, gzipped as the input is
DEFAULT_TARGET = Target()


class Input(NamedTuple):
    """One input file: its path, how its output is encoded, and whether it was found in a
    directory (then a file that is not HLO is skipped rather than an error)."""

    path: str
    target: Target = DEFAULT_TARGET
    walked: bool = False


def internal_error(exc: BaseException, filename: str) -> ErrorInfo:
    """An unexpected exception (a bug) as an exit-5 error with its traceback."""
    import traceback

    if isinstance(exc, HloError):
        exc.with_filename(filename)
        text = exc.render().replace(": error: ", ": internal error: ", 1)
        message = exc.message
    else:
        message = f"{type(exc).__name__}: {exc}"
        text = f"{filename}: internal error: {message}"
    return ErrorInfo(
        kind="HloInternalError" if isinstance(exc, HloError) else "InternalError",
        message=message,
        exit_code=ExitCode.INTERNAL,
        rendered=text,
        filename=filename,
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )


def process_module(text: str, name: str, job: Job, index: int = 0, line_offset: int = 0
                   ) -> tuple[Printed | None, ModuleResult]:
    """Parse, rewrite and print one module; returns (output or None, result)."""
    if not gc.isenabled():
        # the command turns automatic collections off (hlo_rewrite.__main__): what the modules
        # read before this one left is collected here, once, before the next is read
        gc.collect()
    result = ModuleResult(index=index, line_offset=line_offset)
    try:
        t0 = time.perf_counter()
        # what the passes look for: ENTRY is built while workers check, if they do and it holds any
        wanted = anchor_opcodes(job.names) if job.processes > 1 and job.names else ()
        module = parse_module(text, name, strict=job.strict, processes=job.processes, build_entry_for=wanted)
        t1 = time.perf_counter()
        result.reports = run_passes(module, job.names, job.options)
        t2 = time.perf_counter()
        out = render(module)
        t3 = time.perf_counter()
        result.seconds = {"parse": t1 - t0, "passes": t2 - t1, "print": t3 - t2}
        if job.safe and not same_text(out, text):
            from .safety import check_output

            check_output(str(out), job.names, job.options, name)
            result.seconds["check"] = time.perf_counter() - t3
        return out, result
    except HloInternalError as exc:
        result.error = internal_error(exc.shifted(line_offset), name)
    except HloError as exc:
        result.error = ErrorInfo.from_hlo_error(clarified(exc.with_filename(name).shifted(line_offset)))
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug: report it, never crash
        result.error = internal_error(exc, name)
    return None, result


def same_text(out: Printed, text: str) -> bool:
    """Whether the printed module is ``text``, byte for byte."""
    return out.is_source() if out.source is text else str(out) == text


def process_text(name: str, path: str, text: str, job: Job) -> FileResult:
    """Rewrite the text of one input (all its chunks with ``job.split``)."""
    res = FileResult(name=name, path=path)
    if job.keep_input:
        res.input_text = text
    bom = text.startswith(BOM)
    original = text
    if bom:  # not part of the module: read without it, written back before it
        text = text[len(BOM):]
    if job.split:
        from .split import split_chunks  # only with --split-input-file

        chunks, separators = split_chunks(text)
    else:
        chunks, separators = None, []
    if chunks is None:  # one module: its output is written a piece at a time
        out, mod = process_module(text, name, job)
        res.modules.append(mod)
        res.errors = [m.error for m in res.modules if m.error is not None]
        if out is not None and not res.errors:
            res.output_text = BOM + str(out) if bom else out
            res.changed = not same_text(out, text)  # (a BOM is written back as it was)
        return res
    outputs: list[str] = []
    for i, chunk in enumerate(chunks):
        if chunk.is_blank and len(chunks) > 1:  # a lone blank input is an error, as without the split
            res.modules.append(ModuleResult(index=i, line_offset=chunk.line_offset, blank=True))
            outputs.append(chunk.text)
            continue
        out, mod = process_module(chunk.text, name, job, i, chunk.line_offset)
        res.modules.append(mod)
        outputs.append(str(out) if out is not None else "")
    res.errors = [m.error for m in res.modules if m.error is not None]
    if not res.errors:
        from .split import join_chunks

        joined = join_chunks(outputs, separators)
        res.output_text = BOM + joined if bom else joined
        res.changed = res.output_text != original
    return res


def process_data(name: str, path: str, data: bytes | None, job: Job, target: Target = DEFAULT_TARGET, *,
                 walked: bool = False) -> FileResult:
    """Rewrite the bytes of one input (read from ``path`` when ``data`` is None), in whatever
    format they are; never raises."""
    res = FileResult(name=name, path=path)
    try:
        # a large HLO text file (read while the command started, when it guessed this input)
        doc = (early.take(path, name) or formats.map_hlo_text(path, name)) if data is None else None
        if doc is None:
            if data is None:
                data = formats.read_bytes(path)
            doc = formats.from_bytes(data, name, fallback=None)
            if doc is None:
                if walked:
                    res.skipped = True
                    return res
                check_not_foreign(formats.contents(data, name), name)  # says what clearly foreign data looks like
                doc = formats.from_bytes(data, name)  # read as HLO text: the reader says what is wrong
        del data  # the document holds what it needs: the text is not held twice
        assert doc is not None
        if doc.format == formats.HLO:
            res = process_text(name, path, doc.text, job)
            if res.errors:
                return res
            assert res.output_text is not None
            outputs: Sequence[str | Printed] = [res.output_text]  # made a string below, only when encoded
        else:
            units = _process_units(doc, res, job)
            if res.errors:
                return res
            res.input_text = doc.text if job.keep_input else None
            res.output_text = doc.rebuild_text(units)
            res.changed = not doc.unchanged(units)
            outputs = units
        if res.changed and doc.format == formats.TORCH_XLA:
            res.changed_parts = [u.label for u, out in zip(doc.units, outputs, strict=True) if out != u.text]
        named = target.named_format if doc.format != formats.TORCH_XLA else None
        fmt = doc.format if target.keep_format else (target.output_format or named
                                                      or formats.default_output_format(doc.format))
        gzip = doc.compressed if target.compress is None else target.compress
        if target.encode and (fmt != formats.default_output_format(doc.format) or gzip):
            res.output_data = doc.encode([str(out) for out in outputs], output_format=fmt, compress=gzip)
    except HloInternalError as exc:
        res.errors.append(internal_error(exc, name))
    except HloError as exc:
        res.errors.append(ErrorInfo.from_hlo_error(exc.with_filename(name)))
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug: report it, never crash
        res.errors.append(internal_error(exc, name))
    return res


def _process_units(doc: formats.Document, res: FileResult, job: Job) -> list[str]:
    """Rewrite each module of a torch_xla dump or converted proto/StableHLO input."""
    outputs: list[str] = []
    for i, unit in enumerate(doc.units):
        out, mod = process_module(unit.text, doc.name, job, i, unit.line_offset)
        res.modules.append(mod)
        outputs.append(str(out) if out is not None else unit.text)
    res.errors = [m.error for m in res.modules if m.error is not None]
    return outputs


def process_path(path: str, job: Job, target: Target = DEFAULT_TARGET, *, walked: bool = False) -> FileResult:
    """Read and rewrite one input file; never raises."""
    return process_data(path, path, None, job, target, walked=walked)


def _worker_signals() -> None:
    """In a worker process: Ctrl-C is the main process's to handle, and SIGTERM (how the main
    process stops its workers) ends the worker at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def iter_results(inputs: Sequence[Input], job: Job, jobs: int, stdin_data: bytes | None
                 ) -> Generator[FileResult, None, None] | _Reported:
    """Results in input order, computed here or in ``jobs`` worker processes (started at
    once). The caller closes the iterator (``contextlib.closing``): closed early (an interrupt,
    a full standard output), the files not done yet are cancelled.
    """
    if stdin_data is not None or jobs <= 1 or len(inputs) <= 1:
        return _here(inputs, job, stdin_data)
    from functools import partial

    from .pool import ordered

    early.drop()  # each file is read whole in a worker process (see process_data)
    results = ordered(partial(_process_input, job), inputs, min(jobs, len(inputs)), _worker_signals)
    return _Reported(inputs, results)


def _here(inputs: Sequence[Input], job: Job, stdin_data: bytes | None) -> Generator[FileResult, None, None]:
    # one file at a time: the reading of a large module may use the other cores
    alone = job._replace(processes=usable_cpus())
    if stdin_data is not None:
        early.drop()  # no file of the command line is read (see process_data)
        yield process_data("<stdin>", "-", stdin_data, alone, inputs[0].target if inputs else DEFAULT_TARGET)
        return
    for i in inputs:
        yield process_path(i.path, alone, i.target, walked=i.walked)


class _Reported:
    """The pool's results, a worker's failure made that file's internal error."""

    def __init__(self, inputs: Sequence[Input], results: Results) -> None:
        self.inputs = iter(inputs)
        self.results = results

    def __iter__(self) -> _Reported:
        return self

    def __next__(self) -> FileResult:
        res = next(self.results)
        i = next(self.inputs)
        if isinstance(res, BaseException):  # a worker died or failed: that file failed, the rest go on
            failed = FileResult(name=i.path, path=i.path)
            failed.errors.append(internal_error(res, i.path))
            return failed
        return res

    def close(self) -> None:
        self.results.close()


def _process_input(job: Job, item: Input) -> FileResult:
    """One input of the command line, in a worker process of ``--jobs``."""
    return process_path(item.path, job, item.target, walked=item.walked)
