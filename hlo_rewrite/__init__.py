"""hlo-rewrite: read XLA HLO text, run Neuron collective passes, write HLO text.

Library use::

    import hlo_rewrite
    module = hlo_rewrite.parse_module(text, filename="in.hlo")
    report = hlo_rewrite.run_passes(module, ["convert-collectives-to-custom-call"])
    out = hlo_rewrite.print_module(module)
"""

from .errors import HloError, HloIOError, HloParseError, HloVerifyError, PassError
from .ir import Computation, Instruction, Module
from .printer import print_module
from .reader import parse_module

__version__ = "0.1.0"

__all__ = [
    "Computation",
    "HloError",
    "HloIOError",
    "HloParseError",
    "HloVerifyError",
    "Instruction",
    "Module",
    "PassError",
    "__version__",
    "parse_module",
    "print_module",
]
