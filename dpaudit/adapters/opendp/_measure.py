"""OpenDP 0.16's measurements as a transcript: read from the released
``ContingencyTable`` (docs/adapters.md, "White-box transcripts"; line numbers are the
library's, under ``opendp/extras/mbi/``).

The table keeps every measurement it was fitted to (``ContingencyTable.marginals``,
_table/__init__.py:64): mbi ``LinearMeasurement`` records, each the noisy marginal of
one clique as ``make_noise_marginal`` built it (_utilities/__init__.py:317-358: the
exact counts as i32, ``then_noise`` at ``scale``, ``stddev = get_std(measure,
scale)``). Nothing is wrapped: the adapter reads what the library released.
Standard library, numpy and pandas only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.adapters._common import columns_of
from dpaudit.adapters._transcript import Transcript, domain_values, public_value


def table_transcript(table: Any, domain: dict[str, Any]) -> Transcript:
    """The measurements of ``table`` (fitted with the public keys and cuts) in the
    domain's values: a column cut into bins is left out (``left_out``), as is a
    measurement of no column (a total) or of another query than the identity."""
    names = [c["name"] for c in columns_of(domain)]
    public = domain_values(domain)
    codes: list[list[Any] | None] = []
    for name in names:
        if name in table.cuts or public[name] is None:
            codes.append(None)
        else:
            codes.append(
                [public_value(v, public[name]) for v in table.keys[name].to_list()]
            )
    transcript = Transcript(names, codes)
    for m in table.marginals.flatten():
        clique = [str(c) for c in m.clique]
        if not clique or getattr(m.query, "__name__", "") != "datavector":
            transcript.left_out += 1
            continue
        transcript.add_marginal(
            [names.index(c) for c in clique],
            np.asarray(m.noisy_measurement, dtype=float),
            {"gaussian": float(m.stddev)},
        )
    return transcript
