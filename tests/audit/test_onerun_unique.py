"""The one-run canary design ``worst-case-unique``: every canary holds a value of its
own in every column, so it owns a cell of every marginal, and the white-box one-run
game (``--game one-run --release transcript``) scores it by all of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.one_run.game import analyse_one_run, planned_counts
from dpaudit.audit.games.one_run.plan import OneRunPlan
from dpaudit.audit.games.one_run.transcript import own_answers, score_transcript
from dpaudit.audit.games.releases import compact_claim
from dpaudit.audit.result.model import AuditResult
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.foreign.contract import plain_json
from dpaudit.generators.foreign.transcript import Measurement, check_transcript
from dpaudit.generators.toy_plugins import NoisyMarginals
from dpaudit.reports.schema import schema_errors
from dpaudit.worst_case.canaries import canary_design

NOISY_MARGINALS = "dpaudit.generators.toy_plugins:NoisyMarginals"
UNIQUE = "worst-case-unique"


def _audit(
    plugin: Any, *, canaries: int, seed: int, dataset: str = UNIQUE
) -> AuditResult:
    """One white-box one-run audit of a plain plug-in object in this process, as the
    game runs it at its defaults (its plan, canaries, transcript reading, scores and
    analysis, with the plug-in's whole claim: epsilon, delta and its ``gdp_mu``; the
    worker and the audit folder left out)."""
    config = AuditConfig(
        generator=NOISY_MARGINALS,
        game="one-run",
        release="transcript",
        dataset=dataset,
        canaries=canaries,
        seed=seed,
    )
    design = canary_design(dataset, canaries=canaries)
    plan = OneRunPlan.create(
        fits=1,
        canaries=canaries,
        guesses=None,
        guesses_out=None,
        seed=seed,
        counts=planned_counts(config, design),
    )
    plugin.fit(
        design.training_table(plan.bits[0]),
        domain=design.domain.to_json(),
        seed=seed + 1_000_003,
    )
    records = check_transcript(
        plain_json(plugin.privacy_transcript), "p", domain=design.domain, exact=True
    )
    assert records is not None
    answers = own_answers(records, design)
    return analyse_one_run(
        config,
        design=design,
        plan=plan,
        claims=[compact_claim(PrivacyClaim(**plugin.privacy_claim).to_json())],
        scores=score_transcript(answers, canaries),
        rows=len(design.base) + canaries,
        options={},
        answers=[answers],
    )


# ------------------------------------------------------------- the design


def test_every_canary_owns_a_value_in_every_column() -> None:
    """Base records hold ``base`` everywhere; each canary its own value in every
    column; the domain (public, fixed before the bits) lists them all."""
    design = canary_design(UNIQUE, canaries=12, base_rows=3)
    assert list(design.domain.names) == ["a", "b", "c", "canary"]
    assert all(c.kind == "categorical" for c in design.domain.columns)
    assert (design.base == "base").all().all() and len(design.base) == 3
    for name in design.domain.names:
        values = design.canaries[name].astype(str)
        assert values.is_unique and values.tolist() == [f"c{i:02d}" for i in range(12)]
    table = design.training_table(np.array([1, 0] * 6))
    assert len(table) == 3 + 6
    design.domain.validate(table, name="training table")


def test_own_cells_of_every_marginal_are_summed() -> None:
    """Every one-way marginal and a two-way marginal (a x b): each canary owns one
    cell of each (its value, or its value in both columns), and its score is the sum
    of the five exact Gaussian log-likelihood ratios; cells of two canaries' values
    count nobody, the base's cell counts the base alone."""
    design = canary_design(UNIQUE, canaries=3)
    cats = ["base", "c0", "c1", "c2"]
    gen = np.random.default_rng(0)
    records = [
        Measurement(
            columns=(name,),
            cells=tuple((c,) for c in cats),
            noisy=tuple(gen.normal(size=4)),
            noise="gaussian",
            scale=2.0,
        )
        for name in design.domain.names
    ]
    pairs = [(x, y) for x in cats for y in cats]
    records.append(
        Measurement(
            columns=("a", "b"),
            cells=tuple(pairs),
            noisy=tuple(gen.normal(size=16)),
            noise="gaussian",
            scale=0.5,
        )
    )
    answers = own_answers(records, design)
    assert answers.own == 3 * 5
    for j in range(3):
        assert len(answers.touches[j]) == 5
        assert all(answers.owner[i] == j for i in answers.touches[j])
    # The base's cells: a count of 4 (the public base), owned by no canary.
    assert answers.base[0] == 4.0 and answers.owner[0] == -1
    scores = score_transcript(answers, 3)
    for j, value in enumerate(cats[1:]):
        expected = 0.0
        for record in records:
            k = record.cells.index(tuple([value] * len(record.columns)))
            y, s = record.noisy[k], record.scale
            expected += (y**2 - (y - 1.0) ** 2) / (2 * s * s)
        assert scores[j] == pytest.approx(expected, rel=1e-12)


def test_the_marginal_plugin_gives_the_whole_sensitivity_to_own_cells() -> None:
    """NoisyMarginals on the unique design: each canary changes four answers, all its
    own, so its own-cell mu is the claim's mu (on ``worst-case``: one own answer of
    four, half of it)."""
    unique = _audit(NoisyMarginals(epsilon=1.0), canaries=200, seed=3)
    plain = _audit(
        NoisyMarginals(epsilon=1.0), canaries=200, seed=3, dataset="worst-case"
    )
    mu = NoisyMarginals(epsilon=1.0).mu
    assert unique.measurements is not None and plain.measurements is not None
    assert f"own-cell mu {mu:.4g} at most" in unique.measurements.covers
    assert f"own-cell mu {mu / 2:.4g} at most" in plain.measurements.covers
    assert unique.measurements.answers_changed == 4 * 200
    assert "800 a single canary's own" in unique.measurements.covers


# ---------------------------------------------- the white-box guide's example


@pytest.mark.statistical
def test_full_noise_on_the_unique_design_is_not_a_violation() -> None:
    """NoisyMarginals adding the noise it states is exactly on its claimed curve
    (each canary's four own counts are 0.268-GDP, the claimed mu): a VIOLATION has
    probability at most alpha = 0.05 by the f-DP bound's theorem; simulated with the
    game's rules, 6 of 1,000 audits of such scores were VIOLATIONs
    (docs/records/onerun_transcript_simulated.json): the failure probability of this
    test is about 0.006 (one-sided 95% upper bound 0.012). Deterministic at seed 0,
    at the game's defaults (1,000 canaries, the planned 80 + 80 guesses)."""
    result = _audit(NoisyMarginals(epsilon=1.0), canaries=1000, seed=0)
    assert result.verdict != "VIOLATION", result.verdict_reason
    assert result.one_run is not None and result.one_run.bound == "fdp"
    assert result.measurements is not None
    assert result.measurements.spends_more_than_claimed is False


@pytest.mark.statistical
def test_quarter_noise_on_the_unique_design_is_a_violation(tmp_path: Path) -> None:
    """The white-box guide's example end to end (the plug-in in its worker): a quarter
    of the stated noise makes each canary's own counts 1.07-GDP against the claimed
    0.268, and one fit of the default 1,000 canaries refutes the claim. Simulated with
    the game's rules, 1,000 of 1,000 audits of such scores were VIOLATIONs
    (docs/records/onerun_transcript_simulated.json): failure probability below
    0.003 (one-sided 95% upper bound). Deterministic at seed 0."""
    from dpaudit.audit.run import run_audit

    config = AuditConfig(
        generator=NOISY_MARGINALS,
        generator_options={"noise_scale": 0.25},
        game="one-run",
        release="transcript",
        dataset=UNIQUE,
    )
    result = run_audit(config, out_dir=tmp_path / "a")
    assert result.verdict == "VIOLATION", result.verdict_reason
    assert result.one_run is not None and result.one_run.canaries == 1000
    assert result.one_run.claim_refuted is True and result.rounds.total == 1
    doc = json.loads((tmp_path / "a" / "result.json").read_text())
    assert doc["dataset"] == UNIQUE and schema_errors(doc) == []


@pytest.mark.statistical
def test_the_unique_design_is_calibrated_on_its_boundary() -> None:
    """NoisyMarginals' mechanism at its stated noise on ``worst-case-unique`` is
    exactly its claim per canary (four own Gaussian counts of sigma = 2 / mu: mu-GDP
    with mu the claimed one, epsilon 1 at delta 1e-5), so every VIOLATION is a false
    alarm, at most alpha = 0.05 per audit by the bound's theorem. 100 audits of 200
    canaries, each with the game's plan (seeds 0-99), the four noisy one-way
    marginals of its training table drawn as the plug-in draws them, the game's
    scores and its analysis (the default bound, the claim's whole curve). The test
    fails if more than 13 are VIOLATIONs: for a calibrated audit P[Binomial(100, 0.05)
    > 13] < 0.0005 (its failure probability; seen at seed 0-99: 0)."""
    canaries = 200
    design = canary_design(UNIQUE, canaries=canaries)
    plugin = NoisyMarginals(epsilon=1.0)
    sigma = 2.0 / plugin.mu
    claim = compact_claim(
        PrivacyClaim(
            epsilon=1.0,
            delta=1e-5,
            accountant="analytic Gaussian",
            gdp_mu=plugin.mu,
            zcdp_rho=plugin.mu**2 / 2,
        ).to_json()
    )
    cells = ("base", *design.canaries["canary"].astype(str))
    violations = 0
    for seed in range(100):
        config = AuditConfig(
            generator=NOISY_MARGINALS,
            game="one-run",
            release="transcript",
            dataset=UNIQUE,
            canaries=canaries,
            seed=seed,
        )
        plan = OneRunPlan.create(
            fits=1,
            canaries=canaries,
            guesses=None,
            guesses_out=None,
            seed=seed,
            counts=planned_counts(config, design),
        )
        # Exact counts: the base in ``base``, an included canary in its own value.
        exact = np.concatenate([[len(design.base)], plan.bits[0]]).astype(float)
        noise = np.random.default_rng([seed, 7]).normal(0.0, sigma, (4, len(cells)))
        records = [
            Measurement(
                columns=(name,),
                cells=tuple((c,) for c in cells),
                noisy=tuple(exact + noise[k]),
                noise="gaussian",
                scale=sigma,
            )
            for k, name in enumerate(design.domain.names)
        ]
        answers = own_answers(records, design)
        result = analyse_one_run(
            config,
            design=design,
            plan=plan,
            claims=[claim],
            scores=score_transcript(answers, canaries),
            rows=len(design.base) + canaries,
            options={},
            answers=[answers],
        )
        violations += result.verdict == "VIOLATION"
    assert stats.binom.sf(13, 100, 0.05) < 5e-4
    assert violations <= 13


# ------------------------------------------------------------- refusals

_TRANSCRIPT = ("audit", "--game", "one-run", "--release", "transcript")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["audit", "--generator", "copy", "--rounds", "10"],
            "worst-case-unique is a canary design of the one-run game",
        ),
        (
            [*_TRANSCRIPT, "--generator", "pategan"],
            "'pategan' states none: use --release table",
        ),
        (
            [*_TRANSCRIPT, "--generator", "copy"],
            "'copy' states none",
        ),
        (
            ["fit", "--generator", "copy"],
            "worst-case-unique is a canary design of the one-run game",
        ),
    ],
)
def test_bad_uses_of_the_design_are_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
    match: str,
) -> None:
    """The two-world game and ``dpaudit fit`` have no table to load; a generator that
    states no transcript has no own cells to score: one line, exit 2, nothing
    written."""
    from dpaudit.cli import main

    out = tmp_path / "o"
    code = main([*argv, "--dataset", UNIQUE, "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert match in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not out.exists() or not any(out.iterdir())


def test_the_design_is_for_the_worst_cases_only() -> None:
    with pytest.raises(InvalidParameterError, match=r"worst-case-unique\. Got"):
        canary_design("cervical_cancer", canaries=10)


def test_a_transcript_larger_than_the_memory_available_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A design's k-way marginals grow as ``(m + 1)^k``; a transcript larger than the
    memory available (here made 64 KiB) is refused after the fit, before any cell is
    checked: one line naming its size, exit 2, nothing written."""
    from dpaudit.audit.games.one_run import transcript
    from dpaudit.cli import main

    monkeypatch.setattr(transcript, "transcript_budget", lambda: 64 * 1024)
    out = tmp_path / "o"
    argv = [*_TRANSCRIPT, "--generator", NOISY_MARGINALS, "--dataset", UNIQUE]
    code = main([*argv, "--canaries", "200", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "more than the audit's memory plan allows" in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert not (out / "result.json").exists()
