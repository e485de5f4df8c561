"""PATE-GAN training throughput: batched models vs a sequential loop of single fits.

Prints model-iterations per second on Cervical Cancer (686 rows, 29 columns,
5 teachers) for M = 1, 64 and 256 models trained as one tensor program
(`PateGan.fit_many`), against a Python loop of single `fit` calls, and the ratio.

    python benchmarks/train_throughput.py [--iterations 20] [--device cpu] [--threads 2]
        [--allocator keep|default]
"""

from __future__ import annotations

import argparse
import time

import torch

from dpaudit.allocator import keep_freed_memory
from dpaudit.data import load_cervical_cancer
from dpaudit.generators.pate_gan import PateGan, PateGanConfig
from dpaudit.rng import Rngs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--models", default="1,64,256")
    parser.add_argument("--allocator", choices=["keep", "default"], default="keep",
                        help="keep: glibc reuses freed memory (what `dpaudit` does); "
                             "default: glibc's own thresholds")
    parser.add_argument("--sequential", type=int, default=8,
                        help="single fits timed for the sequential baseline")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    kept = keep_freed_memory() if args.allocator == "keep" else False
    ds = load_cervical_cancer()
    # A budget that never binds: every model runs exactly --iterations iterations.
    cfg = PateGanConfig(epsilon=1e12, max_iterations=args.iterations, num_teachers=5,
                        device=args.device)
    PateGan(cfg).fit_many([ds.train] * 2, domain=ds.domain,
                          rngs=Rngs.from_seed(9).spawn(2))  # warm-up
    rngs = Rngs.from_seed(0).spawn(max(int(m) for m in args.models.split(",")))
    started = time.perf_counter()
    for rng in rngs[: args.sequential]:
        PateGan(cfg).fit(ds.train, domain=ds.domain, rng=rng)
    seconds = time.perf_counter() - started
    sequential = args.sequential * args.iterations / seconds
    print(f"device {args.device}, torch threads {args.threads}, "
          f"{args.iterations} iterations per model, 5 teachers, 686 x 29, "
          f"allocator {'keeps freed memory' if kept else 'glibc defaults'}")
    print(f"sequential loop of single fits: {sequential:8.1f} model-iterations/s")
    for m in (int(x) for x in args.models.split(",")):
        started = time.perf_counter()
        models = PateGan(cfg).fit_many([ds.train] * m, domain=ds.domain, rngs=rngs[:m])
        if args.device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        assert all(model.privacy_claim_.iterations == args.iterations for model in models)
        rate = m * args.iterations / seconds
        print(f"batched M = {m:4d}: {rate:8.1f} model-iterations/s "
              f"({seconds:6.2f} s), {rate / sequential:6.1f}x the sequential loop")


if __name__ == "__main__":
    main()
