"""PATE-GAN's transcript under canary teachers: each audit beside the exact privacy of
what it attacked, the claim, and the ceiling at its test size.

Per row (a bug flag or the reference, an epsilon, a worst case): a real audit
(``--release transcript --teachers canary`` through :func:`dpaudit.audit.run.run_audit`,
the whole pipeline) and the exact privacy of the canary transcript
(:func:`dpaudit.generators.pate_gan.canary.canary_privacy`) from one fit in each world
under the audit's own public stream: the clean votes of every answered query are known
there (docs/soundness.md, "Canary teachers"). Printed: verdict, eps_emp and mu_emp;
the claim (epsilon and its GDP mu at the claim's delta), the reference accountant's
epsilon; the exact epsilon and mu of the canary transcript; the ceiling at the audit's
test size (the expected mu_emp of the Neyman-Pearson oracle, ``mu_ceiling``) for the
exact mu and for the claim's mu; and the wall time.

"exact" is not computed where the two worlds answer different numbers of queries
(the stopping time then depends on the data: ``skip_unaccounted_queries``); the
output says so.

    python benchmarks/transcript_canary.py --out canary.json
    python benchmarks/transcript_canary.py --only reference --rounds 1000
    python benchmarks/transcript_canary.py --smoke        # seconds: a test runs it
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness
import numpy as np
import torch

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.games import build_setup
from dpaudit.audit.stats import bernoulli_renyi, gdp_mu_of_eps, mu_ceiling
from dpaudit.generators.pate_gan import PateGan
from dpaudit.generators.pate_gan.canary import canary_privacy, log_vote_probabilities
from dpaudit.generators.pate_gan.model import _with_canary
from dpaudit.generators.pate_gan.transcript import (
    Recorder,
    vote_noise,
)
from dpaudit.rng import Rngs


@dataclass(frozen=True)
class Row:
    """One audit of the table."""

    name: str
    epsilon: float
    bugs: tuple[str, ...] = ()
    dataset_rows: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    public_seed: int | None = None  # None: --public-seed


#: Public candidate 7 puts the target in the last partition of the 1,250-row worst
#: case (k = 9), the one every teacher trains on under ``partition_last_only``; under
#: candidate 0 it is in another and no teacher ever trains on it (exact epsilon 0).
LAST = 7

ROWS = [
    Row("reference", 1.0),
    Row("reference", 4.0),
    Row("reference lam=0.01", 4.0, options={"lam": 0.01}),
    Row("reference lam=0.01", 8.0, options={"lam": 0.01}),
    Row("shared_sampling k=9", 4.0, ("shared_sampling",), 1250),
    Row("repartition_every_iteration k=9", 4.0, ("repartition_every_iteration",), 1250),
    Row(
        "partition_last_only k=9", 4.0, ("partition_last_only",), 1250, public_seed=LAST
    ),
    Row("shared_sampling k=9", 1.0, ("shared_sampling",), 1250),
    Row(
        "partition_last_only k=9", 1.0, ("partition_last_only",), 1250, public_seed=LAST
    ),
    Row("repartition_every_iteration k=9", 1.0, ("repartition_every_iteration",), 1250),
    Row("partition_last_only", 4.0, ("partition_last_only",)),
    Row("shared_sampling", 4.0, ("shared_sampling",)),
    Row("repartition_every_iteration", 4.0, ("repartition_every_iteration",)),
    Row("no_accountant", 1.0, ("no_accountant",)),
    Row("no_accountant", 4.0, ("no_accountant",)),
    Row("skip_unaccounted_queries", 1.0, ("skip_unaccounted_queries",)),
    Row("skip_unaccounted_queries", 4.0, ("skip_unaccounted_queries",)),
    Row("delta_override", 4.0, ("delta_override",)),
]

#: An exact mechanism small enough to audit a hundred times: the reference's vote with
#: lambda 0.5 (Lap(2)), batches of 4, one student step per iteration, two iterations:
#: 8 queries, the target's teacher voting "real" (exact epsilon 4.754 at 1e-5, the
#: larger direction; 2.962 the other).
CALIBRATION = Row(
    "calibration",
    20.0,
    options={"lam": 0.5, "batch_size": 4, "student_steps": 1, "max_iterations": 2},
)

SMOKE = [Row("reference", 4.0, options={"max_iterations": 2})]


def config(
    row: Row, rounds: int, seed: int, public_seed: int, sequential: bool = True
) -> AuditConfig:
    """The audit of ``row`` (sequential looks: a VIOLATION stops at its look)."""
    return AuditConfig(
        dataset="worst-case",
        dataset_rows=row.dataset_rows,
        bugs=row.bugs,
        epsilon=row.epsilon,
        rounds=rounds,
        seed=seed,
        public_seed=public_seed,
        jobs=1,
        device="cpu",
        release="transcript",
        teachers="canary",
        sequential=sequential,
        generator_options=dict(row.options),
    )


def exact(cfg: AuditConfig) -> dict[str, Any]:
    """The exact privacy of the canary transcript of ``cfg``'s game: one fit per
    world under the audit's public stream, the clean votes of every answered query."""
    setup = build_setup(cfg)
    gen = setup.make_generator()
    assert isinstance(gen, PateGan)
    public = setup.public_streams()
    assert public is not None
    votes, used, k = [], [], 0
    claim_rdp = None
    for world in (setup.with_target, setup.without):
        trainer = gen._trainer(
            [world],
            domain=setup.domain,
            rngs=Rngs.from_seed(1).spawn(1),
            public_rngs=[public[0]],
        )
        _with_canary(trainer, [world], setup.canary)
        trainer.recorder = Recorder(keep_votes=True)
        fitted = trainer.run()
        if claim_rdp is None:
            claim_rdp = fitted[0].claim.rdp
        (t,) = trainer.recorder.transcripts()
        v = torch.stack(trainer.recorder.votes, dim=1)[0, : len(t.used)].numpy()
        votes.append(v[t.used].ravel())
        used.append(int(t.used.sum()))
        k = trainer.k
    out: dict[str, Any] = {
        "teachers": k,
        "steps_with": used[0],
        "steps_without": used[1],
    }
    if used[0] != used[1]:
        out["exact"] = None
        out["why"] = "the worlds answer different numbers of queries"
        return out
    beta, single = vote_noise(gen.config)
    p = canary_privacy(
        votes[0], votes[1], k=k, beta=beta, single_draw=single, delta=cfg.delta
    )
    rdp = exact_rdp(votes[0], votes[1], k=k, beta=beta, single=single, curve=claim_rdp)
    out["exact"] = {
        **rdp,
        "epsilon": p.epsilon,
        "mu": p.mu,
        "queries": p.queries,
        "differing": p.differing,
        "n1_with_max": int(votes[0].max()),
        "n1_without_max": int(votes[1].max()),
    }
    return out


def exact_rdp(
    n1_with: Any, n1_without: Any, *, k: int, beta: float, single: bool, curve: Any
) -> dict[str, Any]:
    """The canary transcript's exact RDP at the claimed curve's orders against the
    curve: the largest ratio exact / claimed and its order. The queries are
    independent given the clean votes, so each direction's Renyi divergence is the
    sum over queries of its Bernoulli pairs' (with the target over without, and
    without over with); the RDP is the larger of the two sums (a sum of each query's
    larger direction would only bound it)."""
    if curve is None:
        return {"rdp_ratio_max": None, "rdp_ratio_order": None}
    orders = np.asarray(curve.orders, dtype=np.float64)
    claimed = np.asarray(curve.epsilons, dtype=np.float64)
    pairs, counts = np.unique(
        np.stack([np.asarray(n1_with), np.asarray(n1_without)], axis=1),
        axis=0,
        return_counts=True,
    )
    forward, reverse = np.zeros_like(orders), np.zeros_like(orders)
    for (x, y), c in zip(pairs.tolist(), counts.tolist()):
        if x == y:
            continue
        (lp, _), (lq, _) = log_vote_probabilities(
            x, y, k=k, beta=beta, single_draw=single
        )
        p, q = math.exp(lp), math.exp(lq)
        forward += c * bernoulli_renyi(p, q, orders)
        reverse += c * bernoulli_renyi(q, p, orders)
    ratio = np.maximum(forward, reverse) / np.maximum(claimed, 1e-300)
    i = int(np.argmax(ratio))
    return {"rdp_ratio_max": float(ratio[i]), "rdp_ratio_order": float(orders[i])}


def run_row(
    row: Row, rounds: int, seed: int, public_seed: int, root: Path
) -> dict[str, Any]:
    cfg = config(
        row, rounds, seed, public_seed if row.public_seed is None else row.public_seed
    )
    info = exact(cfg)
    ex = info.get("exact")
    if ex is not None and ex["differing"] == 0:
        # Identical transcripts in both worlds: the privacy loss is exactly 0 and
        # no test of any size separates them; the audit is not run.
        return {
            "row": row.name,
            "epsilon_asked": row.epsilon,
            "rounds": 0,
            "public_seed": cfg.public_seed,
            "verdict": "not run: identical transcripts (exact epsilon 0)",
            "eps_emp": None,
            "mu_emp": None,
            "auc": None,
            "claim": None,
            "reference": None,
            "mu_claim": None,
            "ceiling_claim": None,
            "ceiling_exact": None,
            "seconds": 0.0,
            **info,
        }
    started = time.perf_counter()
    result = run_audit(
        cfg, out_dir=root / f"{row.name}-{row.epsilon}".replace(" ", "_")
    )
    seconds = time.perf_counter() - started
    doc = result.to_json()
    (attack,) = doc["attacks"].values()
    c = attack["counts"]
    n0, n1 = c["fp"] + c["tn"], c["tp"] + c["fn"]
    claim = doc["claim"]
    delta = float(claim["delta"])
    mu_claim = gdp_mu_of_eps(float(claim["epsilon"]), delta) if delta > 0 else math.inf
    alpha = float(attack["alpha"])
    out = {
        "row": row.name,
        "epsilon_asked": row.epsilon,
        "rounds": rounds,
        "public_seed": cfg.public_seed,
        "verdict": doc["verdict"],
        "eps_emp": doc["eps_emp"],
        "mu_emp": doc["mu_emp"],
        "auc": attack["auc"],
        "counts": c,
        "claim": claim["epsilon"],
        "delta": delta,
        "reference": claim.get("reference_epsilon"),
        "mu_claim": mu_claim,
        "mu_max_attainable": doc["mu_max_attainable"],
        "seconds": seconds,
        **info,
        "ceiling_claim": None
        if not math.isfinite(mu_claim)
        else mu_ceiling(mu_claim, n0, n1, alpha=alpha),
        "ceiling_exact": None
        if ex is None
        else mu_ceiling(ex["mu"], n0, n1, alpha=alpha),
    }
    return out


def calibrate(audits: int, rounds: int, table: harness.Rows) -> None:
    """``audits`` audits of :data:`CALIBRATION`, seeds 1.., each analysed once:
    the rate at which eps_emp exceeds the transcript's exact epsilon (a false alarm
    against the truth; at most alpha = 0.05 per audit if the game is sound)."""
    cfg0 = config(CALIBRATION, rounds, 1, 0, sequential=False)
    truth = exact(cfg0)["exact"]
    print(f"exact epsilon {truth['epsilon']:.4f} at delta {cfg0.delta:g}", flush=True)
    eps: list[float] = []
    with (
        table.timed("calibration", audits=audits, rounds=rounds) as row,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for seed in range(1, audits + 1):
            cfg = config(CALIBRATION, rounds, seed, 0, sequential=False)
            doc = run_audit(cfg, out_dir=Path(tmp) / str(seed)).to_json()
            eps.append(float(doc["eps_emp"]))
        row.update(
            exact_epsilon=truth["epsilon"],
            above_exact=sum(e > truth["epsilon"] for e in eps),
            max_eps_emp=max(eps),
            median_eps_emp=float(statistics.median(eps)),
            eps_emp=eps,
        )
    table.finish(
        title=f"{audits} audits at {rounds} rounds per world: eps_emp above the "
        "exact epsilon (above_exact)",
        columns=[
            "row",
            "audits",
            "rounds",
            "exact_epsilon",
            "above_exact",
            "median_eps_emp",
            "max_eps_emp",
            "seconds",
        ],
    )


#: The table's columns (every figure is in --out's rows).
COLUMNS = (
    "row",
    "epsilon_asked",
    "verdict",
    "eps_emp",
    "mu_emp",
    "auc",
    "claim",
    "reference",
    "exact_epsilon",
    "mu_claim",
    "exact_mu",
    "ceiling_claim",
    "ceiling_exact",
    "teachers",
    "seconds",
)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument("--public-seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="comma-separated row names")
    parser.add_argument("--epsilons", default=None, help="comma-separated")
    parser.add_argument(
        "--calibrate", type=int, default=0, help="N audits of the exact mechanism"
    )
    args = harness.parse(parser, argv, smoke={"rounds": 5})
    table = harness.Rows(__file__, args)
    if args.calibrate:
        calibrate(args.calibrate, args.rounds, table)
        return
    rows = SMOKE if args.smoke else ROWS
    if args.only:
        keep = set(args.only.split(","))
        rows = [r for r in rows if r.name in keep]
    if args.epsilons:
        eps = {float(e) for e in args.epsilons.split(",")}
        rows = [r for r in rows if r.epsilon in eps]
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            r = run_row(row, args.rounds, args.seed, args.public_seed, Path(tmp))
            ex = r.get("exact") or {}
            table.add(**r, exact_epsilon=ex.get("epsilon"), exact_mu=ex.get("mu"))
            print(
                f"{r['row']} eps {r['epsilon_asked']:g}: {r['verdict']}, eps_emp "
                f"{r['eps_emp']:.3f}, {r['seconds']:.0f} s",
                flush=True,
            )
            table.save()
    table.finish(columns=COLUMNS, formats={"seconds": ".0f"})


if __name__ == "__main__":
    main()
