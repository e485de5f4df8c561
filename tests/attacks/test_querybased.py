"""Query-based attack (Houssiau et al. 2022, TAPAS): counts, queries, determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from dpaudit.attacks.querybased import QueryBasedAttack
from dpaudit.attacks.registry import make_attack
from dpaudit.data import Column, Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs

# Worst case, target (1, 1, 1); a released dataset of 5 rows:
WORST_ROWS = [(0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 0, 1), (1, 1, 0)]
# Hand counts, in the documented order: one-way marginals, then (a,b), (a,c), (b,c)
# tables (cells 00, 01, 10, 11), then the full table (000, 001, ..., 111).
WORST_COUNTS = [
    2, 3,  # a = 0, 1
    3, 2,  # b = 0, 1
    3, 2,  # c = 0, 1
    2, 0, 1, 2,  # (a, b): rows 00, 00, 11, 10, 11
    2, 0, 1, 2,  # (a, c): rows 00, 00, 11, 11, 10
    2, 1, 1, 1,  # (b, c): rows 00, 00, 11, 01, 10
    2, 0, 0, 0, 0, 1, 1, 1,  # (a, b, c): 000 x2, 101, 110, 111
]  # fmt: skip


def _worst_table(rows: list[tuple[int, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["a", "b", "c"]).astype(np.int64)


def test_worst_case_counts_every_cell_of_every_marginal(
    worst_domain: Domain, worst_target: pd.DataFrame
) -> None:
    attack = QueryBasedAttack(
        domain=worst_domain, target=worst_target, rng=Rngs.from_seed(0)
    )
    assert attack.exhaustive
    assert attack.n_features == 3**3 - 1 == 26
    assert attack.queries[0] == (("a", 0),)
    assert attack.queries[6] == (("a", 0), ("b", 0))
    assert attack.queries[-1] == (("a", 1), ("b", 1), ("c", 1))
    assert attack.feature_names[-1] == "a=1 & b=1 & c=1"
    features = attack.featurize([_worst_table(WORST_ROWS)])
    np.testing.assert_allclose(features[0], np.array(WORST_COUNTS) / 5, atol=1e-15)


def test_worst_case_counts_are_normalised_by_each_dataset_size(
    worst_domain: Domain, worst_target: pd.DataFrame
) -> None:
    attack = QueryBasedAttack(
        domain=worst_domain, target=worst_target, rng=Rngs.from_seed(0)
    )
    small = _worst_table([(1, 1, 1), (0, 0, 0)])
    features = attack.featurize(
        [_worst_table(WORST_ROWS), small, _worst_table(WORST_ROWS)]
    )
    np.testing.assert_allclose(features[0], features[2])
    # the target cell: 1 of 5 rows, then 1 of 2 rows
    np.testing.assert_allclose(features[:, -1], [0.2, 0.5, 0.2])
    # each one-way marginal sums to 1
    np.testing.assert_allclose(features[:, 0] + features[:, 1], 1.0)


def test_random_queries_are_deterministic_in_the_seed(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    def queries(seed: int) -> tuple[tuple[str, ...], ...]:
        attack = QueryBasedAttack(
            domain=mixed_domain,
            target=mixed_target,
            rng=Rngs.from_seed(seed),
            n_queries=50,
        )
        assert not attack.exhaustive
        return attack.queries

    assert queries(11) == queries(11)
    assert queries(11) != queries(12)
    drawn = queries(11)
    assert len(drawn) == 50
    assert {len(q) for q in drawn} <= {1, 2, 3}
    assert all(len(set(q)) == len(q) for q in drawn)  # no repeated column in a query


def test_tolerance_matching_on_a_continuous_column() -> None:
    domain = Domain(
        (
            Column(name="x", kind="continuous", lower=0.0, upper=100.0),
            Column(name="z", kind="binary"),
        )
    )
    target = pd.DataFrame({"x": [50.0], "z": [1]})
    table = pd.DataFrame(
        # radius 5% of 100 = 5: 45 and 55 (the edges) and 50 match, 44.9 and 56 do not
        {"x": [45.0, 55.0, 50.0, 44.9, 56.0], "z": [1, 0, 1, 1, 1]}
    )

    def features(orders: tuple[int, ...], **options: object) -> list[float]:
        attack = QueryBasedAttack(
            domain=domain,
            target=target,
            rng=Rngs.from_seed(0),
            n_queries=4,
            orders=orders,
            **options,  # type: ignore[arg-type]
        )
        out = attack.featurize([table])[0]
        return sorted(set(out.tolist()))

    # orders (2,): every query is {x, z}: rows 45/1 and 50/1 -> 2 of 5
    assert features((2,)) == [0.4]
    # orders (1,): queries {x} (3 of 5) or {z} (4 of 5)
    assert set(features((1,))) <= {0.6, 0.8}
    # bins of width 20: the target's bin [40, 60) holds every x; z = 1 in 4 rows
    assert features((2,), match="bins") == [0.8]
    assert features((2,), tolerance=0.0) == [0.2]


def test_random_mode_equals_a_per_query_pandas_oracle(
    mixed_domain: Domain, mixed_target: pd.DataFrame, random_tables
) -> None:
    """Vectorised counts equal a per-query, per-dataset pandas count (deterministic)."""
    attack = QueryBasedAttack(
        domain=mixed_domain,
        target=mixed_target,
        rng=Rngs.from_seed(5),
        n_queries=40,
        tolerance=0.1,
    )
    gen = np.random.default_rng(5)
    tables = random_tables(gen, 6, 25) + random_tables(gen, 2, 9)
    features = attack.featurize(tables)
    radius = {"x": 1.0, "y": 0.4}
    for row, table in zip(features, tables):
        expected = []
        for query in attack.queries:
            hit = np.ones(len(table), dtype=bool)
            for col in query:
                value = mixed_target[col].iloc[0]
                if col in radius:
                    hit &= (table[col] - value).abs().to_numpy() <= radius[col] + 1e-12
                else:
                    hit &= (table[col] == value).to_numpy()
            expected.append(hit.mean())
        np.testing.assert_allclose(row, expected, atol=1e-15)


def test_exhaustive_mode_rules(
    mixed_domain: Domain, mixed_target: pd.DataFrame
) -> None:
    with pytest.raises(InvalidParameterError, match="exhaustive=True"):
        QueryBasedAttack(
            domain=mixed_domain,
            target=mixed_target,
            rng=Rngs.from_seed(0),
            exhaustive=True,
        )
    categorical = Domain(
        (
            Column(name="u", kind="categorical", categories=("p", "q", "r")),
            Column(name="v", kind="binary"),
        )
    )
    target = pd.DataFrame({"u": ["q"], "v": [1]})
    attack = QueryBasedAttack(domain=categorical, target=target, rng=Rngs.from_seed(0))
    assert attack.exhaustive
    assert attack.n_features == 3 + 2 + 6
    table = pd.DataFrame({"u": ["q", "q", "r", "p"], "v": [1, 0, 1, 1]})
    # u = p, q, r | v = 0, 1 | (u, v) = p0, p1, q0, q1, r0, r1
    expected = [1, 2, 1, 1, 3, 0, 1, 1, 1, 0, 1]
    np.testing.assert_allclose(attack.featurize([table])[0], np.array(expected) / 4)


def test_bad_options_are_refused(
    worst_domain: Domain, worst_target: pd.DataFrame
) -> None:
    rng = Rngs.from_seed(0)
    with pytest.raises(InvalidParameterError, match="orders"):
        QueryBasedAttack(
            domain=worst_domain, target=worst_target, rng=rng, orders=(4, 5)
        )
    with pytest.raises(InvalidParameterError, match="tolerance"):
        QueryBasedAttack(
            domain=worst_domain, target=worst_target, rng=rng, tolerance=2.0
        )
    with pytest.raises(InvalidParameterError, match="match"):
        QueryBasedAttack(
            domain=worst_domain, target=worst_target, rng=rng, match="near"
        )  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="n_queries"):
        QueryBasedAttack(domain=worst_domain, target=worst_target, rng=rng, n_queries=0)
    with pytest.raises(InvalidParameterError, match="one record"):
        QueryBasedAttack(
            domain=worst_domain, target=pd.concat([worst_target] * 2), rng=rng
        )


@pytest.mark.statistical
def test_random_forest_separates_datasets_with_and_without_target_copies(
    seed: int,
) -> None:
    """End to end (make_attack -> featurize -> fit -> score): AUC 1 when family 1
    releases copies of the target and family 0 releases nothing near it.

    Family 0 rows lie in [0, 0.5]^2, farther than the tolerance (0.05) from the target
    (0.9, 0.9), so every query counts 0. Family 1 replaces a fraction f in
    {0.1, ..., 0.4} of rows with the target, so every query counts exactly f (training
    rounds cycle through the four values, test rounds draw f at random). Every feature
    separates the families, so every tree split is exact; a tree whose bootstrap holds
    a family-1 round with f = 0.1 (and a family-0 round) thresholds at 0.05 and ranks
    every test round correctly, and family-0 test rounds score exactly what
    single-class trees add to every round. AUC < 1 needs all 100 trees to miss the
    >= 7 rounds with f = 0.1 among 60: probability <= (1 - 7/60)**6000 < 1e-300.
    """
    domain = Domain(
        (
            Column(name="x", kind="continuous", lower=0.0, upper=1.0),
            Column(name="y", kind="continuous", lower=0.0, upper=1.0),
        )
    )
    target = pd.DataFrame({"x": [0.9], "y": [0.9]})
    gen = np.random.default_rng(seed)
    n = 30

    def family(label: int, tenths: int) -> pd.DataFrame:
        rows = gen.uniform(0.0, 0.5, (n, 2))
        if label:
            rows[: tenths * n // 10] = 0.9
        return pd.DataFrame(rows, columns=["x", "y"])

    train_labels = np.tile([0, 1], 30)
    test_labels = np.tile([0, 1], 20)
    train = [family(int(b), 1 + (i // 2) % 4) for i, b in enumerate(train_labels)]
    test = [family(int(b), int(gen.integers(1, 5))) for b in test_labels]
    attack = make_attack(
        "querybased",
        domain=domain,
        target=target,
        rng=Rngs.from_seed(seed),
        n_queries=20,
    )
    attack.fit(attack.featurize(train), train_labels)
    scores = attack.score(attack.featurize(test))
    assert roc_auc_score(test_labels, scores) >= 0.99
