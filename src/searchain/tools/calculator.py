"""Safe arithmetic for the LLM: expressions are parsed with :mod:`ast` and only numbers,
arithmetic operators and a few math functions are evaluated — never ``eval``.

Sizes are bounded so that a hostile expression (``9**9**9``, a huge factorial) cannot eat
the CPU or memory: the expression length, the number of AST nodes, exponents and the
magnitude of every intermediate result are capped.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from searchain.tools.base import Tool, ToolError, ToolOutput

MAX_CHARS = 300
MAX_NODES = 100
MAX_EXPONENT = 256
MAX_MAGNITUDE = 1e100

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


class CalcError(ToolError):
    pass


def _check(value: Any) -> float | int:
    if isinstance(value, complex) or (isinstance(value, float) and not math.isfinite(value)):
        raise CalcError("the result is not a finite real number")
    if abs(value) > MAX_MAGNITUDE:
        raise CalcError(f"a result exceeds {MAX_MAGNITUDE:g}")
    return value


def _eval(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalcError(f"only numbers are allowed, got {node.value!r}")
        return _check(node.value)
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalcError(f"exponents are limited to ±{MAX_EXPONENT}")
        try:
            return _check(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalcError("division by zero") from None
        except OverflowError:
            raise CalcError(f"a result exceeds {MAX_MAGNITUDE:g}") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None or node.keywords:
            raise CalcError(f"unknown function {node.func.id!r}; allowed: {sorted(_FUNCTIONS)}")
        args = [_eval(a) for a in node.args]
        try:
            return _check(fn(*args))
        except (TypeError, ValueError, OverflowError) as e:
            raise CalcError(f"{node.func.id}: {e}") from None
    raise CalcError(f"not allowed in an arithmetic expression: {ast.dump(node)[:60]}")


def calculate(expression: str) -> float | int:
    """Evaluate an arithmetic expression safely. ``^`` means power, as on calculators."""
    expr = expression.strip().rstrip("=").replace("^", "**").replace("×", "*").replace("÷", "/")
    if len(expr) > MAX_CHARS:
        raise CalcError(f"expression longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise CalcError(f"not an arithmetic expression: {e.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalcError(f"expression has more than {MAX_NODES} parts")
    return _eval(tree)


class Calculator(Tool):
    def __init__(self, name: str = "calculator") -> None:
        super().__init__(
            name,
            "Calculator: evaluates an arithmetic expression (+ - * / ** %, round, floor, "
            "sqrt, ...).",
            {
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": "the arithmetic expression",
                        "minLength": 1,
                        "maxLength": MAX_CHARS,
                    }
                },
                "required": ["expression"],
                "additionalProperties": False,
            },
        )

    def _call(self, args: dict[str, Any]) -> ToolOutput:
        try:
            value = calculate(args["expression"])
        except CalcError as e:
            raise CalcError(f"tool {self.name!r}: {e}") from None
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            value = int(value)
        return ToolOutput(str(value), meta={"value": value})
