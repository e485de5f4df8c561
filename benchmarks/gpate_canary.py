"""G-PATE's transcript under canary teachers: each audit beside the exact privacy of
what it attacked, the claim, and the ceiling at its test size.

Per epsilon: a real audit (``--generator gpate --release transcript --teachers
canary`` on ``worst-case`` through :func:`dpaudit.audit.run.run_audit`, the whole
pipeline; or, with ``--results``, the ``result.json`` of audits already run) and the
exact privacy of its canary transcript
(:mod:`dpaudit.generators.g_pate.canary_privacy`: the audit's own configuration, the
target's teachers in each world read from the audit's public stream). Printed:
verdict, eps_emp, mu_emp and the AUC; the claim (epsilon, and the mu of the Gaussian
mechanism with that epsilon at the claim's delta); the exact epsilon of the canary
transcript at that delta and its mu (same conversion); the ceiling at the audit's
test size (the expected mu_emp of the Neyman-Pearson oracle, ``mu_ceiling``) for
both mus; and the audit's wall time.

    python benchmarks/gpate_canary.py --epsilons 1,4,8 --rounds 1000 --out gpate.json
    python benchmarks/gpate_canary.py --results OUT_E1 OUT_E4 OUT_E8
    python benchmarks/gpate_canary.py --smoke        # seconds: a test runs it
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.games import build_setup
from dpaudit.audit.stats import gdp_mu_of_eps, mu_ceiling
from dpaudit.generators.g_pate import GPate
from dpaudit.generators.g_pate.canary_privacy import canary_epsilon, canary_law
from dpaudit.generators.g_pate.model import _target_rows
from dpaudit.generators.g_pate.partition import assign_teachers
from dpaudit.generators.g_pate.transcript import canary_holders


def config(
    epsilon: float, rounds: int, seed: int, options: dict[str, Any]
) -> AuditConfig:
    """The canary-teacher transcript audit of G-PATE at ``epsilon``."""
    return AuditConfig(
        generator="gpate",
        dataset="worst-case",
        epsilon=epsilon,
        rounds=rounds,
        seed=seed,
        device="cpu",
        release="transcript",
        teachers="canary",
        generator_options=options,
    )


def exact(cfg: AuditConfig) -> dict[str, Any]:
    """The exact privacy of ``cfg``'s canary transcript at the audit's delta."""
    setup = build_setup(cfg)
    gen = setup.make_generator()
    assert isinstance(gen, GPate)
    public = setup.public_streams()
    assert public is not None
    k = gen.config.num_teachers
    holders = []
    for world in (setup.with_target, setup.without):
        teacher, _ = assign_teachers(len(world), k, rng=public[0].spawn(3)[1])
        rows = _target_rows(world, setup.target, setup.domain)
        holders.append(int((canary_holders(teacher, rows, k) > 0).sum()))
    started = time.perf_counter()
    law = canary_law(gen.config, holders_with=holders[0], holders_without=holders[1])
    eps = canary_epsilon(law, cfg.delta)
    return {
        "teachers": k,
        "holders": holders,
        "sigma1": gen.config.sigma1,
        "sigma2": gen.config.sigma2,
        "max_iterations": gen.config.max_iterations,
        "stops": list(law.stops),
        "dropped_mass": law.dropped,
        "epsilon": eps,
        "mu": gdp_mu_of_eps(eps, cfg.delta) if eps > 0 else 0.0,
        "seconds_exact": time.perf_counter() - started,
    }


def summarise(doc: dict[str, Any], cfg: AuditConfig, seconds: float) -> dict[str, Any]:
    """One printed row from an audit's result document."""
    (attack,) = doc["attacks"].values()
    c = attack["counts"]
    n0, n1 = c["fp"] + c["tn"], c["tp"] + c["fn"]
    claim = doc["claim"]
    delta = float(claim["delta"])
    mu_claim = gdp_mu_of_eps(float(claim["epsilon"]), delta)
    ex = exact(cfg)
    alpha = float(attack["alpha"])
    return {
        "epsilon_asked": cfg.epsilon,
        "rounds": cfg.rounds,
        "verdict": doc["verdict"],
        "eps_emp": doc["eps_emp"],
        "mu_emp": doc["mu_emp"],
        "auc": attack["auc"],
        "counts": c,
        "claim": claim["epsilon"],
        "delta": delta,
        "mu_claim": mu_claim,
        "mu_max_attainable": doc["mu_max_attainable"],
        "exact": ex,
        "ceiling_claim": mu_ceiling(mu_claim, n0, n1, alpha=alpha),
        "ceiling_exact": mu_ceiling(ex["mu"], n0, n1, alpha=alpha),
        "seconds": seconds,
    }


#: The table's columns (every figure is in --out's rows).
COLUMNS = (
    "row",
    "rounds",
    "verdict",
    "eps_emp",
    "mu_emp",
    "auc",
    "claim",
    "exact_epsilon",
    "mu_claim",
    "exact_mu",
    "ceiling_claim",
    "ceiling_exact",
    "seconds",
)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--epsilons", default="1,4,8", help="comma-separated")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument(
        "--results", nargs="*", default=None, help="audit output folders to read"
    )
    args = harness.parse(parser, argv, smoke={"rounds": 5, "epsilons": "4"})
    table = harness.Rows(__file__, args)
    with tempfile.TemporaryDirectory() as tmp:
        jobs: list[tuple[AuditConfig, dict[str, Any], float]] = []
        if args.results:
            for folder in args.results:
                doc = json.loads((Path(folder) / "result.json").read_text())
                cfg = AuditConfig.from_json(doc["config"])
                jobs.append((cfg, doc, float(doc["timing"]["total_seconds"])))
        else:
            options = {"max_iterations": 2} if args.smoke else {}
            for e in map(float, args.epsilons.split(",")):
                cfg = config(e, args.rounds, args.seed, options)
                started = time.perf_counter()
                result = run_audit(cfg, out_dir=Path(tmp) / f"e{e}")
                seconds = time.perf_counter() - started
                print(f"epsilon {e:g}: audited in {seconds:.0f} s", flush=True)
                jobs.append((cfg, result.to_json(), seconds))
        for cfg, doc, seconds in jobs:
            r = summarise(doc, cfg, seconds)
            table.add(
                f"epsilon {r['epsilon_asked']:g}",
                **r,
                exact_epsilon=r["exact"]["epsilon"],
                exact_mu=r["exact"]["mu"],
            )
            table.save()
    table.finish(columns=COLUMNS, formats={"seconds": ".0f"})


if __name__ == "__main__":
    main()
