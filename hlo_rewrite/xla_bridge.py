"""Every call into jaxlib (XLA's own converters), behind the optional ``[xla]`` extra.

``pip install 'hlo-rewrite[xla]'`` brings jaxlib. Nothing else in the package
imports jax or jaxlib; each function here imports it on first use, so the
command starts as fast without the extra, and a file that needs it fails with
one line saying what to install (:class:`XlaUnavailable`, exit code 3).

What each conversion keeps is written down in docs/formats.md:

- :func:`proto_to_text` / :func:`text_to_proto`: a binary ``HloModuleProto``
  and HLO text, through XLA's HLO parser and printer. The proto carries the
  module, not its spelling: the text comes out as XLA's printer prints it.
- :func:`mlir_to_text` / :func:`text_to_mlir`: StableHLO (or MHLO) MLIR text
  and HLO text, through XLA's MLIR-to-HLO and HLO-to-StableHLO translations.
"""

from __future__ import annotations

from types import ModuleType

from .errors import HloError, HloParseError

#: the command that brings what this module needs
INSTALL_HINT = "pip install 'hlo-rewrite[xla]'"


class XlaUnavailable(HloError):
    """A format that needs jaxlib was met, and jaxlib is not installed (exit code 3)."""


class XlaConversionError(HloParseError):
    """XLA refused to convert the input (its own message is kept)."""


def _client(what: str, filename: str | None = None) -> ModuleType:
    try:
        from jax._src.lib import xla_client
    except ImportError:
        raise XlaUnavailable(f"reading or writing {what} needs jaxlib: {INSTALL_HINT}", filename=filename) from None
    return xla_client


def available() -> bool:
    """Whether jaxlib can be imported (the ``[xla]`` extra is installed)."""
    try:
        _client("")
    except XlaUnavailable:
        return False
    return True


def version() -> str | None:
    """The jaxlib version in use, or None without the extra."""
    try:
        import jaxlib
    except ImportError:
        return None
    return str(getattr(jaxlib, "__version__", None) or getattr(jaxlib.version, "__version__", ""))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines[:3])


def proto_to_text(data: bytes, filename: str | None = None) -> str:
    """A serialized ``HloModuleProto`` as HLO text, printed by XLA's printer."""
    xc = _client("a binary HloModuleProto", filename)
    try:
        module = xc.hlo.HloModule.from_serialized_hlo_module_proto(data)
        return str(module.to_string())
    except Exception as exc:  # noqa: BLE001 - XLA's own error types are not public
        raise XlaConversionError(f"XLA cannot read this HloModuleProto: {_first_line(exc)}",
                                 filename=filename) from None


def _module_from_text(text: str, filename: str | None, target: str):
    xc = _client(target, filename)
    try:
        return xc, xc.hlo.hlo_module_from_text(text)
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA's parser refuses the rewritten module, so it cannot be written as "
                                 f"{target}: {_first_line(exc)}", filename=filename) from None


def text_to_proto(text: str, filename: str | None = None) -> bytes:
    """HLO text as a serialized ``HloModuleProto`` (read by XLA's parser)."""
    _xc, module = _module_from_text(text, filename, "a binary HloModuleProto")
    return bytes(module.as_serialized_hlo_module_proto())


def mlir_to_text(text: str, filename: str | None = None) -> str:
    """StableHLO or MHLO MLIR text as HLO text (XLA's MLIR-to-HLO translation, then its printer)."""
    xc = _client("StableHLO/MHLO text", filename)
    try:
        computation = xc._xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
        return str(computation.get_hlo_module().to_string())
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA cannot convert this MLIR module to HLO: {_first_line(exc)}",
                                 filename=filename) from None


def text_to_mlir(text: str, filename: str | None = None) -> str:
    """HLO text as StableHLO MLIR text (XLA's HLO-to-StableHLO translation)."""
    xc, module = _module_from_text(text, filename, "StableHLO")
    try:
        computation = xc.XlaComputation(module.as_serialized_hlo_module_proto())
        return str(xc._xla.mlir.xla_computation_to_mlir_module(computation))
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA cannot convert the rewritten module to StableHLO: {_first_line(exc)}",
                                 filename=filename) from None
