"""Rewrite the README's console examples with what the CLI prints now on the bundled dataset.

    python benchmarks/readme_examples.py          # rewrite every ```console block in README.md
    python benchmarks/readme_examples.py --check  # exit 1 if any example is out of date

Each example is `$ cuda-l2-explorer ARGS` (optionally `; echo $?`) followed by its output: the
message lines on stderr, then stdout, then the exit code where the example echoes it, as
tests/test_readme.py compares them. The store is an empty one beside the bundled dataset.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```console\n(.*?)```", flags=re.S)


def run_example(command: str, db: Path) -> list[str]:
    echo = command.endswith("; echo $?")
    argv = command.removesuffix("; echo $?").split()
    env = {k: v for k, v in os.environ.items() if k != "CUDA_L2_EXPLORER_NO_BUNDLED"}
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(db), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    lines = [*done.stderr.splitlines(), *done.stdout.splitlines()]
    if echo:
        lines.append(str(done.returncode))
    return [line.rstrip() for line in lines]


def rewrite(text: str, db: Path) -> str:
    def block(match: re.Match) -> str:
        chunks = []
        for chunk in match.group(1).strip().split("\n\n"):
            command = chunk.splitlines()[0]
            args = command.removeprefix("$ cuda-l2-explorer ")
            chunks.append("\n".join([command, *run_example(args, db)]))
        return "```console\n" + "\n\n".join(chunks) + "\n```"

    return BLOCK.sub(block, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if an example is out of date")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = README.read_text()
        new = rewrite(text, Path(tmp) / "empty.duckdb")
    if args.check:
        print("README examples up to date" if new == text else "README examples out of date")
        return 0 if new == text else 1
    README.write_text(new)
    print(f"console examples of {README} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
