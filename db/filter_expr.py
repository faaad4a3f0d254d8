"""Filter expressions for the config table, e.g. ``m >= 1024 and speedup < 1``.

Parsed with Python's ``ast`` and translated, node by node from a short whitelist, into a Polars
expression: names must be columns of the table, values numbers or strings. Nothing is evaluated
as Python, so an expression cannot run code.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import polars as pl
from cuda_l2_explorer.db.errors import UsageError


class FilterError(UsageError):
    """An expression that is not a valid filter; the message says why, in one line."""


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}
MAX_LENGTH = 500


def parse_filter(text: str, columns: Sequence[str]) -> pl.Expr:
    """A Polars boolean expression for ``text``; raises FilterError with a one-line reason."""
    if len(text) > MAX_LENGTH:
        raise FilterError(f"filter longer than {MAX_LENGTH} characters")
    source = text.strip()
    if not source:
        return pl.lit(True)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise FilterError(f"filter syntax error at column {exc.offset or 0}: {text!r}") from None
    known = {c.lower(): c for c in columns}
    return _translate(tree.body, known)


def _translate(node: ast.AST, columns: dict[str, str]) -> pl.Expr:
    if isinstance(node, ast.BoolOp):
        parts = [_translate(v, columns) for v in node.values]
        result = parts[0]
        for part in parts[1:]:
            result = result & part if isinstance(node.op, ast.And) else result | part
        return result
    if isinstance(node, ast.UnaryOp):
        operand = _translate(node.operand, columns)
        if isinstance(node.op, ast.Not):
            return ~operand
        if isinstance(node.op, ast.USub):
            return -operand
        raise FilterError("only 'not' and '-' are allowed before a value")
    if isinstance(node, ast.Compare):
        left = _translate(node.left, columns)
        result: pl.Expr | None = None
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                raise FilterError("comparisons are ==, !=, <, <=, >, >=")
            right = _translate(comparator, columns)
            term = _COMPARE[type(op)](left, right)
            result = term if result is None else result & term
            left = right
        assert result is not None
        return result
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _ARITH:
            raise FilterError("arithmetic is +, -, *, /")
        return _ARITH[type(node.op)](_translate(node.left, columns), _translate(node.right, columns))
    if isinstance(node, ast.Name):
        column = columns.get(node.id.lower())
        if column is None:
            raise FilterError(f"unknown column {node.id!r}; columns: {', '.join(columns.values())}")
        return pl.col(column)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float | str)
        and not isinstance(node.value, bool)
    ):
        return pl.lit(node.value)
    raise FilterError(f"not allowed in a filter: {ast.dump(node)[:40]}")
