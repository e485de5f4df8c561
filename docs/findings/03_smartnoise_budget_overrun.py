"""Finding 3 (docs/findings.md): smartnoise-synth 1.0.8 PATECTGAN stops only after its
accountant exceeds the budget (pytorch/nn/patectgan.py:304-315). Needs only
smartnoise-synth; run with its environment's python:

    ~/.cache/dpaudit/envs/smartnoise/bin/python docs/findings/03_smartnoise_budget_overrun.py

Fits PATECTGAN at epsilon 1 on 2,000 rows and recomputes the epsilon its own moments
accountant reached at the stop (``min((alphas - log delta) / l_list)``, as the loop does).
"""

import math

import numpy as np
import pandas as pd
import torch
from snsynth.pytorch.nn import patectgan as module

torch.manual_seed(0)
np.random.seed(0)
table = pd.DataFrame([(0, 0, 0)] * 1999 + [(1, 1, 1)], columns=["a", "b", "c"])
seen = {}
real_moments = module.moments_acc


def moments(*args, **kwargs):
    out = real_moments(*args, **kwargs)
    seen["alphas"] = seen.get("alphas", 0) + out  # the loop sums them (:432)
    seen["queries"] = seen.get("queries", 0) + 1
    return out


module.moments_acc = moments
synth = module.PATECTGAN(epsilon=1.0, delta=1e-5, verbose=False)
synth.fit(table, categorical_columns=["a", "b", "c"])
module.moments_acc = real_moments
alphas = seen["alphas"]
l_list = 1 + torch.arange(alphas.shape[0], dtype=alphas.dtype)
spent = float(torch.min((alphas - math.log(1e-5)) / l_list))
print(
    f"asked epsilon 1.0, delta 1e-5; accountant updates {seen['queries']}; "
    f"the library's accountant at its stop: {spent:.4f}"
)
