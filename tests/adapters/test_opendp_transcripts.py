"""OpenDP's MST and AIM: the measurements the released table keeps, as transcripts.

Run under the interpreter that has OpenDP's ``mbi`` extra (tests/adapters/conftest.py),
skipped where none has it. OpenDP adds discrete Gaussian noise to integer counts, so
the residuals are checked through the randomized probability integral transform
(``discrete_gaussian_uniforms``): a KS test of uniformity at alpha 0.001 per test (the
file fails by chance with probability at most 0.002), beside the control that the same
residuals read at a quarter of the stated scale are rejected. Three fits give about
130 residuals (each OpenDP fit takes about 35 s here); the control's law is at KS
distance about 0.30 from uniform, its critical value at 120 draws 0.18, a margin of
three standard deviations of the empirical CDF at that point (a miss probability near
0.001 by the normal approximation).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from scipy import stats

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("cls", ["OpenDPMST", "OpenDPAIM"])
def test_the_tables_measurements_are_the_stated_discrete_gaussian(
    run_opendp: Callable[..., Any], transcripts: Any, cls: str
) -> None:
    # AIM's answers per fit vary with its private selection (OpenDP's own, unseeded
    # noise): four fits give it at least 120 answers, as three give MST.
    fits = 4 if cls == "OpenDPAIM" else 3
    result = transcripts.fit(run_opendp, "opendp", cls, fits)
    transcripts.check_values(result["transcripts"], result["domain"])
    uniforms = transcripts.discrete_gaussian_uniforms(result)
    assert uniforms.size >= 120, uniforms.size
    assert stats.kstest(uniforms, "uniform").pvalue > transcripts.ALPHA
    quarter = transcripts.discrete_gaussian_uniforms(result, factor=4.0)
    assert stats.kstest(quarter, "uniform").pvalue < transcripts.ALPHA
    for claim in result["claims"]:
        assert claim["transcript_records"] > 0 and claim["transcript_omits"]
    json.dumps(result)  # plain JSON throughout
