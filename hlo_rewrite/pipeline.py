"""Run a list of passes over a module and check the result after each one."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import HloError, HloInternalError
from .ir import Module
from .passes import DEFAULT_PIPELINE, Pass, PassOptions, PassReport, PluginError, get_pass, pass_names
from .verifier import verify


def parse_pass_list(text: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; ``"none"`` -> ``[]``. An unknown name, or a
    plugin pass that cannot be loaded, is a ValueError (a usage error)."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if names == ["none"]:
        return []
    known = pass_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"unknown pass {', '.join(repr(u) for u in unknown)}; valid passes: "
            + ", ".join(known) + " (or 'none')"
        )
    for name in dict.fromkeys(names):
        try:
            get_pass(name)
        except PluginError as exc:
            raise ValueError(exc.message) from exc
    return names


def _instantiate(item: str | type[Pass] | Pass, options: PassOptions) -> Pass:
    if isinstance(item, Pass):
        return item
    cls = get_pass(item) if isinstance(item, str) else item
    return cls(options)


def run_passes(
    module: Module,
    passes: Sequence[str | type[Pass] | Pass] = DEFAULT_PIPELINE,
    options: PassOptions | None = None,
) -> list[PassReport]:
    """Run the passes in order over ``module`` (edited in place) and return one
    report per pass.

    Each item is a registered pass name, a :class:`Pass` subclass (built with
    ``options``) or a ready :class:`Pass` instance (used as it is). The module is
    verified after each pass that changed it; a pass that leaves an invalid
    module is an :class:`HloInternalError`. Options a pass does not declare, or
    of the wrong type, are a ValueError before any pass runs.
    """
    options = options or PassOptions()
    # every pass is built (its options checked) before any runs
    instances = [_instantiate(item, options) for item in passes]
    reports = []
    for p in instances:
        before = module.edits
        present = set(map(id, module.computations))
        module.touched.clear()
        try:
            report = p.run(module)
        except HloError as exc:  # a pass read input nobody had checked yet: name the file
            if module.filename:
                exc.with_filename(module.filename)
            raise
        reports.append(report)
        if module.edits != before:  # verify what the pass edited or added
            edited = module.touched.keys() | (set(map(id, module.computations)) - present)
            changed = [c for c in module.computations if id(c) in edited]
            try:
                verify(module, changed)
            except HloError as exc:
                raise HloInternalError(f"pass '{p.name}' left an invalid module: {exc.message}",
                                       filename=module.filename) from exc
    return reports
