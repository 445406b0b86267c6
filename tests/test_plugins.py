"""Plugin passes: examples/plugin is installed into a temporary directory (never into the
environment running the tests) and run through ``python -m hlo_rewrite`` and the library;
broken plugins give a clear usage error and leave every other pass working."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN_SRC = REPO / "examples" / "plugin"

PAIR = """HloModule p

ENTRY main {
  p = f32[4] parameter(0)
  tok = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(tok), channel_id=3
  send = (f32[4], u32[], token[]) send(p, tok), channel_id=3
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=3
  send-done = token[] send-done(send), channel_id=3
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
}
"""

BROKEN_ENTRY_POINTS = """[hlo_rewrite.passes]
no-module = no_such_module_for_hlo_rewrite:Pass
not-a-pass = json:dumps
wrong-name = hlo_rewrite_rename_target:RenameCustomCallTarget
fuse-send-recv = json:dumps
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/plugin installed with pip into a fresh directory (no dependencies: the
    hlo_rewrite under test is the repository's own)."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = tmp / "src"
    shutil.copytree(PLUGIN_SRC, src)  # building writes into the source tree: use a copy
    target = tmp / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(src)],
        capture_output=True, text=True,
    )
    if result.returncode != 0 and "hatchling" in result.stderr and "matching distribution" in result.stderr:
        pytest.skip("pip cannot fetch hatchling, the example plugin's build backend, here")
    assert result.returncode == 0, result.stderr
    assert list(target.glob("hlo_rewrite_rename_target-0.1.0.dist-info"))
    return target


def run(site: Path, *args: str, cwd: Path | None = None, extra: Path | None = None) -> subprocess.CompletedProcess[str]:
    paths = [str(p) for p in (extra, site, REPO) if p is not None]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_the_command_runs_a_plugin_pass_like_a_builtin(site: Path, tmp_path: Path) -> None:
    hlo = tmp_path / "in.hlo"
    hlo.write_text(PAIR, encoding="utf-8")
    r = run(site, "-m", "hlo_rewrite", "--passes", "fuse-send-recv,rename-custom-call-target", str(hlo))
    assert r.returncode == 0, r.stderr
    assert 'recv-done = (f32[4], token[]) custom-call(p, tok), custom_call_target="AwsNeuronP2P", ' in r.stdout
    # without it, the built-in target stays
    r = run(site, "-m", "hlo_rewrite", "--passes", "fuse-send-recv", str(hlo))
    assert 'custom_call_target="AwsNeuronSendRecv"' in r.stdout


def test_the_library_lists_it_with_its_origin_and_options(site: Path) -> None:
    code = """
from hlo_rewrite import PassOptions, parse_module, print_module, run_passes
from hlo_rewrite.passes import all_options, pass_info, pass_names
import sys
info = pass_info("rename-custom-call-target")
print(info.origin)
print(info.builtin, info.default, info.usable, pass_names()[-1])
print(" ".join(o.flag for o in all_options(["rename-custom-call-target"])))
module = parse_module(sys.argv[1])
run_passes(module, ["fuse-send-recv", "rename-custom-call-target"],
           PassOptions(per_pass={"rename-custom-call-target": {"new": "Mine"}}))
print("Mine" in print_module(module))
"""
    r = run(site, "-c", code, PAIR)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "plugin hlo-rewrite-rename-target 0.1.0 (hlo_rewrite_rename_target:RenameCustomCallTarget)",
        "False False True rename-custom-call-target",
        "--rename-custom-call-target-old --rename-custom-call-target-new",
        "True",
    ]


def test_the_plugins_own_tests_pass_against_the_installed_copy(site: Path) -> None:
    pytest.importorskip("pytest")
    r = run(site, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PLUGIN_SRC / "tests"), cwd=site)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 passed" in r.stdout


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A distribution whose entry points are broken in every way the registry checks."""
    root = tmp_path_factory.mktemp("broken")
    info = root / "broken_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugins\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(BROKEN_ENTRY_POINTS, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no-module", "plugin pass 'no-module' (plugin broken-plugins 1.0 (no_such_module_for_hlo_rewrite:Pass)) "
                      "does not load: ModuleNotFoundError: No module named 'no_such_module_for_hlo_rewrite'"),
        ("not-a-pass", "does not load: json:dumps is not a subclass of hlo_rewrite.Pass"),
        ("wrong-name", "does not load: the class says its name is 'rename-custom-call-target'"),
    ],
)
def test_a_broken_plugin_is_a_usage_error(site: Path, broken: Path, tmp_path: Path, name: str, message: str) -> None:
    hlo = tmp_path / "in.hlo"
    hlo.write_text(PAIR, encoding="utf-8")
    r = run(site, "-m", "hlo_rewrite", "--passes", name, str(hlo), extra=broken)
    assert r.returncode == 2, r.stderr
    assert message in " ".join(r.stderr.split())
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_broken_plugins_leave_the_other_passes_alone(site: Path, broken: Path, tmp_path: Path) -> None:
    hlo = tmp_path / "in.hlo"
    hlo.write_text(PAIR, encoding="utf-8")
    # the default pipeline, a built-in whose name a plugin also claims, and the good plugin all run
    for passes in (None, "fuse-send-recv", "fuse-send-recv,rename-custom-call-target"):
        args = ["-m", "hlo_rewrite", str(hlo)] + (["--passes", passes] if passes else [])
        r = run(site, *args, extra=broken)
        assert r.returncode == 0, r.stderr
        assert "custom-call(p, tok)" in r.stdout
    code = """
from hlo_rewrite.passes import pass_info, pass_infos
infos = {i.name: i for i in pass_infos()}
assert infos["fuse-send-recv"].origin == "built-in"
for name in ("no-module", "not-a-pass", "wrong-name"):
    assert not infos[name].usable and infos[name].description.startswith("(unavailable: plugin pass"), infos[name]
print(sorted(n for n, i in infos.items() if not i.builtin))
"""
    r = run(site, "-c", code, extra=broken)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['no-module', 'not-a-pass', 'rename-custom-call-target', 'wrong-name']"


def test_the_cheap_look_for_plugins_finds_what_importlib_metadata_would(tmp_path: Path, monkeypatch) -> None:
    """The command skips importing importlib.metadata when no distribution on sys.path declares
    the group; any sign of one (or a path entry it cannot list, such as a zip) means a full look."""
    from hlo_rewrite.passes import registry

    bare = tmp_path / "bare"
    (bare / "other-1.0.dist-info").mkdir(parents=True)
    (bare / "other-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n")
    monkeypatch.setattr(sys, "path", [str(bare), str(tmp_path / "missing")])
    assert registry._group_may_be_declared() is False
    with_plugin = tmp_path / "site"
    (with_plugin / "p-1.0.dist-info").mkdir(parents=True)
    (with_plugin / "p-1.0.dist-info" / "entry_points.txt").write_text("[hlo_rewrite.passes]\nx = p:X\n")
    monkeypatch.setattr(sys, "path", [str(bare), str(with_plugin)])
    assert registry._group_may_be_declared() is True
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert registry._group_may_be_declared() is True
