"""The JSON Schema of ``result.json`` and a small validator for it.

The schema ships as a package file, ``dpaudit/reports/templates/result.schema.json``
(JSON Schema draft 2020-12), so that other tools can validate dpaudit's output. dpaudit
itself does not depend on the ``jsonschema`` package. The schema restates
:mod:`dpaudit.audit.result.model` (the one definition of the document); a test fails when the
two disagree on a key. :func:`validate` implements the subset of keywords the schema uses (``type``, ``required``, ``properties``,
``additionalProperties``, ``items``, ``enum``, ``const``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``anyOf`` and local ``$ref``) and refuses any other keyword, so
the schema cannot silently grow past what is checked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from dpaudit.audit import SCHEMA_VERSION
from dpaudit.errors import InvalidParameterError

__all__ = ["SCHEMA_VERSION", "load_schema", "schema_errors", "validate"]

_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})
_CHECKED = frozenset(
    {
        "type",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "anyOf",
        "$ref",
    }
)


@cache
def _schema_text() -> str:
    return (
        resources.files("dpaudit.reports")
        .joinpath("templates/result.schema.json")
        .read_text(encoding="utf-8")
    )


def load_schema() -> dict[str, Any]:
    """The result schema, as a fresh dict (callers may mutate it).

    Returns:
        The parsed ``result.schema.json``.
    """
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list | tuple)
    if name == "object":
        return isinstance(value, Mapping)
    raise InvalidParameterError(f"schema type {name!r} is not supported.")


def _resolve(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise InvalidParameterError(
            f"schema `$ref` must be local ('#/...'). Got {ref!r}."
        )
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node  # type: ignore[no-any-return]


def _where(path: str) -> str:
    return path or "(top level)"


def _errors(
    value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str
) -> Iterator[str]:
    unknown = set(schema) - _CHECKED - _ANNOTATIONS
    if unknown:
        raise InvalidParameterError(
            f"schema keyword(s) {sorted(unknown)} at {_where(path)} are not supported "
            "by dpaudit's validator."
        )
    if "$ref" in schema:
        yield from _errors(value, _resolve(root, schema["$ref"]), root, path)
    if "anyOf" in schema:
        options = [list(_errors(value, s, root, path)) for s in schema["anyOf"]]
        if all(options):
            yield f"`{_where(path)}` matches none of the allowed forms: {options[0][0]}"
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            yield (
                f"`{_where(path)}` must be of type {' or '.join(names)}. "
                f"Got {_short(value)}."
            )
            return
    if "const" in schema and not _same(value, schema["const"]):
        yield f"`{_where(path)}` must be {schema['const']!r}. Got {_short(value)}."
    if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
        yield (
            f"`{_where(path)}` must be one of {', '.join(map(repr, schema['enum']))}. "
            f"Got {_short(value)}."
        )
    if _is_type(value, "number") and not math.isnan(value):
        if "minimum" in schema and value < schema["minimum"]:
            yield f"`{_where(path)}` must be >= {schema['minimum']}. Got {value!r}."
        if "maximum" in schema and value > schema["maximum"]:
            yield f"`{_where(path)}` must be <= {schema['maximum']}. Got {value!r}."
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            yield (
                f"`{_where(path)}` must be > {schema['exclusiveMinimum']}. "
                f"Got {value!r}."
            )
    if isinstance(value, Mapping):
        for key in schema.get("required", ()):
            if key not in value:
                yield f"`{_join(path, key)}` is required but missing."
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                yield from _errors(item, properties[key], root, _join(path, key))
            elif extra is False:
                yield f"`{_join(path, str(key))}` is not an allowed key."
            elif isinstance(extra, Mapping):
                yield from _errors(item, extra, root, _join(path, str(key)))
    if isinstance(value, list | tuple) and "items" in schema:
        for i, item in enumerate(value):
            yield from _errors(item, schema["items"], root, f"{path}[{i}]")


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, and null equals only null.
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    return bool(a == b)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def schema_errors(value: Any, *, definition: str | None = None) -> list[str]:
    """Every way ``value`` breaks the result schema (empty when it conforms).

    Args:
        value: A parsed JSON document.
        definition: Validate against ``$defs/<definition>`` (e.g. ``"comparison"``)
            instead of the top-level result schema.

    Returns:
        Messages naming the offending key path, in document order.

    Raises:
        InvalidParameterError: If ``definition`` is unknown.
    """
    root = load_schema()
    schema: Mapping[str, Any] = root
    if definition is not None:
        if definition not in root["$defs"]:
            raise InvalidParameterError(
                f"`definition` must be one of {', '.join(root['$defs'])}. "
                f"Got {definition!r}."
            )
        schema = root["$defs"][definition]
    return list(_errors(value, schema, root, ""))


def validate(value: Any, *, source: str, definition: str | None = None) -> None:
    """Raises unless ``value`` conforms to the result schema.

    Args:
        value: A parsed JSON document.
        source: What to call the document in the message (usually its path).
        definition: As in :func:`schema_errors`.

    Raises:
        InvalidParameterError: Naming ``source`` and the first few violations.
    """
    errors = schema_errors(value, definition=definition)
    if errors:
        shown = "; ".join(e.rstrip(".") for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise InvalidParameterError(
            f"{source} is not a valid dpaudit result (schema_version "
            f"{SCHEMA_VERSION}): {shown}{more}."
        )
