"""G-PATE throughput: teacher input-gradients per second at 2,000 teachers.

A G-PATE iteration needs, for every generated record, the input gradient of every
teacher: ``M models x k teachers x B records`` gradients. dpaudit computes them all
in one backward pass over a ``BatchedMLP`` of ``M * k`` members
(:func:`dpaudit.generators.g_pate.teacher_input_gradients`). This script prints, on
CPU (and on CUDA when available):

- ``grad pass``: teacher-gradients per second of that one batched pass;
- ``iteration``: teacher-gradients per second of whole training iterations (teacher
  update, gradient pass, DPGradAgg, accountant, generator update), from
  ``GPate.fit_many`` with a budget that never stops training;
- ``loop``: the same gradients computed one teacher at a time in a Python loop
  (timed on a subset of teachers and scaled), the design this replaces.

Each figure is the best of ``--repeats`` timings (the fit includes building the
ensembles and partitions).

Kaggle Credit shape by default (29 features + label: d = 30, batch 32, G-PATE's
published 2,100 teachers rounded to 2,000).

With ``--release`` it prints instead how fast ``GPate.sample_many`` releases the
synthetic tables of ``--release-models`` models of one ``fit_many`` (an audit batch):
on the worst case (100 rows each) and on Cervical Cancer (686 rows each, the audit's
``|D|``), with the audit's G-PATE options, per model and in total, for

- ``batched``: ``sample_many`` (one generator pass over the ensemble, one decode);
- ``per-model``: the previous ``sample_many`` (one generator pass per model, then
  one decode), rebuilt here;
- ``sample``: one ``sample`` call per model, each decoded on its own;

under both randomness modes (``independent``: each model its own public stream;
``fixed public``: one stream for all, as the audit's default game).

Usage::

    python benchmarks/research/gpate_throughput.py [--teachers 2000] [--batch 32] [--dim 30]
        [--models 1 4] [--iterations 5] [--repeats 5]
    python benchmarks/research/gpate_throughput.py --release [--release-models 256]
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
from torch.nn import functional as F

from dpaudit.data import Column, Domain
from dpaudit.generators.g_pate import (
    GPate,
    GPateConfig,
    _MlpTeachers,
    teacher_input_gradients,
)
from dpaudit.rng import Rngs, public_and_privacy


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def grad_pass_rate(
    models: int, teachers: int, batch: int, dim: int, device: torch.device, repeats: int
) -> float:
    gen = torch.Generator(device=device).manual_seed(0)
    nets = _MlpTeachers(models * teachers, dim, generator=gen, device=device)
    x = torch.rand(models, batch, dim, generator=gen, device=device)
    cond = torch.zeros(models, batch, 0, device=device)
    teacher_input_gradients(nets, x, cond, num_teachers=teachers)  # warm-up
    best = math.inf
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        teacher_input_gradients(nets, x, cond, num_teachers=teachers)
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return models * teachers * batch / best


def loop_rate(
    teachers: int,
    batch: int,
    dim: int,
    device: torch.device,
    repeats: int,
    sample: int = 100,
) -> float:
    """One teacher at a time (its own weights, plain autograd), on ``sample`` teachers."""
    gen = torch.Generator(device=device).manual_seed(0)
    nets = _MlpTeachers(teachers, dim, generator=gen, device=device)
    layers = nets.net.layers
    x = torch.rand(batch, dim, generator=gen, device=device)

    def one(e: int) -> None:
        xi = x.detach().clone().requires_grad_(True)
        h = F.leaky_relu(xi @ layers[0].weight[e] + layers[0].bias[e], 0.2)
        logit = h @ layers[1].weight[e] + layers[1].bias[e]
        torch.autograd.grad(F.softplus(-logit).sum() / batch, xi)

    for e in range(5):  # warm-up
        one(e)
    best = math.inf
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        for e in range(sample):
            one(e)
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return sample * batch / best


def iteration_rate(
    models: int,
    teachers: int,
    batch: int,
    dim: int,
    device: torch.device,
    iterations: int,
    repeats: int = 1,
) -> tuple[float, float]:
    domain = Domain(
        tuple(
            Column(name=f"x{i}", kind="continuous", lower=0.0, upper=1.0)
            for i in range(dim)
        )
    )
    gen = np.random.default_rng(0)
    rows = max(teachers * 2, 4 * batch)
    data = [
        pd.DataFrame(gen.uniform(size=(rows, dim)), columns=domain.names)
        for _ in range(models)
    ]
    cfg = GPateConfig(
        epsilon=1e9,
        delta=1e-5,
        num_teachers=teachers,
        batch_size=batch,
        max_iterations=iterations,
        device=device.type,
    )
    elapsed = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = GPate(cfg).fit_many(
                data, domain=domain, rngs=Rngs.from_seed(0).spawn(models)
            )
        _sync(device)
        elapsed = min(elapsed, time.perf_counter() - start)
        assert all(m.privacy_claim_.iterations == iterations for m in fitted)
    return iterations * models * teachers * batch / elapsed, elapsed


def _per_model_release(
    models: list[GPate], n: int, rngs: list[Rngs], publics: list[Rngs] | None
) -> pd.DataFrame:
    """The previous ``sample_many``: one generator forward pass per model (its own
    module), the encoded rows concatenated and decoded once."""
    encoded = []
    for i, model in enumerate(models):
        fitted = model._fitted
        assert fitted is not None
        public = publics[i] if publics is not None else public_and_privacy(rngs[i])[0]
        layout, device = fitted.layout, fitted.device
        g = public.torch(device)
        z = torch.randn(1, n, fitted.latent, generator=g, device=device)
        cond = torch.zeros(1, n, 0, device=device)
        classes = None
        if layout.classes:
            u = torch.rand(1, n, generator=g, device=device)
            cls = (u * layout.classes).long().clamp_(max=layout.classes - 1)
            cond, classes = F.one_hot(cls, layout.classes).float(), cls[0].cpu().numpy()
        with torch.no_grad():
            free = fitted.generator(z, cond)[0].cpu().numpy()
        encoded.append(layout.assemble(free, classes))
    domain = models[0]._fitted.layout.domain  # type: ignore[union-attr]
    return domain.decode(np.concatenate(encoded))


def _release_paths(
    models: list[GPate], n: int, rngs: list[Rngs], publics: list[Rngs] | None
) -> dict[str, Callable[[], object]]:
    def batched() -> pd.DataFrame:
        return GPate.sample_many(models, n, rngs=rngs, public_rngs=publics)

    def per_model() -> pd.DataFrame:
        return _per_model_release(models, n, rngs, publics)

    def sample() -> list[pd.DataFrame]:
        return [
            m.sample(n, rng=r, public_rng=None if publics is None else publics[i])
            for i, (m, r) in enumerate(zip(models, rngs))
        ]

    return {"batched": batched, "per-model": per_model, "sample": sample}


def release_table(models: int, device: torch.device, repeats: int) -> None:
    from dpaudit.data import load_cervical_cancer, worst_case_dataset
    from dpaudit.generators.g_pate.model import make_gpate
    from dpaudit.generators.registry import audit_options

    print(
        f"G-PATE release of {models} models of one fit_many on {device.type} "
        f"({torch.get_num_threads()} CPU threads, best of {repeats}; load average "
        f"{os.getloadavg()[0]:.2f})"
    )
    print(
        f"{'dataset':<10}{'rows':>6}{'randomness':>14}{'path':>11}{'total s':>10}"
        f"{'ms/model':>10}{'speed-up':>10}"
    )
    for name, ds, worst, rows in (
        ("worst", worst_case_dataset(), True, 100),
        ("cervical", load_cervical_cancer(), False, None),
    ):
        n_rows = len(ds.train)
        n = rows or n_rows
        options = audit_options(
            "gpate",
            {},
            n_rows=n_rows,
            worst_case=worst,
            epsilon=1.0,
            delta=1e-5,
            device=device.type,
            variant=None,
            bugs=(),
        )
        options["max_iterations"] = 2  # training is not timed here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = make_gpate(epsilon=1.0, delta=1e-5, **options).fit_many(
                [ds.train] * models,
                domain=ds.domain,
                rngs=Rngs.from_seed(0).spawn(models),
            )
        rngs = Rngs.from_seed(1).spawn(models)
        for mode, publics in (
            ("independent", None),
            ("fixed public", [Rngs.from_seed(2)] * models),
        ):
            paths = _release_paths(fitted, n, rngs, publics)
            batched = paths["batched"]()
            assert isinstance(batched, pd.DataFrame)
            pd.testing.assert_frame_equal(batched, paths["per-model"]())
            times = {}
            for path, run in paths.items():
                best = math.inf
                for _ in range(repeats):
                    _sync(device)
                    start = time.perf_counter()
                    run()
                    _sync(device)
                    best = min(best, time.perf_counter() - start)
                times[path] = best
            for path, best in times.items():
                print(
                    f"{name:<10}{n:>6}{mode:>14}{path:>11}{best:>10.3f}"
                    f"{1000 * best / models:>10.3f}{times[path] / times['batched']:>9.1f}x"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teachers", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--dim", type=int, default=30)
    parser.add_argument("--models", type=int, nargs="+", default=None)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timings repeated; the best is printed (noisy machines)",
    )
    parser.add_argument(
        "--release",
        action="store_true",
        help="time sample_many (the release) instead of training",
    )
    parser.add_argument("--release-models", type=int, default=256)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: torch's; the audit's CPU workers use 1)",
    )
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    devices = [torch.device("cpu")]
    if torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    if args.release:
        for device in devices:
            release_table(args.release_models, device, args.repeats)
        return 0
    print(
        f"G-PATE teacher-gradients per second: k = {args.teachers} teachers, "
        f"batch {args.batch}, d = {args.dim}; torch {torch.__version__}, "
        f"{torch.get_num_threads()} CPU threads"
    )
    print(f"{'device':<8}{'models':>7}{'grad pass':>14}{'iteration':>14}{'s/iter':>9}")
    for device in devices:
        iteration_rate(1, args.teachers, args.batch, args.dim, device, 1)  # warm-up
        models = args.models or ([1, 4] if device.type == "cpu" else [1, 8, 32])
        for m in models:
            rate = grad_pass_rate(
                m, args.teachers, args.batch, args.dim, device, args.repeats
            )
            it_rate, elapsed = iteration_rate(
                m,
                args.teachers,
                args.batch,
                args.dim,
                device,
                args.iterations,
                args.repeats,
            )
            print(
                f"{device.type:<8}{m:>7}{rate:>14,.0f}{it_rate:>14,.0f}"
                f"{elapsed / args.iterations:>9.3f}"
            )
        loop = loop_rate(args.teachers, args.batch, args.dim, device, args.repeats)
        print(f"{device.type:<8}{'loop':>7}{loop:>14,.0f}   (one teacher at a time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
