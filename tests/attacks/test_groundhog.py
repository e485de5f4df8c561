"""GroundHog features (Stadler et al. 2022), the shared random forest and the registry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from dpaudit.attacks.base import Attack
from dpaudit.attacks.groundhog import (
    GroundHogAttack,
    correlation_features,
    histogram_features,
    naive_features,
)
from dpaudit.attacks.registry import (
    ATTACK_NAMES,
    attack_options,
    expand_attacks,
    make_attack,
)
from dpaudit.data import Column, Domain
from dpaudit.errors import (
    DataError,
    DpauditWarning,
    InvalidParameterError,
    NotFittedError,
)
from dpaudit.rng import Rngs

# Hand-computed features of `mixed_table` (x = 1, 2, 3, 10; y = 0, 4, 4, 0;
# z = 0, 1, 1, 1; c = a, c, c, b, i.e. codes 0, 2, 2, 1).
NAIVE = [
    # min, max, mean, median, variance (ddof=0)
    1.0, 10.0, 4.0, 2.5, 12.5,     # x: deviations -3, -2, -1, 6 -> 50 / 4
    0.0, 4.0, 2.0, 2.0, 4.0,       # y: deviations +-2 -> 16 / 4
    0.0, 1.0, 0.75, 1.0, 0.1875,   # z: 0.75 * 0.25
    0.0, 2.0, 1.25, 1.5, 0.6875,   # c: (1.5625 + 0.5625 + 0.5625 + 0.0625) / 4
]  # fmt: skip
HISTOGRAM = [
    0.25, 0.5, 0.0, 0.0, 0.25,     # x in bins of [0, 10] of width 2: 1 | 2, 3 | - | - | 10
    0.5, 0.0, 0.0, 0.0, 0.5,       # y in bins of [0, 4] of width 0.8: 0, 0 | - | - | - | 4, 4
    0.25, 0.75,                    # z = 0, z = 1
    0.25, 0.25, 0.5,               # c = a, b, c
]  # fmt: skip
# Pearson correlations from the centred columns x' = (-3, -2, -1, 6), y' = (-2, 2, 2, -2),
# z' = (-0.75, 0.25, 0.25, 0.25), c' = (-1.25, 0.75, 0.75, -0.25); sums of squares
# 50, 16, 0.75, 2.75. Order: (x,y), (x,z), (x,c), (y,z), (y,c), (z,c).
CORRELATION = [
    -12.0 / np.sqrt(50 * 16),      # -0.42426
    3.0 / np.sqrt(50 * 0.75),      #  0.48990
    0.0,                           #  3.75 - 1.5 - 0.75 - 1.5 = 0
    2.0 / np.sqrt(16 * 0.75),      #  0.57735
    6.0 / np.sqrt(16 * 2.75),      #  0.90453
    1.25 / np.sqrt(0.75 * 2.75),   #  0.87039
]  # fmt: skip


def _attack(domain: Domain, target: pd.DataFrame, feature_set: str) -> GroundHogAttack:
    return GroundHogAttack(
        domain=domain,
        target=target,
        rng=Rngs.from_seed(0),
        feature_set=feature_set,  # type: ignore[arg-type]
    )


# -------------------------------------------------------------- feature sets
@pytest.mark.parametrize(
    ("feature_set", "expected"),
    [
        ("naive", NAIVE),
        ("histogram", HISTOGRAM),
        ("correlation", CORRELATION),
        ("all", NAIVE + HISTOGRAM + CORRELATION),
    ],
)
def test_feature_sets_match_hand_computed_values(
    mixed_domain: Domain,
    mixed_table: pd.DataFrame,
    mixed_target: pd.DataFrame,
    feature_set: str,
    expected: list[float],
) -> None:
    attack = _attack(mixed_domain, mixed_target, feature_set)
    features = attack.featurize([mixed_table])
    assert features.shape == (1, attack.n_features)
    assert len(attack.feature_names) == attack.n_features
    np.testing.assert_allclose(features[0], expected, rtol=0, atol=1e-12)


def test_correlation_of_constant_column_is_zero() -> None:
    # 0.1 repeated: the float mean is not exactly 0.1, so a rounded standard deviation
    # would not be 0; constancy must be detected exactly.
    values = np.array([[[1.0, 0.1, 2.0], [2.0, 0.1, 4.0], [3.0, 0.1, 0.0]]])
    features = correlation_features(values)
    assert not np.isnan(features).any()
    # (a, b), (a, c), (b, c): b is constant; corr(a, c) = -2 / sqrt(2 * 8) = -0.5.
    np.testing.assert_allclose(features, [[0.0, -0.5, 0.0]], atol=1e-12)


def test_all_constant_dataset_has_finite_features(mixed_domain: Domain) -> None:
    table = pd.DataFrame({"x": [3.0] * 5, "y": [1] * 5, "z": [1] * 5, "c": ["b"] * 5})
    target = table.iloc[[0]]
    features = _attack(mixed_domain, target, "all").featurize([table])
    assert np.isfinite(features).all()
    np.testing.assert_array_equal(features[0, -6:], 0.0)


def test_histogram_bins_come_from_the_domain_not_the_data() -> None:
    domain = Domain((Column(name="x", kind="continuous", lower=0.0, upper=100.0),))
    # The data span [1, 10]: bins of the data's range would spread them over 5 bins;
    # the public bins [0, 20), ..., [80, 100] hold them all in the first.
    values = np.array([[[1.0], [3.0], [5.0], [10.0]]])
    np.testing.assert_array_equal(
        histogram_features(values, domain=domain, bins=5), [[1.0, 0.0, 0.0, 0.0, 0.0]]
    )
    # The upper bound falls in the last bin; bin edges are half-open on the right.
    edges = np.array([[[0.0], [20.0], [39.999], [80.0], [100.0]]])
    np.testing.assert_array_equal(
        histogram_features(edges, domain=domain, bins=5), [[0.2, 0.4, 0.0, 0.0, 0.4]]
    )


def test_naive_features_doctest_example() -> None:
    values = np.array([[[1.0], [2.0], [6.0]]])
    # mean 3, median 2, variance (4 + 1 + 9) / 3
    np.testing.assert_allclose(naive_features(values), [[1.0, 6.0, 3.0, 2.0, 14 / 3]])


def test_vectorised_features_equal_a_per_dataset_pandas_oracle(
    mixed_domain: Domain, mixed_target: pd.DataFrame, random_tables
) -> None:
    """Stacked featurisation of datasets of unequal sizes equals one-at-a-time pandas
    and NumPy statistics (deterministic given the seed)."""
    gen = np.random.default_rng(7)
    tables = (
        random_tables(gen, 5, 30)
        + random_tables(gen, 3, 11)
        + random_tables(gen, 2, 30)
    )
    features = _attack(mixed_domain, mixed_target, "all").featurize(tables)
    codes = {"a": 0, "b": 1, "c": 2}
    for row, table in zip(features, tables):
        numeric = table.assign(c=table["c"].map(codes)).astype(float)
        naive = np.stack(
            [
                numeric.min(),
                numeric.max(),
                numeric.mean(),
                numeric.median(),
                numeric.var(ddof=0),
            ],
            axis=1,
        ).ravel()
        n = len(table)
        hist = np.concatenate(
            [
                np.histogram(table["x"], bins=5, range=(0, 10))[0] / n,
                np.histogram(table["y"], bins=5, range=(0, 4))[0] / n,
                [np.mean(table["z"] == 0), np.mean(table["z"] == 1)],
                [np.mean(table["c"] == k) for k in "abc"],
            ]
        )
        corr = np.corrcoef(numeric.to_numpy().T)[np.triu_indices(4, k=1)]
        np.testing.assert_allclose(row, np.concatenate([naive, hist, corr]), atol=1e-10)


def test_featurize_rejects_bad_input(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    attack = _attack(mixed_domain, mixed_target, "naive")
    with pytest.raises(InvalidParameterError, match="sequence of DataFrames"):
        attack.featurize(mixed_target)  # type: ignore[arg-type]
    with pytest.raises(DataError, match="lacks the domain columns"):
        attack.featurize([mixed_target.drop(columns=["z"])])
    with pytest.raises(DataError, match="no rows"):
        attack.featurize([mixed_target.iloc[:0]])
    with pytest.raises(DataError, match="categories"):
        attack.featurize([mixed_target.assign(c="zzz")])
    assert attack.featurize([]).shape == (0, attack.n_features)
    with pytest.raises(InvalidParameterError, match="feature_set"):
        _attack(mixed_domain, mixed_target, "fancy")


# ------------------------------------------------------- the shared classifier
@pytest.mark.statistical
def test_random_forest_separates_two_families_of_datasets(seed: int) -> None:
    """End to end (make_attack -> featurize -> fit -> score): AUC 1 on two families of
    datasets that the histogram features separate.

    Family 0 puts every x in the first public bin [0, 0.2); family 1 puts a fraction
    f in {0.2, ..., 0.8} of its rows in the last bin [0.8, 1], the rest in the first
    (training rounds cycle through the seven values of f, 4 or more rounds each; test
    rounds draw f at random). The only non-constant features, the first and last
    bins' frequencies (1 vs 1 - f <= 0.8; 0 vs f >= 0.2), each separate the families,
    so every split of every tree separates its bootstrap sample exactly, and family 0
    test rounds score exactly what a constant tree adds to all rounds. A tree whose
    bootstrap holds a family-1 round with f = 0.2 (and a family-0 round) puts its
    threshold at 0.1 (last bin) or 0.9 (first bin) and so scores every family-1 test
    round above every family-0 one. AUC < 1 needs all 100 trees to miss the >= 4
    rounds with f = 0.2 among 60: probability <= (1 - 4/60)**6000 < 1e-170.
    """
    domain = Domain(
        (
            Column(name="x", kind="continuous", lower=0.0, upper=1.0),
            Column(name="z", kind="binary"),
        )
    )
    gen = np.random.default_rng(seed)
    n = 40

    def family(label: int, tenths: int) -> pd.DataFrame:
        x = gen.uniform(0.0, 0.2, n)
        if label:
            k = tenths * n // 10
            x[:k] = gen.uniform(0.8, 1.0, k)
        return pd.DataFrame({"x": x, "z": np.zeros(n, dtype=np.int64)})

    train_labels = np.tile([0, 1], 30)
    test_labels = np.tile([0, 1], 20)
    train = [family(int(b), 2 + (i // 2) % 7) for i, b in enumerate(train_labels)]
    test = [family(int(b), int(gen.integers(2, 9))) for b in test_labels]
    target = pd.DataFrame({"x": [0.9], "z": [0]})
    attack = make_attack(
        "groundhog-histogram", domain=domain, target=target, rng=Rngs.from_seed(seed)
    )
    attack.fit(attack.featurize(train), train_labels)
    scores = attack.score(attack.featurize(test))
    assert scores.shape == (40,)
    assert roc_auc_score(test_labels, scores) >= 0.99


def test_one_class_training_set_gives_a_constant_score(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    attack = _attack(mixed_domain, mixed_target, "naive")
    features = np.arange(40.0).reshape(2, 20)
    with pytest.raises(NotFittedError):
        attack.score(features)
    with pytest.warns(DpauditWarning, match="one class"):
        attack.fit(features, np.array([1, 1]))
    np.testing.assert_array_equal(attack.score(np.zeros((3, 20))), [1.0, 1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="20 columns"):
        attack.score(np.zeros((3, 4)))
    with pytest.raises(InvalidParameterError, match="membership bits"):
        attack.fit(features, np.array([0, 2]))


def test_same_seed_same_forest_different_seed_different_forest(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    def build(seed: int) -> GroundHogAttack:
        return GroundHogAttack(
            domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(seed)
        )

    assert build(3).random_state == build(3).random_state
    assert build(3).random_state != build(4).random_state


# --------------------------------------------------------------------- registry
def test_make_attack_builds_every_name(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    for name in ATTACK_NAMES:
        attack = make_attack(
            name, domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(0)
        )
        assert isinstance(attack, Attack)
        assert attack.name == name
        assert attack.trains_classifier == (name != "distance")
    naive = make_attack(
        "groundhog-naive",
        domain=mixed_domain,
        target=mixed_target,
        rng=Rngs.from_seed(0),
    )
    assert isinstance(naive, GroundHogAttack)
    assert naive.feature_set == "naive"


def test_make_attack_rejects_unknown_names_and_options(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    kwargs = {"domain": mixed_domain, "target": mixed_target, "rng": Rngs.from_seed(0)}
    with pytest.raises(InvalidParameterError, match="querybased, groundhog"):
        make_attack("membership-oracle", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="expand_attacks"):
        make_attack("all", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="n_queries"):
        make_attack("groundhog", n_queries=5, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="bins"):
        make_attack("groundhog", bins=0, **kwargs)  # type: ignore[arg-type]


def test_expand_attacks() -> None:
    assert expand_attacks("all") == list(ATTACK_NAMES)
    assert expand_attacks("groundhog-naive") == ["groundhog-naive"]
    with pytest.raises(InvalidParameterError, match="nearest, default, all"):
        expand_attacks("nope")
    assert "n_queries" in attack_options("querybased")
    assert attack_options("distance") == ()
