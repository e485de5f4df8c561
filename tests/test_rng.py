"""Seeding: one root seed, idempotent spawning, independent streams."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs


def test_spawn_is_idempotent_and_matches_seedsequence() -> None:
    root = Rngs.from_seed(7)
    first = [r.int_seed() for r in root.spawn(4)]
    assert first == [r.int_seed() for r in root.spawn(4)]
    expected = np.random.SeedSequence(7).spawn(4)
    assert [r.spawn_key for r in root.spawn(4)] == [tuple(s.spawn_key) for s in expected]
    assert len(set(first)) == 4
    assert first != [r.int_seed() for r in Rngs.from_seed(8).spawn(4)]


def test_torch_generator_reproducible() -> None:
    rng = Rngs.from_seed(3)
    a = rng.torch().seed()
    assert rng.torch().initial_seed() == rng.torch().initial_seed()
    assert a is not None


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_seed(bad) -> None:
    with pytest.raises(InvalidParameterError, match="`seed` must be a non-negative integer"):
        Rngs.from_seed(bad)
