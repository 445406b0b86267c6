"""The command line on every format dumps come in (docs/formats.md).

For every format, what the command writes must be exactly what the same run gives on the
equivalent plain HLO text file. Protos, StableHLO and XLA dump trees, which JAX/jaxlib makes,
are in test_formats_cli_xla.py.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import ALLREDUCE_MODULE, REPO

from hlo_rewrite import cli, formats

AR = ALLREDUCE_MODULE
PLAIN = "HloModule plain\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n"
IR_GRAPH = "IR {\n  %0 = f32[] prim::Constant(), value=1\n}\n"
ALL = ["--all-computations"]  # JAX puts the collectives in called computations


def run(args, input=None):
    return CliRunner().invoke(cli.main, [str(a) for a in args], input=input, catch_exceptions=False)


def rewritten(path: Path, *extra) -> bytes:
    """What the command writes on standard output for ``path`` (a plain HLO text file)."""
    r = run([path, *extra])
    assert r.exit_code == 0, r.stderr
    return r.stdout_bytes


def dump(graphs: list[str]) -> str:
    out = []
    for i, graph in enumerate(graphs):
        out.append(f"[SyncTensorsGraph.{i}]\nTensorsGraphInfo:\n  mark_step (xla_model.py:1056)\n\n"
                   f"Hashes: ({i}abc)\n\n## BEGIN_GRAPH\n{graph}\n## END_GRAPH\n\n\n")
    return "".join(out)


# --------------------------------------------------------------------------- gzip


def test_gzip_in_gzip_out_and_plain_out(tmp_path):
    (tmp_path / "a.hlo").write_text(AR)
    (tmp_path / "a.hlo.gz").write_bytes(gzip.compress(AR.encode()))
    expected = rewritten(tmp_path / "a.hlo")
    assert b"AwsNeuronAllReduceAdd_f32" in expected
    r = run([tmp_path / "a.hlo.gz", "-o", tmp_path / "out.hlo.gz"])
    assert r.exit_code == 0, r.stderr
    assert gzip.decompress((tmp_path / "out.hlo.gz").read_bytes()) == expected
    r = run([tmp_path / "a.hlo.gz", "-o", tmp_path / "out.hlo"])
    assert (tmp_path / "out.hlo").read_bytes() == expected
    assert rewritten(tmp_path / "a.hlo.gz") == expected  # standard output: never compressed
    r = run([tmp_path / "a.hlo", "-o", tmp_path / "plain-in.hlo.gz"])
    assert gzip.decompress((tmp_path / "plain-in.hlo.gz").read_bytes()) == expected


def test_gzip_in_place_keeps_compression_and_diff_shows_the_text(tmp_path):
    (tmp_path / "a.hlo").write_text(AR)
    expected = rewritten(tmp_path / "a.hlo")
    src = tmp_path / "dump.txt"  # no .gz in the name: the magic bytes decide
    src.write_bytes(gzip.compress(AR.encode()))
    r = run([src, "--diff"])
    assert r.exit_code == 0 and "+  ROOT %ar = f32[8]{0} custom-call(" in r.stdout
    assert r.stdout == run([tmp_path / "a.hlo", "--diff"]).stdout.replace(str(tmp_path / "a.hlo"), str(src))
    r = run(["-i", src])
    assert r.exit_code == 0 and f"rewrote {src}" in r.stderr
    assert gzip.decompress(src.read_bytes()) == expected
    before = src.read_bytes()
    r = run(["-i", src])  # nothing changes now: the file is left alone
    assert r.exit_code == 0 and src.read_bytes() == before


def test_stdin_may_be_gzip():
    r = run(["-"], input=gzip.compress(AR.encode()))
    assert r.exit_code == 0 and "AwsNeuronAllReduceAdd_f32" in r.stdout


def test_foreign_compression_still_says_what_it_is(tmp_path):
    src = tmp_path / "x.hlo"
    src.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(16))
    r = run([src])
    assert r.exit_code == 3 and "zstd" in r.stderr


# --------------------------------------------------------------------------- torch_xla dumps


def test_torch_xla_dump_each_graph_like_its_plain_file(tmp_path):
    other = PLAIN.replace("plain", "other")
    text = dump([AR, IR_GRAPH, other, AR.replace("HloModule m", "HloModule m3")])
    src = tmp_path / "tensors.txt"
    src.write_text(text)
    r = run([src, "-o", tmp_path / "out.txt"])
    assert r.exit_code == 0, r.stderr
    out = (tmp_path / "out.txt").read_text()
    doc_in, doc_out = formats.from_bytes(text.encode(), "in"), formats.from_bytes(out.encode(), "out")
    assert doc_out.outside == doc_in.outside and doc_out.kept == doc_in.kept == ["graph 2 [SyncTensorsGraph.1]"]
    for i, (unit_in, unit_out) in enumerate(zip(doc_in.units, doc_out.units, strict=True)):
        plain = tmp_path / f"graph{i}.hlo"
        plain.write_text(unit_in.text)
        assert unit_out.text.encode() == rewritten(plain)
    r = run([src, "--check"])
    assert r.exit_code == 1
    assert f"would rewrite {src} (graph 1 [SyncTensorsGraph.0], graph 4 [SyncTensorsGraph.3])" in r.stderr
    r = run([src, "-o", tmp_path / "dump.pb"])  # a name says nothing of a torch_xla dump: it stays one
    assert r.exit_code == 0 and (tmp_path / "dump.pb").read_text() == out
    assert run([src, "--output-format", "hlo"]).stdout == out  # its graphs are HLO text already
    r = run([src, "--output-format", "proto"])  # asked for plainly: refused
    assert r.exit_code == 3 and "a torch_xla dump is written back as a torch_xla dump" in r.stderr


def test_torch_xla_dump_error_is_at_its_line_in_the_whole_file(tmp_path):
    broken = AR.replace("all-reduce(f32[8]{0} %p)", "all-reduce(f32[8]{0} %nope)")
    text = dump([PLAIN, broken])
    src = tmp_path / "tensors.txt"
    src.write_text(text)
    out = tmp_path / "out.txt"
    r = run([src, "-o", out])
    assert r.exit_code == 3 and not out.exists()
    line = text.split("\n").index(next(x for x in text.split("\n") if "%nope" in x)) + 1
    assert f"{src}:{line}:" in r.stderr and "%nope" in r.stderr


def test_torch_xla_dump_report_has_one_module_per_graph(tmp_path):
    import json

    text = dump([PLAIN, AR])
    src = tmp_path / "tensors.txt"
    src.write_text(text)
    r = run([src, "--check", "--report", tmp_path / "r.json"])
    assert r.exit_code == 1
    report = json.loads((tmp_path / "r.json").read_text())
    try:
        import jsonschema
    except ImportError:  # the test extra brings it; the checks below stand without it
        pass
    else:
        jsonschema.validate(report, json.loads((REPO / "docs" / "report.schema.json").read_text()))
    modules = report["files"][0]["modules"]
    lines = text.split("\n")
    assert [lines[m["first_line"] - 2] for m in modules] == ["## BEGIN_GRAPH"] * 2
    rewritten_per_graph = [sum(len(p["records"]) > 0 for p in m["passes"]) for m in modules]
    assert rewritten_per_graph[0] == 0 and rewritten_per_graph[1] > 0


# --------------------------------------------------------------------------- directories


def make_tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    (root / "a" / "m.hlo").write_text(AR)
    (root / "a" / "b" / "m.hlo").write_text(PLAIN)
    (root / "c" / "m.hlo").write_bytes(gzip.compress(AR.replace("HloModule m", "HloModule mc").encode()))
    (root / "c" / "tensors.txt").write_text(dump([AR, IR_GRAPH]))
    (root / "c" / "notes.md").write_text("# not HLO\n")
    (root / "top.bin").write_bytes(bytes(range(256)))


def test_directory_is_mirrored_with_every_file_as_its_plain_run(tmp_path):
    tree = tmp_path / "dump"
    make_tree(tree)
    r = run([tree, "-o", tmp_path / "out"])
    assert r.exit_code == 0, r.stderr
    assert "skipped 2 files that are not HLO" in r.stderr
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written == ["a/b/m.hlo", "a/m.hlo", "c/m.hlo", "c/tensors.txt"]
    for rel in written:  # each output is what the command writes for that file alone
        assert (tmp_path / "out" / rel).read_bytes() == rewritten(tree / rel), rel
    assert b"AwsNeuron" in (tmp_path / "out" / "c" / "m.hlo").read_bytes()  # read through gzip


def test_directory_jobs_give_the_same_files(tmp_path):
    tree = tmp_path / "dump"
    make_tree(tree)
    assert run([tree, "-o", tmp_path / "one"]).exit_code == 0
    # in its own process, as users run it: this one may have threads (JAX) that a fork would copy
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "hlo_rewrite", str(tree), "-o", str(tmp_path / "two"), "-j", "2"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for p in (tmp_path / "one").rglob("*"):
        if p.is_file():
            assert (tmp_path / "two" / p.relative_to(tmp_path / "one")).read_bytes() == p.read_bytes()


def test_directory_check_diff_and_in_place(tmp_path):
    tree = tmp_path / "dump"
    make_tree(tree)
    r = run([tree, "--check"])
    assert r.exit_code == 1
    for rel in ("a/m.hlo", "c/m.hlo", "c/tensors.txt"):
        assert f"would rewrite {tree / rel}" in r.stderr
    assert str(tree / "a" / "b" / "m.hlo") not in r.stderr
    r = run([tree, "--diff"])
    assert r.exit_code == 0 and r.stdout.count("(rewritten)") == 3
    originals = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    r = run(["-i", tree])
    assert r.exit_code == 0, r.stderr
    assert gzip.decompress((tree / "c" / "m.hlo").read_bytes()).count(b"AwsNeuron") == 1  # still gzip
    assert (tree / "a" / "b" / "m.hlo").read_bytes() == originals[tree / "a" / "b" / "m.hlo"]
    assert (tree / "top.bin").read_bytes() == originals[tree / "top.bin"]
    assert run([tree, "--check"]).exit_code == 0


def test_include_exclude_and_output_inside_the_tree(tmp_path):
    tree = tmp_path / "dump"
    make_tree(tree)
    r = run([tree, "--include", "*.hlo", "--exclude", "a/b/*", "-o", tree / "out"])
    assert r.exit_code == 0, r.stderr
    written = sorted(str(p.relative_to(tree / "out")) for p in (tree / "out").rglob("*") if p.is_file())
    assert written == ["a/m.hlo", "c/m.hlo"]
    r = run([tree, "--check", "-v"])  # out/ is read now: it is not this run's output
    assert str(tree / "out" / "a" / "m.hlo") in r.stderr
    r = run([tree, "-o", tree / "out"])  # ... but never by a run writing into it
    assert r.exit_code == 0 and str(tree / "out" / "out") not in r.stderr
    assert not (tree / "out" / "out").exists()


def test_several_directories_go_under_their_names(tmp_path):
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.hlo").write_text(AR)
    r = run([tmp_path / "d1", tmp_path / "d2", "-o", tmp_path / "out"])
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "out" / "d1" / "m.hlo").read_text() == (tmp_path / "out" / "d2" / "m.hlo").read_text()
    r = run([tmp_path / "d1", tmp_path / "d1" / "m.hlo", "-o", tmp_path / "out2"])
    assert r.exit_code == 0  # d1/m.hlo and m.hlo do not collide


def test_a_tree_without_hlo_says_so(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "notes.txt").write_text("nothing here\n")
    r = run([tmp_path / "d", "--check"])
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr == (f"skipped 1 file that is not HLO (-v names them)\n"
                        f"warning: no HLO file found in {tmp_path / 'd'}\n")


def test_a_file_named_on_the_command_line_is_never_skipped(tmp_path):
    src = tmp_path / "notes.md"
    src.write_text("# not HLO\n")
    r = run([src])
    assert r.exit_code == 3 and f"{src}:1:1: error:" in r.stderr


# --------------------------------------------------------------------------- protos and StableHLO


def test_without_the_extra_one_line_and_exit_3(tmp_path):
    fake = tmp_path / "nojax" / "jax"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no jax here')\n")
    src = tmp_path / "graph.hlo"
    src.write_bytes(b"\x0a\x01m\x12\x01e\x1a\x00")  # the shape of a binary HloModuleProto
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "nojax"), str(REPO)]))
    r = subprocess.run([sys.executable, "-m", "hlo_rewrite", str(src)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr == (f"{src}: error: reading or writing a binary HloModuleProto needs jaxlib: "
                        "pip install 'hlo-rewrite[xla]'\n")


# --------------------------------------------------------------------------- docs/formats.md


def test_docs_formats_examples_run(tmp_path):
    """The ```sh test blocks of docs/formats.md, in order, in one directory, as users run them."""
    import re

    doc = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh test\n(.*?)^```$", doc, re.S | re.M)
    assert len(blocks) >= 4
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "hlo-rewrite"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hlo_rewrite "$@"\n')
    launcher.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(REPO))
    work = tmp_path / "work"
    work.mkdir()
    for i, block in enumerate(blocks):
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"docs/formats.md block {i + 1} failed ({r.returncode}):\n{block}\n{r.stderr}"
