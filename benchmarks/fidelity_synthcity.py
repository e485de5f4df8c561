"""The real synthcity 0.2.12 PATE-GAN next to ``--variant synthcity`` (issue 22, item 3).

Trains the real plug-in (``synthcity.plugins.privacy.plugin_pategan.PATEGANPlugin``,
in its own interpreter: ``--python``) and dpaudit's variant on the 2,000-row worst case
(1,999 x (0, 0, 0), plus (1, 1, 1) in world 1) with the same budget, and prints per
world the mean over ``--rounds`` fits of: iterations, vote batches asked, batches
charged (synthcity charges a batch only when fewer than half its noisy labels say
"real": ``plugin_pategan.py:283-287``), charged queries, the delta used, the final
epsilon of each implementation's own accountant, and the release's share of
(1, 1, 1) rows and of rows with any 1.

The real plug-in runs with the options that set it to what the variant models (the
study's copy of the code, docs/bugs.md): ``teacher_template=linear`` (the plug-in's
default is ``xgboost``), 100 hidden units (default 500), learning rate 1e-4 (default
1e-3), ``generator_n_iter=2`` (two epochs per PATE iteration, each over the 1,606 rows
its loader keeps of 2,000: 8 batches of 200 and one of 6, each a critic step with one
vote, then a generator step; the variant runs 16 student and then 18 generator steps,
see ``VARIANT_STEPS``; the plug-in's default is 10 epochs; 1 fails in synthcity 0.2.12,
``gan.py:622``: ``n_iter_print = generator_n_iter - 1`` is 0 and ``(i + 1) % 0``
raises) and ``n_iter`` = 1,000 (the plug-in's default cap is 200). Which batches are
charged depends on the Laplace noise of each vote, so the ledgers agree in
distribution, not draw for draw: compare the means.

    python benchmarks/fidelity_synthcity.py --rounds 3
    python benchmarks/fidelity_synthcity.py --smoke   # seconds; the variant only

``--python`` defaults to the interpreter of ``dpaudit env``'s ``synthcity``
environment (``$DPAUDIT_ENV_HOME/synthcity/bin/python``, by default under
``~/.cache/dpaudit/envs``); the run stops if there is none. ``--smoke`` (1 round,
epsilon 0.2, 200 released rows) runs the variant alone unless ``--python`` is given.

Each real fit takes tens of seconds (10 logistic-regression teachers refitted per
iteration); keep ``--rounds`` small on a shared machine.

Measured (``--rounds 3``, 2 CPU cores at load 3; synthcity 0.2.12, torch 2.2.2 CPU)::

                                  real w0  variant w0    real w1  variant w1
    iterations                        7.0         6.3        6.7         6.3
    vote batches asked              121.3       101.3      116.0       101.3
    batches charged                  63.7        56.7       59.7        57.3
    charged queries                11,859      11,333     11,399      11,467
    delta used                  1.119e-05   1.119e-05  1.118e-05   1.118e-05
    own final epsilon              1.0637      1.0395     1.0424      1.0457
    rows released                     500       2,000      2,000       2,000
    share of (1, 1, 1) rows        0.0000      0.0000     0.1253      0.0000
    share of rows with any 1       0.0000      0.0000     0.8747      0.3432
    variant's reference epsilon (world 1): [None, None, None]
    wall: real 273 s, variant 6 s

The ledgers agree in distribution (charged queries and final epsilon within the spread
of 3 fits; the real plug-in asks two more votes per iteration, on 6-row batches, most of
them skipped). Neither release holds a 1 without the target and both do with it: the
same leak (the schema learned from the records; the real plug-in's strict mode kept 500
of the 2,000 rows asked for in world 0, the adapter draws again until it has them).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import harness
import numpy as np
import pandas as pd

from dpaudit.data import worst_case_domain
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs

# Runs inside the synthcity interpreter. It wraps three of the plug-in's methods to
# count what they are called with; the training itself is synthcity's own.
REAL = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np, pandas as pd
from synthcity.plugins.privacy import plugin_pategan as pg

args = json.loads(sys.argv[1])
count = {}
fit_teachers, pate_lamda, update_alpha = pg.Teachers.fit, pg.Teachers.pate_lamda, pg.PATEGAN._update_alpha

def teachers_fit(self, X, generator):
    count["iterations"] += 1
    return fit_teachers(self, X, generator)

def lamda(self, x):
    out = pate_lamda(self, x)
    count["batches"] += 1
    return out

def alpha(self, n0, n1):
    count["charged"] += 1
    count["queries"] += int(len(n0))
    return update_alpha(self, n0, n1)

pg.Teachers.fit, pg.Teachers.pate_lamda, pg.PATEGAN._update_alpha = teachers_fit, lamda, alpha
names = ["a", "b", "c"]
results = []
for world in (0, 1):
    data = pd.DataFrame(0, index=range(args["rows"] - 1 + world), columns=names)
    if world:
        data.iloc[-1] = 1
    for r in range(args["rounds"]):
        count.update(iterations=0, batches=0, charged=0, queries=0)
        np.random.seed(args["seed"] + r)
        plugin = pg.PATEGANPlugin(epsilon=args["epsilon"], random_state=args["seed"] + r,
                                  **args["options"])
        plugin.fit(data)
        model = plugin.model
        moments = np.asarray(model.alpha_dict, dtype=float)
        eps = float(np.min((moments - np.log(model.delta)) / np.arange(1, moments.size + 1)))
        out = plugin.generate(count=args["release"], random_state=10_000 + r).dataframe()
        out = out.astype(float)
        results.append({
            "world": world, "round": r, **count, "delta": float(model.delta),
            "epsilon": eps, "released": len(out),
            "target_share": float((out >= 0.5).all(axis=1).mean()),
            "any_one_share": float((out >= 0.5).any(axis=1).mean()),
        })
print(json.dumps(results))
"""

OPTIONS = {
    "teacher_template": "linear",
    "generator_n_units_hidden": 100,
    "discriminator_n_units_hidden": 100,
    "lr": 1e-4,
    "generator_n_iter": 2,
    "n_iter": 1000,
}


#: The variant's steps per iteration set to the real plug-in's two epochs: on 2,000
#: rows its loader yields 1,606 rows per epoch (``utils/samplers.py:88-110``), 8
#: batches of 200 and one of 6, each a vote and a generator step; the variant's votes
#: are all of 200 rows, so it takes the 16 full batches' votes and all 18 steps.
VARIANT_STEPS = {"student_steps": 16, "generator_steps": 18}


def run_real(python: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [python, "-c", REAL, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"the real synthcity run failed:\n{done.stderr[-3000:]}")
    out: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def run_variant(args: dict[str, Any]) -> list[dict[str, Any]]:
    domain = worst_case_domain()
    results = []
    for world in (0, 1):
        data = pd.DataFrame(
            0, index=range(args["rows"] - 1 + world), columns=list("abc")
        )
        if world:
            data.iloc[-1] = 1
        for r in range(args["rounds"]):
            cfg = config_from_options(
                epsilon=args["epsilon"],
                delta=args["delta"],
                variant="synthcity",
                device="cpu",
                **VARIANT_STEPS,
            )
            model = PateGan(cfg).fit(
                data, domain=domain, rng=Rngs.from_seed(args["seed"] + r)
            )
            claim = model.privacy_claim_
            out = model.sample(args["release"], rng=Rngs.from_seed(10_000 + r))
            values = out.to_numpy(dtype=float)
            queries = int(claim.trace["ledger"]["queries"])
            asked = int(claim.trace["queries_including_skipped"])
            batch = cfg.batch_size
            results.append(
                {
                    "world": world,
                    "round": r,
                    "iterations": claim.iterations,
                    "batches": asked // batch,
                    "charged": queries // batch,
                    "queries": queries,
                    "delta": float(claim.trace["delta_used"]),
                    "epsilon": claim.epsilon,
                    "reference": claim.reference_epsilon,
                    "released": len(out),
                    "target_share": float((values >= 0.5).all(axis=1).mean()),
                    "any_one_share": float((values >= 0.5).any(axis=1).mean()),
                }
            )
    return results


#: The figures averaged per implementation and world, and their formats.
KEYS = {
    "iterations": ".1f",
    "batches": ".1f",
    "charged": ".1f",
    "queries": ",.0f",
    "delta": ".3e",
    "epsilon": ".4f",
    "released": ",.0f",
    "target_share": ".4f",
    "any_one_share": ".4f",
}


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    harness.add_python(parser, "synthcity", "synthcity 0.2.12")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--release", type=int, default=2000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    ns = harness.parse(
        parser, argv, smoke={"rounds": 1, "release": 200, "epsilon": 0.2}
    )
    # The real plug-in is required, but a smoke run checks the variant alone unless
    # --python names the real plug-in's interpreter.
    python = (
        ns.python if ns.smoke else harness.python_for(ns, "synthcity", required=True)
    )
    args = {
        "rows": ns.rows,
        "rounds": ns.rounds,
        "release": ns.release,
        "epsilon": ns.epsilon,
        "delta": ns.delta,
        "seed": ns.seed,
        "options": OPTIONS,
    }
    table = harness.Rows(__file__, ns)
    runs: list[tuple[str, list[dict[str, Any]], float]] = []
    if python is None:
        print("--smoke without --python: the variant only")
    else:
        started = time.perf_counter()
        real = run_real(python, args)
        runs.append(("real", real, time.perf_counter() - started))
    started = time.perf_counter()
    variant = run_variant(args)
    runs.append(("variant", variant, time.perf_counter() - started))
    for world in (0, 1):
        for name, results, seconds in runs:
            got = [x for x in results if x["world"] == world]
            table.add(
                f"{name} w{world}",
                **{k: float(np.mean([x[k] for x in got])) for k in KEYS},
                **(
                    {"reference": [x["reference"] for x in got]}
                    if name == "variant"
                    else {}
                ),
                fits=got,
                seconds=seconds / 2,
            )
    table.finish(
        title=f"synthcity PATE-GAN on the {ns.rows:,}-row worst case, epsilon "
        f"{ns.epsilon}, mean over {ns.rounds} fits per world; real options "
        f"{json.dumps(OPTIONS)}; batches: vote batches asked, charged: batches "
        "charged, queries: charged queries, delta: delta used, epsilon: own final "
        "epsilon; seconds: half the implementation's wall time",
        columns=("row", *KEYS, "reference", "seconds"),
        formats=KEYS,
    )


if __name__ == "__main__":
    main()
