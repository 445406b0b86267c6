"""The ``hlo-rewrite`` command line (documented in docs/cli.md).

This module is the command's options and the order of a run: settle the options (command
line over ``[tool.hlo-rewrite]``, ``config.py``), decide where outputs go (``outputs.py``),
process each input (``runner.py``), write each output in input order, and say what happened
(``reporter.py``). The exit code is the worst one seen (:class:`~hlo_rewrite.errors.ExitCode`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from . import __version__, formats
from .config import ConfigError, find_config, search_start
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
from .passes import DEFAULT_PIPELINE, PassOptions, PluginError, get_pass, pass_infos, pass_names
from .passflags import PassFlags, build_flags, describe_passes
from .passflags import apply_toggles as _apply_toggles
from .pipeline import parse_pass_list
from .report import ErrorInfo, FileResult, build_report, report_json, worst_exit_code
from .reporter import ColorChoice, Reporter, isatty, use_color
from .runner import Input, Job, Target, internal_error, iter_results

#: show a progress bar from this many files on (when stderr is a terminal)
PROGRESS_MIN_FILES = 8

#: the options ``[tool.hlo-rewrite]`` may set besides the generated per-pass flags (by parameter name)
CONFIG_OPTIONS = ("passes", "all_computations", "strict", "safe", "split_input_file", "jobs", "color")


# --------------------------------------------------------------------------- the command

EPILOG = "\b\nExit codes:\n" + "".join(f"  {int(c):<3} {c.meaning}\n" for c in ExitCode) + """\
With several inputs the exit code is the worst one seen:
  5 > 4 > 3 > 1 > 0.

\b
Examples:
  hlo-rewrite in.hlo -o out.hlo
  cat in.hlo | hlo-rewrite - | grep AwsNeuron
  hlo-rewrite --check --diff golden/*.hlo
  hlo-rewrite --passes fuse-send-recv -i a.hlo b.hlo
"""


def _list_passes(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(describe_passes(), nl=False)
    ctx.exit(0)


def _parse_passes(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("is empty; name the passes to run, or 'none' to run no pass")
    try:
        return parse_pass_list(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _complete_passes(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    done, _, last = incomplete.rpartition(",")
    prefix = done + "," if done else ""
    return [CompletionItem(prefix + n) for n in [*pass_names(), "none"] if n.startswith(last)]


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM: unwinds the run, removing temporary files, and exits 130 or 143."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


class _Command(click.Command):
    """The command, with what every run needs whatever happens inside it: the raw arguments
    (for the bug-report line), Ctrl-C and SIGTERM as exit 130 and 143 with no file left
    half-written, and a standard output that cannot be written (a full disk) as one line and
    exit 4, also for ``--help``, ``--version``, ``--list-passes``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["hlo_rewrite.argv"] = list(args)
        return super().parse_args(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        previous: dict[signal.Signals, Any] = {}
        with contextlib.suppress(ValueError):  # not the main thread: leave the signals alone
            for stop in STOP_SIGNALS:
                previous[stop] = signal.signal(stop, _interrupt)
        try:
            try:
                return super().main(*args, standalone_mode=standalone_mode, **kwargs)  # type: ignore[call-overload]
            finally:
                flush_stdout()
        except Interrupted as exc:
            message, code = stop_message(exc.signum)
            sys.stderr.write(message)
            if standalone_mode:
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
                signal.signal(stop, signal.SIG_IGN if standalone_mode else handler)
        if standalone_mode:
            sys.exit(int(code))
        raise click.exceptions.Exit(int(code))


def console_main(prog_name: str = "hlo-rewrite") -> NoReturn:
    """The ``hlo-rewrite`` console script (and ``python -m hlo_rewrite``): the command, left
    without the interpreter's teardown once it is done (see :func:`_leave`)."""
    try:
        main(prog_name=prog_name)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            _leave(done.code or 0)
        raise  # a message to print: the usual way
    _leave(0)


def _leave(code: int) -> NoReturn:
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


@click.command(
    cls=_Command,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EPILOG,
)
@click.argument("inputs", nargs=-1, metavar="[IN]...", type=click.Path(allow_dash=True))
@click.option("-o", "--output", metavar="PATH", type=click.Path(allow_dash=True),
              help="Write the result to this file ('-', the default, is standard output); with several "
                   "inputs, into this existing directory (or a path ending in '/', created if missing), "
                   "each output named after its input; with a directory as input, the tree mirrored "
                   "under this directory (created if missing).")
@click.option("-i", "--in-place", is_flag=True,
              help="Rewrite each input file in place, atomically, and only if its content changes; "
                   "each file keeps its format and compression.")
@click.option("--output-format", type=click.Choice(formats.OUTPUT_FORMATS),
              help="Write HLO text, a binary HloModuleProto, its text format, or StableHLO (the last three "
                   "need the [xla] extra). Default: HLO text, or what the output file's name says "
                   "(.pb, .pbtxt, .mlir); see docs/formats.md.")
@click.option("--include", "include", metavar="GLOB", multiple=True,
              help="In a directory, read only the files matching GLOB (a file name, or with '/' a path "
                   "under the directory); repeatable.")
@click.option("--exclude", "exclude", metavar="GLOB", multiple=True,
              help="In a directory, leave out the files matching GLOB; repeatable.")
@click.option("--passes", "passes", metavar="LIST", callback=_parse_passes, shell_complete=_complete_passes,
              help="Comma-separated passes to run in this order instead of the default pipeline; "
                   "'none' only parses and prints.")
@click.option("--list-passes", is_flag=True, expose_value=False, is_eager=True, callback=_list_passes,
              help="Print every pass with a one-line description and the default order, then exit.")
@click.option("--all-computations", is_flag=True,
              help="Let every pass look at all non-fusion computations, not only ENTRY.")
@click.option("--strict", is_flag=True,
              help="Also read every module with the full grammar (slower; catches more malformed input).")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 if any output would differ from its input.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Write no files; print a unified diff of each input and its output on standard output.")
@click.option("--stats", is_flag=True,
              help="Print on standard error, per pass, what matched, was rewritten or left (and why), and time.")
@click.option("--report", "report_path", metavar="FILE", type=click.Path(allow_dash=True),
              help="Write a JSON report to FILE: per file, per pass, per instruction, what was done or why not.")
@click.option("--split-input-file", is_flag=True,
              help="Treat each input as several modules separated by '// -----' lines, and join the "
                   "outputs with the same separators.")
@click.option("--safe/--fast", default=False, show_default=True,
              help="Safe: re-read and verify each changed output and check a second run of the passes "
                   "changes nothing before writing it (costs about one more parse and pass run on files "
                   "that change). Fast: skip that check.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Process this many files in parallel (0: one per CPU); outputs are identical to -j 1. "
                   "One file at a time, a large module is read with every usable CPU.")
@click.option("--color", type=click.Choice([c.value for c in ColorChoice]), default="auto", show_default=True,
              help="Colour diffs, errors and tables: on a terminal (auto; NO_COLOR, FORCE_COLOR and "
                   "TERM=dumb are honoured), always, or never.")
@click.option("--no-config", is_flag=True,
              help="Ignore the [tool.hlo-rewrite] table of the nearest pyproject.toml.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on standard error but errors.")
@click.option("-v", "--verbose", is_flag=True,
              help="Say what happened to every file and which configuration was used, and show a "
                   "traceback with an internal error.")
@click.version_option(__version__, "--version", prog_name="hlo-rewrite",
                      message="%(prog)s %(version)s")
@click.pass_context
def main(ctx: click.Context, **params: Any) -> None:
    """Rewrite XLA HLO modules for AWS Neuron.

    Reads each IN (a file or a directory tree; '-' or no IN reads standard input;
    gzip, torch_xla dumps, protos and StableHLO too: docs/formats.md), runs the passes
    (default: fuse-reduce-scatter, fuse-send-recv,
    convert-collectives-to-custom-call) and writes the HLO text back. Lines no
    pass touches come out byte for byte. Only HLO (or, with --diff, the diff)
    is written on standard output; messages go to standard error.
    """
    paths = list(params["inputs"]) or ["-"]
    quiet, verbose = params["quiet"], params["verbose"]
    # ---- usage checks (exit 2): nothing is read or written before they pass
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other")
    if "-" in paths and len(paths) > 1:
        raise click.UsageError("'-' (standard input) must be the only input")
    if not params["inputs"] and isatty(sys.stdin):
        raise click.UsageError("no input: name an HLO file, or '-' to read standard input from the terminal")
    command = " ".join(["hlo-rewrite"] + [shlex.quote(a) for a in ctx.meta.get("hlo_rewrite.argv", [])])
    reporter = Reporter(quiet=quiet, verbose=verbose, color=ColorChoice(params["color"]), command=command)
    if not params["no_config"]:
        _apply_config(ctx, params, paths, reporter)
        reporter.color_choice = ColorChoice(params["color"])
    if params["in_place"] and params["output_format"]:
        raise click.UsageError("-i/--in-place keeps each file's format; drop --output-format")
    files, outnames, walked = _expand_directories(paths, params["include"], params["exclude"], params["output"])
    try:
        plan = plan_outputs(files, output=params["output"], in_place=params["in_place"],
                            check=params["check"], diff=params["show_diff"], names=outnames,
                            from_directory=bool(walked) or len(files) != len(paths))
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    if plan.mode is OutputMode.STDOUT and params["output_format"] == formats.PROTO and len(files) > 1:
        raise click.UsageError("--output-format proto writes one binary module: name one input, or -o DIR")
    inputs = [Input(f, _target(plan, f, params["output_format"]), walked=f in walked) for f in files]
    report_path = params["report_path"]
    if report_path is not None:
        _check_report_path(report_path, files, plan)
    names = apply_toggles(
        params["passes"] if params["passes"] is not None else list(DEFAULT_PIPELINE),
        {key: params[key] for key in FLAGS.toggles},
    )
    options = PassOptions(all_computations=params["all_computations"], per_pass=FLAGS.pass_options(params))
    _check_pass_options(names, options)
    jobs = params["jobs"] or os.cpu_count() or 1
    job = Job(
        names=tuple(names),
        options=options,
        strict=params["strict"],
        safe=params["safe"],
        split=params["split_input_file"],
        keep_input=plan.mode is OutputMode.DIFF,
    )

    results = _run(inputs, job, jobs, plan, reporter, check=params["check"])
    skipped = [r for r in results if r.skipped]
    results = [r for r in results if not r.skipped]
    reporter.skipped(skipped)
    directories = [p for p in paths if p != "-" and os.path.isdir(p)]
    if directories and not results:
        reporter.warning("no HLO file found in " + ", ".join(directories))

    exit_code = worst_exit_code(r.exit_code for r in results)
    reporter.left_alone(results)
    if params["stats"]:
        reporter.stats(results, names)
    if report_path is not None:
        settings = {"strict": job.strict, "safe": job.safe, "split_input_file": job.split}
        try:
            write_file(report_path, report_json(build_report(results, names, job.options, settings, exit_code)))
        except HloIOError as exc:
            reporter.error(ErrorInfo.from_hlo_error(exc))
            exit_code = worst_exit_code([exit_code, ExitCode.IO])
    reporter.summary(results, plan.mode)
    ctx.exit(int(exit_code))


def _add_pass_flags(command: click.Command) -> PassFlags:
    """Insert the flags generated from the pass registry after ``--passes``."""
    taken = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    flags = build_flags(pass_infos(), taken)
    at = next(i for i, p in enumerate(command.params) if p.name == "passes") + 1
    command.params[at:at] = list(flags.params)
    return flags


#: the per-pass toggles and options of this command, generated from the pass registry
FLAGS = _add_pass_flags(main)


def apply_toggles(names: Sequence[str], toggles: dict[str, bool | None]) -> list[str]:
    """Apply ``--[no-]X`` toggles (parameter name -> value) to a pass list (``passflags.apply_toggles``)."""
    return _apply_toggles(names, toggles, FLAGS.toggles)


# --------------------------------------------------------------------------- helpers of main


def _apply_config(ctx: click.Context, params: dict[str, Any], paths: Sequence[str], reporter: Reporter) -> None:
    """Take the options the command line left at their defaults from ``[tool.hlo-rewrite]``."""
    try:
        config = find_config(search_start(paths))
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    if config is None:
        reporter.detail("configuration: no [tool.hlo-rewrite] table in a pyproject.toml here or above")
        return
    reporter.detail(f"configuration: [tool.hlo-rewrite] in {config.path}")
    by_name = {p.name: p for p in ctx.command.params}
    allowed = [*CONFIG_OPTIONS, *FLAGS.toggles, *FLAGS.options]
    known = ", ".join(n.replace("_", "-") for n in allowed)
    for key, value in config.values.items():
        name = key.replace("-", "_")
        where = f"{config.path}: [tool.hlo-rewrite] {key}"
        if name not in allowed:
            raise click.UsageError(f"{config.path}: [tool.hlo-rewrite] has an unknown key '{key}'; known: {known}")
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            continue  # the command line wins
        param = by_name[name]
        assert isinstance(param, click.Option)
        if name == "passes" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = ",".join(value)
        expected: type = bool if param.is_flag else int if name == "jobs" else str
        if name in FLAGS.options:
            expected = FLAGS.options[name].type
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            kind = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[expected]
            if name == "passes":
                kind = "a list of pass names or a comma-separated string"
            raise click.UsageError(f"{where}: expected {kind}, got {value!r}")
        try:
            converted = param.type_cast_value(ctx, value)
            if param.callback is not None:
                converted = param.callback(ctx, param, converted)
        except click.BadParameter as exc:
            raise click.UsageError(f"{where}: {exc.message}") from None
        params[name] = converted


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
            raise click.UsageError(exc.message) from None
        except (ValueError, TypeError) as exc:
            raise click.UsageError(f"pass '{name}': {exc}") from None


def _check_report_path(report_path: str, paths: Sequence[str], plan: OutputPlan) -> None:
    if report_path == "-":
        raise click.UsageError("--report needs a file: standard output carries only HLO")
    for p in paths:
        if same_file(report_path, p):
            raise click.UsageError(f"--report {report_path} is an input; the report would overwrite it")
    for out in plan.files(paths):
        if same_file(report_path, out):
            raise click.UsageError(f"--report {report_path} is also an output")
    if plan.mode in (OutputMode.STDOUT, OutputMode.DIFF) and _is_stdout(report_path):
        raise click.UsageError(f"--report {report_path} is standard output, which carries only HLO")


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


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="hlo-rewrite")
