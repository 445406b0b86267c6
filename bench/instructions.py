"""Machine instructions executed to read one module, this tree against an earlier revision.

Wall and CPU times on a shared machine move by 10-50 % from one run to the next, more than the
differences worth knowing about a change to the reader. Valgrind's callgrind counts the
instructions a process executes, the same on every run. This script counts them for a process
that imports the package and reads FILE once, less one that only imports it and reads the
file's text, for the working tree and for REV (taken with ``git archive``):

    python bench/instructions.py .bench-cache/post_opt_10mb.hlo --against f34b88d

Needs ``valgrind`` on the PATH; each count takes about fifty times the reading's own time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
READ = """
import sys
text = open(sys.argv[1], encoding="utf-8").read()
import hlo_rewrite
read = hlo_rewrite.parse_module  # loaded in both runs (the package loads its names on first use)
for _ in range(int(sys.argv[2])):
    read(text)
"""


def executed(tree: Path, path: Path, reads: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "read.py"
        script.write_text(READ)
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable, str(script),
             str(path), str(reads)],
            capture_output=True, text=True, env={"PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1",
                                                 "PATH": "/usr/bin:/bin"}, check=True,
        )
    m = re.search(r"Collected : (\d+)", run.stderr)
    if m is None:
        raise SystemExit(f"no count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(m.group(1))


def reading(tree: Path, path: Path) -> int:
    return executed(tree, path, 1) - executed(tree, path, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--against", metavar="REV", help="a git revision to compare with")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: this measurement needs it", file=sys.stderr)
        return 2
    now = reading(REPO, args.file)
    print(f"{args.file.name}: this tree {now / 1e6:,.0f} M instructions")
    if args.against:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against, "hlo_rewrite", "grammar"],
                                     capture_output=True, check=True).stdout
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            before = reading(Path(tmp), args.file)
        print(f"{args.file.name}: {args.against} {before / 1e6:,.0f} M instructions; this tree / it = {now / before:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
