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

from .exports import lazy_exports

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
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
    from .reader import parse_module

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

#: the module that defines each name above (each is loaded when first asked for: the console
#: script starts reading a large input before it loads the rest, :mod:`hlo_rewrite.early`)
_DEFINED_IN = {
    **dict.fromkeys(["HloError", "HloIOError", "HloParseError", "HloVerifyError", "PassError"], ".errors"),
    **dict.fromkeys(["Computation", "Instruction", "Module"], ".ir"),
    **dict.fromkeys(["DEFAULT_PIPELINE", "Pass", "PassOptions", "PassReport", "PluginError", "Record", "Scope",
                     "located_error", "option"], ".passes"),
    "run_passes": ".pipeline",
    "print_module": ".printer",
    "parse_module": ".reader",
}

__getattr__, __dir__ = lazy_exports(__name__, _DEFINED_IN)
