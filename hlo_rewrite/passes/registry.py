"""The one registry of passes: the built-in ones and those plugins install.

A built-in pass is one line of :data:`BUILTIN_PASSES`. A plugin registers a
pass through the entry-point group ``hlo_rewrite.passes`` (the entry point's
name is the pass name, its value ``module:Class``). Nothing is imported until
it is needed, so the command line starts fast: pass modules when a pass is
run, described or asked for its anchors; plugin distributions are looked up
only when a name is not a built-in one or every pass is listed.

What the command line, the docs and the reader take from here:
:func:`pass_infos` (``--list-passes``), :func:`all_options` (per-pass flags),
:func:`options_table` (the option table of the docs), :func:`anchor_opcodes`
(the opcodes the reader notes per computation).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import ExitCode, HloError
from .base import OptionInfo, Pass, Scope, option_infos

#: the built-in passes: name -> "module:Class" inside hlo_rewrite.passes (one line each)
BUILTIN_PASSES: dict[str, str] = {
    "fuse-reduce-scatter": "fuse_reduce_scatter:FuseReduceScatter",
    "fuse-send-recv": "fuse_send_recv:FuseSendRecv",
    "convert-collectives-to-custom-call": "convert_collectives:ConvertCollectivesToCustomCall",
    "convert-custom-calls-to-collectives": "convert_custom_calls:ConvertCustomCallsToCollectives",
    "strip-debug-info": "strip_debug_info:StripDebugInfo",
}

#: the default pipeline, in order: fuse first, then convert (docs/passes/README.md)
DEFAULT_PIPELINE: tuple[str, ...] = (
    "fuse-reduce-scatter",
    "fuse-send-recv",
    "convert-collectives-to-custom-call",
)

#: the entry-point group plugins register their passes in
ENTRY_POINT_GROUP = "hlo_rewrite.passes"


class PluginError(HloError):
    """A plugin pass that cannot be used: it does not import, is not a Pass, or
    declares itself wrongly. The command line treats it as a usage error."""

    exit_code = ExitCode.USAGE


def _builtin(ref: str) -> Callable[[], type[Pass]]:
    module_name, _, attr = ref.partition(":")

    def load() -> type[Pass]:
        cls: type[Pass] = getattr(importlib.import_module(f"{__package__}.{module_name}"), attr)
        return cls

    return load


#: name -> a function importing and returning the pass class, built-in passes only
REGISTRY: dict[str, Callable[[], type[Pass]]] = {name: _builtin(ref) for name, ref in BUILTIN_PASSES.items()}


# ----------------------------------------------------------------------- plugins
class _Plugin(NamedTuple):
    name: str
    value: str  # "module:Class"
    distribution: str
    version: str
    load: Callable[[], Any]
    problem: str | None = None  # why it is not usable, when known before loading

    @property
    def origin(self) -> str:
        return f"plugin {self.distribution} {self.version} ({self.value})"


def _group_may_be_declared() -> bool:
    """Whether a distribution on ``sys.path`` may declare the entry-point group: a look at the
    ``entry_points.txt`` of each ``*.dist-info`` and ``*.egg-info`` in each directory on the path,
    where ``importlib.metadata`` finds them. Importing that module and reading every
    distribution's metadata is about a tenth of a second of the command's start-up; most
    installs have no plugin. A path entry that is not a directory (a zip) answers yes."""
    marker = f"[{ENTRY_POINT_GROUP}]"
    for entry in sys.path:
        path = entry or "."
        try:
            names = os.listdir(path)
        except NotADirectoryError:
            return True  # a zip or other archive: importlib.metadata knows how to look inside
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(path, name, "entry_points.txt"), encoding="utf-8") as fh:
                        if marker in fh.read():
                            return True
                except OSError:
                    continue
    return False


@functools.cache
def _plugins() -> dict[str, _Plugin]:
    found: dict[str, _Plugin] = {}
    if not _group_may_be_declared():
        return found
    from importlib import metadata  # costs a noticeable part of start-up: only when needed

    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        dist = getattr(ep, "dist", None)
        plugin = _Plugin(ep.name, ep.value, dist.name if dist else "?", dist.version if dist else "?", ep.load)
        if ep.name in BUILTIN_PASSES:
            plugin = _replace_problem(plugin, "its name is that of a built-in pass, which is used instead")
        elif ep.name in found:
            first = found[ep.name]
            plugin = _replace_problem(first, f"two plugins register it: {first.origin} and {plugin.origin}")
        found[ep.name] = plugin
    return found


def _replace_problem(plugin: _Plugin, problem: str) -> _Plugin:
    return plugin._replace(problem=problem)


def reload_plugins() -> None:
    """Forget the plugins found so far (after installing one into a running process)."""
    _plugins.cache_clear()
    _load_plugin.cache_clear()


@functools.cache
def _load_plugin(name: str) -> type[Pass]:
    plugin = _plugins()[name]
    where = f"plugin pass '{name}' ({plugin.origin})"
    if plugin.problem is not None:
        raise PluginError(f"{where} cannot be used: {plugin.problem}")
    try:
        cls = plugin.load()
    except Exception as exc:  # anything a broken plugin raises while importing
        raise PluginError(f"{where} does not load: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Pass)):
        raise PluginError(f"{where} does not load: {plugin.value} is not a subclass of hlo_rewrite.Pass")
    try:
        check_pass_class(cls)
    except TypeError as exc:
        raise PluginError(f"{where} does not load: {exc}") from exc
    if cls.name != name:
        raise PluginError(f"{where} does not load: the class says its name is '{cls.name}'")
    return cls


def check_pass_class(cls: type[Pass]) -> None:
    """TypeError unless ``cls`` declares a name, a one-line description, anchors
    and valid options."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__qualname__} declares no name")
    description = getattr(cls, "description", None)
    if not isinstance(description, str) or not description or "\n" in description:
        raise TypeError(f"pass '{name}' needs a one-line description")
    if not isinstance(cls.anchors, frozenset) or not all(isinstance(a, str) for a in cls.anchors):
        raise TypeError(f"pass '{name}': anchors must be a frozenset of opcode names")
    if not isinstance(cls.scope, Scope):
        raise TypeError(f"pass '{name}': scope must be a Scope")
    option_infos(cls)


# ----------------------------------------------------------------------- lookups
def is_builtin(name: str) -> bool:
    return name in REGISTRY


def pass_names() -> list[str]:
    """Every pass name: built-ins in registry order, then plugins by name."""
    names = list(REGISTRY)
    names.extend(n for n in _plugins() if n not in REGISTRY)
    return names


def get_pass(name: str) -> type[Pass]:
    """The pass class registered under ``name``: KeyError when unknown,
    :class:`PluginError` when it is a plugin that cannot be used."""
    loader = REGISTRY.get(name)
    if loader is not None:
        return loader()
    if name in _plugins():
        return _load_plugin(name)
    raise KeyError(name)


def origin(name: str) -> str:
    """Where the pass comes from: ``built-in`` or ``plugin <dist> <version> (<module:Class>)``."""
    if name in REGISTRY:
        return "built-in"
    return _plugins()[name].origin


@dataclass(frozen=True)
class PassInfo:
    """One registered pass, as ``--list-passes`` shows it."""

    name: str
    origin: str
    builtin: bool
    #: in the default pipeline
    default: bool
    #: the one-line description, or why the pass cannot be used
    description: str
    usable: bool
    options: tuple[OptionInfo, ...] = ()
    anchors: frozenset[str] = frozenset()
    scope: Scope | None = None
    #: the toggle flag's stem: ``--X`` / ``--no-X`` (a built-in pass may declare a shorter one)
    toggle: str = ""


def pass_info(name: str) -> PassInfo:
    """What is known of one pass; a pass that cannot be loaded is described with the reason."""
    builtin = name in REGISTRY
    try:
        cls = get_pass(name)
        check_pass_class(cls)
        opts = option_infos(cls, prefixed=not builtin)
    except (PluginError, TypeError, ImportError, AttributeError) as exc:
        message = exc.message if isinstance(exc, PluginError) else f"{type(exc).__name__}: {exc}"
        return PassInfo(name, origin(name), builtin, name in DEFAULT_PIPELINE, f"(unavailable: {message})",
                        False, toggle=name)
    return PassInfo(name, origin(name), builtin, name in DEFAULT_PIPELINE, cls.description, True, opts,
                    cls.anchors, cls.scope, toggle=cls.toggle or name)


def pass_infos() -> list[PassInfo]:
    """Every registered pass (built-in and plugin), in :func:`pass_names` order."""
    return [pass_info(n) for n in pass_names()]


def all_options(names: Iterable[str] | None = None) -> list[OptionInfo]:
    """The declared options of the named passes (default: every usable pass),
    for generating one command-line flag per option."""
    infos = [pass_info(n) for n in (pass_names() if names is None else names)]
    return [o for info in infos if info.usable for o in info.options]


@functools.cache
def _builtin_anchors() -> frozenset[str]:
    out: set[str] = set()
    for name in BUILTIN_PASSES:
        out |= _builtin(BUILTIN_PASSES[name])().anchors
    return frozenset(out)


def anchor_opcodes(names: Iterable[str] | None = None) -> frozenset[str]:
    """The union of the anchor opcodes of the named passes (default: every
    built-in pass): the opcodes worth noting per computation when reading."""
    if names is None:
        return _builtin_anchors()
    out: set[str] = set()
    for name in names:
        out |= get_pass(name).anchors
    return frozenset(out)


def _type_word(info: OptionInfo) -> str:
    return {bool: "flag", int: "integer", float: "number", str: "text"}[info.type]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def options_table(names: Iterable[str] | None = None) -> str:
    """The Markdown table of every pass option (default: the built-in passes),
    one row per option: flag, pass, type, default, help. ``docs/passes/README.md``
    holds it between generated-block markers."""
    rows = ["| option | pass | type | default | what it does |", "|---|---|---|---|---|"]
    for info in all_options(list(REGISTRY) if names is None else names):
        if info.type is bool:
            flag, default = f"`{info.flag}`", "off" if not info.default else "on"
        else:
            metavar = info.metavar or info.name.upper()
            flag, default = f"`{info.flag} {metavar}`", f"`{info.default}`"
        rows.append(f"| {flag} | `{info.pass_name}` | {_type_word(info)} | {default} | {_md_cell(info.help)} |")
    return "\n".join(rows) + "\n"


def passes_table(names: Iterable[str] | None = None) -> str:
    """The Markdown table of passes (default: the built-in ones): name, default
    pipeline or not, scope, anchors, description."""
    rows = ["| pass | default pipeline | scope | anchors | what it does |", "|---|---|---|---|---|"]
    for name in list(REGISTRY) if names is None else names:
        info = pass_info(name)
        scope = "ENTRY (or all non-fusion)" if info.scope is Scope.ENTRY else "every computation"
        anchors = ", ".join(f"`{a}`" for a in sorted(info.anchors)) or "(none)"
        rows.append(f"| `{name}` | {'yes' if info.default else 'no'} | {scope} | {anchors} | "
                    f"{_md_cell(info.description)} |")
    return "\n".join(rows) + "\n"
