"""The attainable maximum of ``dpaudit check``'s audits before they run, as
docs/ci.md and examples/privacy.toml quote it: per rounds per world (``quick``'s 500
and the full 1,000), per attack set (the default three; the example policy's one,
querybased) and per policy alpha (one audit at 0.05; the example's two at 0.025 each),
at each sequential look and analysed once (``sequential = false``).

Exact computations of :func:`dpaudit.audit.games.planned_attainable_maximum` (the
figure ``dpaudit check`` prints before each audit); no audit is run::

    PYTHONPATH=. python benchmarks/check_power.py --record   # writes records/check_power.json
    PYTHONPATH=. python benchmarks/check_power.py --smoke    # seconds: a test runs it
"""

from __future__ import annotations

from dataclasses import replace

import harness


def main(argv: list[str] | None = None) -> dict[str, object]:
    made = harness.parser(__doc__)
    made.add_argument(
        "--rounds", default="500,1000", help="rounds per world, comma-separated"
    )
    args = harness.parse(made, argv, smoke={"rounds": "50"})
    from dpaudit.audit import AuditConfig
    from dpaudit.audit.games import audit_looks, planned_attainable_maximum

    rows = harness.Rows(__file__, args)
    figures: dict[str, object] = {}
    cases = (
        ("default", 0.05, "default set, one audit"),
        ("querybased", 0.025, "querybased, two audits"),
        ("default", 0.025, "default set, two audits"),
    )
    for rounds in (int(r) for r in args.rounds.split(",")):
        for attack, alpha, what in cases:
            base = AuditConfig.from_mapping(
                {
                    "rounds": rounds,
                    "attack": attack,
                    "alpha": alpha,
                    "dataset": "worst-case",
                }
            )
            once = planned_attainable_maximum(replace(base, sequential=False))
            looks = audit_looks(replace(base, sequential=True))
            at_looks = [
                planned_attainable_maximum(
                    replace(base, rounds=n, alpha=a, sequential=False)
                )
                for n, a in zip(looks.per_world, looks.alphas)
            ]
            key = f"{rounds}/{attack}/{alpha:g}"
            figures[f"{key}/once"] = round(once, 2)
            figures[f"{key}/looks"] = [round(v, 2) for v in at_looks]
            figures[f"{key}/looks_per_world"] = list(looks.per_world)
            rows.add(
                what,
                rounds=rounds,
                alpha=alpha,
                looks=list(looks.per_world),
                at_looks=[round(v, 2) for v in at_looks],
                once=round(once, 2),
            )
    rows.record(figures)
    return rows.finish(
        title="dpaudit check: the attainable maximum before the audits run"
    )


if __name__ == "__main__":
    main()
