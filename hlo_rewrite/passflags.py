"""The command line's per-pass flags and ``--list-passes``, generated from the pass registry.

Every usable pass (built-in or plugin) gets a toggle ``--X/--no-X`` (``X`` is the pass's
``toggle`` stem, else its name) that adds it to or removes it from the pass list, and every
option a pass declares becomes one typed flag (``OptionInfo.flag``: ``--send-recv-target`` for
a built-in pass, ``--<pass>-<option>`` for a plugin's). Nothing here names a pass: a new pass,
or an installed plugin, brings its flags with it. ``docs/cli.md`` holds :func:`flags_table`
between generated-block markers, and a test keeps it equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import click

from .passes import DEFAULT_PIPELINE, OptionInfo, PassInfo, pass_infos

_CLICK_TYPES: dict[type, Any] = {int: click.INT, float: click.FLOAT, str: click.STRING}


class PassFlags(NamedTuple):
    """The generated flags: click parameters, and what each parameter stands for."""

    params: tuple[click.Option, ...]
    #: parameter name -> pass name, for the ``--X/--no-X`` toggles
    toggles: Mapping[str, str]
    #: parameter name -> the pass option it sets
    options: Mapping[str, OptionInfo]

    def pass_options(self, values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """``PassOptions.per_pass`` from the parsed values of the option flags."""
        per_pass: dict[str, dict[str, Any]] = {}
        for param, info in self.options.items():
            per_pass.setdefault(info.pass_name, {})[info.name] = values[param]
        return per_pass


def _not_empty(_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise click.BadParameter("is empty; give a value, or leave the option out for its default")
    return value


def _param_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def build_flags(infos: Iterable[PassInfo], taken: Iterable[str] = ()) -> PassFlags:
    """Flags for the usable passes among ``infos``; a flag whose spelling is already ``taken``
    (by another option of the command) is left out rather than shadowing it."""
    used = set(taken)
    params: list[click.Option] = []
    toggles: dict[str, str] = {}
    options: dict[str, OptionInfo] = {}
    usable = [i for i in infos if i.usable]
    for info in usable:
        stem = info.toggle or info.name
        on, off = f"--{stem}", f"--no-{stem}"
        if on in used or off in used:
            continue
        used.update((on, off))
        name = _param_name(on)
        toggles[name] = info.name
        where = "; an added pass takes its place in the default order" if info.default else ""
        params.append(click.Option([f"{on}/{off}", name], default=None,
                                   help=f"Add (or remove) {info.name} in the pass list{where}."))
    for info in usable:
        for opt in info.options:
            if opt.flag in used:
                continue
            used.add(opt.flag)
            name = _param_name(opt.flag)
            options[name] = opt
            help_text = opt.help if info.builtin else f"{opt.help} ({info.name})"
            if opt.type is bool:
                decls = [opt.flag if not opt.default else f"{opt.flag}/--no-{opt.flag[2:]}", name]
                params.append(click.Option(decls, is_flag=True, default=opt.default, help=help_text))
            else:
                params.append(click.Option([opt.flag, name], type=_CLICK_TYPES[opt.type], default=opt.default,
                                           metavar=opt.metavar or opt.name.upper(), show_default=True,
                                           callback=_not_empty, help=help_text))
    return PassFlags(tuple(params), toggles, options)


def apply_toggles(names: Sequence[str], toggles: Mapping[str, bool | None],
                  flags: Mapping[str, str]) -> list[str]:
    """Apply ``--[no-]X`` toggles (parameter name -> value) to a pass list; ``flags`` maps each
    parameter name to its pass.

    ``False`` removes the pass. ``True`` adds it if missing, at the place the default pipeline
    gives it: before the first listed pass that the default pipeline runs after it (else, and
    for a pass outside the default pipeline, at the end). ``None`` leaves the list alone.
    """
    out = list(names)
    order = {n: i for i, n in enumerate(DEFAULT_PIPELINE)}
    for key, pass_name in flags.items():
        want = toggles.get(key)
        if want is False:
            out = [n for n in out if n != pass_name]
        elif want is True and pass_name not in out:
            pos = len(out)
            if pass_name in order:
                for i, n in enumerate(out):
                    if n in order and order[n] > order[pass_name]:
                        pos = i
                        break
            out.insert(pos, pass_name)
    return out


def describe_passes(infos: Sequence[PassInfo] | None = None) -> str:
    """The ``--list-passes`` text: every registered pass with its description, where a plugin
    comes from, its flags, and the default order."""
    infos = pass_infos() if infos is None else infos
    width = max([len(i.name) for i in infos] + [4])
    lines = ["passes (* = in the default pipeline):"]
    for info in infos:
        mark = "*" if info.default else " "
        lines.append(f"  {mark} {info.name:<{width}}  {info.description}")
        if not info.builtin:
            lines.append(f"    {'':<{width}}  from {info.origin}")
        for opt in info.options:
            flag = opt.flag if opt.type is bool else f"{opt.flag} {opt.metavar or opt.name.upper()}"
            lines.append(f"    {'':<{width}}  {flag}: {opt.help}")
    lines.append("")
    lines.append("default order (* above): " + ",".join(DEFAULT_PIPELINE))
    return "\n".join(lines) + "\n"


def flags_table(flags: PassFlags) -> str:
    """The Markdown table of the generated flags, as ``docs/cli.md`` shows it."""
    rows = ["| flag | pass | what it does |", "|---|---|---|"]
    by_param = {p.name: p for p in flags.params}
    for param, pass_name in flags.toggles.items():
        opt = by_param[param]
        rows.append(f"| `{opt.opts[0]}` / `{opt.secondary_opts[0]}` | `{pass_name}` | {opt.help} |")
    for param, info in flags.options.items():
        opt = by_param[param]
        flag = f"`{info.flag}`" if info.type is bool else f"`{info.flag} {opt.metavar}`"
        default = "" if info.type is bool else f" (default `{info.default}`)"
        rows.append(f"| {flag} | `{info.pass_name}` | {info.help.replace('|', chr(92) + '|')}{default} |")
    return "\n".join(rows) + "\n"
