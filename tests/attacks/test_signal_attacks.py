"""Attacks that use the signal of fixed public randomness: moments, fingerprint, nearest.

Each is a black-box function of one released table (classifier trained on labelled
rounds): shape and determinism, a toy where it separates the two worlds perfectly and
one where it cannot.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from dpaudit.attacks.distance import NearestDistancesAttack
from dpaudit.attacks.fingerprint import FingerprintAttack, fingerprint
from dpaudit.attacks.moments import MomentsAttack, moment_features
from dpaudit.attacks.registry import (
    ATTACK_NAMES,
    attack_options,
    expand_attacks,
    make_attack,
)
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.rng import Rngs

SIGNAL_ATTACKS = ("moments", "fingerprint", "nearest")


def _auc(attack, world0, world1, train: int) -> float:
    """Fits on the first ``train`` tables of each world, returns the test AUC."""
    x0, x1 = attack.featurize(world0), attack.featurize(world1)
    x_train = np.vstack([x0[:train], x1[:train]])
    y_train = np.r_[np.zeros(train), np.ones(train)].astype(np.int64)
    attack.fit(x_train, y_train)
    s0, s1 = attack.score(x0[train:]), attack.score(x1[train:])
    y = np.r_[np.zeros(len(s0)), np.ones(len(s1))]
    return float(roc_auc_score(y, np.r_[s0, s1]))


def _shifted_worlds(
    worst_domain: Domain, *, rounds: int, noise: float, shift: float
) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    """The worst case's release in model space under fixed public randomness: one fixed
    base table (values in [0, 1], none within 0.05 of the decode threshold 0.5), fresh
    per-round noise of scale ``noise``, and in world 1 column ``a`` shifted by
    ``shift``; no value crosses 0.5, so the decoded tables of the worlds are equal."""
    gen = np.random.default_rng(11)
    base = gen.uniform(0.0, 0.44, (200, 3)) + 0.55 * gen.integers(0, 2, (200, 3))
    worlds: tuple[list[pd.DataFrame], list[pd.DataFrame]] = ([], [])
    for bit in (0, 1):
        for _ in range(rounds):
            values = base + noise * gen.standard_normal(base.shape)
            values[:, 0] += shift * bit
            worlds[bit].append(pd.DataFrame(values, columns=worst_domain.names))
    return worlds


def test_registered_and_in_all() -> None:
    for name in SIGNAL_ATTACKS:
        assert name in ATTACK_NAMES
        assert name in expand_attacks("all")
    assert attack_options("fingerprint") == ("decimals",)
    assert attack_options("nearest") == ("k", "n_estimators", "n_jobs", "model")
    assert attack_options("moments") == ("n_estimators", "n_jobs", "model")


@pytest.mark.parametrize("name", SIGNAL_ATTACKS)
def test_shape_and_determinism(
    name: str, mixed_domain: Domain, mixed_target: pd.DataFrame, random_tables
) -> None:
    """Same seed, same tables: same features and scores; one feature row per table."""
    gen = np.random.default_rng(5)
    tables = random_tables(gen, 6, 12) + random_tables(gen, 4, 3)
    labels = np.array([0, 1] * 5)
    runs = []
    for _ in range(2):
        attack = make_attack(
            name, domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(7)
        )
        x = attack.featurize(tables)
        assert x.shape == (10, attack.n_features)
        assert len(attack.feature_names) == attack.n_features
        assert np.isfinite(x).all()
        attack.fit(x, labels)
        runs.append((x, attack.score(x)))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_moment_features_by_hand(
    mixed_domain: Domain, mixed_table: pd.DataFrame, mixed_target: pd.DataFrame
) -> None:
    attack = MomentsAttack(
        domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(0)
    )
    x = attack.featurize([mixed_table])[0]
    assert attack.n_features == 7 * 4 + 1 + 3
    names = attack.feature_names
    values = dict(zip(names, x.tolist()))
    assert values["x mean"] == 4.0
    assert values["x std"] == pytest.approx(np.std([1.0, 2.0, 3.0, 10.0]))
    assert values["x q50"] == 2.5
    assert values["z fraction>=0.5"] == 0.75
    assert values["c=c fraction"] == 0.5
    assert values["c=a fraction"] == 0.25
    np.testing.assert_allclose(
        moment_features(np.array([[[0.0], [1.0], [2.0], [3.0], [4.0]]])),
        [[2.0, np.sqrt(2.0), 0.4, 1.0, 2.0, 3.0, 3.6]],
    )


def test_fingerprint_ignores_row_order_not_values(
    worst_domain: Domain, worst_target
) -> None:
    table = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    assert fingerprint(table) == fingerprint(table[[2, 0, 1]])
    assert fingerprint(table) == fingerprint(table + 1e-9)  # below `decimals`
    assert fingerprint(table) != fingerprint(table + 1e-4)
    assert fingerprint(table) != fingerprint(table[:2])
    assert float(int(fingerprint(table))) == fingerprint(table) < 2.0**48
    with pytest.raises(InvalidParameterError, match="`decimals` must be"):
        FingerprintAttack(domain=worst_domain, target=worst_target, decimals=20)


def test_fingerprint_unfitted_and_unseen(worst_domain: Domain, worst_target) -> None:
    attack = FingerprintAttack(domain=worst_domain, target=worst_target)
    with pytest.raises(NotFittedError):
        attack.score(np.zeros((1, 1)))
    attack.fit(np.array([[1.0], [1.0], [2.0]]), np.array([1, 1, 0]))
    scores = attack.score(np.array([[1.0], [2.0], [3.0]]))
    assert scores[0] > 0.5 > scores[1]
    assert scores[2] == 0.5
    assert scores[0] == pytest.approx((2.5 / 3) / (2.5 / 3 + 0.5 / 2))


def test_deterministic_release_separated_perfectly(
    worst_domain: Domain, worst_target
) -> None:
    """A deterministic release (no fresh noise) that the target shifts by 1e-3 in the
    model space: fingerprint, moments and nearest separate the worlds (AUC 1); the
    decoded counts of querybased are equal in both worlds (AUC exactly 0.5).

    Deterministic data, no failure probability."""
    world0, world1 = _shifted_worlds(worst_domain, rounds=30, noise=0.0, shift=1e-3)
    for name in SIGNAL_ATTACKS:
        attack = make_attack(
            name, domain=worst_domain, target=worst_target, rng=Rngs.from_seed(1)
        )
        assert _auc(attack, world0, world1, train=15) == 1.0, name
    query = make_attack(
        "querybased", domain=worst_domain, target=worst_target, rng=Rngs.from_seed(1)
    )
    assert _auc(query, world0, world1, train=15) == 0.5


def test_moments_see_a_shift_under_fresh_noise(
    worst_domain: Domain, worst_target
) -> None:
    """Fresh per-round noise (sd 1e-4 per value) makes every release new: fingerprint
    scores each one 1/2 (AUC exactly 0.5) while the moments separate a shift of 0.01
    of column a (the mean moves 0.01, its noise sd is 1e-4 / sqrt(200): a 1,400-sd gap,
    failure probability below 1e-12)."""
    world0, world1 = _shifted_worlds(worst_domain, rounds=30, noise=1e-4, shift=1e-2)
    moments = make_attack(
        "moments", domain=worst_domain, target=worst_target, rng=Rngs.from_seed(2)
    )
    assert _auc(moments, world0, world1, train=15) == 1.0
    finger = make_attack(
        "fingerprint", domain=worst_domain, target=worst_target, rng=Rngs.from_seed(2)
    )
    assert _auc(finger, world0, world1, train=15) == 0.5


@pytest.mark.parametrize("name", SIGNAL_ATTACKS)
def test_identical_worlds_cannot_be_separated(
    name: str, mixed_domain: Domain, mixed_target: pd.DataFrame, random_tables
) -> None:
    """Both worlds release the same tables (the target changes nothing): every test
    table of world 1 has an identical twin in world 0 with the same score, so the AUC is
    exactly 0.5 whatever the classifier learned. Deterministic, no failure
    probability."""
    gen = np.random.default_rng(9)
    train = random_tables(gen, 20, 15)
    test = random_tables(gen, 10, 15)
    attack = make_attack(
        name, domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(3)
    )
    x_train = attack.featurize(train)
    attack.fit(x_train, np.array([0, 1] * 10))
    scores = attack.score(attack.featurize(test))
    y = np.r_[np.zeros(10), np.ones(10)]
    assert roc_auc_score(y, np.r_[scores, scores]) == 0.5


def test_nearest_distances_by_hand(
    mixed_domain: Domain, mixed_target: pd.DataFrame, mixed_table: pd.DataFrame
) -> None:
    """Ascending distances; a release shorter than k repeats its largest distance; the
    first one is distance-to-closest-record."""
    attack = NearestDistancesAttack(
        domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(0), k=6
    )
    x = attack.featurize([mixed_table])[0]
    assert np.all(np.diff(x) >= 0)
    assert x[3] == x[4] == x[5]
    closest = make_attack(
        "distance", domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(0)
    ).featurize([mixed_table])[0, 0]
    assert x[0] == pytest.approx(-closest)
    short = NearestDistancesAttack(
        domain=mixed_domain, target=mixed_target, rng=Rngs.from_seed(0), k=2
    )
    np.testing.assert_allclose(short.featurize([mixed_table])[0], x[:2])


def test_default_set_per_dataset_kind(worst_domain: Domain, worst_target) -> None:
    """``default`` expands per dataset kind; every member is a registered attack; the
    set names are refused by make_attack with a pointer to expand_attacks."""
    from dpaudit.attacks.registry import (
        DEFAULT_REAL,
        DEFAULT_WORST_CASE,
        default_attacks,
    )

    assert expand_attacks("default", worst_case=True) == list(DEFAULT_WORST_CASE)
    assert expand_attacks("default") == list(DEFAULT_REAL)
    assert default_attacks(worst_case=True) == DEFAULT_WORST_CASE
    for name in (*DEFAULT_WORST_CASE, *DEFAULT_REAL):
        assert name in ATTACK_NAMES
    with pytest.raises(InvalidParameterError, match="expand_attacks"):
        make_attack(
            "default", domain=worst_domain, target=worst_target, rng=Rngs.from_seed(0)
        )
    with pytest.raises(InvalidParameterError, match="default"):
        expand_attacks("nope")


def test_audit_config_default_is_the_set() -> None:
    from dpaudit.audit.config.model import AuditConfig

    assert AuditConfig().attack == "default"
    AuditConfig(attack="moments")
    with pytest.raises(InvalidParameterError, match="`attack` must be one of"):
        AuditConfig(attack="nope")
