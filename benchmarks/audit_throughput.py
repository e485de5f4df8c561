"""Worst-case audit throughput: rounds per second, batched vs one fit per round.

Trains and attacks the rounds of the default worst-case audit (reference PATE-GAN,
epsilon 1, query-based attack) in one process: batched (`fit_many` over
--batch-size rounds) and one fit per round, and prints rounds per second of each.

    python benchmarks/audit_throughput.py [--rounds 256] [--batch-size 128] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from dpaudit.audit.runner import AuditConfig, train_batch
from dpaudit.audit.setup import cached_setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=256, help="rounds to time (batched)")
    parser.add_argument("--single", type=int, default=16, help="rounds to time one by one")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    config = AuditConfig(device=args.device, jobs=1, batch_size=args.batch_size)
    config_json = json.dumps(config.to_json(), sort_keys=True)
    cached_setup(config_json)
    torch.set_num_threads(args.threads)
    train_batch(config_json, [0, 1])  # warm-up
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    for start in range(0, args.rounds, args.batch_size):
        train_batch(config_json, list(range(start, min(start + args.batch_size, args.rounds))))
    batched = args.rounds / (time.perf_counter() - started)
    started = time.perf_counter()
    for r in range(args.single):
        train_batch(config_json, [r])
    single = args.single / (time.perf_counter() - started)
    print(f"worst-case audit (reference PATE-GAN, querybased), device {args.device}, "
          f"{args.threads} torch thread(s), one process")
    print(f"one fit per round:       {single:7.2f} rounds/s")
    print(f"batched ({args.batch_size:4d} per fit_many): {batched:7.2f} rounds/s "
          f"({batched / single:.1f}x)")
    print(f"2,000 rounds (the default audit) at the batched rate: {2000 / batched:.0f} s "
          "per process")


if __name__ == "__main__":
    main()
