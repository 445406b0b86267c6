"""The ``hlo-rewrite`` command line (documented in docs/cli.md).

The work per input file is :func:`process_path` / :func:`process_text`: read,
parse (each ``--split-input-file`` chunk on its own), run the passes, print,
and in safe mode check the output. It returns a :class:`FileResult` and never
raises, so one bad file never stops the others, and it runs the same in this
process and in ``--jobs`` worker processes. :func:`main` then writes the
outputs (or diffs, or nothing for ``--check``) in input order and exits with
the worst exit code seen.
"""

from __future__ import annotations

import difflib
import os
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import click

from . import __version__
from .errors import HloError, HloInternalError, HloIOError
from .io import read_input, write_atomic, write_stdout
from .passes import DEFAULT_PIPELINE, REGISTRY, PassOptions, get_pass
from .pipeline import parse_pass_list, run_passes
from .printer import print_module
from .reader import parse_module
from .report import ErrorInfo, FileResult, ModuleResult, build_report, render_stats, report_json, worst_exit_code
from .split import split_chunks

#: exit codes (docs/cli.md, "Exit codes")
EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_USAGE = 2
EXIT_INVALID_INPUT = 3
EXIT_IO = 4
EXIT_INTERNAL = 5

#: show a progress bar from this many files on (when stderr is a terminal)
PROGRESS_MIN_FILES = 8

#: per-pass toggles: option name -> pass name
TOGGLES = {
    "fuse_reduce_scatter": "fuse-reduce-scatter",
    "fuse_send_recv": "fuse-send-recv",
    "convert_collectives": "convert-collectives-to-custom-call",
}

REPORT_HINT = (
    "this is a bug in hlo-rewrite {version}; please report it as an issue and attach the input "
    "file and this command line:\n  {command}"
)


# --------------------------------------------------------------------------- the pass list


def apply_toggles(names: Sequence[str], toggles: dict[str, bool | None]) -> list[str]:
    """Apply ``--[no-]<pass>`` toggles to a pass list.

    ``False`` removes the pass. ``True`` adds it if missing, at the place the
    default pipeline gives it: before the first listed pass that the default
    pipeline runs after it (else at the end). ``None`` leaves the list alone.
    """
    out = list(names)
    order = {n: i for i, n in enumerate(DEFAULT_PIPELINE)}
    for key, pass_name in TOGGLES.items():
        want = toggles.get(key)
        if want is False:
            out = [n for n in out if n != pass_name]
        elif want is True and pass_name not in out:
            pos = len(out)
            for i, n in enumerate(out):
                if n in order and order[n] > order[pass_name]:
                    pos = i
                    break
            out.insert(pos, pass_name)
    return out


def describe_passes() -> str:
    """The ``--list-passes`` text: every registered pass, its description, the default order."""
    width = max(len(n) for n in REGISTRY)
    lines = ["passes:"]
    for name in REGISTRY:
        try:
            description = get_pass(name).description
        except Exception:  # a pass module that does not import (yet)
            description = "(unavailable)"
        mark = "*" if name in DEFAULT_PIPELINE else " "
        lines.append(f"  {mark} {name:<{width}}  {description}")
    lines.append("")
    lines.append("default order (* above): " + ",".join(DEFAULT_PIPELINE))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the work per file


@dataclass(frozen=True)
class Job:
    """Everything the per-file work needs; picklable, for worker processes."""

    names: tuple[str, ...]
    options: PassOptions
    strict: bool = False
    safe: bool = False
    split: bool = False
    keep_input: bool = False


def _internal_error(exc: BaseException, filename: str) -> ErrorInfo:
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
        exit_code=EXIT_INTERNAL,
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
        result.error = _internal_error(exc.shifted(line_offset), name)
    except HloError as exc:
        result.error = ErrorInfo.from_hlo_error(exc.with_filename(name).shifted(line_offset))
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug: report it, never crash
        result.error = _internal_error(exc, name)
    return None, result


def process_text(name: str, path: str, text: str, job: Job) -> FileResult:
    """Rewrite the text of one input (all its chunks with ``job.split``)."""
    res = FileResult(name=name, path=path)
    if job.keep_input:
        res.input_text = text
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
        if chunks is None:
            res.output_text = outputs[0]
        else:
            from .split import join_chunks

            res.output_text = join_chunks(outputs, separators)
        res.changed = res.output_text != text
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
        res.errors.append(_internal_error(exc, path))
        return res
    return process_text(name, path, text, job)


def _iter_results(paths: Sequence[str], job: Job, jobs: int, stdin_text: str | None) -> Iterator[FileResult]:
    """Results in input order, computed here or in ``jobs`` worker processes."""
    if stdin_text is not None:
        yield process_text("<stdin>", "-", stdin_text, job)
        return
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            yield process_path(p, job)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures = [pool.submit(process_path, p, job) for p in paths]
        for p, fut in zip(paths, futures, strict=True):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker died: that file failed, the rest go on
                res = FileResult(name=p, path=p)
                res.errors.append(_internal_error(exc, p))
                yield res


# --------------------------------------------------------------------------- output helpers


def _color_enabled(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _err(message: str, *, color: bool = False) -> None:
    """One message on standard error (``error:`` in red on a colour terminal)."""
    if color:
        for word in (": internal error: ", ": error: "):
            if word in message:
                head, tail = message.split(word, 1)
                message = head + ": " + click.style(word[2:-2] + ":", fg="red", bold=True) + " " + tail
                break
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff, labelled ``NAME<tab>(original)`` / ``NAME<tab>(rewritten)`` (``patch -p0`` applies it)."""
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(a, b, f"{name}\t(original)", f"{name}\t(rewritten)"):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _color_diff(diff: str) -> str:
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


class _Stdout:
    """Standard output for HLO and diffs; a closed pipe (``| head``) ends writing quietly."""

    def __init__(self) -> None:
        self.closed = False
        self.count = 0
        self._last = ""

    @property
    def at_line_start(self) -> bool:
        return self._last in ("", "\n")

    def write(self, text: str) -> None:
        if not text:
            return
        self._last = text[-1]
        if self.closed:
            return
        try:
            write_stdout(text)
        except BrokenPipeError:
            self.closed = True
            try:  # keep the interpreter's final flush from complaining
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError, AttributeError):
                pass


# --------------------------------------------------------------------------- the command

EPILOG = """\b
Exit codes:
  0  success (with --check: nothing would change)
  1  --check: some output would differ from its input
  2  usage error (bad option, unknown pass)
  3  invalid input (parse, verify or pass precondition error)
  4  I/O error (a file could not be read or written)
  5  internal error (a bug in hlo-rewrite; safe-mode mismatch)
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
    try:
        return parse_pass_list(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


class _Command(click.Command):
    """Keeps the raw arguments, so an internal error can show the command to report."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["hlo_rewrite.argv"] = list(args)
        return super().parse_args(ctx, args)


@click.command(
    cls=_Command,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EPILOG,
)
@click.argument("inputs", nargs=-1, metavar="[IN]...")
@click.option("-o", "--output", metavar="PATH",
              help="Write the result to this file ('-', the default, is standard output); with several "
                   "inputs, to this directory (created if missing), each output named after its input.")
@click.option("-i", "--in-place", is_flag=True,
              help="Rewrite each input file in place, atomically, and only if its content changes.")
@click.option("--passes", "passes", metavar="LIST", callback=_parse_passes,
              help="Comma-separated passes to run in this order instead of the default pipeline; "
                   "'none' only parses and prints.")
@click.option("--convert-collectives/--no-convert-collectives", default=None,
              help="Add (or remove) convert-collectives-to-custom-call in the pass list.")
@click.option("--fuse-send-recv/--no-fuse-send-recv", default=None,
              help="Add (or remove) fuse-send-recv in the pass list.")
@click.option("--fuse-reduce-scatter/--no-fuse-reduce-scatter", default=None,
              help="Add (or remove) fuse-reduce-scatter in the pass list; an added pass takes its "
                   "place in the default order.")
@click.option("--list-passes", is_flag=True, expose_value=False, is_eager=True, callback=_list_passes,
              help="Print every pass with a one-line description and the default order, then exit.")
@click.option("--all-computations", is_flag=True,
              help="Let every pass look at all non-fusion computations, not only ENTRY.")
@click.option("--send-recv-target", metavar="NAME", default=PassOptions.send_recv_target, show_default=True,
              help="Use NAME as the custom_call_target of a fused send/recv pair.")
@click.option("--strict-tokens", is_flag=True,
              help="Apply the token-shape checks of Neuron's send/recv fusion and fail on what they reject.")
@click.option("--strict", is_flag=True,
              help="Also read every module with the full grammar (slower; catches more malformed input).")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 if any output would differ from its input.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Write no files; print a unified diff of each input and its output on standard output.")
@click.option("--stats", is_flag=True,
              help="Print a table on standard error: per pass, what matched, was rewritten or left (and why), and time.")
@click.option("--report", "report_path", metavar="FILE",
              help="Write a JSON report to FILE: per file, per pass, per instruction, what was done or why not.")
@click.option("--split-input-file", is_flag=True,
              help="Treat each input as several modules separated by '// -----' lines, and join the "
                   "outputs with the same separators.")
@click.option("--safe/--fast", default=False, show_default=True,
              help="Safe: re-read and verify each changed output and check a second run of the passes "
                   "changes nothing before writing it (costs about one more parse and pass run on files "
                   "that change). Fast: skip that check.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Process this many files in parallel (0: one per CPU); outputs are identical to -j 1.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on standard error but errors.")
@click.option("-v", "--verbose", is_flag=True,
              help="Say what happened to every file, and show a traceback with an internal error.")
@click.version_option(__version__, "--version", prog_name="hlo-rewrite",
                      message="%(prog)s %(version)s")
@click.pass_context
def main(
    ctx: click.Context,
    inputs: tuple[str, ...],
    output: str | None,
    in_place: bool,
    passes: list[str] | None,
    convert_collectives: bool | None,
    fuse_send_recv: bool | None,
    fuse_reduce_scatter: bool | None,
    all_computations: bool,
    send_recv_target: str,
    strict_tokens: bool,
    strict: bool,
    check: bool,
    show_diff: bool,
    stats: bool,
    report_path: str | None,
    split_input_file: bool,
    safe: bool,
    jobs: int,
    quiet: bool,
    verbose: bool,
) -> None:
    """Rewrite XLA HLO modules for AWS Neuron.

    Reads each IN (a file; '-' or no IN reads standard input), runs the passes
    (default: fuse-reduce-scatter, fuse-send-recv,
    convert-collectives-to-custom-call) and writes the HLO text back. Lines no
    pass touches come out byte for byte. Only HLO (or, with --diff, the diff)
    is written on standard output; messages go to standard error.
    """
    paths = list(inputs) or ["-"]
    # ---- usage checks (exit 2)
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other")
    if "-" in paths and len(paths) > 1:
        raise click.UsageError("'-' (standard input) must be the only input")
    if in_place and "-" in paths:
        raise click.UsageError("-i/--in-place needs input files, not standard input")
    if in_place and output is not None:
        raise click.UsageError("-i/--in-place and -o/--output exclude each other")
    if (check or show_diff) and (in_place or output is not None):
        raise click.UsageError("--check and --diff write no files; drop -i/-o")
    if report_path == "-":
        raise click.UsageError("--report needs a file: standard output carries only HLO")
    names = apply_toggles(
        passes if passes is not None else list(DEFAULT_PIPELINE),
        {"convert_collectives": convert_collectives, "fuse_send_recv": fuse_send_recv,
         "fuse_reduce_scatter": fuse_reduce_scatter},
    )
    if jobs == 0:
        jobs = os.cpu_count() or 1

    # ---- where outputs go
    mode = "check" if (check and not show_diff) else "diff" if show_diff else "inplace" if in_place else "stdout"
    out_dir: str | None = None
    if mode == "stdout" and output not in (None, "-"):
        assert output is not None
        if len(paths) > 1 or os.path.isdir(output) or output.endswith(os.sep):
            if paths == ["-"]:
                raise click.UsageError(f"-o {output}: standard input needs an output file, not a directory")
            if os.path.exists(output) and not os.path.isdir(output):
                raise click.UsageError(f"-o {output}: with several inputs -o names a directory, and this is a file")
            basenames = [os.path.basename(p) for p in paths]
            dups = sorted({b for b in basenames if basenames.count(b) > 1})
            if dups:
                raise click.UsageError(f"-o {output}: several inputs have the same name: {', '.join(dups)}")
            out_dir = output
            mode = "dir"
        else:
            mode = "file"

    stdin_text: str | None = None
    stdin_error: ErrorInfo | None = None
    if paths == ["-"]:
        try:
            _name, stdin_text = read_input("-")
        except HloError as exc:
            stdin_error = ErrorInfo.from_hlo_error(exc.with_filename("<stdin>"))

    job = Job(
        names=tuple(names),
        options=PassOptions(all_computations=all_computations, send_recv_target=send_recv_target,
                            strict_tokens=strict_tokens),
        strict=strict,
        safe=safe,
        split=split_input_file,
        keep_input=show_diff,
    )
    err_color = _color_enabled(sys.stderr)
    command = " ".join(["hlo-rewrite"] + [_shell_quote(a) for a in ctx.meta.get("hlo_rewrite.argv", [])])
    stdout = _Stdout()
    results: list[FileResult] = []
    n_changed = 0

    def handle(res: FileResult) -> None:
        nonlocal n_changed
        for err in res.errors:
            _report_error(err, verbose=verbose, color=err_color, command=command)
        if res.errors:
            if verbose:
                _err(f"{res.name}: failed (exit code {res.exit_code}), nothing written")
            return
        assert res.output_text is not None
        if res.changed:
            n_changed += 1
        try:
            _deliver(res, mode, output, out_dir, stdout, check=check, results=results,
                     diff_color=_color_enabled(sys.stdout))
        except HloIOError as exc:
            info = ErrorInfo.from_hlo_error(exc)
            res.errors.append(info)
            _report_error(info, verbose=verbose, color=err_color, command=command)
            return
        except Exception as exc:  # noqa: BLE001 - a bug while writing: report it, the input stays intact
            info = _internal_error(exc, res.name)
            res.errors.append(info)
            _report_error(info, verbose=verbose, color=err_color, command=command)
            return
        if not quiet:
            if mode == "check" and res.changed:
                _err(f"would rewrite {res.name}")
            elif mode == "inplace" and res.changed:
                _err(f"rewrote {res.name}")
            if verbose:
                _err(_file_summary(res))

    if stdin_error is not None:
        res = FileResult(name="<stdin>", path="-")
        res.errors.append(stdin_error)
        results.append(res)
        handle(res)
    else:
        show_progress = (not quiet and len(paths) >= PROGRESS_MIN_FILES and _isatty(sys.stderr))
        iterator = _iter_results(paths, job, jobs, stdin_text)
        if show_progress:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(file=sys.stderr, no_color=not err_color)
            with Progress(TextColumn("hlo-rewrite"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=console, redirect_stdout=False, redirect_stderr=True,
                          transient=True) as progress:
                task = progress.add_task("files", total=len(paths))
                for res in iterator:
                    results.append(res)
                    handle(res)
                    _drop_texts(res)
                    progress.advance(task)
        else:
            for res in iterator:
                results.append(res)
                handle(res)
                _drop_texts(res)

    codes = [r.exit_code for r in results]
    if check and any(r.changed and not r.errors for r in results):
        codes.append(EXIT_CHANGED)
    exit_code = worst_exit_code(codes)

    if stats:
        render_stats(results, names, sys.stderr, color=err_color)
    if report_path is not None:
        settings = {"strict": strict, "safe": safe, "split_input_file": split_input_file}
        try:
            write_atomic(report_path, report_json(build_report(results, names, job.options, settings, exit_code)))
        except HloIOError as exc:
            _err(exc.render(), color=err_color)
            exit_code = worst_exit_code([exit_code, EXIT_IO])
    if verbose or (not quiet and mode in ("check", "inplace") and len(results) > 1):
        _err(_summary(results, mode))
    ctx.exit(exit_code)


# --------------------------------------------------------------------------- helpers of main


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _shell_quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def _drop_texts(res: FileResult) -> None:
    """Free the texts of a handled file (only its reports are needed from now on)."""
    res.output_text = None
    res.input_text = None


def _report_error(err: ErrorInfo, *, verbose: bool, color: bool, command: str) -> None:
    _err(err.rendered, color=color)
    if err.exit_code == EXIT_INTERNAL:
        _err(REPORT_HINT.format(version=__version__, command=command))
        if verbose and err.traceback:
            _err(err.traceback.rstrip("\n"))
        elif err.traceback:
            _err("(run with -v for the traceback)")


def _deliver(res: FileResult, mode: str, output: str | None, out_dir: str | None, stdout: _Stdout, *,
             check: bool, results: list[FileResult], diff_color: bool) -> None:
    """Write one file's output where the options say."""
    text = res.output_text
    assert text is not None
    if mode == "check":
        res.destination = None
    elif mode == "diff":
        res.destination = "-"
        if res.changed:
            assert res.input_text is not None
            diff = unified_diff(res.input_text, text, res.name)
            stdout.write(_color_diff(diff) if diff_color else diff)
    elif mode == "inplace":
        res.destination = res.path
        if res.changed:
            write_atomic(res.path, text)
            res.written = True
    elif mode == "file":
        assert output is not None
        res.destination = output
        write_atomic(output, text)
        res.written = True
    elif mode == "dir":
        assert out_dir is not None
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise HloIOError(f"cannot create output directory: {exc.strerror}", filename=out_dir) from None
        dest = os.path.join(out_dir, os.path.basename(res.path))
        res.destination = dest
        write_atomic(dest, text)
        res.written = True
    else:  # stdout; several inputs are separated like --split-input-file chunks
        res.destination = "-"
        if stdout.count:
            stdout.write("// -----\n" if stdout.at_line_start else "\n// -----\n")
        stdout.write(text)
        stdout.count += 1
        res.written = True


def _file_summary(res: FileResult) -> str:
    rewritten = sum(len(r.rewritten) for m in res.modules for r in m.reports)
    left = sum(len(r.left) for m in res.modules for r in m.reports)
    secs = sum(v for m in res.modules for v in m.seconds.values())
    state = "changed" if res.changed else "unchanged"
    return f"{res.name}: {state}; {rewritten} rewritten, {left} left alone ({secs * 1000:.1f} ms)"


def _summary(results: Sequence[FileResult], mode: str) -> str:
    failed = sum(1 for r in results if r.errors)
    changed = sum(1 for r in results if r.changed and not r.errors)
    same = len(results) - failed - changed

    def files(n: int) -> str:
        return f"{n} file{'s' if n != 1 else ''}"

    if mode == "check":
        parts = [f"{files(changed)} would be rewritten", f"{files(same)} would be left unchanged"]
    elif mode == "inplace":
        parts = [f"{files(changed)} rewritten", f"{files(same)} left unchanged"]
    else:
        parts = [f"{files(changed)} changed", f"{files(same)} unchanged"]
    if failed:
        parts.append(f"{files(failed)} failed")
    return ", ".join(parts) + "."


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="hlo-rewrite")
