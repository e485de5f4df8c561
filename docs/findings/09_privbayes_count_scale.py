"""Finding 9 (docs/findings.md): synthcity 0.2.12 PrivBayes adds Laplace noise of the
probability scale to counts. Needs only synthcity; run with its environment's python:

    ~/.cache/dpaudit/envs/synthcity/bin/python docs/findings/09_privbayes_count_scale.py

Fits synthcity's own ``PrivBayes`` (plugin_privbayes.py) on a 50-row table of 3 binary
columns at epsilon 1, wrapping ``np.random.laplace`` to print the scale the library
passes for its counts, beside the scale epsilon/2-DP counts need.
"""

import numpy as np
import pandas as pd
from synthcity.plugins.privacy.plugin_privbayes import PrivBayes

rows = [(0, 0, 0)] * 44 + [(1, 1, 1)] * 6  # 50 rows, 3 binary columns
data = pd.DataFrame(rows, columns=["a", "b", "c"])
scales = []
real_laplace = np.random.laplace


def laplace(loc=0.0, scale=1.0, size=None):
    scales.append(float(scale))
    return real_laplace(loc, scale=scale, size=size)


np.random.seed(0)
np.random.laplace = laplace
model = PrivBayes(epsilon=1.0)
model.fit(data)
np.random.laplace = real_laplace
n, d, k = len(data), data.shape[1], model.K
needed = (d - k + 1) / model.epsilon
print(f"n={n} d={d} K={k} epsilon kept for the counts={model.epsilon}")
print(f"count tables noised: {len(scales)}; Laplace scale the library passed: {scales}")
print(
    f"the library's formula 2*(d-K)/(n*eps/2) = {2 * (d - k) / (n * model.epsilon):.4f}"
)
print(f"scale epsilon/2-DP counts need, (d-K+1)/(eps/2) = {needed:.1f}")
print(f"too small by a factor {needed / scales[0]:.0f}")
