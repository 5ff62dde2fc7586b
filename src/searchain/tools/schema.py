"""A small JSON Schema validator for tool parameters (the subset tools need, no dependency).

Supported keywords: ``type`` (string, integer, number, boolean, array, object, null, or a
list of them), ``properties``, ``required``, ``additionalProperties`` (boolean), ``enum``,
``const``, ``minLength``, ``maxLength``, ``pattern``, ``minimum``, ``maximum``, ``items``,
``minItems``, ``maxItems``, plus the annotations ``description``, ``title``, ``default``,
``examples`` and ``format`` (not enforced). A schema using any other keyword is refused
when the tool is declared, so nobody believes a constraint is enforced when it is not.
"""

from __future__ import annotations

import re
from typing import Any

TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
ANNOTATIONS = {"description", "title", "default", "examples", "format", "$schema"}
KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "items",
    "minItems",
    "maxItems",
} | ANNOTATIONS


class SchemaError(ValueError):
    """The schema itself is malformed or uses an unsupported keyword."""


class ValidationError(ValueError):
    """A value does not fit its schema. ``path`` says where (``input.city``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def check_schema(schema: Any, path: str = "parameters") -> None:
    """Refuse schemas this validator would not enforce faithfully."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{path}: a schema must be an object, got {type(schema).__name__}")
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        raise SchemaError(f"{path}: unsupported schema keyword(s) {unknown}")
    types = schema.get("type")
    for t in [types] if isinstance(types, str) else types or []:
        if t not in TYPES:
            raise SchemaError(f"{path}: unknown type {t!r}; one of {sorted(TYPES)}")
    for name, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{path}.properties.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{path}.items")
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except re.error as e:
            raise SchemaError(f"{path}.pattern: {e}") from None
    required = schema.get("required", [])
    props = schema.get("properties") or {}
    missing = [r for r in required if r not in props]
    if missing:
        raise SchemaError(f"{path}: required parameter(s) {missing} are not in properties")


def _type_ok(value: Any, t: str) -> bool:
    if isinstance(value, bool) and t in ("integer", "number"):
        return False  # JSON has no bool/number overlap; Python's bool is an int
    if t == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, TYPES[t])


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(schema: dict[str, Any], value: Any, path: str = "input") -> Any:
    """Raise :class:`ValidationError` if ``value`` does not fit ``schema``; return it (with
    whole floats of integer parameters turned into ints) otherwise."""
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_type_ok(value, t) for t in allowed):
            raise ValidationError(path, f"expected {' or '.join(allowed)}, got {_show(value)}")
        if isinstance(value, float) and "integer" in allowed and "number" not in allowed:
            value = int(value)
    if "enum" in schema and value not in schema["enum"]:
        raise ValidationError(path, f"{_show(value)} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        raise ValidationError(path, f"must be {schema['const']!r}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise ValidationError(path, f"shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ValidationError(path, f"longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise ValidationError(path, f"{_show(value)} does not match {schema['pattern']!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValidationError(path, f"{value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ValidationError(path, f"{value} is above the maximum {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise ValidationError(path, f"needs at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ValidationError(path, f"allows at most {schema['maxItems']} items")
        if "items" in schema:
            value = [validate(schema["items"], v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        value = _validate_object(schema, value, path)
    return value


def _validate_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> dict:
    props = schema.get("properties") or {}
    for name in schema.get("required", []):
        if name not in value:
            raise ValidationError(path, f"missing required parameter {name!r}")
    if schema.get("additionalProperties", True) is False:
        extra = sorted(set(value) - set(props))
        if extra:
            raise ValidationError(path, f"unknown parameter(s) {extra}; expected {sorted(props)}")
    return {k: validate(props[k], v, f"{path}.{k}") if k in props else v for k, v in value.items()}
