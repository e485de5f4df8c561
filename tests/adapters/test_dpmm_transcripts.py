"""dpmm's MST, AIM and PrivBayes record their measurements as transcripts.

Run under the interpreter that has dpmm (tests/adapters/conftest.py), skipped where
none has it. Each test fits one model several times on a fixed table in a subprocess
and checks the transcripts here: the cells are the public domain's values, and the
standardized residuals against the table's exact counts are the stated noise (a KS
test; each rejects with probability ``ALPHA`` = 0.001 when the library adds what the
transcript states, so the file fails by chance with probability at most 0.003).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def test_mst_records_its_marginals_at_the_scale_it_draws(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(run_dpmm, "dpmm", "DpmmMST", 5, measure_only=True)
    transcripts.check_noise(result, "gaussian")
    for transcript, claim in zip(result["transcripts"], result["claims"], strict=True):
        assert [len(r["columns"]) for r in transcript] == [1, 1, 1, 1, 2, 2, 2]
        # dpmm weighs every measurement by the number of one-way cliques (4): the
        # scale drawn is sigma * sqrt(4), in both rounds (mechanism.py:171-174).
        scales = {r["noise"]["gaussian"] for r in transcript}
        assert len(scales) == 1
        assert claim["measure_only"] is True
    merged = [r for t in result["transcripts"] for r in t if "sets" in r]
    assert merged and all("c" in r["columns"] for r in merged)
    assert "measure_only=true" in result["sample"]


def test_privbayes_records_its_conditional_marginals(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(run_dpmm, "dpmm", "DpmmPrivBayes", 6, measure_only=True)
    transcripts.check_noise(result, "gaussian")


def test_aim_records_every_measurement(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(run_dpmm, "dpmm", "DpmmAIM", 2)
    transcripts.check_noise(result, "gaussian", control=False)
    for claim in result["claims"]:
        assert claim["measure_only"] is False and claim["transcript_left_out"] == 0
