"""The control options of docs/findings.md patch the library inside the worker: each
check fits the adapter as shipped and with the option on a table of 0s, under the
library's own interpreter (tests/adapters/conftest.py; skipped where none has it),
and reads what the patch claims to change from the fitted model, and that the
library's code is put back after the fit.

- ``smartnoise-mwem --option ranges=corrected`` (finding 2): MWEM's histogram ranges
  (0, 0) from the records become (0, 1) from the transformer.
- ``synthcity-aim --option column_domains=corrected`` (finding 8): AIM's model domain
  sizes 1 (distinct values in the records) become the public sizes.
- ``synthcity-privbayes --option column_domains=corrected`` (finding 8): the label
  encoders, the network's variable sizes and the groups counted cover the public
  values, not only the records'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow

MWEM = r"""
import json
import numpy as np, pandas as pd
from dpaudit.adapters.smartnoise import adapter as sn
data = pd.DataFrame(np.zeros((200, 3), dtype=np.int64), columns=list("abc"))
domain = {"columns": [{"name": n, "kind": "binary"} for n in "abc"]}
out = {}
for mode in ("library", "corrected"):
    g = sn.SmartnoiseMWEM(epsilon=1.0, ranges=mode)
    g.fit(data, domain=domain, seed=0)
    m = g.model_
    out[mode] = {"ranges": {k: [int(x) for x in v] for k, v in m.mins_maxes.items()},
                 "sizes": [list(map(int, h.dimensions)) for h in m.histograms],
                 "claim": g.privacy_claim.get("ranges"),
                 "left": "_histogram_from_data_attributes" in vars(m)}
print(json.dumps(out))
"""


def test_mwem_ranges_corrected_reads_the_transformer(
    run_smartnoise: Callable[..., Any],
) -> None:
    out = dict(run_smartnoise(MWEM))
    lib, cor = out["library"], out["corrected"]
    assert lib["ranges"] == {str(i): [0, 0] for i in range(3)}
    assert lib["sizes"] == [[1, 1, 1]] and lib["claim"] is None
    assert cor["ranges"] == {str(i): [0, 1] for i in range(3)}
    assert cor["sizes"] == [[2, 2, 2]] and "patched" in cor["claim"]
    assert not lib["left"] and not cor["left"]


TABLE = r"""
import json
import numpy as np, pandas as pd
from dpaudit.adapters.synthcity import adapter as sc
data = pd.DataFrame(np.zeros((300, 3), dtype=np.int64), columns=list("abc"))
data["k"] = ["x", "y"] * 150
domain = {"columns": [{"name": n, "kind": "binary"} for n in "abc"]
          + [{"name": "k", "kind": "categorical", "categories": ["x", "y", "z"]}]}
"""

AIM = (
    TABLE
    + r"""
out = {}
for mode in ("library", "corrected"):
    g = sc.SynthcityAIM(epsilon=1.0, delta=1e-5, column_domains=mode)
    g.fit(data, domain=domain, seed=0)
    dom = g.model_.model.dataset.domain
    out[mode] = {"domain": dict(zip(dom.attrs, map(int, dom.shape))),
                 "claim": g.privacy_claim.get("column_domains")}
from synthcity.plugins.core.models import tabular_aim
from synthcity.plugins.core.models.mbi.domain import Domain
out["restored"] = tabular_aim.Domain is Domain
print(json.dumps(out))
"""
)


def test_aim_column_domains_corrected_sizes_the_public_values(
    run_synthcity: Callable[..., Any],
) -> None:
    out = dict(run_synthcity(AIM))
    assert out["library"]["domain"] == {"a": 1, "b": 1, "c": 1, "k": 2}
    assert out["corrected"]["domain"] == {"a": 2, "b": 2, "c": 2, "k": 3}
    assert out["library"]["claim"] is None
    assert "patched" in out["corrected"]["claim"]
    assert out["restored"]


PRIVBAYES = (
    TABLE
    + r"""
from synthcity.plugins.privacy.plugin_privbayes import PrivBayes
shipped = (PrivBayes._encode, PrivBayes._get_noisy_counts_for_attributes)
out = {}
for mode in ("library", "corrected"):
    g = sc.SynthcityPrivBayes(epsilon=1.0, column_domains=mode)
    g.fit(data, domain=domain, seed=0)
    m = g.model_.model
    out[mode] = {
        "encoders": {c: len(e["model"].classes_) for c, e in m.encoders.items()},
        "cards": {c.variable: int(c.variable_card) for c in m.network.get_cpds()},
        "claim": g.privacy_claim.get("column_domains"),
        "rows": len(g.sample(50, seed=1)),
    }
out["restored"] = shipped == (PrivBayes._encode,
                              PrivBayes._get_noisy_counts_for_attributes)
print(json.dumps(out))
"""
)


def test_privbayes_column_domains_corrected_counts_the_public_values(
    run_synthcity: Callable[..., Any],
) -> None:
    out = dict(run_synthcity(PRIVBAYES))
    lib, cor = out["library"], out["corrected"]
    assert lib["encoders"] == lib["cards"] == {"a": 1, "b": 1, "c": 1, "k": 2}
    assert cor["encoders"] == cor["cards"] == {"a": 2, "b": 2, "c": 2, "k": 3}
    assert lib["claim"] is None and "patched" in cor["claim"]
    assert lib["rows"] == cor["rows"] == 50
    assert out["restored"]
