"""The real smartnoise-synth PATEGAN next to ``--variant smartnoise`` (issue 22, item 3).

Trains the real code (smartnoise-synth 1.0.8, in its own interpreter: ``--python``)
and dpaudit's variant on the same tables with the same epsilon and delta, and prints:

1. the ledgers side by side on the 2,000-row table (1,999 x (0, 0, 0) + (1, 1, 1)):
   teachers, iterations, charged queries, the vote-gap histogram, the final epsilon of
   each implementation's own accountant, and dpaudit's reference epsilon;
2. release statistics in both worlds (world 0: the 1,999 zero rows; world 1: with the
   target), for the real code given a public, pre-fitted transformer and given
   categorical column hints (its default preprocessing, which learns each column's
   value set from the private data), against the variant without and with
   ``--bug private_categories``: the share of released (1, 1, 1) rows and of rows with
   any 1.

The real code draws from the global NumPy and torch generators, seeded per round; the
variant from dpaudit's streams. The ledgers do not depend on the draws at lambda =
1e-3 (every query is charged the data-independent bound), so they must match exactly.

    python benchmarks/fidelity.py --python /work/venvs/smartnoise/bin/python --rounds 3

Rounds are cheap (33 iterations of 2 teachers) but the real code's interpreter takes
about 10 s to import; keep ``--rounds`` small on a shared machine.

Measured (``--rounds 1``, 2 CPU cores at load average 14; smartnoise-synth 1.0.8,
torch 2.13 CPU)::

    Ledger on the 2,000-row table (world 1), epsilon 1.0, delta 1e-05, round 0
                                    real smartnoise 1.0.8   --variant smartnoise
    teachers                                            2                      2
    iterations                                         33                     33
    charged queries                                10,560                 10,560
    gap histogram                            {"2": 10560}           {"2": 10560}
    own final epsilon                           1.0074420              1.0074420
    reference epsilon (dpaudit)                                           0.8181
    ledgers equal in every round and world (teachers, iterations, queries): True
    largest difference of the final epsilon: 1.12e-08

    Release of 2,000 rows, share of (1, 1, 1) rows / rows with any 1
                                      world 0 (no target)     world 1 (target)
    real, public transformer              0.1850 / 0.9560      0.1885 / 0.9505
    variant                               0.0420 / 0.8590      0.0420 / 0.8590
    real, categorical hints               0.0000 / 0.0000      0.1885 / 0.9505
    variant --bug private_categories      0.0000 / 0.0000      0.0420 / 0.8590

    teachers in world 0 (1,999 rows): real 1, variant 1
    wall: real 509 s (incl. ~10 s import), variant 155 s

The ledgers agree exactly. The releases' statistics differ (0.185 against 0.042 of
(1, 1, 1) rows): smartnoise one-hot encodes each binary column and ends its generator
in LayerNorm + leaky ReLU, the variant thresholds one sigmoid output per column
(docs/bugs.md, the fidelity table), and at 33 generator steps neither release depends
on the data. With column hints the real code's release holds no 1 at all without the
target, and so does the variant with ``private_categories``: the leak is the same.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.data import worst_case_domain
from dpaudit.generators import accountants as acc
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs

# Runs inside the smartnoise interpreter. It wraps smartnoise's moments update to
# record the ledger (the vote counts it is given and the moments it returns); the
# training itself is smartnoise's own, unchanged.
REAL = r"""
import json, math, sys
import numpy as np, pandas as pd, torch
from snsynth.pytorch.nn import pategan as sn
from snsynth.transform import TableTransformer

args = json.loads(sys.argv[1])
names = ["a", "b", "c"]
record = {}
update = sn.moments_acc

def counting(num_teachers, votes, lap_scale, l_list, device="cpu"):
    out = update(num_teachers, votes, lap_scale, l_list, device)
    record["teachers"] = int(num_teachers)
    gaps = (2 * votes - num_teachers).abs().flatten().to(torch.int64).tolist()
    for g in gaps:
        record["gaps"][g] = record["gaps"].get(g, 0) + 1
    record["calls"] += 1
    record["alphas"] = record["alphas"] + out.double()
    return out

sn.moments_acc = counting
results = []
for world in (0, 1):
    rows = args["rows"] - 1 + world
    data = pd.DataFrame(0, index=range(rows), columns=names)
    if world:
        data.iloc[-1] = 1
    for mode in args["modes"]:
        for r in range(args["rounds"]):
            np.random.seed(args["seed"] + r)
            torch.manual_seed(args["seed"] + r)
            record.update(calls=0, gaps={}, alphas=torch.zeros(100, dtype=torch.float64))
            model = sn.PATEGAN(epsilon=args["epsilon"], delta=args["delta"])
            if mode == "public":
                public = pd.DataFrame([[0, 0, 0], [1, 1, 1]], columns=names)
                tt = TableTransformer.create(public, style="gan", categorical_columns=names)
                tt.fit(public)
                model.fit(data, transformer=tt, categorical_columns=names)
            else:
                model.fit(data, categorical_columns=names)
            out = pd.DataFrame(model.sample(args["release"]), columns=names).astype(int)
            ls = torch.arange(1, 101, dtype=torch.float64)
            eps = float(torch.min((record["alphas"] - math.log(args["delta"])) / ls))
            results.append({
                "world": world, "mode": mode, "round": r, "teachers": record["teachers"],
                "iterations": record["calls"] // model.student_iters,
                "queries": sum(record["gaps"].values()),
                "gaps": {str(g): c for g, c in sorted(record["gaps"].items())},
                "epsilon": eps,
                "target_share": float((out == 1).all(axis=1).mean()),
                "any_one_share": float((out == 1).any(axis=1).mean()),
            })
print(json.dumps(results))
"""


def table(rows: int, world: int) -> pd.DataFrame:
    """World 0: ``rows - 1`` rows (0, 0, 0); world 1: the same plus (1, 1, 1) last."""
    data = pd.DataFrame(0, index=range(rows - 1 + world), columns=["a", "b", "c"])
    if world:
        data.iloc[-1] = 1
    return data


def run_real(python: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [python, "-c", REAL, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"the real smartnoise run failed:\n{done.stderr[-3000:]}")
    out: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def run_variant(args: dict[str, Any]) -> list[dict[str, Any]]:
    domain = worst_case_domain()
    results = []
    for world in (0, 1):
        data = table(args["rows"], world)
        for mode, bugs in (("public", ()), ("hints", ("private_categories",))):
            for r in range(args["rounds"]):
                cfg = config_from_options(
                    epsilon=args["epsilon"],
                    delta=args["delta"],
                    variant="smartnoise",
                    bugs=bugs,
                    device="cpu",
                )
                model = PateGan(cfg).fit(
                    data, domain=domain, rng=Rngs.from_seed(args["seed"] + r)
                )
                claim = model.privacy_claim_
                counts = claim.trace["ledger"]["gap_counts"]
                out = model.sample(args["release"], rng=Rngs.from_seed(10_000 + r))
                results.append(
                    {
                        "world": world,
                        "mode": mode,
                        "round": r,
                        "teachers": model.num_teachers_,
                        "iterations": claim.iterations,
                        "queries": claim.trace["ledger"]["queries"],
                        "gaps": {str(g): int(c) for g, c in enumerate(counts) if c},
                        "epsilon": claim.epsilon,
                        "reference": claim.reference_epsilon,
                        "target_share": float((out == 1).all(axis=1).mean()),
                        "any_one_share": float((out == 1).any(axis=1).mean()),
                    }
                )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--python",
        default="/work/venvs/smartnoise/bin/python",
        help="an interpreter with smartnoise-synth 1.0.8",
    )
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--release", type=int, default=2000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    args = {
        "rows": ns.rows,
        "rounds": ns.rounds,
        "release": ns.release,
        "epsilon": ns.epsilon,
        "delta": ns.delta,
        "seed": ns.seed,
        "modes": ["public", "hints"],
    }
    started = time.perf_counter()
    real = run_real(ns.python, args)
    real_s = time.perf_counter() - started
    started = time.perf_counter()
    variant = run_variant(args)
    variant_s = time.perf_counter() - started

    def pick(
        results: list[dict[str, Any]], world: int, mode: str
    ) -> list[dict[str, Any]]:
        return [x for x in results if x["world"] == world and x["mode"] == mode]

    r1, v1 = pick(real, 1, "public")[0], pick(variant, 1, "public")[0]
    print(
        f"Ledger on the {ns.rows:,}-row table (world 1), epsilon {ns.epsilon}, "
        f"delta {ns.delta}, round 0"
    )
    print(f"{'':28s} {'real smartnoise 1.0.8':>24s} {'--variant smartnoise':>22s}")
    for key, label in (
        ("teachers", "teachers"),
        ("iterations", "iterations"),
        ("queries", "charged queries"),
    ):
        print(f"{label:28s} {r1[key]:>24,} {v1[key]:>22,}")
    print(
        f"{'gap histogram':28s} {json.dumps(r1['gaps']):>24s} "
        f"{json.dumps(v1['gaps']):>22s}"
    )
    print(f"{'own final epsilon':28s} {r1['epsilon']:>24.7f} {v1['epsilon']:>22.7f}")
    print(f"{'reference epsilon (dpaudit)':28s} {'':>24s} {v1['reference']:>22.4f}")
    same = all(
        pick(real, w, "public")[i][key] == pick(variant, w, "public")[i][key]
        for w in (0, 1)
        for i in range(ns.rounds)
        for key in ("teachers", "iterations", "queries")
    )
    print(
        f"ledgers equal in every round and world (teachers, iterations, queries): {same}"
    )
    eps_gap = max(abs(a["epsilon"] - b["epsilon"]) for a, b in zip(real, variant))
    print(f"largest difference of the final epsilon: {eps_gap:.2e}")
    print()
    print(
        f"Release of {ns.release:,} rows, mean over {ns.rounds} rounds: share of "
        "(1, 1, 1) rows / rows with any 1"
    )
    print(f"{'':44s} {'world 0 (no target)':>22s} {'world 1 (target)':>20s}")
    for mode, label_real, label_variant in (
        ("public", "real, public transformer", "variant"),
        ("hints", "real, categorical hints", "variant --bug private_categories"),
    ):
        for results, label in ((real, label_real), (variant, label_variant)):
            cells = []
            for world in (0, 1):
                got = pick(results, world, mode)
                cells.append(
                    f"{np.mean([x['target_share'] for x in got]):.4f} / "
                    f"{np.mean([x['any_one_share'] for x in got]):.4f}"
                )
            print(f"{label:44s} {cells[0]:>22s} {cells[1]:>20s}")
    teachers0 = (
        pick(real, 0, "public")[0]["teachers"],
        pick(variant, 0, "public")[0]["teachers"],
    )
    print()
    print(
        f"teachers in world 0 ({ns.rows - 1:,} rows): real {teachers0[0]}, variant "
        f"{teachers0[1]} (int(n / 1000); an audit fixes k from |D| for both worlds)"
    )
    di = acc.pate_gan_epsilon(
        np.array([v1["queries"], 0, 0]),
        acc.MomentsAccountantSpec(lam=1e-3, orders=100, data_dependent=False),
        delta=ns.delta,
        conversion="improved",
    )
    print(
        f"smartnoise's own moments, improved conversion: {float(di):.4f} "
        "(= the reference at k = 2, docs/soundness.md)"
    )
    print(f"wall: real {real_s:.0f} s (incl. ~10 s import), variant {variant_s:.0f} s")


if __name__ == "__main__":
    main()
