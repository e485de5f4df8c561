"""Privacy events: training records where data reach the output without noise, and
the reference accountant composes them (a non-private event: unbounded).

The catalogue and the code agree: every flag declared with an ``unbounded_reason`` is
recorded by the path it names when that path runs, and no other flag is.
"""

from __future__ import annotations

import pytest

from dpaudit.audit.result.model import TrainingFacts
from dpaudit.generators.bugs import variants
from dpaudit.generators.pate_gan import UNBOUNDED, PateGan, config_from_options
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)


@pytest.fixture(scope="module")
def worst():
    ds = worst_case_dataset()
    d0, _ = neighbouring_pair(ds.train, worst_case_target(ds.domain), domain=ds.domain)
    return ds.domain, d0


def _claim(domain, data, *, variant=None, bugs=()):
    cfg = config_from_options(
        epsilon=1e9,
        delta=1e-5,
        variant=variant,
        bugs=bugs,
        num_teachers=2,
        max_iterations=1,
        fixed_iterations=1,
        batch_size=8,
        device="cpu",
    )
    return PateGan(cfg).fit(data, domain=domain, rng=Rngs.from_seed(0)).privacy_claim_


@pytest.mark.parametrize("flag", sorted(UNBOUNDED))
def test_each_unbounded_flag_records_its_event(worst, flag) -> None:
    domain, d0 = worst
    claim = _claim(domain, d0, bugs=[flag])
    assert claim.trace["non_private_events"] == [flag]
    assert claim.reference_epsilon is None
    assert UNBOUNDED[flag] in claim.trace["reference_note"]


@pytest.mark.parametrize("variant", [None, *variants()])
def test_recorded_events_match_the_declared_flags(worst, variant) -> None:
    domain, d0 = worst
    claim = _claim(domain, d0, variant=variant)
    cfg = config_from_options(epsilon=1.0, delta=1e-5, variant=variant)
    declared = sorted(flag for flag in UNBOUNDED if getattr(cfg, flag))
    assert claim.trace["non_private_events"] == declared
    # The typed facts a report reads (TrainingFacts), stated by the generator.
    facts = TrainingFacts.from_claim(claim.to_json())
    assert facts.teachers == (0 if cfg.single_discriminator else 2)
    assert facts.accounted == (not (cfg.no_accountant or cfg.single_discriminator))
    assert facts.non_private_events == tuple(declared)
    assert (claim.reference_epsilon is None) == bool(declared)
