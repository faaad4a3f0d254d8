"""The architecture as tests (docs/ARCHITECTURE.md): the import contracts in .importlinter, no
import cycle between modules of cuda_l2_explorer, and no SQL text outside cuda_l2_explorer.db.

All three read the installed package, as a user gets it: grimp cannot see the subpackages that
setuptools' package-dir maps in from other folders (db/, importer/, tuner/) through an editable
install, so these tests need the regular install the README's test command makes.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "cuda_l2_explorer"


def _package_dir() -> Path:
    spec = find_spec(PACKAGE)
    assert spec and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def installed_package() -> Path:
    folder = _package_dir()
    if not (folder / "db" / "__init__.py").exists():
        pytest.skip(
            f"{PACKAGE} is an editable install ({folder} holds no db/): "
            "run `pip install --no-deps --force-reinstall . && rm -rf build` to check the architecture"
        )
    return folder


@cache
def _graph():
    import grimp

    return grimp.build_graph(PACKAGE, cache_dir=None)


def test_architecture_import_contracts_hold(installed_package):
    """The layers contract (cli -> app -> engine -> tuner -> importer -> db) and the engine without
    textual, as `lint-imports` checks them."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
            "--config",
            str(ROOT / ".importlinter"),
            "--no-cache",
            "--no-logo",
        ],
        capture_output=True,
        text=True,
        cwd=installed_package.parent,  # not the checkout: nothing there may shadow the package
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]


def _strongly_connected(modules: set[str], imports_of) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (each one holds a cycle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(imports_of(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports_of(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_architecture_no_import_cycles(installed_package):
    """No module of cuda_l2_explorer reaches itself through imports (lazy imports inside functions
    count: they are the same dependency, only later)."""
    graph = _graph()
    modules = set(graph.modules)
    assert f"{PACKAGE}.db.store" in modules

    def imports_of(module: str) -> set[str]:
        return graph.find_modules_directly_imported_by(module) & modules

    cycles = []
    for component in _strongly_connected(modules, imports_of):
        first, second = component[0], next(m for m in component[1:] if m != component[0])
        there = graph.find_shortest_chain(importer=first, imported=second) or ()
        back = graph.find_shortest_chain(importer=second, imported=first) or ()
        loop = " -> ".join([*there, *back[1:]])
        cycles.append(f"{len(component)} modules in a cycle: {', '.join(component)}\n    e.g. {loop}")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


# SQL statements as they are written in code: upper-case keywords in their statement shape, so
# prose ("select a set", "update the store") and identifiers never match.
SQL = re.compile(
    r"\bSELECT\b[\s\S]*?\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+[\w.]+\s+SET\b"
    r"|\bDELETE\s+FROM\b|\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\w*\s+)?(?:TABLE|VIEW|INDEX|SEQUENCE)\b"
    r"|\b(?:ALTER|DROP)\s+(?:TABLE|VIEW)\b|\b(?:EXPORT|IMPORT|ATTACH)\s+DATABASE\b"
)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _string_texts(tree: ast.AST):
    """(line, text) of every string in the code: literals and f-strings (holes as {}), not docstrings."""
    docstrings = _docstring_nodes(tree)
    inside_fstring = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstring.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            yield node.lineno, text
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and id(node) not in inside_fstring
        ):
            yield node.lineno, node.value


def _raw_connection_calls(tree: ast.AST):
    """Lines that call DuckDB through a store's connection (``<x>.con.execute(...)`` and kin)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"execute", "executemany", "sql", "query"}
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "con"
        ):
            yield node.lineno


def test_sql_pattern_tells_statements_from_prose():
    statements = [
        "SELECT set_id FROM all_kernel_sets",
        "INSERT INTO main.kernels (kernel_id) VALUES (?)",
        "UPDATE runs SET status = 'complete'",
        "DELETE FROM run_configs WHERE run_id = ?",
        "CREATE OR REPLACE TEMP VIEW all_runs AS",
        "EXPORT DATABASE '/tmp/x'",
    ]
    prose = [
        "select a kernel set (--set) or a GPU from the list",
        "Update the store, then SELECT a row",  # no FROM: a word, not a query
        "the insert into the store failed",
        "Created table of results",
    ]
    assert all(SQL.search(s) for s in statements)
    assert not any(SQL.search(s) for s in prose)


def test_architecture_no_sql_outside_db(installed_package):
    """SQL text and raw connection calls live in cuda_l2_explorer.db only (reads.py, writes.py,
    schema.py, store.py); everything else calls their functions."""
    offences = []
    in_db = 0
    for path in sorted(installed_package.rglob("*.py")):
        relative = path.relative_to(installed_package.parent)
        tree = ast.parse(path.read_text(), str(relative))
        if relative.parts[1] == "db":
            in_db += sum(1 for _, text in _string_texts(tree) if SQL.search(text))
            continue
        for line, text in _string_texts(tree):
            match = SQL.search(text)
            if match:
                offences.append((str(relative), line, f"SQL {match.group(0)[:60]!r}"))
        for line in _raw_connection_calls(tree):
            offences.append((str(relative), line, "calls the store's connection directly"))
    scanned = len(list(installed_package.rglob("*.py")))
    assert scanned > 20, f"only {scanned} modules found under {installed_package}"
    assert in_db > 20, "the scan finds the SQL that db/ does hold"
    report = [f"{path}:{line}: {what}" for path, line, what in sorted(offences)]
    assert not offences, f"{len(offences)} places outside db/ hold SQL:\n" + "\n".join(report)
