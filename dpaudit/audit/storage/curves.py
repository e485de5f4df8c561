"""A round's claim as the store keeps it: its RDP curves apart, each distinct one once.

A claim's RDP curves (``rdp`` and ``reference_rdp``: a hundred orders and epsilons
each, about 2 KB of JSON apiece) are nine tenths of its JSON and the same in almost
every round of an audit. The store keeps each distinct curve once, in the table
``curves`` (the curve's JSON keyed by its SHA-256, :func:`curve_digest`); the rest of
the claim stays in ``rounds.claim`` and the table ``claim_curves`` says, for a round,
which field of its claim is which curve (a JSON object ``{field: digest}``).

A round without a ``claim_curves`` row keeps its whole claim in ``rounds.claim``: a
claim with no curve, and every round a store of an older dpaudit holds (it wrote each
claim whole), read as they were. :func:`join_claim` gives back exactly the dict
``json.loads(json.dumps(claim, sort_keys=True))`` that a whole claim reads as.
"""

from __future__ import annotations

import array
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CURVES_SCHEMA = """
CREATE TABLE IF NOT EXISTS curves (digest TEXT PRIMARY KEY, curve TEXT NOT NULL);
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
    """The key of a stored curve: the SHA-256 (hex) of its JSON ``text``."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredClaim:
    """A claim as :meth:`ResultStore.commit_batch` writes it.

    Attributes:
        rest: ``rounds.claim``: the claim's JSON without its curves (the whole
            claim when it has none).
        refs: ``claim_curves.curves``: JSON ``{field: digest}``, or ``None`` (no
            curve kept apart: no ``claim_curves`` row).
        curves: digest -> JSON of each curve first met in this batch.
    """

    rest: str
    refs: str | None
    curves: dict[str, str]

    @property
    def text(self) -> str:
        """What the round's digest covers (:func:`digested_text`)."""
        return digested_text(self.rest, self.refs)


def digested_text(rest: str, refs: str | None) -> str:
    """The claim text a round's digest covers: ``rounds.claim``, and with curves
    kept apart, a NUL and their references (JSON never holds a raw NUL, so the two
    layouts cannot read as one another).

    >>> digested_text('{"a": 1}', None)
    '{"a": 1}'
    """
    return rest if refs is None else f"{rest}\0{refs}"


def split_claim(
    claim: Mapping[str, Any], known: dict[tuple[bytes, bytes], tuple[str, str]]
) -> StoredClaim:
    """``claim`` with each top-level field that is an RDP curve of floats kept apart.

    ``known``: the curves met before in this batch (key -> digest and JSON), so each
    distinct curve is encoded and hashed once; it gains the new ones.

    >>> c = {"rdp": {"orders": [2.0], "epsilons": [0.5]}, "epsilon": 1.0}
    >>> s = split_claim(c, {})
    >>> s.rest
    '{"epsilon": 1.0}'
    >>> curve = '{"epsilons": [0.5], "orders": [2.0]}'
    >>> s.curves == {curve_digest(curve): curve}
    True
    >>> s.refs == json.dumps({"rdp": curve_digest(curve)})
    True
    >>> split_claim({"rdp": None}, {}).refs is None
    True
    """
    refs: dict[str, str] = {}
    new: dict[str, str] = {}
    for field, value in claim.items():
        key = _curve_key(value)
        if key is None:
            continue
        found = known.get(key)
        if found is None:
            text = json.dumps(value, sort_keys=True)
            found = known[key] = (curve_digest(text), text)
            new[found[0]] = text
        refs[field] = found[0]
    if not refs:
        return StoredClaim(json.dumps(claim, sort_keys=True), None, {})
    rest = {k: v for k, v in claim.items() if k not in refs}
    return StoredClaim(
        json.dumps(rest, sort_keys=True), json.dumps(refs, sort_keys=True), new
    )


def join_claim(
    rest: Mapping[str, Any], refs: Mapping[str, str], curves: Mapping[str, Any]
) -> dict[str, Any]:
    """The claim whose curves (digest -> parsed curve) were kept apart, its keys in
    sorted order as the whole claim's JSON (written with ``sort_keys``) reads.

    Raises:
        KeyError: a referenced curve is not stored (:meth:`ResultStore.verify`
            refuses such a store first).
    """
    fields = {**rest, **{field: curves[digest] for field, digest in refs.items()}}
    return {k: fields[k] for k in sorted(fields)}
