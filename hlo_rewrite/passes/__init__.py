"""The one place passes are registered.

Each entry maps a pass name to a function that imports and returns its class,
so the command line starts fast and ``--list-passes`` can describe them all.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Pass, PassOptions, PassReport, Record


def _fuse_reduce_scatter() -> type[Pass]:
    from .fuse_reduce_scatter import FuseReduceScatter

    return FuseReduceScatter


def _fuse_send_recv() -> type[Pass]:
    from .fuse_send_recv import FuseSendRecv

    return FuseSendRecv


def _convert_collectives() -> type[Pass]:
    from .convert_collectives import ConvertCollectivesToCustomCall

    return ConvertCollectivesToCustomCall


def _convert_custom_calls() -> type[Pass]:
    from .convert_custom_calls import ConvertCustomCallsToCollectives

    return ConvertCustomCallsToCollectives


REGISTRY: dict[str, Callable[[], type[Pass]]] = {
    "fuse-reduce-scatter": _fuse_reduce_scatter,
    "fuse-send-recv": _fuse_send_recv,
    "convert-collectives-to-custom-call": _convert_collectives,
    "convert-custom-calls-to-collectives": _convert_custom_calls,
}

#: the default pipeline, in order (docs/contract.md: fuse first, then convert)
DEFAULT_PIPELINE: tuple[str, ...] = (
    "fuse-reduce-scatter",
    "fuse-send-recv",
    "convert-collectives-to-custom-call",
)


def get_pass(name: str) -> type[Pass]:
    """The pass class registered under ``name`` (KeyError when unknown)."""
    return REGISTRY[name]()


__all__ = ["DEFAULT_PIPELINE", "REGISTRY", "Pass", "PassOptions", "PassReport", "Record", "get_pass"]
