"""Worst-case audit throughput: rounds per second, batched vs one fit per round.

Trains and attacks the rounds of the default worst-case audit (reference PATE-GAN,
epsilon 1, query-based attack) in one process: batched (`fit_many` over
--batch-size rounds) and one fit per round, and prints rounds per second of each;
then the release of one batch: one `sample` call per model against `sample_many`
(one generator pass, one decode), and the execution plan the audit would use here.

    python benchmarks/audit_throughput.py [--rounds 256] [--batch-size 128] [--threads 1]
                                          [--release-only] [--repeats 3]

The release row also says whether ``sample_many`` gave every model exactly (bit for
bit) the table its own ``sample`` gives (``same_bits``). Each rate's ``seconds`` is
its own timing (for the release, the best of ``--repeats``).
"""

from __future__ import annotations

import json
import math
import time

import harness
import torch

from dpaudit.audit import AuditConfig
from dpaudit.audit.games import (
    Streams,
    cached_setup,
    plan_for_setup,
    sample_all,
    train_batch,
)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--rounds", type=int, default=256, help="rounds to time (batched)"
    )
    parser.add_argument(
        "--single", type=int, default=16, help="rounds to time one by one"
    )
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--release-only", action="store_true", help="time only the release of one batch"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timings of the release (the best is printed)",
    )
    args = harness.parse(
        parser,
        argv,
        smoke={"rounds": 4, "single": 2, "batch_size": 4, "repeats": 1},
    )
    config = AuditConfig(
        device=args.device, jobs=1, batch_size=args.batch_size, seed=args.seed
    )
    config_json = json.dumps(config.to_json(), sort_keys=True)
    cached_setup(config_json)
    torch.set_num_threads(args.threads)
    table = harness.Rows(__file__, args)
    title = (
        f"worst-case audit (reference PATE-GAN, querybased), device {args.device}, "
        f"{args.threads} torch thread(s), one process"
    )
    if not args.release_only:
        train_batch(config_json, [0, 1])  # warm-up
        torch.set_num_threads(args.threads)
        label = f"batched ({args.batch_size} per fit_many)"
        with table.timed(label, rounds=args.rounds) as batched:
            for start in range(0, args.rounds, args.batch_size):
                end = min(start + args.batch_size, args.rounds)
                train_batch(config_json, list(range(start, end)))
        batched["rounds_per_s"] = args.rounds / batched["seconds"]
        with table.timed("one fit per round", rounds=args.single) as single:
            for r in range(args.single):
                train_batch(config_json, [r])
        single["rounds_per_s"] = args.single / single["seconds"]
        batched["x_single"] = batched["rounds_per_s"] / single["rounds_per_s"]
        batched["default_audit_s"] = 2000 / batched["rounds_per_s"]
    plan = release_rates(config_json, args.batch_size, table, repeats=args.repeats)
    table.finish(
        title=f"{title}; default_audit_s: 2,000 rounds (the default audit) at the "
        f"batched rate, per process; execution plan here: {plan}",
        formats={
            "rounds_per_s": ".2f",
            "x_single": ".1f",
            "default_audit_s": ".0f",
            "models_per_s": ".0f",
            "seconds": ".2f",
        },
    )


def release_rates(
    config_json: str, batch_size: int, table: harness.Rows, *, repeats: int = 3
) -> str:
    """Rows of the models released per second (best of ``repeats``): one
    ``sample`` each against ``sample_many``, and whether the two gave the same
    bits; returns the execution plan the audit would use here."""
    setup = cached_setup(config_json)
    rngs = setup.plan.round_rngs()[:batch_size]
    split = [Streams.fit_and_sample(r) for r in rngs]
    public = setup.public_streams()
    datasets = [
        setup.with_target if setup.plan.bits[i] else setup.without
        for i in range(len(rngs))
    ]
    models = setup.make_generator().fit_many(  # type: ignore[attr-defined]
        datasets,
        domain=setup.domain,
        rngs=[f for f, _ in split],
        **({} if public is None else {"public_rngs": [public[0]] * len(rngs)}),
    )
    sample_rngs = [s for _, s in split]
    extra = {} if public is None else {"public_rng": public[1]}
    single = many = math.inf
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        alone = [
            model.sample(setup.synthetic_rows, rng=g, **extra)
            for model, g in zip(models, sample_rngs)
        ]
        single = min(single, time.perf_counter() - started)
        started = time.perf_counter()
        frames = sample_all(
            models,
            setup.synthetic_rows,
            sample_rngs,
            public=None if public is None else public[1],
        ).frames()
        many = min(many, time.perf_counter() - started)
    same = all(a.equals(b) for a, b in zip(alone, frames))
    table.add(
        "release, one sample per model",
        models=len(models),
        models_per_s=len(models) / single,
        seconds=single,
    )
    table.add(
        "release, sample_many + views",
        models=len(models),
        models_per_s=len(models) / many,
        x_single=single / many,
        same_bits=same,
        seconds=many,
    )
    plan = plan_for_setup(setup)
    return f"jobs {plan.jobs}, batch size {plan.batch_size} ({plan.reason})"


if __name__ == "__main__":
    main()
