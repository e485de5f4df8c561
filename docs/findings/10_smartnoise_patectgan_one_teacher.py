"""Finding 10 (docs/findings.md): smartnoise-synth 1.0.8 PATECTGAN's teachers are one
network (pytorch/nn/patectgan.py:252, :255). Needs only smartnoise-synth; run with its
environment's python:

    ~/.cache/dpaudit/envs/smartnoise/bin/python docs/findings/10_smartnoise_patectgan_one_teacher.py

Wraps the library's ``pate`` vote (privacy_utils.py:12-31, imported into patectgan.py)
at its first call (the fit stops there) and prints how many teachers voted and how many
distinct objects they are.
"""

import numpy as np
import pandas as pd
import torch
from snsynth.pytorch.nn import patectgan as module

torch.manual_seed(0)
np.random.seed(0)
table = pd.DataFrame([(0, 0, 0)] * 2000 + [(1, 1, 1)], columns=["a", "b", "c"])
seen = {}
real_pate = module.pate


class Seen(Exception):
    pass


def pate(data, teachers, *args, **kwargs):
    seen["teachers"] = teachers
    raise Seen  # the first vote is enough: stop the fit here


module.pate = pate
synth = module.PATECTGAN(epsilon=1.0, delta=1e-5, sample_per_teacher=100, verbose=False)
try:
    synth.fit(table, categorical_columns=["a", "b", "c"])
except Seen:
    pass
module.pate = real_pate
teachers = seen["teachers"]
print(
    f"teachers voting: {len(teachers)}; distinct objects among them: "
    f"{len({id(t) for t in teachers})}"
)
