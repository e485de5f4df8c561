"""Canary teachers inside a library's PATE: the adversary's teachers and the
transcript of the library's noisy votes (docs/adapters.md, "Canary teachers inside
the libraries").

A canary teacher votes "real" on every query exactly when the data its model trains
on holds the target record, whatever row it is asked about (docs/soundness.md,
"Canary teachers": PATE's proof covers any teacher). The library's own partition,
noise, accountant and stopping run as shipped; only the teachers' fitting and
prediction are the adversary's. Each answered query is recorded as what the library
computed: the clean count of "real" votes plus the noise the library drew, at the
scale it drew it with.

A record states ``noisy = (number of training records equal to the target) + noise``
(docs/plugins.md, "The measurement transcript"). Under canary teachers the clean
count is ``m`` times the number of the target's copies, where ``m`` is the number of
teachers whose model trains on a partition row (1 where each teacher has its own
model and partition; more where teachers share a model), a property of the library's
code, the same in both worlds. The record therefore states the vote divided by ``m``,
with the scale divided by ``m``: a bijection of what the library computed, so it
carries exactly its information, and the count it states is exact. A fit where the
vote is not ``m`` times the copies (two copies of the target in one partition, a
copy in no teacher's data) is refused: its vote is not such a count.

Standard library, numpy and pandas only (the module runs in the library's own
interpreter).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.adapters._common import AdapterInputError, columns_of
from dpaudit.adapters._transcript import Record, json_value

__all__ = ["CanaryVotes", "RecordingNumpy", "check_canary", "target_mask"]


def check_canary(value: Any) -> dict[str, Any] | None:
    """The ``canary`` option: None (the teachers as shipped), or the target record as
    a dict of column -> value (``--teachers canary`` passes the audit's target)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise AdapterInputError(
            "`canary` must be the target record as a table of column -> value "
            f"(--teachers canary passes it). Got {value!r:.80}."
        )
    return {str(k): v for k, v in value.items()}


def _equal(column: pd.Series, value: Any) -> np.ndarray:
    """Where ``column`` equals ``value`` (numbers by value: the library's 1.0 is 1)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        return np.asarray(numbers == float(value), dtype=bool)
    return np.asarray(column.to_numpy() == value, dtype=bool)


def target_mask(data: pd.DataFrame, target: dict[str, Any]) -> np.ndarray:
    """``[len(data)]``: the rows equal to ``target`` on every one of its columns."""
    missing = [c for c in target if c not in data.columns]
    if missing:
        raise AdapterInputError(
            f"`canary` names columns the table lacks: {missing}; pass the target "
            "record of the audited table."
        )
    mask = np.ones(len(data), dtype=bool)
    for name, value in target.items():
        mask &= _equal(data[name], value)
    return mask


class CanaryVotes:
    """The noisy votes of one fit under canary teachers, as transcript records.

    Args:
        target: the target record (``canary``).
        domain: the public domain (the record's columns, in its order).
        copies: how many rows of the fitted table equal the target.
    """

    def __init__(
        self, target: dict[str, Any], domain: dict[str, Any], copies: int
    ) -> None:
        names = [c["name"] for c in columns_of(domain)]
        absent = [c for c in names if c not in target]
        if absent:
            raise AdapterInputError(
                f"`canary` lacks the columns {absent}: pass the whole target record."
            )
        self.columns = names
        self.cell = [json_value(target[c]) for c in names]
        self.copies = int(copies)
        # scale (as stated, divided by m) -> the noisy answers, in order
        self.answers: dict[float, list[float]] = {}
        self.clean: set[int] = set()
        self.share = 0  # m: teachers per partition row (0: no query yet)
        self.queries = 0

    def add(self, clean: Any, noise: Any, scale: float, share: int) -> None:
        """One call of the library's vote: clean counts of "real" ``clean``, the
        noise the library drew ``noise`` (same shape), its scale, and ``share``
        (``m``: teachers whose model trains on each partition row)."""
        votes = np.asarray(clean, dtype=np.float64).ravel()
        drawn = np.asarray(noise, dtype=np.float64).ravel()
        if votes.shape != drawn.shape:
            raise RuntimeError(
                f"the library drew {drawn.size} noise values for {votes.size} votes."
            )
        if not (math.isfinite(scale) and scale > 0 and share >= 1):
            raise RuntimeError(f"noise scale {scale!r}, share {share!r}.")
        expected = share * self.copies
        if np.any(votes != expected):
            raise AdapterInputError(
                f"canary teachers: a query's clean vote was "
                f"{sorted({int(v) for v in votes})}, not {share} teacher(s) per copy "
                f"x {self.copies} copies of the target: the target sits twice in one "
                "teacher's data, or in none (a table whose rows the library leaves "
                "out of every partition). Audit a table where the target is one row "
                "that every partition keeps (e.g. --dataset worst-case "
                "--dataset-rows 2000)."
            )
        if self.share and share != self.share:
            raise RuntimeError(f"teachers per row changed: {self.share} -> {share}.")
        self.share = share
        self.clean.update(int(v) for v in votes)
        # What the library computed (its `votes + noise`, in double), divided by m.
        noisy = (votes + drawn) / share
        self.answers.setdefault(float(scale) / share, []).extend(noisy.tolist())
        self.queries += votes.size

    def records(self) -> list[Record]:
        """One record per noise scale: every answer counts the target's cell."""
        return [
            {
                "columns": list(self.columns),
                "cells": [list(self.cell)],
                "sets": [[0] for _ in answers],
                "noisy": [float(v) for v in answers],
                "noise": {"laplace": scale},
            }
            for scale, answers in self.answers.items()
        ]

    def claim(self) -> dict[str, Any]:
        """What the canary teachers did, for the claim (``canary_*`` keys)."""
        return {
            "canary_copies": self.copies,
            "canary_teachers_per_row": self.share,
            "canary_clean_votes": sorted(self.clean),
            "canary_queries": self.queries,
        }


class _Random:
    """numpy's ``random`` for a library's vote: ``laplace`` is numpy's own global
    draw, recorded (value and scale); every other name is numpy's."""

    def __init__(self, draws: list[tuple[Any, float]]) -> None:
        self._draws = draws

    def laplace(self, *args: Any, **kw: Any) -> Any:
        laplace = np.random.laplace  # the library's global draw, as it calls it
        value = laplace(*args, **kw)
        # numpy's signature: laplace(loc=0.0, scale=1.0, size=None)
        scale = kw["scale"] if "scale" in kw else args[1] if len(args) > 1 else 1.0
        self._draws.append((np.array(value, copy=True), float(scale)))
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(np.random, name)


class RecordingNumpy:
    """numpy, for a library module's ``np`` during one call: its
    ``random.laplace`` is numpy's own global draw, recorded as ``(value, scale)`` in
    ``draws``; every other name is numpy's."""

    def __init__(self, draws: list[tuple[Any, float]]) -> None:
        self.random = _Random(draws)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)
