"""Passes: the declared-unit base (:mod:`.base`) and the one registry (:mod:`.registry`).

A built-in pass is one module here plus one line of ``registry.BUILTIN_PASSES``;
a plugin registers its pass through the entry-point group ``hlo_rewrite.passes``.
``docs/api.md`` shows how to write one.
"""

from __future__ import annotations

from .base import (
    NoOptions,
    OptionInfo,
    Pass,
    PassOptions,
    PassReport,
    Record,
    Scope,
    attach_location,
    located_error,
    make_options,
    option,
    option_infos,
    outside_scope_reason,
)
from .registry import (
    BUILTIN_PASSES,
    DEFAULT_PIPELINE,
    ENTRY_POINT_GROUP,
    REGISTRY,
    PassInfo,
    PluginError,
    all_options,
    anchor_opcodes,
    get_pass,
    options_table,
    origin,
    pass_info,
    pass_infos,
    pass_names,
    passes_table,
    reload_plugins,
)

__all__ = [
    "BUILTIN_PASSES",
    "DEFAULT_PIPELINE",
    "ENTRY_POINT_GROUP",
    "REGISTRY",
    "NoOptions",
    "OptionInfo",
    "Pass",
    "PassInfo",
    "PassOptions",
    "PassReport",
    "PluginError",
    "Record",
    "Scope",
    "all_options",
    "anchor_opcodes",
    "attach_location",
    "get_pass",
    "located_error",
    "make_options",
    "option",
    "option_infos",
    "options_table",
    "origin",
    "outside_scope_reason",
    "pass_info",
    "pass_infos",
    "pass_names",
    "passes_table",
    "reload_plugins",
]
