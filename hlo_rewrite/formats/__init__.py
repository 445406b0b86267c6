"""The formats dumps come in, read and written back (docs/formats.md).

- :func:`load` / :func:`from_bytes`: a file as a :class:`Document` holding the
  HLO modules in it (gzip undone, the format judged by content);
- :meth:`Document.encode`: the rewritten modules put back, as bytes in the
  format and compression asked for;
- :func:`walk`: the files of a directory tree, filtered by globs.

Every call into jaxlib (protos, StableHLO) is in ``hlo_rewrite.xla_bridge``.
"""

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
from .walk import Entry, walk

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
