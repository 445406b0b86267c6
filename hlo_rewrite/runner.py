"""The work per input: read, parse (each ``--split-input-file`` chunk on its own), run the
passes, print, and in safe mode check the output.

:func:`process_path` / :func:`process_text` return a :class:`~hlo_rewrite.report.FileResult`
and never raise, so one bad file never stops the others, and they run the same in this process
and in ``--jobs`` worker processes (:func:`iter_results`). Writing the outputs is the command
line's (``outputs.py``); nothing here writes a file.
"""

from __future__ import annotations

import signal
import time
import traceback
from collections.abc import Generator, Sequence
from dataclasses import dataclass

from .errors import ExitCode, HloError, HloInternalError, clarified
from .io import read_input
from .passes import PassOptions
from .pipeline import run_passes
from .printer import print_module
from .report import ErrorInfo, FileResult, ModuleResult
from .scanner import parse_module
from .split import join_chunks, split_chunks

#: a UTF-8 byte-order mark: accepted before a module, and kept in its output
BOM = "\ufeff"


@dataclass(frozen=True)
class Job:
    """Everything the per-file work needs; picklable, for worker processes."""

    names: tuple[str, ...]
    options: PassOptions
    strict: bool = False
    safe: bool = False
    split: bool = False
    keep_input: bool = False


def internal_error(exc: BaseException, filename: str) -> ErrorInfo:
    """An unexpected exception (a bug) as an exit-5 error with its traceback."""
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


def process_module(text: str, name: str, job: Job, index: int = 0, line_offset: int = 0) -> tuple[str | None, ModuleResult]:
    """Parse, rewrite and print one module; returns (output or None, result)."""
    result = ModuleResult(index=index, line_offset=line_offset)
    try:
        t0 = time.perf_counter()
        module = parse_module(text, name, strict=job.strict)
        t1 = time.perf_counter()
        result.reports = run_passes(module, job.names, job.options)
        t2 = time.perf_counter()
        out = print_module(module)
        t3 = time.perf_counter()
        result.seconds = {"parse": t1 - t0, "passes": t2 - t1, "print": t3 - t2}
        if job.safe and out != text:
            from .safety import check_output

            check_output(out, job.names, job.options, name)
            result.seconds["check"] = time.perf_counter() - t3
        return out, result
    except HloInternalError as exc:
        result.error = internal_error(exc.shifted(line_offset), name)
    except HloError as exc:
        result.error = ErrorInfo.from_hlo_error(clarified(exc.with_filename(name).shifted(line_offset)))
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug: report it, never crash
        result.error = internal_error(exc, name)
    return None, result


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
        chunks, separators = split_chunks(text)
    else:
        chunks, separators = None, []
    outputs: list[str] = []
    if chunks is None:
        out, mod = process_module(text, name, job)
        res.modules.append(mod)
        outputs.append(out if out is not None else "")
    else:
        for i, chunk in enumerate(chunks):
            if chunk.is_blank and len(chunks) > 1:  # a lone blank input is an error, as without the split
                res.modules.append(ModuleResult(index=i, line_offset=chunk.line_offset, blank=True))
                outputs.append(chunk.text)
                continue
            out, mod = process_module(chunk.text, name, job, i, chunk.line_offset)
            res.modules.append(mod)
            outputs.append(out if out is not None else "")
    res.errors = [m.error for m in res.modules if m.error is not None]
    if not res.errors:
        out = outputs[0] if chunks is None else join_chunks(outputs, separators)
        res.output_text = BOM + out if bom else out
        res.changed = res.output_text != original
    return res


def process_path(path: str, job: Job) -> FileResult:
    """Read and rewrite one input file; never raises."""
    try:
        name, text = read_input(path)
    except HloError as exc:
        res = FileResult(name=path, path=path)
        res.errors.append(ErrorInfo.from_hlo_error(exc.with_filename(path)))
        return res
    except Exception as exc:  # noqa: BLE001
        res = FileResult(name=path, path=path)
        res.errors.append(internal_error(exc, path))
        return res
    return process_text(name, path, text, job)



def _ignore_sigint() -> None:
    """In a worker process: Ctrl-C is the main process's to handle (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def iter_results(paths: Sequence[str], job: Job, jobs: int, stdin_text: str | None
                 ) -> Generator[FileResult, None, None]:
    """Results in input order, computed here or in ``jobs`` worker processes.

    Closing the iterator early (an interrupt, a full standard output) cancels the files not
    started yet.
    """
    if stdin_text is not None:
        yield process_text("<stdin>", "-", stdin_text, job)
        return
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            yield process_path(p, job)
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=min(jobs, len(paths)), initializer=_ignore_sigint)
    try:
        futures = [pool.submit(process_path, p, job) for p in paths]
        for p, fut in zip(paths, futures, strict=True):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker died: that file failed, the rest go on
                res = FileResult(name=p, path=p)
                res.errors.append(internal_error(exc, p))
                yield res
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
