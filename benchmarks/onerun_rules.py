"""Calibration and power of the one-run game's guess rules (count, threshold, both).

Simulated one-run audits of per-canary mechanisms, decided by the audit's own rules
(:func:`dpaudit.audit.games.apply_rules` and :func:`~dpaudit.audit.games.best_outcome`,
alpha 0.05, 1,000 canaries, the count rule's 100 "in" and 100 "out" guesses). Each
canary's score is what the release shows of it (1: shown "in"), and the threshold
rule guesses "in" for a score of 1. The mechanisms:

- ``RR eps``: each inclusion bit through eps-randomized response (exactly eps-DP per
  canary; the mechanism the count rule's bound is tight for). At the true epsilon a
  VIOLATION is a false alarm; against a smaller claim, a detection.
- ``RR eps, delta``: the same, each bit also released as it is with probability delta
  (exactly (eps, delta)-DP per canary), audited at that delta.
- ``subsample p``: each included canary shown with probability p, an excluded one
  never (the bit-level picture of a generator that copies a random subsample of its
  rows: no finite epsilon).

Prints, per row and rule, the rate of VIOLATION, the mean eps_emp, and beside it the
best any attack could reach at that size (the mean attainable maximum: every guess of
the audit's rules right).

    python benchmarks/onerun_rules.py             # 1,000 audits per row
    python benchmarks/onerun_rules.py --smoke     # seconds: 4 audits per row
"""

from __future__ import annotations

import math
import time

import harness
import numpy as np

from dpaudit.audit.games import apply_rules, best_outcome

CANARIES = 1000
GUESSES = 100
ALPHA = 0.05
RULES = ("count", "threshold", "both")

#: (name, kind, parameter, delta, claimed epsilon, true epsilon or None).
MECHANISMS = (
    ("RR 1 claiming 1", "rr", 1.0, 0.0, 1.0, 1.0),
    ("RR 2, delta 1e-3 claiming 2", "rr", 2.0, 1e-3, 2.0, 2.0),
    ("RR 2 claiming 1", "rr", 2.0, 0.0, 1.0, 2.0),
    ("RR 4 claiming 1", "rr", 4.0, 1e-5, 1.0, 4.0),
    ("subsample 0.6 claiming 1", "subsample", 0.6, 1e-5, 1.0, None),
)


def _release(
    kind: str, parameter: float, delta: float, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    bits = gen.integers(0, 2, size=CANARIES)
    if kind == "subsample":
        shown = (bits == 1) & (gen.random(CANARIES) < parameter)
        return bits, shown.astype(np.float64)
    q = math.exp(parameter) / (1.0 + math.exp(parameter))
    shown = np.where(gen.random(CANARIES) < q, bits, 1 - bits)
    shown = np.where(gen.random(CANARIES) < delta, bits, shown)
    return bits, shown.astype(np.float64)


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=1000, help="audits per row")
    args = harness.parse(parser, argv, smoke={"audits": 4})
    table = harness.Rows(__file__, args)
    for name, kind, parameter, delta, claimed, true_eps in MECHANISMS:
        gen = np.random.default_rng([args.seed, len(table.rows)])
        hits = dict.fromkeys(RULES, 0)
        bounds: dict[str, list[float]] = {r: [] for r in RULES}
        tops: dict[str, list[float]] = {r: [] for r in RULES}
        started = time.perf_counter()
        for _ in range(args.audits):
            bits, shown = _release(kind, parameter, delta, gen)
            key = gen.random(CANARIES)
            for rule in RULES:
                outcomes = apply_rules(
                    shown,
                    bits,
                    rule=rule,
                    guesses_in=GUESSES,
                    guesses_out=GUESSES,
                    threshold=1.0,
                    tie_break=key,
                    delta=delta,
                    alpha=ALPHA,
                )
                best = best_outcome(outcomes)
                hits[rule] += best.eps_emp > claimed
                bounds[rule].append(best.eps_emp)
                tops[rule].append(max(o.eps_max for o in outcomes))
        seconds = (time.perf_counter() - started) / len(RULES)
        for rule in RULES:
            table.add(
                f"{name}, {rule}",
                audits=args.audits,
                violations=hits[rule],
                rate=hits[rule] / args.audits,
                false_alarm="yes" if true_eps == claimed else "no",
                mean_eps_emp=float(np.mean(bounds[rule])),
                mean_attainable=float(np.mean(tops[rule])),
                seconds=seconds,
            )
    table.finish(
        title=f"VIOLATION of {CANARIES}-canary one-run audits per rule (alpha "
        f"{ALPHA}); false_alarm: the claim is true, so every VIOLATION is one",
        formats={
            "rate": ".4f",
            "mean_eps_emp": ".3f",
            "mean_attainable": ".3f",
            "seconds": ".2f",
        },
    )
    return table.rows


if __name__ == "__main__":
    main()
