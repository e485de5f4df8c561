"""A fuzz test of the plug-in contract's wire format (hypothesis): whatever a plug-in
states as its claim, its measurement transcript or its release, the parent's side
ends in a checked value or a one-line :class:`~dpaudit.errors.AuditError`; nothing
reaches the command's generic "unexpected ...; report it" handler.

The worker's own code (:class:`~dpaudit.generators.foreign.worker.Worker`) runs in
this process behind a stand-in for the worker process: every request and reply
crosses :mod:`~dpaudit.generators.foreign.wire` as bytes (``pack``, then a
:class:`~dpaudit.generators.foreign.wire.MessageBuffer`), exactly as on the pipes,
and the parent's code (:class:`~dpaudit.generators.foreign.generator.ForeignGenerator`)
is the real one. No process starts, so a few hundred examples take seconds.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.data import Domain
from dpaudit.errors import AuditError, PluginError
from dpaudit.generators.foreign import generator as foreign_generator
from dpaudit.generators.foreign import wire
from dpaudit.generators.foreign.generator import ForeignGenerator
from dpaudit.generators.foreign.worker import Worker
from dpaudit.rng import Rngs

PLUGIN = "fuzz_plugin:Hostile"
DOMAIN = Domain.from_json(
    {
        "columns": [
            {"name": "a", "kind": "binary"},
            {"name": "c", "kind": "categorical", "categories": ["x", "y", "<b>"]},
            {"name": "d", "kind": "integer", "lower": 0, "upper": 10},
            {"name": "e", "kind": "continuous", "lower": -1.0, "upper": 1.0},
        ]
    }
)
DATA = pd.DataFrame(
    {"a": [0, 1, 0, 1], "c": ["x", "y", "x", "<b>"], "d": [0, 3, 10, 5]}
).assign(e=[0.5, -0.5, 0.0, 1.0])


class Hostile:
    """The plug-in: it states whatever the example sets."""

    claim: ClassVar[Any] = None
    transcript: ClassVar[Any] = None
    release: ClassVar[Any] = None

    def __init__(self, *, epsilon: float, delta: float) -> None:
        pass

    def fit(self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int) -> Any:
        self.privacy_claim = Hostile.claim
        if Hostile.transcript is not None:
            self.privacy_transcript = Hostile.transcript
        return self

    def sample(self, n: int, *, seed: int) -> Any:
        return Hostile.release


def _through_the_pipe(
    header: dict[str, Any], blobs: list[bytes]
) -> tuple[dict[str, Any], list[bytes]]:
    buffer = wire.MessageBuffer()
    buffer.feed(wire.pack(header, blobs))
    message = buffer.message()
    assert message is not None
    return message


class InProcessWorker:
    """The worker process's stand-in: the worker's code, the wire's bytes."""

    def __init__(self) -> None:
        self.worker = Worker()
        self.worker.classes[PLUGIN] = Hostile
        self.models = itertools.count()
        self.data_ids: set[str] = set()
        self.drops: list[int] = []

    def request(
        self, header: dict[str, Any], blobs: list[bytes] = (), **_: Any
    ) -> tuple[dict[str, Any], list[bytes]]:
        sent, sent_blobs = _through_the_pipe(header, list(blobs))
        reply, reply_blobs = self.worker.handle(sent, sent_blobs)
        return _through_the_pipe(reply, reply_blobs)


@pytest.fixture(scope="module")
def generator() -> ForeignGenerator:
    """The real parent-side generator over the in-process worker."""
    with pytest.MonkeyPatch.context() as patch:
        stand_in = InProcessWorker()
        described = {"public_seed": False, "keywords": None, "canary_teachers": False}
        patch.setattr(foreign_generator, "describe", lambda *a, **k: described)
        patch.setattr(foreign_generator, "worker_for_thread", lambda *a: stand_in)
        yield ForeignGenerator(PLUGIN, PLUGIN, epsilon=1.0, delta=1e-5)


def _refused_in_one_line(err: AuditError) -> None:
    text = str(err)
    assert text and "\n" not in text, text
    assert "unexpected" not in text and "report it" not in text, text


def _fit(gen: ForeignGenerator) -> bool:
    """Fits; True when the claim was accepted, False on a one-line refusal."""
    try:
        gen.fit(DATA, domain=DOMAIN, rng=Rngs.from_seed(0))
    except AuditError as err:
        _refused_in_one_line(err)
        return False
    return True


# ------------------------------------------------------------------ strategies

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from(
        [1e308, 1.7976931348623157e308, 5e-324, -0.0, 0.0, 1e-300, 1 - 1e-16, 1.0]
    ),
    st.sampled_from([np.float32(1.5), np.int64(3), np.float64("nan"), np.bool_(1)]),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)
TEXT = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), max_size=6
) | st.sampled_from(["<img src=x onerror=1>", "\ud800", "\x1b[2J", "a\nb", ""])
LEAVES = NUMBERS | TEXT
JSONISH = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(TEXT | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)
CLAIM_VALUES = NUMBERS | JSONISH
RDP = st.fixed_dictionaries(
    {"orders": st.lists(NUMBERS, max_size=4), "epsilons": st.lists(NUMBERS, max_size=4)}
)
CLAIMS = st.one_of(
    JSONISH,
    st.fixed_dictionaries(
        {"epsilon": NUMBERS, "delta": NUMBERS},
        optional={
            "accountant": CLAIM_VALUES,
            "iterations": NUMBERS,
            "gdp_mu": NUMBERS,
            "zcdp_rho": NUMBERS,
            "rdp": RDP | JSONISH,
            "reference_rdp": RDP | JSONISH,
            "transcript_omits": CLAIM_VALUES,
            "<svg onload=1>": CLAIM_VALUES,
        },
    ),
)
GOOD_CLAIM = {"epsilon": 1.0, "delta": 1e-5, "accountant": "fuzz"}

CELL_VALUES = st.one_of(
    st.sampled_from([0, 1, 0.0, 1.0, True, "x", "y", "<b>", 10, 5.5, -1, 11]),
    NUMBERS,
)
COLUMN_NAMES = st.sampled_from(["a", "c", "d", "e", "z", ""]) | TEXT


@st.composite
def records(draw: st.DrawFn) -> Any:
    columns = draw(st.lists(COLUMN_NAMES, min_size=0, max_size=3) | JSONISH)
    width = len(columns) if isinstance(columns, list) else 1
    size = draw(st.integers(min_value=0, max_value=4))
    cells = draw(
        st.lists(st.lists(CELL_VALUES, min_size=width, max_size=width), max_size=size)
        | JSONISH
    )
    record: dict[Any, Any] = {
        "columns": columns,
        "cells": cells,
        "noisy": draw(st.lists(NUMBERS, max_size=5) | JSONISH),
        "noise": draw(
            st.dictionaries(
                st.sampled_from(["gaussian", "laplace", "x"]), NUMBERS, max_size=2
            )
            | JSONISH
        ),
    }
    if draw(st.booleans()):
        record["sets"] = draw(
            st.lists(st.lists(st.integers(-1, 5) | NUMBERS, max_size=3), max_size=4)
            | JSONISH
        )
    if draw(st.booleans()):
        record[draw(TEXT | st.integers())] = draw(JSONISH)
    for key in draw(st.lists(st.sampled_from(list(record)), max_size=1)):
        record.pop(key, None)
    return record


TRANSCRIPTS = st.one_of(JSONISH, st.lists(records(), max_size=3))


@st.composite
def releases(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(JSONISH)
    names = draw(
        st.lists(st.sampled_from(["a", "c", "d", "e", "z"]), max_size=5)
        | st.just(["a", "c", "d", "e"])
    )
    rows = draw(st.integers(0, 4))
    columns = {}
    for i, _ in enumerate(names):
        column_values = st.lists(CELL_VALUES, min_size=rows, max_size=rows)
        columns[i] = pd.Series(draw(column_values), dtype=object)
    frame = pd.DataFrame(columns, index=pd.RangeIndex(rows))
    for i in range(len(names)):
        if draw(st.booleans()):
            try:
                frame[i] = pd.to_numeric(frame[i])
            except (TypeError, ValueError, OverflowError):
                with contextlib.suppress(TypeError, ValueError, OverflowError):
                    frame[i] = frame[i].astype("category")
    frame.columns = names
    return frame


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ----------------------------------------------------------------------- tests


@SETTINGS
@given(claim=CLAIMS)
def test_any_claim_is_checked_or_refused_in_one_line(
    generator: ForeignGenerator, claim: Any
) -> None:
    Hostile.claim, Hostile.transcript = claim, None
    if _fit(generator):
        checked = generator.privacy_claim_
        assert math.isfinite(checked.epsilon) and checked.epsilon >= 0
        assert 0 <= checked.delta < 1


@SETTINGS
@given(transcript=TRANSCRIPTS)
def test_any_transcript_is_checked_or_refused_in_one_line(
    generator: ForeignGenerator, transcript: Any
) -> None:
    Hostile.claim, Hostile.transcript = GOOD_CLAIM, transcript
    assert _fit(generator)
    try:
        records_read = generator.read_transcript()
    except AuditError as err:
        _refused_in_one_line(err)
        return
    for record in records_read or ():
        assert math.isfinite(record.scale) and record.scale > 0
        assert all(math.isfinite(v) for v in record.noisy)
        assert len(set(record.cells)) == len(record.cells)


@SETTINGS
@given(release=releases())
def test_any_release_is_checked_or_refused_in_one_line(
    generator: ForeignGenerator, release: Any
) -> None:
    Hostile.claim, Hostile.transcript, Hostile.release = GOOD_CLAIM, None, release
    assert _fit(generator)
    try:
        out = generator.sample(4, rng=Rngs.from_seed(1))
    except AuditError as err:
        _refused_in_one_line(err)
        return
    assert list(out.columns) == ["a", "c", "d", "e"]
    DOMAIN.validate(out, name="release", min_rows=0)


def test_the_fuzz_reaches_both_outcomes(generator: ForeignGenerator) -> None:
    """The stand-in is the real path: a good claim, transcript and release pass; a
    broken one of each is refused (the fuzz above cannot pass vacuously)."""
    Hostile.claim = GOOD_CLAIM
    Hostile.transcript = [
        {"columns": ["c"], "cells": [["x"]], "noisy": [1.5], "noise": {"laplace": 2}}
    ]
    Hostile.release = DATA
    assert _fit(generator)
    assert generator.read_transcript() is not None
    assert len(generator.sample(4, rng=Rngs.from_seed(1))) == 4
    Hostile.claim = {"epsilon": float("inf"), "delta": 0.0}
    assert not _fit(generator)
    Hostile.claim = GOOD_CLAIM
    Hostile.transcript = [
        {
            "columns": ["c"],
            "cells": [["x"], ["x"]],
            "noisy": [1, 2],
            "noise": {"laplace": 2},
        }
    ]
    assert _fit(generator)
    with pytest.raises(PluginError, match=r"\['cells'\]\[1\] repeats \['cells'\]\[0\]"):
        generator.read_transcript()
    Hostile.release = DATA.assign(d=[0, 3, 10, 11])
    with pytest.raises(PluginError, match="outside the public domain"):
        generator.sample(4, rng=Rngs.from_seed(1))
