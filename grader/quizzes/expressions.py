"""A tiny, safe expression language for the answers of parameterised questions.

``answer_expr = "a * b + 1"`` or ``answer_expr = "str(n - 1)"``: arithmetic, comparisons,
conditionals, literals, the question's parameters and a handful of pure functions. Nothing
else (no attributes, no subscripts, no comprehensions), so a bank file cannot run code.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from typing import Any

FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs, "min": min, "max": max, "round": round, "int": int, "float": float, "str": str,
    "len": len, "sum": sum, "bool": bool, "sqrt": math.sqrt, "floor": math.floor, "ceil": math.ceil,
}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: _power(a, b),
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}
MAX_LENGTH = 500


class ExpressionError(ValueError):
    """The expression is not in the language, or failed for these parameters."""


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, (int, float)) and abs(exponent) > 64:
        raise ExpressionError("exponents above 64 are not allowed")
    return base ** exponent


def parse(source: str) -> ast.Expression:
    """Parse ``source`` and check that it stays inside the language."""
    if len(source) > MAX_LENGTH:
        raise ExpressionError(f"longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"not a valid expression: {error.msg}") from None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Constant,
               ast.Name, ast.Load, ast.Call, ast.Tuple, ast.List, ast.operator, ast.unaryop, ast.boolop,
               ast.cmpop)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ExpressionError(f"{type(node).__name__} is not allowed in an answer expression")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ExpressionError(f"only these functions may be called: {', '.join(sorted(FUNCTIONS))}")
        if isinstance(node, ast.Call) and node.keywords:
            raise ExpressionError("keyword arguments are not allowed")
    return tree


def names(source: str) -> set[str]:
    """The parameter names ``source`` reads (function names excluded)."""
    tree = parse(source)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(source: str, variables: Mapping[str, Any]) -> Any:
    """The value of ``source`` with ``variables`` bound."""
    tree = parse(source)
    try:
        return _eval(tree.body, variables)
    except ExpressionError:
        raise
    except Exception as error:  # ZeroDivisionError, TypeError, ValueError…
        raise ExpressionError(f"{type(error).__name__}: {error}") from None


def _eval(node: ast.AST, variables: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in variables:
            return variables[node.id]
        raise ExpressionError(f"unknown name {node.id!r}")
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, variables), _eval(node.right, variables))
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, variables)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(node.op, ast.Not):
            return not value
        raise ExpressionError(f"{type(node.op).__name__} is not allowed")
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, variables) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, variables)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, variables)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, variables) else node.orelse, variables)
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(e, variables) for e in node.elts]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return FUNCTIONS[node.func.id](*(_eval(a, variables) for a in node.args))
    raise ExpressionError(f"{type(node).__name__} is not allowed")
