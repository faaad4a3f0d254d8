"""The README's two set-up commands stay true: CI runs the very test command the README gives."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_ci_runs_the_readme_test_command():
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    test_command = next(b for b in blocks if "pytest" in b)
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines


def test_readme_install_command_opens_the_explorer():
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    install = blocks[0]
    assert "pip install ." in install and install.endswith("cuda-l2-explorer")
