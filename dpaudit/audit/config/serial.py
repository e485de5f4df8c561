"""JSON forms derived from frozen dataclasses: one writer and one reader for every
record of ``result.json``.

A field's JSON key is its name, or the ``json`` entry of its metadata: a dotted path
(``"roc.fpr"``) puts it inside a nested object, and ``None`` marks a field that is
neither written nor read. A field whose metadata has ``"key": True`` is filled from
the key of the mapping that holds the record (an attack's name). A field whose
metadata has ``"omit_if": v`` is not written while its value is ``v`` (``None`` or
``False``: a key added later leaves the documents that do not use it byte for byte
as they were). :func:`to_json`
writes plain JSON types, with NaN and infinities as ``null`` (:func:`nan_to_null`,
the one such helper); :func:`from_json` reads a parsed document by the fields' type
hints and refuses a value of the wrong type naming its path. A missing key, or a
``null`` for a field that is not optional, takes the field's default; a key without
a default must be present.
"""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_choice, require

__all__ = [
    "freeze",
    "from_json",
    "json_fields",
    "json_keys",
    "nan_to_null",
    "thaw",
    "to_json",
]

T = TypeVar("T")


def freeze(value: Any) -> Any:
    """A read-only deep copy of parsed JSON: dicts become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of :func:`freeze`: plain dicts and lists, ready for ``json.dumps``."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


def nan_to_null(value: Any) -> Any:
    """``value`` (nested mappings and sequences) with NaN and infinities as ``None``:
    JSON has no literal for them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: nan_to_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [nan_to_null(v) for v in value]
    return value


def _path(f: Field[Any]) -> tuple[str, ...] | None:
    key = f.metadata.get("json", f.name)
    return None if key is None or f.metadata.get("key") else tuple(key.split("."))


def json_fields(cls: type) -> Iterator[tuple[Field[Any], tuple[str, ...]]]:
    """``(field, JSON path)`` of every field of ``cls`` that is written."""
    for f in fields(cls):
        path = _path(f)
        if path is not None:
            yield f, path


def json_keys(cls: type) -> frozenset[str]:
    """The top-level JSON keys a record writes (for the schema-consistency test)."""
    return frozenset(path[0] for _, path in json_fields(cls))


def to_json(value: Any) -> Any:
    """The JSON form of a record (dataclass), an enum, a mapping or a sequence."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f, path in json_fields(type(value)):
            if (
                "omit_if" in f.metadata
                and getattr(value, f.name) is f.metadata["omit_if"]
            ):
                continue
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = to_json(getattr(value, f.name))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    item = getattr(value, "item", None)  # a NumPy scalar
    return item() if callable(item) and not isinstance(value, str | bytes) else value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _has_default(f: Field[Any]) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _optional(hint: Any) -> bool:
    return _is_union(hint) and type(None) in get_args(hint)


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (typing.Union, types.UnionType)


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    require(isinstance(value, Mapping), name, "a JSON object", value)
    return value  # type: ignore[no-any-return]


def from_json(cls: type[T], doc: Any, where: str = "", **given: Any) -> T:
    """Reads a record of type ``cls`` from parsed JSON.

    Args:
        cls: A frozen dataclass.
        doc: The parsed JSON object.
        where: Its path in the document, named in errors.
        **given: Field values supplied by the caller (not read from ``doc``).

    Raises:
        InvalidParameterError: A required key is missing or a value has the wrong
            type (the message names its path).
    """
    data = _mapping(doc, where or "the document")
    record: Any = cls
    hints = _hints(record)
    kwargs: dict[str, Any] = {}
    for f in fields(record):
        if f.name in given:
            kwargs[f.name] = given[f.name]
            continue
        path = _path(f)
        if path is None:
            continue
        value: Any = data
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        name = ".".join(p for p in (where, *path) if p)
        hint = hints[f.name]
        if value is None and not _optional(hint):
            if _has_default(f):
                continue
            raise InvalidParameterError(f"`{name}` is required but missing.")
        kwargs[f.name] = _read(hint, value, name)
    try:
        return cls(**kwargs)
    except TypeError as err:  # a required field without a JSON key
        raise InvalidParameterError(f"`{where or cls.__name__}`: {err}") from err


def _read(hint: Any, value: Any, name: str) -> Any:
    """``value`` read as type ``hint``."""
    if hint is Any:
        return freeze(value)
    if _is_union(hint):
        if value is None:
            return None
        inner = [a for a in get_args(hint) if a is not type(None)]
        return _read(inner[0] if len(inner) == 1 else Any, value, name)
    origin = get_origin(hint)
    if origin is Literal:
        return check_choice(value, name, get_args(hint))
    if origin is tuple:
        require(isinstance(value, list | tuple), name, "a JSON array", value)
        item = get_args(hint)[0]
        return tuple(_read(item, v, f"{name}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict) or hint is Mapping:
        data = _mapping(value, name)
        args = get_args(hint)
        item = args[1] if args else Any
        if is_dataclass(item) and any(f.metadata.get("key") for f in fields(item)):
            key = next(f.name for f in fields(item) if f.metadata.get("key"))
            return MappingProxyType(
                {
                    str(k): from_json(item, v, f"{name}.{k}", **{key: str(k)})
                    for k, v in data.items()
                }
            )
        return MappingProxyType(
            {str(k): _read(item, v, f"{name}.{k}") for k, v in data.items()}
        )
    if isinstance(hint, type) and is_dataclass(hint):
        return from_json(hint, value, name)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(check_choice(value, name, [m.value for m in hint]))
    if hint is bool:
        require(isinstance(value, bool), name, "true or false", value)
        return value
    if hint is int:
        require(
            isinstance(value, int) and not isinstance(value, bool),
            name,
            "an integer",
            value,
        )
        return int(value)
    if hint is float:
        require(
            isinstance(value, int | float) and not isinstance(value, bool),
            name,
            "a number",
            value,
        )
        return float(value)
    if hint is str:
        require(isinstance(value, str), name, "a string", value)
        return value
    raise TypeError(f"no JSON reader for {hint!r} ({name})")  # a dpaudit bug
