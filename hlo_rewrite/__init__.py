"""hlo-rewrite: read XLA HLO text, run Neuron collective passes, write HLO text.

Library use (``docs/api.md``)::

    import hlo_rewrite
    module = hlo_rewrite.parse_module(text, filename="in.hlo")
    reports = hlo_rewrite.run_passes(module, ["convert-collectives-to-custom-call"])
    out = hlo_rewrite.print_module(module)

A pass of one's own subclasses :class:`Pass`; ``run_passes`` takes it as a class
or an instance, and a plugin registers it under the entry-point group
``hlo_rewrite.passes``.
"""

from .errors import HloError, HloIOError, HloParseError, HloVerifyError, PassError
from .ir import Computation, Instruction, Module
from .passes import (
    DEFAULT_PIPELINE,
    Pass,
    PassOptions,
    PassReport,
    PluginError,
    Record,
    Scope,
    located_error,
    option,
)
from .pipeline import run_passes
from .printer import print_module
from .scanner import parse_module

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PIPELINE",
    "Computation",
    "HloError",
    "HloIOError",
    "HloParseError",
    "HloVerifyError",
    "Instruction",
    "Module",
    "Pass",
    "PassError",
    "PassOptions",
    "PassReport",
    "PluginError",
    "Record",
    "Scope",
    "__version__",
    "located_error",
    "option",
    "parse_module",
    "print_module",
    "run_passes",
]
