"""The bug catalogue and the observable effect of every flag (BUGS.md).

Each test runs the flag and the correct reference side by side, so the reference is
shown to behave correctly on the same check.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from dpaudit.data import load_cervical_cancer
from dpaudit.errors import InvalidParameterError
from dpaudit.generators import accountants as acc
from dpaudit.generators import bugs as catalogue
from dpaudit.generators import pate_gan as pg
from dpaudit.generators.catalogue import declared_bugs
from dpaudit.generators.flags import implementation_flags
from dpaudit.generators.names import PATE_GAN_VARIANTS
from dpaudit.generators.pate_gan import PateGan, PateGanConfig, config_from_options
from dpaudit.generators.pate_gan import model as pg_model
from dpaudit.generators.pate_gan import state as pg_state
from dpaudit.generators.pate_gan import teachers as pg_teachers
from dpaudit.generators.pate_gan.trainer import Trainer
from dpaudit.rng import ModelStreams, Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

VARIANTS = PATE_GAN_VARIANTS


@pytest.fixture(scope="module")
def cervical():
    return load_cervical_cancer()


@pytest.fixture(scope="module")
def worst():
    ds = worst_case_dataset()
    d0, d1 = neighbouring_pair(ds.train, worst_case_target(ds.domain), domain=ds.domain)
    return ds.domain, d0, d1


def fit(data, domain, seed=0, **options):
    options.setdefault("device", "cpu")
    cfg = config_from_options(
        epsilon=options.pop("epsilon", 1.0), delta=options.pop("delta", 1e-5), **options
    )
    return PateGan(cfg).fit(data, domain=domain, rng=Rngs.from_seed(seed))


# ------------------------------------------------------------------ catalogue


def test_catalogue_matches_bugs_md() -> None:
    """The catalogue and docs/bugs.md name the same flags and variants: every
    PATE-GAN and G-PATE flag has its row in the page's flag tables, every row there is
    a flag, and every variant is described."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "bugs.md").read_text()
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", page, flags=re.MULTILINE))
    declared = {b.name for g in ("pategan", "gpate") for b in catalogue.bugs(g)}
    assert declared == rows
    for variant in catalogue.variants():
        assert re.search(rf"\b{variant}\b", page), variant
    flags = {b.name: b for b in catalogue.bugs("pategan")}
    assert set(flags) == set(pg.BUG_FIELDS)
    table1_privacy = [f for f in flags.values() if f.kind == "privacy"]
    # 17 privacy-violation cells and 5 other-bug cells in the study's Table 1.
    assert sum(len(f.implementations) for f in table1_privacy) == 17
    other = [f for f in flags.values() if f.kind == "other"]
    assert sum(len(f.implementations) for f in other) == 5
    for variant in catalogue.variants().values():
        for flag in variant.flags:
            assert (
                variant.name in flags[flag].implementations
                or flag == "budget_overshoot"
            )


def test_registry_refuses_duplicates() -> None:
    with pytest.raises(InvalidParameterError, match="already registered"):
        catalogue.register_variant(
            catalogue.get_variant("updated"), config_cls=PateGanConfig
        )
    with pytest.raises(InvalidParameterError, match="unknown bug flag"):
        config_from_options(epsilon=1, delta=1e-5, bugs=["no_such_flag"])


def test_variant_flags_are_read_from_the_catalogue() -> None:
    """A variant's flags are written once, in each flag's ``implementations``: the
    registered variants are the study's six, each has exactly the flags naming it
    (smartnoise less private_categories, left out on purpose), and every
    implementation a PATE-GAN flag names is a variant (no misspelt name)."""
    assert tuple(catalogue.variants()) == PATE_GAN_VARIANTS
    declared = declared_bugs(PateGanConfig)
    for name, variant in catalogue.variants().items():
        naming = {f for f, doc in declared.items() if name in doc.implementations}
        omitted = {"private_categories"} if name == "smartnoise" else set()
        assert set(variant.flags) == naming - omitted, name
    named = {i for doc in declared.values() for i in doc.implementations}
    assert named == set(PATE_GAN_VARIANTS)


def test_implementation_flags_refuses_unknown_names() -> None:
    with pytest.raises(InvalidParameterError, match="names the implementation"):
        implementation_flags(PateGanConfig, "synthicty")
    with pytest.raises(InvalidParameterError, match="`omit` must name flags"):
        implementation_flags(PateGanConfig, "turing", omit={"data_bounds": "why"})


def test_flags_compose_over_variant() -> None:
    cfg = config_from_options(
        epsilon=1, delta=1e-5, variant="smartnoise", bugs=["data_bounds"]
    )
    assert cfg.data_bounds
    assert cfg.accountant_missing_log
    assert set(cfg.bugs) == catalogue.get_variant("smartnoise").flags | {"data_bounds"}


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_trains_through_fit_many(variant: str, worst) -> None:
    domain, d0, d1 = worst
    cfg = config_from_options(
        epsilon=1,
        delta=1e-5,
        variant=variant,
        device="cpu",
        max_iterations=3,
        num_teachers=2,
    )
    models = PateGan(cfg).fit_many(
        [d0, d1], domain=domain, rngs=Rngs.from_seed(0).spawn(2)
    )
    for model in models:
        out = model.sample(10, rng=Rngs.from_seed(1))
        assert list(out.columns) == ["a", "b", "c"]
        assert len(out) == 10
        assert 1 <= model.privacy_claim_.iterations <= 3


# ------------------------------------------------------------ records seen


@pytest.mark.slow
def test_records_seen_reproduce_the_study(cervical) -> None:
    """686 rows, 5 teachers (BUGS.md, 'What the study measured')."""
    seen = {}
    for variant in VARIANTS:
        # Enough iterations for sampling with replacement to touch every row of each
        # partition (deterministic at this seed).
        iterations = 30 if variant in ("updated", "synthcity") else 12
        model = fit(
            cervical.train,
            cervical.domain,
            variant=variant,
            num_teachers=5,
            epsilon=1e9,
            max_iterations=iterations,
            fixed_iterations=iterations,
        )
        trace = model.privacy_claim_.trace
        seen[variant] = (trace["records_seen"], trace["records_unused"])
    assert seen["original"] == ([686] * 5, 0)  # one discriminator sees everything
    assert seen["turing"] == ([686] * 5, 0)
    assert seen["updated"] == ([137] * 5, 549)  # every teacher the last partition
    synthcity, unused = seen["synthcity"]
    assert all(s > 300 for s in synthcity)  # overlapping: far more than 137 each
    assert unused == 0
    for name in ("borealis", "smartnoise"):
        assert sorted(seen[name][0]) == [137, 137, 137, 137, 138]
        assert seen[name][1] == 0
    reference = fit(
        cervical.train, cervical.domain, num_teachers=5, epsilon=1e9, max_iterations=12
    )
    # The reference assigns records independently: sizes vary, every row once.
    assert sum(reference.privacy_claim_.trace["records_seen"]) == 686


# --------------------------------------------------------------- accountants


@pytest.mark.slow
def test_variant_accountants_against_the_correct_one(cervical) -> None:
    """At lambda = 1 after a fixed number of iterations: synthcity below the correct
    accountant on the same votes; borealis and smartnoise above it, and equal to each
    other on equal votes.

    The missing log only changes queries whose data-dependent term is valid
    (near-unanimous votes); where every vote is split (borealis' young teachers), the
    two accountants agree, so borealis is checked with >= on its own votes and with >
    on smartnoise's.
    """
    spec = acc.MomentsAccountantSpec(lam=1.0, orders=100)
    claims, ledgers = {}, {}
    for variant in ("synthcity", "borealis", "smartnoise"):
        model = fit(
            cervical.train,
            cervical.domain,
            variant=variant,
            lam=1.0,
            epsilon=1e9,
            max_iterations=5,
            num_teachers=5,
        )
        claims[variant] = model.privacy_claim_
        ledgers[variant] = np.array(claims[variant].trace["ledger"]["gap_counts"])

    def correct(variant: str, ledger: np.ndarray) -> float:
        return float(acc.pate_gan_epsilon(ledger, spec, delta=claims[variant].delta))

    assert claims["synthcity"].epsilon < correct("synthcity", ledgers["synthcity"])
    for name in ("smartnoise", "borealis"):
        assert claims[name].epsilon >= correct(name, ledgers[name]) - 1e-9
    borealis_spec = acc.MomentsAccountantSpec(lam=1.0, orders=100, missing_log=True)
    on_equal_votes = float(
        acc.pate_gan_epsilon(ledgers["smartnoise"], borealis_spec, delta=1e-5)
    )
    assert on_equal_votes == pytest.approx(claims["smartnoise"].epsilon)
    # Where votes are near-unanimous (the data-dependent term is valid) the missing
    # log overestimates strictly.
    unanimous = np.array([0, 0, 0, 0, 0, 200])
    assert float(acc.pate_gan_epsilon(unanimous, borealis_spec, delta=1e-5)) > float(
        acc.pate_gan_epsilon(unanimous, spec, delta=1e-5)
    )


# ------------------------------------------------------------ data encoding


def test_data_bounds_leaks_the_range(worst, cervical) -> None:
    domain, d0, d1 = worst
    without = fit(d0, domain, data_bounds=True, max_iterations=3, num_teachers=2)
    with_t = fit(d1, domain, data_bounds=True, max_iterations=3, num_teachers=2)
    out0 = without.sample(200, rng=Rngs.from_seed(1))
    # Bounds read from four all-zero rows: the release can only be zeros.
    assert (out0.to_numpy() == 0).all()
    # With the target the range widens to [0, 1]: the released range equals the data's.
    assert with_t.domain_["a"].upper == 1.0
    assert without.domain_["a"].upper == 0.0
    # Off: outputs stay within the public domain whatever the data.
    data = cervical.train.copy()
    ref = fit(data.iloc[:200], cervical.domain, max_iterations=3, batch_size=16)
    cervical.domain.validate(ref.sample(300, rng=Rngs.from_seed(2)))
    assert ref.domain_ == cervical.domain


def test_integer_floor_and_output_not_rescaled(cervical) -> None:
    kwargs = dict(max_iterations=3, batch_size=16, num_teachers=5)
    data = cervical.train
    rounded = fit(data, cervical.domain, **kwargs).sample(300, rng=Rngs.from_seed(4))
    floored = fit(data, cervical.domain, integer_floor=True, **kwargs).sample(
        300, rng=Rngs.from_seed(4)
    )
    ints = [c.name for c in cervical.domain.columns if c.kind == "integer"]
    assert (floored[ints].to_numpy() <= rounded[ints].to_numpy()).all()
    assert (floored[ints].to_numpy() < rounded[ints].to_numpy()).any()
    raw = fit(data, cervical.domain, output_not_rescaled=True, **kwargs).sample(
        300, rng=Rngs.from_seed(4)
    )
    assert raw["Age"].between(0.0, 1.0).all()  # public bounds are [13, 84]
    assert raw["Age"].dtype == np.float32 or raw["Age"].dtype == np.float64


def test_label_and_category_frequencies_released(worst) -> None:
    domain, _, d1 = worst
    for flag in ("label_distribution_given", "real_category_frequencies"):
        model = fit(d1, domain, max_iterations=2, num_teachers=2, **{flag: True})
        out = model.sample(5000, rng=Rngs.from_seed(3))
        # The private frequency of ones is 1/5; binomial sd of the share is 0.0057,
        # so |share - 0.2| < 0.03 fails with probability < 1e-7.
        assert abs(out["c"].mean() - 0.2) < 0.03


def test_latent_mismatch_samples_from_normal(worst, monkeypatch) -> None:
    domain, d0, _ = worst
    seen: list[str] = []
    original = pg_model.latent

    def spy(streams, n, z, dist):
        seen.append(dist)
        return original(streams, n, z, dist)

    model = fit(d0, domain, latent_mismatch=True, max_iterations=2, num_teachers=2)
    ref = fit(d0, domain, max_iterations=2, num_teachers=2)
    monkeypatch.setattr(pg_model, "latent", spy)
    model.sample(5, rng=Rngs.from_seed(0))
    ref.sample(5, rng=Rngs.from_seed(0))
    assert seen == ["normal", "uniform"]


# ----------------------------------------------------------- mechanism flags


def _trainer(domain, data, seed: int = 0, **options) -> Trainer:
    cfg = PateGanConfig(device="cpu", num_teachers=4, **options)
    return Trainer(cfg, domain, 4, [data], [Rngs.from_seed(seed)])


@pytest.mark.statistical
def test_single_noise_vote_and_laplace_scale(worst, seed: int) -> None:
    """k = 4, n1 = 3 at lambda = 1. Independent noise on both counts: P(real) =
    1 - e^{-2}(1 + 1)/2 = 0.8647; one draw compared with k/2: 1 - e^{-1}/2 = 0.8161.
    With 200,000 draws the standard error is < 0.0009; a 0.01 tolerance fails with
    probability < 1e-25."""
    domain, d0, _ = worst
    n1 = torch.full((1, 200_000), 3)
    for options, expected in (
        ({}, 1 - math.exp(-2.0)),
        ({"single_noise_vote": True}, 1 - math.exp(-1.0) / 2),
    ):
        trainer = _trainer(domain, d0, seed, lam=1.0, **options)
        share = float(pg_teachers.noisy_labels(trainer, n1).mean())
        assert abs(share - expected) < 0.01
    # laplace_scale_inverted: at lambda = 1e-3 the noise is Lap(1e-3): labels are
    # the clean majority; the correct scale 1e3 makes them coin flips.
    inverted = _trainer(domain, d0, seed, lam=1e-3, laplace_scale_inverted=True)
    assert float(pg_teachers.noisy_labels(inverted, n1).mean()) == 1.0
    correct = _trainer(domain, d0, seed, lam=1e-3)
    assert abs(float(pg_teachers.noisy_labels(correct, n1).mean()) - 0.5) < 0.01


def test_gaussian_label_noise_forms() -> None:
    sigma = pg.gaussian_label_sigma
    assert sigma(1.0, delta=1e-5, form="xor") == pytest.approx(2.421, abs=1e-3)
    assert sigma(1.0, delta=1e-5, form="multiply") == pytest.approx(0.668, abs=1e-3)
    assert sigma(2.0, delta=1e-5, form="xor") == pytest.approx(2.421 / 2, abs=1e-3)


def test_gaussian_label_noise_reaches_the_labels(worst, monkeypatch) -> None:
    domain, d0, _ = worst
    calls = []
    original = ModelStreams.randn

    def spy(self, shape, **kwargs):
        calls.append(shape)
        return original(self, shape, **kwargs)

    monkeypatch.setattr(ModelStreams, "randn", spy)
    fit(d0, domain, max_iterations=1, num_teachers=2)
    assert calls == []  # the reference draws no Gaussian noise
    fit(d0, domain, gaussian_label_noise=True, max_iterations=1, num_teachers=2)
    assert len(calls) == 2 * 5  # real and fake labels of each teacher step


def test_delta_override(worst) -> None:
    domain, d0, _ = worst
    claim = fit(
        d0, domain, delta_override=True, max_iterations=2, num_teachers=2
    ).privacy_claim_
    assert claim.delta == pytest.approx(0.125)  # 1 / (4 sqrt 4)
    assert (
        fit(d0, domain, max_iterations=2, num_teachers=2).privacy_claim_.delta == 1e-5
    )


def test_skip_unaccounted_queries(worst) -> None:
    domain, d0, _ = worst
    claim = fit(
        d0,
        domain,
        skip_unaccounted_queries=True,
        max_iterations=20,
        num_teachers=2,
        epsilon=1e9,
    ).privacy_claim_
    charged = claim.trace["ledger"]["queries"]
    made = claim.trace["queries_including_skipped"]
    # Coin-flip labels at lambda = 1e-3: about half the batches are skipped.
    assert charged < made
    assert claim.reference_epsilon > claim.epsilon
    ref = fit(d0, domain, max_iterations=20, num_teachers=2, epsilon=1e9).privacy_claim_
    assert ref.trace["ledger"]["queries"] == ref.trace["queries_including_skipped"]


def test_student_sees_real_data(worst, monkeypatch) -> None:
    domain, d0, _ = worst
    counts = {"n": 0}
    original = pg_state.TrainerState.sample_all_rows

    def spy(self, n):
        counts["n"] += 1
        return original(self, n)

    monkeypatch.setattr(pg_state.TrainerState, "sample_all_rows", spy)
    fit(d0, domain, max_iterations=2, num_teachers=2)
    assert counts["n"] == 0
    claim = fit(
        d0, domain, student_sees_real_data=True, max_iterations=2, num_teachers=2
    ).privacy_claim_
    assert counts["n"] == 2 * 5
    assert claim.reference_epsilon is None
    assert "student" in claim.trace["reference_note"]


def test_repartition_every_iteration(cervical) -> None:
    claim = fit(
        cervical.train,
        cervical.domain,
        repartition_every_iteration=True,
        max_iterations=10,
        num_teachers=5,
        epsilon=1e9,
    ).privacy_claim_
    assert min(claim.trace["records_seen"]) > 138  # more than one partition each


def test_budget_overshoot(cervical) -> None:
    # The same (classic) accountant on both sides: the flag switches the reference's
    # improved conversion off.
    ok = fit(
        cervical.train, cervical.domain, num_teachers=5, moments_conversion="classic"
    ).privacy_claim_
    over = fit(
        cervical.train, cervical.domain, num_teachers=5, budget_overshoot=True
    ).privacy_claim_
    assert ok.epsilon <= 1.0
    assert over.epsilon > 1.0  # checked once per iteration: the last one overshoots
    assert over.iterations == ok.iterations + 1
    improved = fit(cervical.train, cervical.domain, num_teachers=5).privacy_claim_
    # The improved conversion is tighter: the reference trains longer within the budget.
    assert improved.epsilon <= 1.0
    assert improved.iterations > ok.iterations


def test_no_accountant_and_single_discriminator(worst) -> None:
    domain, d0, _ = worst
    claim = fit(
        d0, domain, no_accountant=True, fixed_iterations=7, num_teachers=2, epsilon=0.5
    ).privacy_claim_
    assert claim.iterations == 7
    assert claim.epsilon == 0.5  # nominal
    assert (
        claim.reference_epsilon is not None
    )  # the teachers' queries are still counted
    single = fit(
        d0, domain, single_discriminator=True, fixed_iterations=4, num_teachers=2
    ).privacy_claim_
    assert single.iterations == 4
    assert single.reference_epsilon is None
    assert single.trace["ledger"]["queries"] == 0  # no teacher is ever queried


def test_partition_last_only_reference(cervical) -> None:
    claim = fit(
        cervical.train,
        cervical.domain,
        partition_last_only=True,
        max_iterations=3,
        num_teachers=5,
    ).privacy_claim_
    # Every teacher trains on the last teacher's records only (about 137 of 686).
    assert claim.trace["records_unused"] > 686 - 200
    # A correct accountant charges sensitivity k: far more than the claim.
    assert claim.reference_epsilon > claim.epsilon


def test_variant_config_is_data() -> None:
    updated = catalogue.get_variant("updated")
    cfg = config_from_options(epsilon=1, delta=1e-5, variant="updated")
    assert cfg.optimizer == "rmsprop"
    assert cfg.student_clip == 0.01
    assert set(cfg.bugs) == set(updated.flags)
    assert pd.Series(cfg.to_json())["variant"] == "updated"


# ------------------------------------------------ fidelity to the real code


def test_private_categories_release_only_private_values(worst) -> None:
    """smartnoise's LabelTransformer + OneHotEncoder (and synthcity's encoder) learn
    each discrete column's values from the private data: four all-zero rows can only
    release zeros; the reference (public domain) releases ones from the same seeds."""
    domain, d0, d1 = worst
    kwargs = dict(max_iterations=3, num_teachers=2)
    leaky = fit(d0, domain, private_categories=True, **kwargs)
    out = leaky.sample(500, rng=Rngs.from_seed(1))
    assert (out.to_numpy() == 0).all()
    claim = leaky.privacy_claim_
    assert claim.reference_epsilon is None
    assert "private_categories" in claim.trace["reference_note"]
    ref = fit(d0, domain, **kwargs).sample(500, rng=Rngs.from_seed(1))
    assert (ref.to_numpy() == 1).any()  # deterministic at these seeds
    with_target = fit(d1, domain, private_categories=True, **kwargs)
    assert with_target.value_sets_["a"].tolist() == [0.0, 1.0]


def test_private_categories_on_categorical_and_integer_columns() -> None:
    """A categorical value and an integer value absent from the private data are never
    released with the flag (and are released without it, at these seeds)."""
    from dpaudit.data import Column, Domain

    domain = Domain(
        (
            Column(name="colour", kind="categorical", categories=("x", "y", "z")),
            Column(name="count", kind="integer", lower=0.0, upper=10.0),
        )
    )
    data = pd.DataFrame({"colour": ["x", "y"] * 10, "count": [0, 10] * 10})
    kwargs = dict(max_iterations=2, num_teachers=2, batch_size=8)
    leaky = fit(data, domain, private_categories=True, **kwargs).sample(
        2000, rng=Rngs.from_seed(5)
    )
    assert set(leaky["colour"]) <= {"x", "y"}
    assert set(leaky["count"]) <= {0, 10}
    plain = fit(data, domain, **kwargs).sample(2000, rng=Rngs.from_seed(5))
    assert "z" in set(plain["colour"])
    assert not set(plain["count"]) <= {0, 10}


def test_smartnoise_teacher_rule_and_small_table(worst) -> None:
    """int(n / 1000) teachers (smartnoise-synth 1.0.8 pategan.py:80); fewer than
    1,000 rows refused unless small_table=study, which takes the study's k and
    batches of at most n // k rows."""
    assert pg.rule_num_teachers(2000, teacher_rule="smartnoise") == 2
    assert pg.rule_num_teachers(2999, teacher_rule="smartnoise") == 2
    assert pg.rule_num_teachers(2000) == 16
    assert (
        pg.rule_num_teachers(686, teacher_rule="smartnoise", small_table="study") == 5
    )
    with pytest.raises(InvalidParameterError, match="small_table=study"):
        pg.rule_num_teachers(999, teacher_rule="smartnoise")
    domain, d0, _ = worst
    with pytest.raises(InvalidParameterError, match="at least 1,000 rows"):
        fit(d0, domain, variant="smartnoise", max_iterations=2)
    model = fit(d0, domain, variant="smartnoise", small_table="study", max_iterations=3)
    assert model.num_teachers_ == 2
    # Batches of min(64, 4 // 2) = 2 rows: 3 iterations x 5 student steps x 2 queries.
    assert model.privacy_claim_.trace["ledger"]["queries"] == 3 * 5 * 2


def test_audit_fixes_the_variants_teacher_rule_from_d() -> None:
    from dpaudit.generators.registry import audit_options

    def teachers(n_rows: int, **options: object) -> int:
        out = audit_options(
            "pategan",
            options,
            n_rows=n_rows,
            worst_case=False,
            epsilon=1.0,
            delta=1e-5,
            device="cpu",
            variant=options.pop("variant", None),
            bugs=(),
        )
        return int(out["num_teachers"])

    assert teachers(2000) == 16
    assert teachers(2000, variant="smartnoise") == 2
    assert teachers(4, variant="smartnoise", small_table="study") == 2
    assert teachers(4, variant="smartnoise", num_teachers=3) == 3
    # The table without its target: one teacher (the real code trains 1 on D
    # and 2 on D + target; an audit fixes k from |D| for both worlds).
    assert teachers(1999, variant="smartnoise") == 1
    with pytest.raises(InvalidParameterError, match="at least 1,000 rows"):
        teachers(999, variant="smartnoise")


def test_gaussian_label_noise_is_thresholded(worst, monkeypatch) -> None:
    """original (PATE_GAN.py) and turing (reprosyn pate_gan.py) threshold the noisy
    labels at 0.5: every row is weighted as real (+1/2) or fake (-1/2) in the halved
    Wasserstein term; at sigma = 2.421 a real row keeps its label with probability
    Phi(0.5 / 2.421) = 0.58 (binomial sd over 2,560 rows 0.01: the check below fails
    with probability < 1e-9)."""
    from dpaudit.generators.pate_gan import critic as pg_critic

    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    for name in ("wgan_gp_grad_", "wgan_gp_loss"):
        original = getattr(pg_critic, name)

        def spy(*args, _original=original, **kwargs):
            seen.append((kwargs["w_real"].clone(), kwargs["w_fake"].clone()))
            return _original(*args, **kwargs)

        monkeypatch.setattr(pg_critic, name, spy)
    domain, d0, _ = worst
    fit(d0, domain, variant="original", fixed_iterations=10, batch_size=128)
    w_real = torch.cat([w for w, _ in seen]).flatten()
    w_fake = torch.cat([w for _, w in seen]).flatten()
    assert set(w_real.unique().tolist()) == {-0.5, 0.5}
    assert set(w_fake.unique().tolist()) == {-0.5, 0.5}
    kept = float((w_real > 0).double().mean())
    assert abs(kept - 0.5817) < 0.06
