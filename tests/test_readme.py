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


def test_test_command_installs_the_build_extras_without_their_dependencies():
    """The --no-deps packages of the test command are the native-build and tuner-build extras, pin
    for pin (the extras' own dependencies would add 0.6 GB that no test uses)."""
    import shlex
    import tomllib

    blocks = _bash_blocks((ROOT / "README.md").read_text())
    test_command = next(b for b in blocks if "pytest" in b)
    installs = [shlex.split(part) for part in test_command.split("&&") if "pip install" in part]
    no_deps = [
        arg for words in installs if "--no-deps" in words for arg in words[words.index("install") + 1 :]
    ]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = extras["native-build"] + extras["tuner-build"]
    assert sorted(a for a in no_deps if not a.startswith("-")) == sorted(wanted)


def _console_examples(text: str) -> list[tuple[list[str], bool, list[str]]]:
    """(argv, echoes the exit code, the lines shown) of each `$ cuda-l2-explorer ...` example."""
    examples = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for chunk in block.strip().split("\n\n"):
            command, *shown = chunk.splitlines()
            assert command.startswith("$ cuda-l2-explorer "), command
            command = command.removeprefix("$ cuda-l2-explorer ")
            echo = command.endswith("; echo $?")
            examples.append((command.removesuffix("; echo $?").split(), echo, shown))
    return examples


def test_readme_examples_are_the_real_output_on_the_bundled_data(cli, monkeypatch, tmp_path):
    """Every figure the README's examples show is what the CLI prints now (message lines on stderr
    first, then the table, then the exit code where the example echoes it)."""
    monkeypatch.delenv("CUDA_L2_EXPLORER_NO_BUNDLED", raising=False)
    examples = _console_examples((ROOT / "README.md").read_text())
    assert len(examples) >= 4
    for argv, echo, shown in examples:
        result = cli("--db", tmp_path / "empty.duckdb", *argv)
        printed = [*result.err.splitlines(), *result.out.splitlines()]
        if echo:
            printed.append(str(result.code))
        else:
            assert result.code == 0, result.err
        assert [line.rstrip() for line in printed] == [line.rstrip() for line in shown], " ".join(argv)
