"""The formats dumps come in, read and written back (docs/formats.md).

- :func:`load` / :func:`from_bytes`: a file as a :class:`Document` holding the
  HLO modules in it (gzip undone, the format judged by content);
- :meth:`Document.encode`: the rewritten modules put back, as bytes in the
  format and compression asked for;
- :func:`walk`: the files of a directory tree, filtered by globs.

Every call into jaxlib (protos, StableHLO) is in ``hlo_rewrite.xla_bridge``. The names below are
loaded when first asked for (:mod:`hlo_rewrite.exports`): a large input is decoded
(:mod:`.mapped`) before the rest loads.
"""

from ..exports import lazy_exports

# loaded at once (light): the function shares its module's name, which importing the module
# anywhere would otherwise bind here in its place
from .walk import Entry, walk

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from .detect import FORMATS, HLO, PBTXT, PROTO, STABLEHLO, TORCH_XLA, sniff
    from .document import (
        OUTPUT_FORMATS,
        Document,
        FormatError,
        Unit,
        contents,
        default_output_format,
        format_for_destination,
        from_bytes,
        load,
        map_hlo_text,
        read_bytes,
        wants_gzip,
    )

__all__ = [
    "FORMATS",
    "HLO",
    "OUTPUT_FORMATS",
    "PBTXT",
    "PROTO",
    "STABLEHLO",
    "TORCH_XLA",
    "Document",
    "Entry",
    "FormatError",
    "Unit",
    "contents",
    "default_output_format",
    "format_for_destination",
    "from_bytes",
    "load",
    "map_hlo_text",
    "read_bytes",
    "sniff",
    "walk",
    "wants_gzip",
]

#: the module that defines each name above
_DEFINED_IN = {
    **dict.fromkeys(["FORMATS", "HLO", "PBTXT", "PROTO", "STABLEHLO", "TORCH_XLA", "sniff"], ".detect"),
    **dict.fromkeys(["OUTPUT_FORMATS", "Document", "FormatError", "Unit", "contents", "default_output_format",
                     "format_for_destination", "from_bytes", "load", "map_hlo_text", "read_bytes", "wants_gzip"],
                    ".document"),
}

__getattr__, __dir__ = lazy_exports(__name__, _DEFINED_IN)
