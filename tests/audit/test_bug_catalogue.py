"""Every bug flag of the catalogue audits to a verdict, without a crash.

``laplace_scale_inverted`` used to end the audit with "unexpected OverflowError: math
range error" (exit 3) on both worst cases: its reference accountant charges
``lambda' = 1/lambda = 1000``, and the moments accountant computed ``exp(2 lambda')``
with ``math.exp``. Each flag runs alone on a tiny audit (5 rounds per world, two
training iterations, small batches), the datasets alternating between the two worst
cases, so any flag whose training, claim, reference accountant, release or report
fails on some input shows here in about a second.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.verdict import Verdict
from dpaudit.audit.run import run_audit
from dpaudit.generators.catalogue import declared_bugs
from dpaudit.generators.g_pate.config import GPateConfig
from dpaudit.generators.pate_gan.config import PateGanConfig

TINY = {
    "pategan": {
        "max_iterations": 2,
        "teacher_steps": 1,
        "student_steps": 1,
        "batch_size": 8,
    },
    "gpate": {"max_iterations": 2, "batch_size": 4},
}
DATASETS = ("worst-case", "worst-case-continuous")
CASES = [
    (generator, flag, DATASETS[i % 2])
    for generator, config_cls in (("pategan", PateGanConfig), ("gpate", GPateConfig))
    for i, flag in enumerate(declared_bugs(config_cls))
] + [("pategan", "laplace_scale_inverted", dataset) for dataset in DATASETS]


@pytest.mark.parametrize(("generator", "flag", "dataset"), sorted(set(CASES)))
def test_each_flag_alone_audits_to_a_verdict(
    tmp_path: Path, generator: str, flag: str, dataset: str
) -> None:
    config = AuditConfig(
        generator=generator,
        bugs=(flag,),
        dataset=dataset,
        rounds=5,
        device="cpu",
        jobs=1,
        generator_options=TINY[generator],
    )
    with warnings.catch_warnings():
        # A budget that covers no query (G-PATE) is warned about, not an error.
        warnings.simplefilter("ignore")
        result = run_audit(config, out_dir=tmp_path / "audit")
    assert isinstance(result.verdict, Verdict)
    assert (tmp_path / "audit" / "result.json").is_file()
    assert not math.isnan(result.eps_emp)


def test_inverted_laplace_scale_is_charged_a_huge_finite_or_infinite_epsilon() -> None:
    """The reference accountant of ``laplace_scale_inverted`` at lambda = 1e-3
    charges ``lambda' = 1000`` per query: nothing below the claim, no overflow."""
    from dpaudit.generators import accountants as acc

    spec = acc.MomentsAccountantSpec(lam=1000.0, orders=100, data_dependent=True)
    eps = float(acc.pate_gan_epsilon([3, 0, 5, 0, 2], spec, delta=1e-5))
    assert eps > 1e6 or math.isinf(eps)
