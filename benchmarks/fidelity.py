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

    python benchmarks/fidelity.py --rounds 3
    python benchmarks/fidelity.py --smoke     # seconds; the variant only without smartnoise

``--python`` defaults to the interpreter of ``dpaudit env``'s ``smartnoise``
environment (``$DPAUDIT_ENV_HOME/smartnoise/bin/python``, by default under
``~/.cache/dpaudit/envs``); the run stops if there is none. ``--smoke`` (1 round,
epsilon 0.2: a few iterations, 200 released rows) runs the variant alone unless
``--python`` is given.

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

The continuous worst case (``--continuous``: columns in [0, 1], 1,999 rows of 0.0 and
(1.0, 1.0, 1.0)). The real code's own path for continuous columns
(``continuous_columns`` hints) refuses to run without ``preprocessor_eps``; with it,
the bounds come from snsql's ``approx_bounds`` (a Laplace-noised histogram, pure
epsilon-DP) and the library trains on the budget left (``base.py:167-177``). So the
second pair is the real code at ``preprocessor_eps`` 0.1 against the variant at epsilon
0.9. Measured (``--continuous --rounds 2``, 2 cores at load 2-3)::

    Ledger on the 2,000-row continuous table (world 1), real: public transformer,
    training budget 1, delta 1e-05, round 0
                                    real smartnoise 1.0.8   --variant smartnoise
    teachers                                            2                      2
    iterations                                         33                     33
    charged queries                                10,560                 10,560
    gap histogram                  {"0": 6478, "2": 4082}           {"2": 10560}
    own final epsilon                           1.0074420              1.0074420
    ledgers equal in every round and world (teachers, iterations, queries): True
    largest difference of the final epsilon: 1.12e-08

    (continuous hints, preprocessor_eps 0.1, training budget 0.9)
    iterations                                         27                     27
    charged queries                                 8,640                  8,640
    own final epsilon                           0.9093648              0.9093648
    ledgers equal in every round and world (teachers, iterations, queries): True
    bounds the real code found (both worlds, every round): [0, 1] for each column

    Release of 2,000 rows, share of (every value >= 0.5) / (any value >= 0.5)
                                                 world 0 (no target)  world 1 (target)
    real, public transformer                         0.0000 / 1.0000   0.0000 / 1.0000
    variant                                          0.0455 / 0.8650   0.0455 / 0.8650
    real, continuous hints, preprocessor_eps 0.1     0.0000 / 1.0000   0.0000 / 1.0000
    variant, epsilon 0.9                             0.0467 / 0.8665   0.0467 / 0.8665

    wall: real 35 s (incl. ~10 s import), variant 5 s

The ledgers agree exactly in both modes. The vote gaps differ (the real teachers split
1-1 on 61% of the rows, the variant's agree): at lambda = 1e-3 every query is charged
the clamped data-independent bound, so the ledger does not depend on them. The real
release held no row near (1, 1, 1): its generator ends in LayerNorm over the three
outputs, which centres them on their mean (its learned shift stays near 0 after 33
steps), so they are almost never all positive (all >= 0.5 after decoding) and almost
always one is (some value >= 0.5); the variant's sigmoid output has no such tie. Neither release
depends on the data. The bounds the real code estimated were [0, 1] in every round of
both worlds: the target's 1.0 falls in the histogram bin [1, 2), whose single count
stays far below the noise threshold.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

import harness
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
from snsynth.transform import MinMaxTransformer, TableTransformer

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
cont = args["continuous"]
for world in (0, 1):
    rows = args["rows"] - 1 + world
    data = pd.DataFrame(0.0 if cont else 0, index=range(rows), columns=names)
    if world:
        data.iloc[-1] = 1
    for mode in args["modes"]:
        for r in range(args["rounds"]):
            np.random.seed(args["seed"] + r)
            torch.manual_seed(args["seed"] + r)
            record.update(calls=0, gaps={}, alphas=torch.zeros(100, dtype=torch.float64))
            model = sn.PATEGAN(epsilon=args["epsilon"], delta=args["delta"])
            if mode == "public" and cont:
                tt = TableTransformer([MinMaxTransformer(lower=0.0, upper=1.0) for _ in names])
                tt.fit(pd.DataFrame([[0.0] * 3, [1.0] * 3], columns=names))
                model.fit(data, transformer=tt)
            elif mode == "public":
                public = pd.DataFrame([[0, 0, 0], [1, 1, 1]], columns=names)
                tt = TableTransformer.create(public, style="gan", categorical_columns=names)
                tt.fit(public)
                model.fit(data, transformer=tt, categorical_columns=names)
            elif cont:
                model.fit(data, continuous_columns=names, preprocessor_eps=args["pre_eps"])
            else:
                model.fit(data, categorical_columns=names)
            out = pd.DataFrame(model.sample(args["release"]), columns=names).astype(float)
            ls = torch.arange(1, 101, dtype=torch.float64)
            eps = float(torch.min((record["alphas"] - math.log(args["delta"])) / ls))
            bounds = [[float(t.fit_lower), float(t.fit_upper)]
                      for t in model._transformer.transformers] if cont else []
            results.append({
                "world": world, "mode": mode, "round": r, "teachers": record["teachers"],
                "iterations": record["calls"] // model.student_iters,
                "queries": sum(record["gaps"].values()),
                "gaps": {str(g): c for g, c in sorted(record["gaps"].items())},
                "epsilon": eps, "budget": float(model.epsilon), "bounds": bounds,
                "target_share": float((out >= 0.5).all(axis=1).mean()),
                "any_one_share": float((out >= 0.5).any(axis=1).mean()),
            })
print(json.dumps(results))
"""


def table(rows: int, world: int, *, continuous: bool = False) -> pd.DataFrame:
    """World 0: ``rows - 1`` rows (0, 0, 0); world 1: the same plus (1, 1, 1) last."""
    zero = 0.0 if continuous else 0
    data = pd.DataFrame(zero, index=range(rows - 1 + world), columns=["a", "b", "c"])
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
    cont = args["continuous"]
    domain = worst_case_domain(continuous=cont)
    # The second mode models the real code's default preprocessing: on binary
    # columns the category leak (``private_categories``); on continuous ones the
    # library spends ``pre_eps`` on private bounds first and trains on the rest.
    second: tuple[tuple[str, ...], float] = (
        ((), args["epsilon"] - args["pre_eps"])
        if cont
        else (("private_categories",), args["epsilon"])
    )
    results = []
    for world in (0, 1):
        data = table(args["rows"], world, continuous=cont)
        for mode, (bugs, budget) in (
            ("public", ((), args["epsilon"])),
            ("hints", second),
        ):
            for r in range(args["rounds"]):
                cfg = config_from_options(
                    epsilon=budget,
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
                values = out.to_numpy(dtype=float)
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
                        "budget": budget,
                        "reference": claim.reference_epsilon,
                        "target_share": float((values >= 0.5).all(axis=1).mean()),
                        "any_one_share": float((values >= 0.5).any(axis=1).mean()),
                    }
                )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    harness.add_python(parser, "smartnoise", "smartnoise-synth 1.0.8")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--release", type=int, default=2000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument(
        "--continuous",
        action="store_true",
        help="the continuous worst case: columns in [0, 1], 0.0 rows and (1.0, 1.0, 1.0)",
    )
    parser.add_argument(
        "--preprocessor-eps",
        type=float,
        default=0.1,
        help="--continuous: the budget the library's own path spends on bounds",
    )
    ns = harness.parse(
        parser, argv, smoke={"rounds": 1, "release": 200, "epsilon": 0.2}
    )
    # The real code is required, but a smoke run checks the variant alone unless
    # --python names the real code's interpreter.
    python = (
        ns.python if ns.smoke else harness.python_for(ns, "smartnoise", required=True)
    )
    args = {
        "rows": ns.rows,
        "rounds": ns.rounds,
        "release": ns.release,
        "epsilon": ns.epsilon,
        "delta": ns.delta,
        "seed": ns.seed,
        "modes": ["public", "hints"],
        "continuous": ns.continuous,
        "pre_eps": ns.preprocessor_eps if ns.continuous else 0.0,
    }
    table = harness.Rows(__file__, ns)
    real: list[dict[str, Any]] = []
    if python is None:
        print("--smoke without --python: the variant only")
    else:
        started = time.perf_counter()
        real = run_real(python, args)
        rows_of(table, "real", real, time.perf_counter() - started)
    started = time.perf_counter()
    variant = run_variant(args)
    rows_of(table, "variant", variant, time.perf_counter() - started)
    if real:
        report(ns, real, variant)
    table.finish(
        title=f"per implementation, mode and world, over {ns.rounds} round(s): "
        "round 0's ledger, the mean release shares; seconds: the implementation's "
        "wall time (real: incl. ~10 s import) shared among its rows",
        columns=(
            "row",
            "teachers",
            "iterations",
            "queries",
            "epsilon",
            "budget",
            "reference",
            "target_share",
            "any_one_share",
            "seconds",
        ),
        formats={"epsilon": ".7f", "target_share": ".4f", "any_one_share": ".4f"},
    )


def rows_of(
    table: harness.Rows, name: str, results: list[dict[str, Any]], seconds: float
) -> None:
    """One row per mode and world of ``results``: round 0's ledger and the release
    shares' means over the rounds."""
    keys = [(m, w) for m in ("public", "hints") for w in (0, 1) if pick(results, w, m)]
    for mode, world in keys:
        got = pick(results, world, mode)
        first = got[0]
        table.add(
            f"{name} {mode} world {world}",
            **{
                k: first.get(k)
                for k in (
                    "teachers",
                    "iterations",
                    "queries",
                    "gaps",
                    "epsilon",
                    "budget",
                    "reference",
                    "bounds",
                )
            },
            target_share=float(np.mean([x["target_share"] for x in got])),
            any_one_share=float(np.mean([x["any_one_share"] for x in got])),
            rounds=got,
            seconds=seconds / len(keys),
        )


def pick(results: list[dict[str, Any]], world: int, mode: str) -> list[dict[str, Any]]:
    return [x for x in results if x["world"] == world and x["mode"] == mode]


def report(
    ns: argparse.Namespace, real: list[dict[str, Any]], variant: list[dict[str, Any]]
) -> None:
    """Prints the ledgers, the release statistics and the teacher counts."""
    if ns.continuous:
        table_name, one = "continuous", "(every value >= 0.5) / (any value >= 0.5)"
        second = (
            f"real, continuous hints, preprocessor_eps {ns.preprocessor_eps}",
            f"variant, epsilon {ns.epsilon - ns.preprocessor_eps:g}",
        )
    else:
        table_name, one = "binary", "(1, 1, 1) rows / rows with any 1"
        second = ("real, categorical hints", "variant --bug private_categories")
    for mode, label in (
        ("public", "public transformer"),
        ("hints", second[0].removeprefix("real, ")),
    ):
        r1, v1 = pick(real, 1, mode)[0], pick(variant, 1, mode)[0]
        print(
            f"Ledger on the {ns.rows:,}-row {table_name} table (world 1), real: {label}, "
            f"training budget {r1['budget']:g}, delta {ns.delta}, round 0"
        )
        print(f"{'':28s} {'real smartnoise 1.0.8':>24s} {'--variant smartnoise':>22s}")
        for key, name in (
            ("teachers", "teachers"),
            ("iterations", "iterations"),
            ("queries", "charged queries"),
        ):
            print(f"{name:28s} {r1[key]:>24,} {v1[key]:>22,}")
        print(
            f"{'gap histogram':28s} {json.dumps(r1['gaps']):>24s} "
            f"{json.dumps(v1['gaps']):>22s}"
        )
        print(
            f"{'own final epsilon':28s} {r1['epsilon']:>24.7f} {v1['epsilon']:>22.7f}"
        )
        ref = "unbounded" if v1["reference"] is None else f"{v1['reference']:.4f}"
        print(f"{'reference epsilon (dpaudit)':28s} {'':>24s} {ref:>22s}")
        same = all(
            pick(real, w, mode)[i][key] == pick(variant, w, mode)[i][key]
            for w in (0, 1)
            for i in range(ns.rounds)
            for key in ("teachers", "iterations", "queries")
        )
        print(
            "ledgers equal in every round and world (teachers, iterations, queries): "
            f"{same}"
        )
        eps_gap = max(
            abs(a["epsilon"] - b["epsilon"])
            for w in (0, 1)
            for a, b in zip(pick(real, w, mode), pick(variant, w, mode))
        )
        print(f"largest difference of the final epsilon: {eps_gap:.2e}")
        if ns.continuous and mode == "hints":
            bounds = {json.dumps(x["bounds"]) for x in pick(real, 1, mode)}
            bounds |= {json.dumps(x["bounds"]) for x in pick(real, 0, mode)}
            print(f"bounds the real code found (both worlds, every round): {bounds}")
        print()
    print(
        f"Release of {ns.release:,} rows, mean over {ns.rounds} rounds: share of {one}"
    )
    print(f"{'':52s} {'world 0 (no target)':>22s} {'world 1 (target)':>20s}")
    for mode, label_real, label_variant in (
        ("public", "real, public transformer", "variant"),
        ("hints", *second),
    ):
        for results, label in ((real, label_real), (variant, label_variant)):
            cells = []
            for world in (0, 1):
                got = pick(results, world, mode)
                cells.append(
                    f"{np.mean([x['target_share'] for x in got]):.4f} / "
                    f"{np.mean([x['any_one_share'] for x in got]):.4f}"
                )
            print(f"{label:52s} {cells[0]:>22s} {cells[1]:>20s}")
    teachers0 = (
        pick(real, 0, "public")[0]["teachers"],
        pick(variant, 0, "public")[0]["teachers"],
    )
    print()
    print(
        f"teachers in world 0 ({ns.rows - 1:,} rows): real {teachers0[0]}, variant "
        f"{teachers0[1]} (int(n / 1000); an audit fixes k from |D| for both worlds)"
    )
    v1 = pick(variant, 1, "public")[0]
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


if __name__ == "__main__":
    main()
