"""Every sound bound's figure in a one-run result (``one_run.bounds``): each entry is
what that bound gives when it is the configured one (the same scores, the same
seed), and the verdict stays the configured bound's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.one_run.game import analyse_one_run
from dpaudit.audit.games.one_run.plan import OneRunPlan
from dpaudit.audit.games.one_run.rules import (
    BOUNDS,
    apply_rules,
    best_outcome,
    resolve_bound,
)
from dpaudit.audit.result import AuditResult
from dpaudit.reports.schema import schema_errors
from dpaudit.worst_case.canaries import canary_design

CONFIGURED = ("auto", *BOUNDS)


def _figures(result: AuditResult) -> list[tuple[object, ...]]:
    assert result.one_run is not None
    return [
        (b.bound, b.eps_emp, b.eps_max_attainable, b.mu_emp, b.claim_refuted)
        for b in result.one_run.bounds
    ]


@pytest.mark.parametrize("mu", [None, 0.5])
def test_each_bounds_figure_is_what_it_gives_configured_alone(
    mu: float | None,
) -> None:
    """Scores of a 2-GDP canary (1,000 canaries, 100 + 100 guesses: every bound
    shows a different nonzero figure), a claim of epsilon 1 with and without a
    stated mu: for each configured bound, its own entry equals the result's
    eps_emp, mu_emp and refutation, the entries are the same whichever bound is
    configured, exactly one decides, and the verdict and eps_emp are those of the
    configured bound's rules computed directly."""
    design = canary_design("worst-case-continuous", canaries=1000)
    plan = OneRunPlan.create(fits=1, canaries=1000, guesses=100, seed=3)
    scores = plan.bits.ravel() * 2.0 + np.random.default_rng(3).normal(size=1000)
    claim = {"epsilon": 1.0, "delta": 1e-5, **({} if mu is None else {"gdp_mu": mu})}
    results = {}
    for bound in CONFIGURED:
        config = AuditConfig(
            game="one-run",
            canaries=1000,
            guesses=100,
            guess_rule="count",
            onerun_bound=bound,  # type: ignore[arg-type]
            dataset="worst-case-continuous",
            seed=3,
        )
        results[bound] = analyse_one_run(
            config,
            design=design,
            plan=plan,
            claims=[claim],
            scores=scores.astype(np.float64),
            rows=1004,
            options={},
        )
    listed = _figures(results["auto"])
    assert [f[0] for f in listed] == list(BOUNDS)
    eps = {f[0]: f[1] for f in listed}
    assert len(set(eps.values())) == 3 and min(eps.values()) > 0, eps
    for bound in CONFIGURED:
        result = results[bound]
        s = result.one_run
        assert s is not None
        resolved = resolve_bound(bound, 1000)
        assert s.bound == resolved
        assert _figures(result) == listed
        assert [b.bound for b in s.bounds if b.decides] == [resolved]
        own = next(b for b in s.bounds if b.bound == resolved)
        alone = results[resolved]
        assert (own.eps_emp, own.mu_emp, own.claim_refuted) == (
            alone.eps_emp,
            alone.one_run.mu_emp if alone.one_run else None,
            alone.one_run.claim_refuted if alone.one_run else None,
        )
        assert (result.verdict, result.eps_emp) == (alone.verdict, alone.eps_emp)
        # The verdict is the configured bound's rules alone, computed directly.
        outcomes = apply_rules(
            scores.astype(np.float64),
            plan.bits,
            rule="count",
            guesses_in=plan.guesses_in,
            guesses_out=plan.guesses_out,
            threshold=None,
            tie_break=plan.tie_break(),
            delta=1e-5,
            alpha=0.05,
            bound=resolved,
            claim_epsilon=1.0,
            claim_mu=mu,
        )
        direct = best_outcome(outcomes).eps_emp
        refuted = any(o.refutes for o in outcomes)
        if resolved != "steinke" and mu is not None:
            expected = "VIOLATION" if refuted else None
            assert result.eps_emp == (direct if refuted else min(direct, 1.0))
        else:
            expected = "VIOLATION" if direct > 1.0 else None
            assert result.eps_emp == direct
        if expected:
            assert result.verdict == expected
        else:
            assert result.verdict != "VIOLATION"


@pytest.mark.slow
def test_the_result_and_its_reports_state_every_bound(tmp_path: Path) -> None:
    """A real audit (SubsampleCopy, one fit) with ``steinke`` and with the default,
    at the same guess counts (``--guesses 100``: planned counts depend on the
    configured bound): each lists the same per-bound figures, each configured figure
    equals the other audit's entry for it, the document passes the schema and reads
    back, and the text, Markdown and HTML reports carry the line."""
    from dpaudit.audit.run import run_audit
    from dpaudit.reports import load_results, render, render_terminal

    results = {}
    for bound in ("steinke", "auto"):
        config = AuditConfig(
            generator="dpaudit.generators.leaky_plugins:SubsampleCopy",
            game="one-run",
            guesses=100,
            onerun_bound=bound,  # type: ignore[arg-type]
        )
        results[bound] = run_audit(config, out_dir=tmp_path / bound)
        doc = json.loads((tmp_path / bound / "result.json").read_text())
        assert schema_errors(doc) == []
        assert AuditResult.from_json(doc).to_json() == results[bound].to_json()
        assert [b["bound"] for b in doc["one_run"]["bounds"]] == list(BOUNDS)
    steinke, auto = results["steinke"], results["auto"]
    assert _figures(steinke) == _figures(auto)
    assert auto.one_run is not None and steinke.one_run is not None
    entry = {b.bound: b for b in auto.one_run.bounds}
    assert entry["steinke"].eps_emp == steinke.eps_emp
    assert entry[auto.one_run.bound].eps_emp == auto.eps_emp
    assert entry[auto.one_run.bound].decides and not entry["steinke"].decides
    loaded = load_results(tmp_path / "auto")
    texts = {"text": render_terminal(loaded[0])}
    texts.update((fmt, render(loaded, fmt)) for fmt in ("md", "html"))
    for fmt, text in texts.items():
        assert "every bound" in text and "descriptive" in text, fmt
        assert f"steinke {entry['steinke'].eps_emp:.2f}" in text, fmt
