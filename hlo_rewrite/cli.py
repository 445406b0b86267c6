"""The ``hlo-rewrite`` command line (documented in docs/cli.md).

This module is the command's options: it reads them with click, settles them (command line
over ``[tool.hlo-rewrite]``, ``config.py``) and hands them to the run (``command.py``: decide
where outputs go, process each input, write each output in input order, say what happened).
The exit code is the worst one seen (:class:`~hlo_rewrite.errors.ExitCode`). The plain command
lines most runs use are read without loading this module (``plain_args.py``); the run is the
same.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from . import __version__, command, formats
from .config import ConfigError, find_config, search_start
from .errors import ExitCode
from .outputs import UsageProblem
from .passes import DEFAULT_PIPELINE, PassOptions, pass_infos, pass_names
from .passflags import PassFlags, build_flags, describe_passes
from .passflags import apply_toggles as _apply_toggles
from .pipeline import parse_pass_list
from .reporter import ColorChoice, Reporter

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


class _Command(click.Command):
    """The command, with what every run needs whatever happens inside it
    (:func:`hlo_rewrite.command.guard`), also for ``--help``, ``--version``, ``--list-passes``;
    and the raw arguments, for the bug-report line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["hlo_rewrite.argv"] = list(args)
        return super().parse_args(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        def stopped(code: int) -> NoReturn:
            if standalone_mode:
                sys.exit(code)
            raise click.exceptions.Exit(code)

        def run() -> Any:
            return super(_Command, self).main(*args, standalone_mode=standalone_mode, **kwargs)  # type: ignore[call-overload]

        return command.guard(run, standalone=standalone_mode, stopped=stopped)


def console_main(prog_name: str = "hlo-rewrite") -> NoReturn:
    """The ``hlo-rewrite`` console script (and ``python -m hlo_rewrite``): the command, left
    without the interpreter's teardown once it is done (:func:`hlo_rewrite.command.leave`)."""
    try:
        main(prog_name=prog_name)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            command.leave(done.code or 0)
        raise  # a message to print: the usual way
    command.leave(0)


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
    argv = ctx.meta.get("hlo_rewrite.argv", [])
    paths = command.input_paths(params)
    with _usage_errors():
        command.check_usage(params)
    reporter = command.new_reporter(params, argv)
    if not params["no_config"]:
        _apply_config(ctx, params, paths, reporter)
        reporter.color_choice = ColorChoice(params["color"])
    names = apply_toggles(
        params["passes"] if params["passes"] is not None else list(DEFAULT_PIPELINE),
        {key: params[key] for key in FLAGS.toggles},
    )
    options = PassOptions(all_computations=params["all_computations"], per_pass=FLAGS.pass_options(params))
    with _usage_errors():
        prepared = command.prepare(params, names, options)
    ctx.exit(int(command.run(prepared, reporter)))


@contextlib.contextmanager
def _usage_errors() -> Iterator[None]:
    """A usage problem found by the run's checks, as the command line reports one."""
    try:
        yield
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None


def _add_pass_flags(cmd: click.Command) -> PassFlags:
    """Insert the flags generated from the pass registry after ``--passes``."""
    taken = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    flags = build_flags(pass_infos(), taken)
    at = next(i for i, p in enumerate(cmd.params) if p.name == "passes") + 1
    cmd.params[at:at] = list(flags.params)
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


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="hlo-rewrite")
