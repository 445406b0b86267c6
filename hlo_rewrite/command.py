"""A run of the command once its options are settled, without the command line's own modules.

The options come either from click (:mod:`hlo_rewrite.cli`, every command line) or, for the
plain forms most runs use, from :mod:`hlo_rewrite.plain_args`, which does not load click.
Both hand the same options to the same steps here, in the same order: the usage checks that
come before the configuration (:func:`check_usage`), those that come after it
(:func:`prepare`: where outputs go, ``--report``, the passes' options), then the run itself
(:func:`run`: process each input, write each output in input order, say what happened). A
usage problem (exit 2) is a :class:`~hlo_rewrite.outputs.UsageProblem` here, which the command
line reports in its usage format; nothing is read or written before the checks pass.
:func:`guard` is what every run needs whatever happens inside it, and :func:`leave` how it
ends.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn, TypeVar

from . import formats
from .errors import STOP_SIGNALS, ExitCode, HloError, HloIOError, stop_message
from .outputs import (
    OutputMode,
    OutputPlan,
    Stdout,
    StdoutError,
    UsageProblem,
    color_diff,
    ensure_directory,
    flush_stdout,
    plan_outputs,
    same_file,
    silence_stdout,
    unified_diff,
    write_file,
)
from .passes import PassOptions, PluginError, get_pass
from .report import ErrorInfo, FileResult, build_report, report_json, worst_exit_code
from .reporter import ColorChoice, Reporter, isatty, use_color
from .runner import Input, Job, Target, internal_error, iter_results

#: show a progress bar from this many files on (when stderr is a terminal)
PROGRESS_MIN_FILES = 8

T = TypeVar("T")


# --------------------------------------------------------------------------- every run


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM: unwinds the run, removing temporary files, and exits 130 or 143."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def guard(body: Callable[[], T], *, standalone: bool, stopped: Callable[[int], NoReturn]) -> T:
    """``body()``, with what every run needs whatever happens inside it: Ctrl-C and SIGTERM as
    exit 130 and 143 with no file left half-written, and a standard output that cannot be
    written (a full disk) as one line and exit 4. ``stopped(code)`` ends the run in those two
    cases (as a library, by raising), unless ``standalone``, where an interrupt leaves at once."""
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: leave the signals alone
        for stop in STOP_SIGNALS:
            previous[stop] = signal.signal(stop, _interrupt)
    try:
        try:
            return body()
        finally:
            flush_stdout()
    except Interrupted as exc:
        message, code = stop_message(exc.signum)
        sys.stderr.write(message)
        if standalone:
            # every file is closed and every temporary removed by now (the exception came up
            # through their cleanups); leave without the interpreter's shutdown, which joins
            # the threads of a stopped worker pool and can wait for them for ever
            sys.stderr.flush()
            os._exit(int(code))
    except (StdoutError, OSError) as exc:
        silence_stdout()
        message = str(exc) if isinstance(exc, StdoutError) else StdoutError(exc).args[0]
        sys.stderr.write(message + "\n")
        code = ExitCode.IO
    finally:
        for stop, handler in previous.items():
            # run as the command, the outcome is decided: a signal during the interpreter's
            # shutdown (where Python restores the default handlers) would only turn a finished
            # run into one killed by a signal, with no message; as a library, give them back
            signal.signal(stop, signal.SIG_IGN if standalone else handler)
    stopped(int(code))


def leave(code: int) -> NoReturn:
    """End the command with ``code`` once its outcome is decided and every output is written
    and closed: run the ``atexit`` functions and flush the standard streams as the interpreter
    would, then leave without its teardown, which frees every object of the run one by one
    (a tenth of a second after a large module)."""
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is None:  # not CPython: leave the usual way
        sys.exit(code)
    run_exit_functions()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


# --------------------------------------------------------------------------- the steps of a run


def input_paths(params: Mapping[str, Any]) -> list[str]:
    """The inputs the options name: standard input (``-``) when they name none."""
    return list(params["inputs"]) or ["-"]


def check_usage(params: Mapping[str, Any]) -> None:
    """The usage checks that come before the configuration is read."""
    paths = input_paths(params)
    if params["quiet"] and params["verbose"]:
        raise UsageProblem("-q/--quiet and -v/--verbose exclude each other")
    if "-" in paths and len(paths) > 1:
        raise UsageProblem("'-' (standard input) must be the only input")
    if not params["inputs"] and isatty(sys.stdin):
        raise UsageProblem("no input: name an HLO file, or '-' to read standard input from the terminal")


def new_reporter(params: Mapping[str, Any], argv: Sequence[str]) -> Reporter:
    """The run's reporter; ``argv``, the command line's words, for the bug-report line."""
    command = " ".join(["hlo-rewrite"] + [shlex.quote(a) for a in argv])
    return Reporter(quiet=params["quiet"], verbose=params["verbose"], color=ColorChoice(params["color"]),
                    command=command)


class Prepared(NamedTuple):
    """A run whose usage checks have passed: what :func:`run` does."""

    paths: list[str]
    inputs: list[Input]
    plan: OutputPlan
    job: Job
    jobs: int
    names: list[str]
    check: bool
    stats: bool
    report_path: str | None


def prepare(params: Mapping[str, Any], names: Sequence[str], options: PassOptions) -> Prepared:
    """The usage checks that come after the configuration (``params`` holds its values), and
    the run they allow: ``names``, the passes to run, with ``options``."""
    paths = input_paths(params)
    if params["in_place"] and params["output_format"]:
        raise UsageProblem("-i/--in-place keeps each file's format; drop --output-format")
    files, outnames, walked = _expand_directories(paths, params["include"], params["exclude"], params["output"])
    plan = plan_outputs(files, output=params["output"], in_place=params["in_place"],
                        check=params["check"], diff=params["show_diff"], names=outnames,
                        from_directory=bool(walked) or len(files) != len(paths))
    if plan.mode is OutputMode.STDOUT and params["output_format"] == formats.PROTO and len(files) > 1:
        raise UsageProblem("--output-format proto writes one binary module: name one input, or -o DIR")
    inputs = [Input(f, _target(plan, f, params["output_format"]), walked=f in walked) for f in files]
    report_path = params["report_path"]
    if report_path is not None:
        _check_report_path(report_path, files, plan)
    _check_pass_options(names, options)
    job = Job(
        names=tuple(names),
        options=options,
        strict=params["strict"],
        safe=params["safe"],
        split=params["split_input_file"],
        keep_input=plan.mode is OutputMode.DIFF,
    )
    return Prepared(paths, inputs, plan, job, params["jobs"] or os.cpu_count() or 1, list(names),
                    params["check"], params["stats"], report_path)


def run(prepared: Prepared, reporter: Reporter) -> ExitCode:
    """Process every input, deliver each output, say what happened; the run's exit code."""
    plan, job, names = prepared.plan, prepared.job, prepared.names
    results = _run(prepared.inputs, job, prepared.jobs, plan, reporter, check=prepared.check)
    skipped = [r for r in results if r.skipped]
    results = [r for r in results if not r.skipped]
    reporter.skipped(skipped)
    directories = [p for p in prepared.paths if p != "-" and os.path.isdir(p)]
    if directories and not results:
        reporter.warning("no HLO file found in " + ", ".join(directories))

    exit_code = worst_exit_code(r.exit_code for r in results)
    reporter.left_alone(results)
    if prepared.stats:
        reporter.stats(results, names)
    if prepared.report_path is not None:
        settings = {"strict": job.strict, "safe": job.safe, "split_input_file": job.split}
        try:
            write_file(prepared.report_path, report_json(build_report(results, names, job.options, settings, exit_code)))
        except HloIOError as exc:
            reporter.error(ErrorInfo.from_hlo_error(exc))
            exit_code = worst_exit_code([exit_code, ExitCode.IO])
    reporter.summary(results, plan.mode)
    return exit_code


# --------------------------------------------------------------------------- helpers of the steps


def _expand_directories(paths: Sequence[str], include: Sequence[str], exclude: Sequence[str],
                        output: str | None) -> tuple[list[str], list[str], set[str]]:
    """Each directory among ``paths`` replaced by the files of its tree (docs/formats.md).

    Returns the files, each one's output name under an output directory (its path under the
    directory it was found in; under the directory's own name too when there are several
    inputs), and the files found in directories (those that are not HLO are skipped).
    """
    files: list[str] = []
    names: list[str] = []
    walked: set[str] = set()
    skip = [output] if output not in (None, "-") else []
    for p in paths:
        if p == "-" or not os.path.isdir(p):
            files.append(p)
            names.append(os.path.basename(p))
            continue
        prefix = "" if len(paths) == 1 else os.path.basename(os.path.normpath(os.path.abspath(p))) + "/"
        for entry in formats.walk(p, include, exclude, skip=skip):
            files.append(entry.path)
            names.append(prefix + entry.relpath)
            walked.add(entry.path)
    return files, names, walked


def _target(plan: OutputPlan, path: str, output_format: str | None) -> Target:
    """How the output of ``path`` is encoded, from the options and its destination's name."""
    if plan.mode in (OutputMode.CHECK, OutputMode.DIFF):
        return Target(encode=False)
    if plan.mode is OutputMode.IN_PLACE:
        return Target(keep_format=True)
    if plan.mode is OutputMode.STDOUT:
        return Target(output_format=output_format, compress=False)
    dest = plan.destination(path)
    return Target(output_format=output_format, named_format=formats.format_for_destination(dest),
                  compress=formats.wants_gzip(dest))


def _check_pass_options(names: Sequence[str], options: PassOptions) -> None:
    """Build every pass's options before any file is read: a value a pass refuses is a usage error."""
    for name in dict.fromkeys(names):
        try:
            options.for_pass(get_pass(name))
        except PluginError as exc:
            raise UsageProblem(exc.message) from None
        except (ValueError, TypeError) as exc:
            raise UsageProblem(f"pass '{name}': {exc}") from None


def _check_report_path(report_path: str, paths: Sequence[str], plan: OutputPlan) -> None:
    if report_path == "-":
        raise UsageProblem("--report needs a file: standard output carries only HLO")
    for p in paths:
        if same_file(report_path, p):
            raise UsageProblem(f"--report {report_path} is an input; the report would overwrite it")
    for out in plan.files(paths):
        if same_file(report_path, out):
            raise UsageProblem(f"--report {report_path} is also an output")
    if plan.mode in (OutputMode.STDOUT, OutputMode.DIFF) and _is_stdout(report_path):
        raise UsageProblem(f"--report {report_path} is standard output, which carries only HLO")


def _is_stdout(path: str) -> bool:
    try:
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _run(inputs: Sequence[Input], job: Job, jobs: int, plan: OutputPlan, reporter: Reporter, *,
         check: bool) -> list[FileResult]:
    """Process every input and deliver each output in input order; the results, in input order."""
    results: list[FileResult] = []
    writer = _Writer(plan, reporter)
    stdin_data: bytes | None = None
    if [i.path for i in inputs] == ["-"]:
        try:
            stdin_data = formats.read_bytes("-")
        except HloError as exc:
            res = FileResult(name="<stdin>", path="-")
            res.errors.append(ErrorInfo.from_hlo_error(exc.with_filename("<stdin>")))
            writer.handle(res)
            return [res]
    show_progress = not reporter.quiet and len(inputs) >= PROGRESS_MIN_FILES and isatty(sys.stderr)
    with contextlib.closing(iter_results(inputs, job, jobs, stdin_data)) as iterator:
        if not show_progress:
            for res in iterator:
                res.check = check
                results.append(res)
                writer.handle(res)
            return results
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=sys.stderr, no_color=not reporter.color)
        with Progress(TextColumn("hlo-rewrite"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, redirect_stdout=False, redirect_stderr=True, transient=True) as progress:
            task = progress.add_task("files", total=len(inputs))
            for res in iterator:
                res.check = check
                results.append(res)
                writer.handle(res)
                progress.advance(task)
    return results


class _Writer:
    """Delivers each file's output where the plan says, and reports on it."""

    def __init__(self, plan: OutputPlan, reporter: Reporter) -> None:
        self.plan = plan
        self.reporter = reporter
        self.stdout = Stdout()
        self.diff_color = use_color(sys.stdout, reporter.color_choice)
        self._dir_ready = False

    def handle(self, res: FileResult) -> None:
        if res.skipped:
            return
        for err in res.errors:
            self.reporter.error(err)
        if not res.errors:
            try:
                self._deliver(res)
            except HloIOError as exc:
                self._failed(res, ErrorInfo.from_hlo_error(exc))
            except StdoutError:
                raise
            except Exception as exc:  # noqa: BLE001 - a bug while writing: report it, the target stays intact
                self._failed(res, internal_error(exc, res.name))
        self.reporter.file_done(res, self.plan.mode)
        res.output_text = None  # only the reports are needed from now on
        res.input_text = None
        res.output_data = None

    def _failed(self, res: FileResult, info: ErrorInfo) -> None:
        res.errors.append(info)
        self.reporter.error(info)

    def _deliver(self, res: FileResult) -> None:
        text = res.output_text
        assert text is not None
        mode = self.plan.mode
        res.destination = self.plan.destination(res.path)
        if mode is OutputMode.CHECK:
            return
        if mode is OutputMode.DIFF:
            if res.changed:
                assert res.input_text is not None
                diff = unified_diff(res.input_text, str(text), res.name)
                self.stdout.write(color_diff(diff) if self.diff_color else diff)
            return
        if mode is OutputMode.STDOUT:
            if res.output_data is not None:
                self.stdout.write_data(res.output_data)
            else:
                self.stdout.write_module(text)
            res.written = True
            return
        if mode is OutputMode.IN_PLACE and not res.changed:
            return
        if mode is OutputMode.DIR and self.plan.create_dir and not self._dir_ready:
            assert self.plan.target is not None
            ensure_directory(self.plan.target)
            self._dir_ready = True
        assert res.destination is not None
        if mode is OutputMode.DIR:
            ensure_directory(os.path.dirname(res.destination))  # a file found deeper in a tree
        write_file(res.destination, res.output_data if res.output_data is not None else text)
        res.written = True
