"""Distance to closest record: a threshold attack in Domain.encode's space."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpaudit.attacks.distance import DistanceAttack
from dpaudit.attacks.registry import make_attack
from dpaudit.data import Column, Domain
from dpaudit.errors import DataError
from dpaudit.rng import Rngs


@pytest.fixture
def small_domain() -> Domain:
    return Domain(
        (
            Column(name="x", kind="continuous", lower=0.0, upper=10.0),
            Column(name="z", kind="binary"),
            Column(name="c", kind="categorical", categories=("a", "b")),
        )
    )


def test_distance_on_a_tiny_example(small_domain: Domain) -> None:
    target = pd.DataFrame({"x": [5.0], "z": [1], "c": ["a"]})
    attack = make_attack(
        "distance", domain=small_domain, target=target, rng=Rngs.from_seed(0)
    )
    assert isinstance(attack, DistanceAttack)
    assert attack.trains_classifier is False
    first = pd.DataFrame({"x": [5.0, 7.0], "z": [0, 1], "c": ["a", "b"]})
    second = pd.DataFrame({"x": [6.0, 0.0, 20.0], "z": [1, 1, 1], "c": ["a", "a", "a"]})
    # first: (5, 0, a) -> 0 + 1 + 0 = 1; (7, 1, b) -> 0.2^2 + 0 + 2 = 2.04; min 1
    # second: (6, 1, a) -> 0.1^2 = 0.01; (0, 1, a) -> 0.25; (20, 1, a) clipped to 10
    #   -> 0.25; min 0.01
    features = attack.featurize([first, second])
    np.testing.assert_allclose(features, [[-1.0], [-0.1]], atol=1e-12)
    assert attack.fit(features, np.array([0, 1])) is attack
    np.testing.assert_array_equal(attack.score(features), features[:, 0])
    exact = pd.DataFrame({"x": [1.0, 5.0], "z": [0, 1], "c": ["b", "a"]})
    assert attack.featurize([exact])[0, 0] == 0.0


def test_distance_equals_brute_force_on_encoded_tables(
    mixed_domain: Domain, mixed_target: pd.DataFrame, random_tables
) -> None:
    """Equals the smallest Euclidean distance between Domain.encode rows (to float32
    rounding of the encoding); deterministic given the seed."""
    attack = DistanceAttack(domain=mixed_domain, target=mixed_target)
    gen = np.random.default_rng(3)
    tables = random_tables(gen, 4, 20) + random_tables(gen, 3, 7)
    features = attack.featurize(tables)
    encoded_target = mixed_domain.encode(mixed_target)[0].astype(np.float64)
    for row, table in zip(features, tables):
        encoded = mixed_domain.encode(table).astype(np.float64)
        expected = -np.min(np.linalg.norm(encoded - encoded_target, axis=1))
        np.testing.assert_allclose(row[0], expected, atol=1e-6)


def test_distance_rejects_bad_tables(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    attack = DistanceAttack(domain=mixed_domain, target=mixed_target)
    with pytest.raises(DataError, match="no rows"):
        attack.featurize([mixed_target.iloc[:0]])
    with pytest.raises(DataError, match="lacks the domain columns"):
        attack.featurize([mixed_target[["x"]]])
