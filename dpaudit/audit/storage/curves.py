"""A round's claim as the store keeps it: its RDP curves apart, each distinct one once.

A claim's RDP curves (``rdp`` and ``reference_rdp``: a hundred orders and epsilons
each, about 2 KB of JSON apiece) are nine tenths of its JSON and the same in almost
every round of an audit. The store keeps each distinct curve once, in the table
``curves`` (its JSON, the SHA-256 of that JSON, :func:`curve_digest`, and a number);
the rest of the claim stays in ``rounds.claim`` and the table ``claim_curves`` says,
for a round, which field of its claim is which curve (a JSON object
``{field: number}``). The round's digest covers the curves' SHA-256 (not their
numbers: :func:`digested_text`), so swapping, editing or dropping a curve is caught.

A round without a ``claim_curves`` row keeps its whole claim in ``rounds.claim``: a
claim with no curve, and every round a store of an older dpaudit holds (it wrote each
claim whole), read as they were. :func:`join_claim` gives back exactly the dict
``json.loads(json.dumps(claim, sort_keys=True))`` that a whole claim reads as.
"""

from __future__ import annotations

import array
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

CURVES_SCHEMA = """
CREATE TABLE IF NOT EXISTS curves (
    id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, curve TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claim_curves (round INTEGER PRIMARY KEY, curves TEXT NOT NULL);
"""
"""The two tables of curves (created in every store, older ones included)."""


def _curve_key(value: Any) -> tuple[bytes, bytes] | None:
    """The exact key of an RDP curve ``{"orders": [...], "epsilons": [...]}`` of
    floats (their bits: equal keys print the same), or None for any other value."""
    if type(value) is not dict or value.keys() != {"orders", "epsilons"}:
        return None
    orders, epsilons = value["orders"], value["epsilons"]
    if type(orders) is not list or type(epsilons) is not list:
        return None
    if not set(map(type, orders)) | set(map(type, epsilons)) <= {float}:
        return None
    return array.array("d", orders).tobytes(), array.array("d", epsilons).tobytes()


def curve_digest(text: str) -> str:
    """The SHA-256 (hex) of a stored curve's JSON ``text``."""
    return hashlib.sha256(text.encode()).hexdigest()


def digested_text(rest: str, digests: Mapping[str, str] | None) -> str:
    """The claim text a round's digest covers: ``rounds.claim``, and with curves
    kept apart, a NUL and ``{field: SHA-256 of its curve}`` (JSON never holds a raw
    NUL, so the two layouts cannot read as one another).

    >>> digested_text('{"a": 1}', None)
    '{"a": 1}'
    >>> digested_text("{}", {"rdp": "ab"})
    '{}\\x00{"rdp": "ab"}'
    """
    if digests is None:
        return rest
    return f"{rest}\0{json.dumps(digests, sort_keys=True)}"


@dataclass(frozen=True, slots=True)
class StoredClaim:
    """A claim as :meth:`ResultStore.commit_batch` writes it.

    Attributes:
        rest: ``rounds.claim``: the claim's JSON without its curves (the whole
            claim when it has none).
        refs: ``claim_curves.curves``: JSON ``{field: curve number}``, or ``None``
            (no curve kept apart: no ``claim_curves`` row).
        text: what the round's digest covers (:func:`digested_text`).
    """

    rest: str
    refs: str | None
    text: str


def split_claim(
    claim: Mapping[str, Any],
    known: dict[tuple[bytes, bytes], tuple[int, str]],
    store_curve: Callable[[str, str], int],
) -> StoredClaim:
    """``claim`` with each top-level field that is an RDP curve of floats kept apart.

    ``known``: the curves met before (key -> number and SHA-256), so each distinct
    curve is encoded and hashed once; it gains the new ones, which
    ``store_curve(digest, json)`` stores and numbers.

    >>> c = {"rdp": {"orders": [2.0], "epsilons": [0.5]}, "epsilon": 1.0}
    >>> stored = {}
    >>> s = split_claim(c, {}, lambda d, t: stored.setdefault(d, (len(stored), t))[0])
    >>> s.rest, s.refs
    ('{"epsilon": 1.0}', '{"rdp": 0}')
    >>> curve = '{"epsilons": [0.5], "orders": [2.0]}'
    >>> stored == {curve_digest(curve): (0, curve)}
    True
    >>> split_claim({"rdp": None}, {}, store_curve=print).refs is None
    True
    """
    numbers: dict[str, int] = {}
    digests: dict[str, str] = {}
    for field, value in claim.items():
        key = _curve_key(value)
        if key is None:
            continue
        found = known.get(key)
        if found is None:
            text = json.dumps(value, sort_keys=True)
            digest = curve_digest(text)
            found = known[key] = (store_curve(digest, text), digest)
        numbers[field], digests[field] = found
    if not numbers:
        rest = json.dumps(claim, sort_keys=True)
        return StoredClaim(rest, None, rest)
    rest = json.dumps(
        {k: v for k, v in claim.items() if k not in numbers}, sort_keys=True
    )
    refs = json.dumps(numbers, sort_keys=True)
    return StoredClaim(rest, refs, digested_text(rest, digests))


def resolve(refs: str, digests: Mapping[int, str]) -> dict[str, str] | None:
    """A round's curve references (``claim_curves.curves``) as ``{field: SHA-256}``
    of the intact stored curves (``digests``: number -> SHA-256 of each curve whose
    JSON still has it); ``None`` when one is missing or changed, or ``refs`` is not
    what dpaudit writes.

    >>> resolve('{"rdp": 1}', {1: "ab"}), resolve('{"rdp": 2}', {1: "ab"})
    ({'rdp': 'ab'}, None)
    """
    try:
        numbers = json.loads(refs)
    except ValueError:
        return None
    if type(numbers) is not dict or not all(
        type(n) is int and n in digests for n in numbers.values()
    ):
        return None
    return {str(f): digests[n] for f, n in numbers.items()}


def join_claim(
    rest: Mapping[str, Any], refs: Mapping[str, int], curves: Mapping[int, Any]
) -> dict[str, Any]:
    """The claim whose curves (number -> parsed curve) were kept apart, its keys in
    sorted order as the whole claim's JSON (written with ``sort_keys``) reads.

    Raises:
        KeyError: a referenced curve is not stored (:meth:`ResultStore.verify`
            refuses such a store first).
    """
    fields = {**rest, **{field: curves[n] for field, n in refs.items()}}
    return {k: fields[k] for k in sorted(fields)}
