"""Walking dump trees (hlo_rewrite.formats.walk): nested folders, duplicate names, globs."""

from __future__ import annotations

import gzip
import os

import pytest
from conftest import ALLREDUCE_MODULE

from hlo_rewrite import formats
from hlo_rewrite.formats.walk import matches


def make_tree(root) -> None:
    """A JAX-dump-like tree: nested folders, the same file names in different folders,
    gzip, a torch_xla dump, and files that are not HLO."""
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    (root / "a" / "module.hlo").write_text(ALLREDUCE_MODULE)
    (root / "a" / "b" / "module.hlo").write_text(ALLREDUCE_MODULE.replace("HloModule m", "HloModule m2"))
    (root / "c" / "module.hlo").write_bytes(gzip.compress(ALLREDUCE_MODULE.encode()))
    (root / "c" / "notes.txt").write_text("what this dump is\n")
    (root / "top.txt").write_text("HloModule t\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    (root / "c" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))


def test_walk_lists_every_file_in_sorted_order(tmp_path):
    make_tree(tmp_path)
    rel = [e.relpath for e in formats.walk(str(tmp_path))]
    assert rel == ["top.txt", "a/module.hlo", "a/b/module.hlo", "c/image.png", "c/module.hlo", "c/notes.txt"]
    for e in formats.walk(str(tmp_path)):
        assert os.path.samefile(e.path, tmp_path / e.relpath)


def test_content_decides_what_is_hlo(tmp_path):
    make_tree(tmp_path)
    kinds = {}
    for e in formats.walk(str(tmp_path)):
        doc = formats.load(e.path, fallback=None)
        kinds[e.relpath] = None if doc is None else (doc.format, doc.compressed)
    assert kinds == {
        "top.txt": ("hlo", False),
        "a/module.hlo": ("hlo", False),
        "a/b/module.hlo": ("hlo", False),
        "c/module.hlo": ("hlo", True),
        "c/notes.txt": None,
        "c/image.png": None,
    }


@pytest.mark.parametrize("include, exclude, expected", [
    (["*.hlo"], [], ["a/module.hlo", "a/b/module.hlo", "c/module.hlo"]),
    (["a/*"], [], ["a/module.hlo", "a/b/module.hlo"]),  # '*' in a path pattern crosses '/'
    (["*.hlo"], ["a/b/*"], ["a/module.hlo", "c/module.hlo"]),
    ([], ["*.txt", "*.png"], ["a/module.hlo", "a/b/module.hlo", "c/module.hlo"]),
    (["nothing*"], [], []),
])
def test_include_and_exclude_globs(tmp_path, include, exclude, expected):
    make_tree(tmp_path)
    assert [e.relpath for e in formats.walk(str(tmp_path), include, exclude)] == expected


def test_skip_leaves_out_a_directory_inside_the_tree(tmp_path):
    make_tree(tmp_path)
    assert [e.relpath for e in formats.walk(str(tmp_path), skip=[str(tmp_path / "a")])] == [
        "top.txt", "c/image.png", "c/module.hlo", "c/notes.txt"]


def test_links_to_directories_are_not_followed(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    (tmp_path / "c" / "link.hlo").symlink_to(tmp_path / "a" / "module.hlo")
    rel = [e.relpath for e in formats.walk(str(tmp_path))]
    assert "c/link.hlo" in rel and not any(r.startswith("a/loop") for r in rel)


def test_matches_file_names_and_paths():
    assert matches("x/y/z.hlo", ["*.hlo"])
    assert matches("x/y/z.hlo", ["x/*.hlo"])
    assert not matches("x/y/z.hlo", ["y/*"])
    assert not matches("x/y/z.hlo.gz", ["*.hlo"])


# --------------------------------------------------------------------------- a real --xla_dump_to tree


