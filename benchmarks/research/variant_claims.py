"""Per variant on Cervical Cancer (686 rows, 5 teachers): records seen per teacher,
rows never used, iterations, and the claimed vs data-independent vs reference epsilon.

``improved``: the variant's own accountant on its own ledger, converted with the
improved RDP conversion (Balle et al. 2020; Canonne, Kamath, Steinke 2020) instead of
PATE-GAN's ``min_l (alpha(l) + log(1/delta)) / l`` ("n/a" where no accountant runs).
The variants keep PATE-GAN's formula; the column shows what the same ledger proves.

Runs each variant once at the study's audit settings (epsilon 1, delta 1e-5,
lambda 1e-3) with an iteration cap, and prints one row per variant.

    python benchmarks/research/variant_claims.py [--iterations 100] [--lam 1e-3]
"""

from __future__ import annotations

import argparse
import time

import torch

from dpaudit.data import load_cervical_cancer
from dpaudit.generators import accountants as acc
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs

VARIANTS = (
    None,
    "original",
    "updated",
    "synthcity",
    "turing",
    "borealis",
    "smartnoise",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--lam", type=float, default=1e-3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ds = load_cervical_cancer()
    print(
        f"Cervical Cancer {ds.train.shape}, 5 teachers, epsilon {args.epsilon}, "
        f"lambda {args.lam}, at most {args.iterations} iterations"
    )
    print(
        f"{'variant':11s} {'iters':>5s} {'records seen per teacher':>28s} {'unused':>6s} "
        f"{'claimed':>9s} {'improved':>9s} {'data-indep':>10s} {'reference':>10s} "
        f"{'seconds':>7s}"
    )
    for variant in VARIANTS:
        cfg = config_from_options(
            epsilon=args.epsilon,
            delta=1e-5,
            variant=variant,
            lam=args.lam,
            num_teachers=5,
            max_iterations=args.iterations,
            device="cpu",
            fixed_iterations=args.iterations,
        )
        started = time.perf_counter()
        model = PateGan(cfg).fit(
            ds.train, domain=ds.domain, rng=Rngs.from_seed(args.seed)
        )
        seconds = time.perf_counter() - started
        claim = model.privacy_claim_
        trace = claim.trace
        di = claim.epsilon_data_independent
        ref = claim.reference_epsilon
        improved = "n/a"
        if di is not None:  # the variant runs an accountant
            own = acc.MomentsAccountantSpec(
                lam=cfg.lam,
                orders=cfg.orders,
                index_bug=cfg.accountant_index_bug,
                missing_log=cfg.accountant_missing_log,
            )
            eps_improved = acc.pate_gan_epsilon(
                trace["ledger"]["gap_counts"],
                own,
                delta=claim.delta,
                conversion="improved",
            )
            improved = f"{float(eps_improved):.4g}"
        print(
            f"{variant or 'reference':11s} {claim.iterations:5d} "
            f"{trace['records_seen']!s:>28s} {trace['records_unused']:6d} "
            f"{claim.epsilon:9.4g} {improved:>9s} "
            f"{'n/a' if di is None else f'{di:.4g}':>10s} "
            f"{'unbounded' if ref is None else f'{ref:.4g}':>10s} {seconds:7.1f}"
        )
        if ref is None or variant:
            print(f"{'':11s} reference: {trace['reference_note']}")


if __name__ == "__main__":
    main()
