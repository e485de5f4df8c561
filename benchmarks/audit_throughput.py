"""Worst-case audit throughput: rounds per second, batched vs one fit per round.

Trains and attacks the rounds of the default worst-case audit (reference PATE-GAN,
epsilon 1, query-based attack) in one process: batched (`fit_many` over
--batch-size rounds) and one fit per round, and prints rounds per second of each;
then the release of one batch: one `sample` call per model against `sample_many`
(one generator pass, one decode), and the execution plan the audit would use here.

    python benchmarks/audit_throughput.py [--rounds 256] [--batch-size 128] [--threads 1]
                                          [--release-only] [--repeats 3]

The release line also says whether ``sample_many`` gave every model exactly (bit for
bit) the table its own ``sample`` gives.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from dpaudit.audit import AuditConfig
from dpaudit.audit.games import (
    Streams,
    cached_setup,
    plan_for_setup,
    sample_all,
    train_batch,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
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
    args = parser.parse_args()
    config = AuditConfig(device=args.device, jobs=1, batch_size=args.batch_size)
    config_json = json.dumps(config.to_json(), sort_keys=True)
    cached_setup(config_json)
    torch.set_num_threads(args.threads)
    if args.release_only:
        release_rates(config_json, args.batch_size, repeats=args.repeats)
        return
    train_batch(config_json, [0, 1])  # warm-up
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    for start in range(0, args.rounds, args.batch_size):
        train_batch(
            config_json, list(range(start, min(start + args.batch_size, args.rounds)))
        )
    batched = args.rounds / (time.perf_counter() - started)
    started = time.perf_counter()
    for r in range(args.single):
        train_batch(config_json, [r])
    single = args.single / (time.perf_counter() - started)
    print(
        f"worst-case audit (reference PATE-GAN, querybased), device {args.device}, "
        f"{args.threads} torch thread(s), one process"
    )
    print(f"one fit per round:       {single:7.2f} rounds/s")
    print(
        f"batched ({args.batch_size:4d} per fit_many): {batched:7.2f} rounds/s "
        f"({batched / single:.1f}x)"
    )
    print(
        f"2,000 rounds (the default audit) at the batched rate: {2000 / batched:.0f} s "
        "per process"
    )
    release_rates(config_json, args.batch_size, repeats=args.repeats)


def release_rates(config_json: str, batch_size: int, *, repeats: int = 3) -> None:
    """Models released per second (best of ``repeats``): one ``sample`` each against
    ``sample_many``; and whether the two gave the same bits."""
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
    single = many = 0.0
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        alone = [
            model.sample(setup.synthetic_rows, rng=g, **extra)
            for model, g in zip(models, sample_rngs)
        ]
        single = max(single, len(models) / (time.perf_counter() - started))
        started = time.perf_counter()
        frames = sample_all(
            models,
            setup.synthetic_rows,
            sample_rngs,
            public=None if public is None else public[1],
        ).frames()
        many = max(many, len(models) / (time.perf_counter() - started))
    same = all(a.equals(b) for a, b in zip(alone, frames))
    print(f"release, one sample per model: {single:9.0f} models/s")
    print(f"release, sample_many + views:  {many:9.0f} models/s ({many / single:.1f}x)")
    print(f"sample_many gave every model its own sample's bits: {same}")
    plan = plan_for_setup(setup)
    print(
        f"execution plan here: jobs {plan.jobs}, batch size {plan.batch_size} "
        f"({plan.reason})"
    )


if __name__ == "__main__":
    main()
