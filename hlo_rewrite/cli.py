"""The ``hlo-rewrite`` command line."""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import HloError
from .io import read_input, write_atomic, write_stdout
from .passes import DEFAULT_PIPELINE, PassOptions
from .pipeline import parse_pass_list, run_passes
from .printer import print_module
from .scanner import parse_module


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_path", metavar="IN", default="-")
@click.option("-o", "--output", default="-", show_default=True, help="Write the result to this file ('-' is standard output).")
@click.option("--passes", "passes", default=",".join(DEFAULT_PIPELINE), show_default=True,
              help="Comma-separated passes to run in this order; 'none' only parses and prints.")
@click.option("--all-computations", is_flag=True, help="Let every pass look at all non-fusion computations, not only ENTRY.")
@click.option("--strict", is_flag=True, help="Also read every instruction with the full grammar and check both readings agree.")
@click.version_option(__version__, prog_name="hlo-rewrite")
def main(input_path: str, output: str, passes: str, all_computations: bool, strict: bool) -> None:
    """Rewrite the HLO module in IN (a file, or '-' for standard input)."""
    try:
        names = parse_pass_list(passes)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        name, text = read_input(input_path)
        module = parse_module(text, name, strict=strict)
        run_passes(module, names, PassOptions(all_computations=all_computations))
        out = print_module(module)
        if output == "-":
            write_stdout(out)
        else:
            write_atomic(output, out)
    except HloError as exc:
        click.echo(exc.render(), err=True)
        sys.exit(exc.exit_code)
