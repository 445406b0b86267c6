"""Run a list of passes over a module and check the result after each one."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import HloError, HloInternalError
from .ir import Module
from .passes import DEFAULT_PIPELINE, REGISTRY, PassOptions, PassReport, get_pass
from .verifier import verify


def parse_pass_list(text: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; ``"none"`` -> ``[]``; unknown names are a usage error."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if names == ["none"]:
        return []
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(
            f"unknown pass {', '.join(repr(u) for u in unknown)}; valid passes: "
            + ", ".join(REGISTRY) + " (or 'none')"
        )
    return names


def run_passes(
    module: Module,
    names: Sequence[str] = DEFAULT_PIPELINE,
    options: PassOptions | None = None,
) -> list[PassReport]:
    """Run the named passes in order; the module is verified after each pass
    that changed it. Returns one report per pass."""
    options = options or PassOptions()
    reports = []
    for name in names:
        p = get_pass(name)(options)
        before = module.edits
        edits = {id(c): c.edits for c in module.computations}
        try:
            report = p.run(module)
        except HloError as exc:  # a pass read input nobody had checked yet: name the file
            if module.filename:
                exc.with_filename(module.filename)
            raise
        reports.append(report)
        if module.edits != before:
            changed = [c for c in module.computations if edits.get(id(c)) != c.edits]
            try:
                verify(module, changed)
            except HloError as exc:
                raise HloInternalError(f"pass '{name}' left an invalid module: {exc.message}",
                               filename=module.filename) from exc
    return reports
