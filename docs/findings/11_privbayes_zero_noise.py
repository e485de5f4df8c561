"""Finding 11 (docs/findings.md): synthcity 0.2.12 PrivBayes releases exact counts once
its computed degree K equals the number of columns. Needs only synthcity; run with its
environment's python:

    ~/.cache/dpaudit/envs/synthcity/bin/python docs/findings/11_privbayes_zero_noise.py

For the plug-in's default (``K = 0``: computed by ``_compute_K``), prints the degree and
the Laplace scale of the counts (``_laplace_noise_parameter``) that ``PrivBayes(epsilon=e)``
computes for a 50-row and a 2,000-row table of 3 binary columns, then fits one model at
epsilon 1 on 2,000 rows and prints the scale passed to ``np.random.laplace``.
"""

import numpy as np
import pandas as pd
from synthcity.plugins.privacy.plugin_privbayes import PrivBayes


def table(n):
    return pd.DataFrame([(0, 0, 0)] * (n - 1) + [(1, 1, 1)], columns=["a", "b", "c"])


for n in (50, 2000):
    cells = []
    for e in np.arange(0.25, 5.0, 0.25):
        model = PrivBayes(epsilon=float(e))
        model.K = model._compute_K(table(n))
        scale = model._laplace_noise_parameter(n, 3)
        cells.append(f"{e:g}:K={model.K},scale={scale:.3g}")
    print(f"n={n}: " + "  ".join(cells))

scales = []
real_laplace = np.random.laplace


def laplace(loc=0.0, scale=1.0, size=None):
    scales.append(float(scale))
    return real_laplace(loc, scale=scale, size=size)


np.random.seed(0)
np.random.laplace = laplace
model = PrivBayes(epsilon=1.0)
model.fit(table(2000))
np.random.laplace = real_laplace
print(f"fit at epsilon 1 on 2,000 rows: K={model.K}, Laplace scales passed: {scales}")
