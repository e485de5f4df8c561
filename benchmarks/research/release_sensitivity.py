"""Does the data reach the release at all? Same streams, different data.

For each generator (the reference PATE-GAN, its six variants, G-PATE) on Cervical
Cancer, trains models with the audit's settings and identical streams on ``D``,
``D' = D + target``, half of ``D``, and ``D`` with another round's privacy stream,
under independent and under fixed public randomness, and prints how far the releases
differ. A release that is bit for bit the same for ``D``, ``D'`` and half of ``D``
depends on the privacy noise alone: no attack, fixed randomness or number of rounds
can separate the worlds, and a CONSISTENT verdict then says nothing about the
mechanism's analysis (docs/study.md, "What reaches the release").

    python benchmarks/research/release_sensitivity.py [--only updated,borealis] [--targets 2,388]
    python benchmarks/research/release_sensitivity.py --dataset worst-case

``--targets`` (one per generator, in ``--only`` order; default row 27 for every one)
are row indices of the Cervical Cancer training table; the power table's
``--target auto`` choices are in its output (``result.json``, ``target_index``).

Measured (``--targets 27,27,2,27,461,388,174,27``: the power table's fixed-public
targets where it had chosen them, else row 27), max |difference| of the released values
(19,865 per release), independent | fixed public:

    generator   D vs D'           D vs half of D    another privacy stream
    reference   0 | 0             0 | 0             4.91 | 1
    original    1 | 1             3 | 3             7 | 1
    updated     0 | 0             0 | 0             0.226 | 0
    synthcity   1 | 1             13 | 9            11.9 | 2.54
    turing      1 | 1             1 | 2             14 | 1
    borealis    0 | 0             0 | 0             1 | 0.0082
    smartnoise  4.4e-6 | 6.6e-6   4.4e-6 | 6.6e-6   57 | 1
    gpate       3 | 1             3 | 1             7 | 3

The reference, ``updated`` and ``borealis`` release exactly the same table whatever the
data: the reference's and borealis's vote noise, Lap(1/lambda) with lambda 1e-3 and
1e-4, swamps the 5 votes; ``updated``'s noise is Lap(0.001) (``laplace_scale_inverted``),
so its noisy labels are the votes themselves, and they come out the same for ``D``,
``D'`` and half of ``D``. ``smartnoise``'s data changes its release by a few 1e-6.

The binary worst case (``--dataset worst-case``; its own target; 300 released values),
max |difference| (values that differ), independent | fixed public:

    generator   D vs D'                       another privacy stream
    reference   0 | 0                         1 | 0
    original    1 (225) | 1 (217)             0 | 0
    updated     6.6e-4 (300) | 4.7e-4 (299)   0.192 | 0
    synthcity   1 (1) | 1 (300)               0 | 0
    turing      1 (1) | 0                     1 | 0
    borealis    0 | 0                         1 | 1.3e-5
    smartnoise  0 | 0                         1 | 0
    gpate       0 | 0                         0 | 1

(``D`` vs half of ``D``: 0 for every generator.) ``turing``'s target crosses the
decode threshold of one value under one independent stream and of none under the
default public seed; ``dpaudit audit --variant turing --public-seed auto --rounds 100``
found no public candidate of 8 where it does (every pool AUC 0.500; 35 s).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from dpaudit.audit import AuditConfig
from dpaudit.audit.games import Streams, build_setup, train_and_release

ROWS = (
    "reference",
    "original",
    "updated",
    "synthcity",
    "turing",
    "borealis",
    "smartnoise",
    "gpate",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(ROWS))
    parser.add_argument(
        "--targets", default=None, help="comma-separated row indices, one per generator"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--dataset",
        default="cervical_cancer",
        choices=("cervical_cancer", "worst-case", "worst-case-continuous"),
        help="the worst cases have their own target (--targets is ignored)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    names = args.only.split(",")
    targets = (
        [int(t) for t in args.targets.split(",")] if args.targets else [27] * len(names)
    )
    if len(targets) != len(names):
        parser.error("--targets needs one row index per generator of --only")
    for name, target in zip(names, targets):
        keys = (
            {"generator": "gpate"}
            if name == "gpate"
            else {
                "generator": "pategan",
                "variant": None if name == "reference" else name,
            }
        )
        if name == "smartnoise":
            # smartnoise-synth needs 1,000 rows: the study's small-table modification.
            keys["generator_options"] = {"small_table": "study"}
        real = args.dataset == "cervical_cancer"
        where = {"attack": "groundhog", "target": target} if real else {}
        setup = build_setup(
            AuditConfig(
                dataset=args.dataset,
                rounds=10,
                jobs=1,
                data_dir=args.data_dir,
                **where,
                **keys,
            )
        )
        if not real:
            target = -1
        streams = Streams(0)
        privacy = streams.rounds(2)
        half = setup.without.sample(frac=0.5, random_state=1).reset_index(drop=True)
        datasets = [setup.without, setup.with_target, half, setup.without]
        rngs = [privacy[0], privacy[0], privacy[0], privacy[1]]
        for public in (None, streams.public_candidate(0)):
            _, released = train_and_release(
                setup.make_generator,
                datasets,
                rngs,
                domain=setup.domain,
                rows=setup.synthetic_rows,
                public=public,
                name=name,
            )
            a, b, c, d = (f.to_numpy(dtype=float) for f in released.frames())
            mode = "independent " if public is None else "fixed public"
            print(
                f"{args.dataset} {name:10s} target {target:3d} {mode}: D vs D' max |diff| "
                f"{np.abs(a - b).max():9.3g} ({int((a != b).sum()):5d} of {a.size} "
                f"values differ); D vs half of D {np.abs(a - c).max():9.3g}; "
                f"another privacy stream {np.abs(a - d).max():9.3g}",
                flush=True,
            )


if __name__ == "__main__":
    main()
