"""PATE-GAN training throughput: batched models vs a sequential loop of single fits.

Prints model-iterations per second on Cervical Cancer (686 rows, 29 columns,
5 teachers) for M = 1, 64 and 256 models trained as one tensor program
(`PateGan.fit_many`), against a Python loop of single `fit` calls, and the ratio.

    python benchmarks/train_throughput.py [--iterations 20] [--device cpu] [--threads 2]
        [--allocator keep|default] [--floor] [--worst-case 1000] [--variant original]

``--variant NAME`` times that bug variant (its architecture and defaults) instead of
the reference, with the same never-binding budget.

``--worst-case M`` first times the default audit's training step alone: ``fit_many`` of
the reference PATE-GAN on the worst-case dataset for ``M`` rounds (the audit's streams,
iteration cap 100, about 47 iterations), wall and CPU seconds in this fresh process
(so including any one-off import the first fit triggers), and whether ``torch._dynamo``
was imported (``torch.optim``'s Optimizer imports it on first use: about 1.4 s).
"""

from __future__ import annotations

import dataclasses
import sys
import time

import harness
import torch

from dpaudit.allocator import keep_freed_memory
from dpaudit.data import load_cervical_cancer
from dpaudit.generators.flags import build_config
from dpaudit.generators.pate_gan import PateGan, PateGanConfig
from dpaudit.rng import Rngs


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--models", default="1,64,256")
    parser.add_argument(
        "--allocator",
        choices=["keep", "default"],
        default="keep",
        help="keep: glibc reuses freed memory (what `dpaudit` does); "
        "default: glibc's own thresholds",
    )
    parser.add_argument(
        "--sequential",
        type=int,
        default=8,
        help="single fits timed for the sequential baseline",
    )
    parser.add_argument(
        "--variant",
        default=None,
        help="a bug variant of pategan (default: the reference)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time the unavoidable teacher matmuls at the largest M",
    )
    parser.add_argument(
        "--worst-case",
        type=int,
        default=0,
        metavar="M",
        help="first time the default audit's fit_many of M worst-case "
        "models, then stop",
    )
    args = harness.parse(
        parser,
        argv,
        smoke={"iterations": 2, "models": "1,4", "sequential": 2},
    )
    torch.set_num_threads(args.threads)
    kept = keep_freed_memory() if args.allocator == "keep" else False
    table = harness.Rows(__file__, args)
    if args.worst_case:
        worst_case(args.worst_case, args.threads, table)
        table.finish(formats={"wall_s": ".2f", "cpu_s": ".2f"})
        return
    ds = load_cervical_cancer()
    # A budget that never binds: every model runs exactly --iterations iterations.
    cfg = build_config(
        PateGanConfig,
        generator="pategan",
        label="pategan",
        epsilon=1e12,
        delta=1e-5,
        variant=args.variant,
        max_iterations=args.iterations,
        num_teachers=5,
        device=args.device,
    )
    if cfg.fixed_iterations is not None:  # the single-discriminator variants
        cfg = dataclasses.replace(cfg, fixed_iterations=args.iterations)
    PateGan(cfg).fit_many(
        [ds.train] * 2, domain=ds.domain, rngs=Rngs.from_seed(9).spawn(2)
    )  # warm-up
    rngs = Rngs.from_seed(args.seed).spawn(max(int(m) for m in args.models.split(",")))
    with table.timed("sequential loop of single fits", models=args.sequential) as row:
        for rng in rngs[: args.sequential]:
            PateGan(cfg).fit(ds.train, domain=ds.domain, rng=rng)
    sequential = args.sequential * args.iterations / row["seconds"]
    row["model_iterations_per_s"] = sequential
    for m in (int(x) for x in args.models.split(",")):
        with table.timed(f"batched M = {m}", models=m) as row:
            models = PateGan(cfg).fit_many(
                [ds.train] * m, domain=ds.domain, rngs=rngs[:m]
            )
            if args.device == "cuda":
                torch.cuda.synchronize()
        assert all(
            model.privacy_claim_.iterations == args.iterations for model in models
        )
        rate = m * args.iterations / row["seconds"]
        row.update(model_iterations_per_s=rate, x_sequential=rate / sequential)
    if args.floor:
        m = max(int(x) for x in args.models.split(","))
        floor = teacher_gemm_seconds(m, device=args.device)
        # The teachers' matmuls alone (5 steps x 4 GEMMs, + 5 vote GEMMs) per
        # iteration: at most this rate even if everything else were free.
        table.add(
            f"floor at M = {m}: teacher matmuls",
            models=m,
            ms_per_iteration=floor * 1e3,
            model_iterations_per_s=m / floor,
            x_sequential=m / floor / sequential,
        )
    table.finish(
        title=f"pategan {args.variant or 'reference'}, device {args.device}, "
        f"torch threads {args.threads}, {args.iterations} iterations per model, "
        "5 teachers, 686 x 29, allocator "
        f"{'keeps freed memory' if kept else 'glibc defaults'}",
        formats={
            "model_iterations_per_s": ".1f",
            "x_sequential": ".1f",
            "ms_per_iteration": ".1f",
        },
    )


def worst_case(m: int, threads: int, table: harness.Rows) -> None:
    """Wall and CPU seconds of the default audit's ``fit_many`` of ``m`` rounds."""
    from dpaudit.audit import AuditConfig
    from dpaudit.audit.games import Streams, build_setup

    setup = build_setup(AuditConfig(rounds=max(m, 5), jobs=1))
    rngs, public = setup.plan.round_rngs(), setup.public_streams()
    split = [Streams.fit_and_sample(rngs[r]) for r in range(m)]
    datasets = [
        setup.with_target if setup.plan.bits[r] else setup.without for r in range(m)
    ]
    extra = {} if public is None else {"public_rngs": [public[0]] * m}
    wall, cpu = time.perf_counter(), time.process_time()
    models = setup.make_generator().fit_many(  # type: ignore[attr-defined]
        datasets, domain=setup.domain, rngs=[f for f, _ in split], **extra
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    table.add(
        f"default audit's training, {m} worst-case models",
        max_iterations=max(model.privacy_claim_.iterations for model in models),
        threads=threads,
        wall_s=wall,
        cpu_s=cpu,
        dynamo_imported="torch._dynamo" in sys.modules,
        seconds=wall,
    )


def teacher_gemm_seconds(
    m: int,
    *,
    k: int = 5,
    b: int = 64,
    p: int = 29,
    h: int = 29,
    device: str = "cpu",
    repeats: int = 10,
) -> float:
    """Seconds per iteration of the batched matmuls a PATE-GAN iteration cannot avoid:
    per teacher step, each teacher's first layer on its real rows and (one wider matmul
    per model) on the shared generated rows, and both weight gradients; per student
    step, the teachers' first layer on the generated rows (the vote)."""
    gen = torch.Generator(device=device).manual_seed(0)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(shape, generator=gen, device=device)

    x_real, w = rand(m * k, b, p), rand(m * k, p, h)
    x_fake, w_shared = rand(m, b, p), rand(m, p, k * h)
    g_real, g_fake = rand(m * k, b, h), rand(m, b, k * h)

    def iteration() -> None:
        for _ in range(5):
            torch.bmm(x_real, w)
            torch.bmm(x_fake, w_shared)
            torch.bmm(x_real.transpose(1, 2), g_real)
            torch.bmm(x_fake.transpose(1, 2), g_fake)
        for _ in range(5):
            torch.bmm(x_fake, w_shared)

    iteration()
    started = time.perf_counter()
    for _ in range(repeats):
        iteration()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / repeats


if __name__ == "__main__":
    main()
