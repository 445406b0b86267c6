"""The public API: what the package exports, docs/api.md's code runs, and the public
surface is typed (py.typed, mypy --strict)."""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import hlo_rewrite

REPO = Path(__file__).resolve().parents[1]
API_DOC = REPO / "docs" / "api.md"


def doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", API_DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_package_exports_the_library_api() -> None:
    for name in ("parse_module", "print_module", "run_passes", "Pass", "PassReport", "Record", "PassOptions",
                 "Scope", "option", "located_error", "PluginError", "DEFAULT_PIPELINE"):
        assert name in hlo_rewrite.__all__
        assert getattr(hlo_rewrite, name) is not None
    from hlo_rewrite.pipeline import run_passes

    assert hlo_rewrite.run_passes is run_passes


def test_the_package_docstring_example_runs() -> None:
    doc = hlo_rewrite.__doc__ or ""
    code = "\n".join(line[4:] for line in doc.splitlines() if line.startswith("    "))
    text = "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
    namespace: dict[str, object] = {"text": text}
    exec(compile(code, "hlo_rewrite.__doc__", "exec"), namespace)  # noqa: S102 - the documented example
    assert namespace["out"] == text


def test_api_doc_code_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = doc_blocks()
    assert len(blocks) >= 3
    module = types.ModuleType("api_doc")  # a real module, as a user's file would be (dataclasses need one)
    monkeypatch.setitem(sys.modules, "api_doc", module)
    for k, block in enumerate(blocks):
        exec(compile(block, f"docs/api.md block {k + 1}", "exec"), module.__dict__)  # noqa: S102


def test_py_typed_ships_in_the_package() -> None:
    assert (Path(hlo_rewrite.__file__).parent / "py.typed").is_file()


def _mypy(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy (the dev extra) is not installed")
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(cwd / ".mypy"),
                           *args], cwd=cwd, capture_output=True, text=True, env={"MYPYPATH": str(REPO),
                           "PATH": "/usr/bin:/bin"})


def test_public_surface_passes_mypy_strict(tmp_path: Path) -> None:
    # a user's module: the code of docs/api.md, checked strictly against the package's types
    user = tmp_path / "user_code.py"
    user.write_text("\n".join(doc_blocks()), encoding="utf-8")
    public = [str(REPO / "hlo_rewrite" / "__init__.py"), str(REPO / "hlo_rewrite" / "pipeline.py"),
              str(REPO / "hlo_rewrite" / "passes")]
    result = _mypy(["--strict", "--follow-imports=silent", str(user), *public], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout


def test_exported_names_are_the_objects_their_modules_define() -> None:
    """The packages load their names when first asked for (hlo_rewrite.exports): each is the
    very object of the module that defines it, listed by dir(), and kept once asked for."""
    from hlo_rewrite import formats, ir, passes, reader
    from hlo_rewrite.formats import document
    from hlo_rewrite.formats.walk import walk
    from hlo_rewrite.reader import choice, lazy, plain

    assert hlo_rewrite.Module is ir.Module and hlo_rewrite.PassOptions is passes.PassOptions
    assert reader.parse_module is choice.parse_module is hlo_rewrite.parse_module
    assert reader.Scanner is plain.Scanner and reader.NOTED_OPCODES is lazy.NOTED_OPCODES
    assert formats.Document is document.Document and formats.walk is walk
    for package in (hlo_rewrite, reader, formats):
        assert set(package.__all__) <= set(dir(package))
        for name in package.__all__:
            assert getattr(package, name) is vars(package)[name]  # kept
    assert hlo_rewrite.strict.__name__ == "hlo_rewrite.strict"  # a submodule, as an attribute
    for package, name in ((hlo_rewrite, "no_such_name"), (reader, "_private"), (formats, "nothing")):
        with pytest.raises(AttributeError, match=name):
            getattr(package, name)


def test_star_import_gives_every_exported_name() -> None:
    namespace: dict[str, object] = {}
    exec("from hlo_rewrite import *", namespace)  # noqa: S102 - what a user may write
    assert {*hlo_rewrite.__all__} <= namespace.keys()
    assert namespace["run_passes"] is hlo_rewrite.run_passes
