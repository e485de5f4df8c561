"""Recorders of dpmm 0.1.9's measurements: MST, PrivBayes and AIM (docs/adapters.md,
"White-box transcripts"; file and line numbers are the library's, under
``dpmm/models/``).

Each recorder wraps the library's own measurement step for one fit and restores it
after: it reads the noisy vector the library computed and the scale it drew the noise
with, and returns what the library's function returned. Standard library, numpy and
pandas only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpaudit.adapters._transcript import MeasurementsDone, Transcript, patched


def _groups(compressor: Any, names: list[str]) -> list[list[list[int]]] | None:
    """The original codes behind each code of the compressed columns ``names``
    (``DomainCompressor.transform_col``, base/compression.py: kept codes in order,
    then one code for all the others); None before ``compressor.fit`` ran (the data is
    not compressed yet)."""
    supports = getattr(compressor, "supports", None) if compressor else None
    if not supports:
        return None
    out = []
    for name in names:
        support = np.asarray(supports[name], dtype=bool)
        kept = [[int(k)] for k in np.flatnonzero(support)]
        rest = [int(k) for k in np.flatnonzero(~support)]
        out.append(kept + ([rest] if rest else []))
    return out


def _add(
    transcript: Transcript,
    compressor: Any,
    clique: Any,
    noisy: Any,
    sigma: float,
    *,
    compressed: bool,
) -> None:
    names = [str(c) for c in clique]
    groups = _groups(compressor, names) if compressed else None
    if compressed and groups is not None and compressor.zeros_only:
        # Structural zeros: records holding a zero value were moved to other
        # values (sampled from the records): no cell states what was counted.
        transcript.left_out += 1
        return
    transcript.add_marginal(
        [transcript.names.index(n) for n in names],
        np.asarray(noisy, dtype=float).ravel(),
        {"gaussian": float(sigma)},
        groups,
    )


@contextmanager
def record_mechanism(
    mech: Any, transcript: Callable[[], Transcript], *, stop: bool
) -> Iterator[None]:
    """dpmm's MST (mst.py) and PrivBayes (priv_bayes.py): every marginal goes through
    ``Mechanism._measure`` (base/mechanisms/mechanism.py:155-165), ``y = x +
    gaussian_noise(sigma=self.sigma / wgt)``; the library's own log keeps
    ``self.sigma`` there, not the scale drawn with, so the recorder states ``self.sigma
    / wgt`` as the library computed it. MST measures its one-way marginals on the full
    domain (mst.py:136), then the tree's on the compressed one (mst.py:147).
    ``stop``: raises :class:`MeasurementsDone` when ``_fit`` returns, before the
    estimation (mechanism.py:144-146, ``n_iters`` 10,000 by default)."""
    measure, fit = mech._measure, mech._fit

    def measured(
        data: Any, proj: Any, wgt: Any, flatten: Any = None, public: bool = False
    ) -> Any:
        out = measure(data, proj, wgt, flatten, public)
        if not public:
            # Compressed data once the compressor is fitted (MST's second call).
            compressed = bool(getattr(mech.compressor, "supports", None))
            _add(
                transcript(),
                mech.compressor,
                proj,
                out[1],
                mech.sigma / wgt,
                compressed=compressed,
            )
        return out

    def fitted(*args: Any, **kw: Any) -> Any:
        out = fit(*args, **kw)
        if stop:
            raise MeasurementsDone
        return out

    with patched(mech, _measure=measured, _fit=fitted):
        yield


@contextmanager
def record_aim(mech: Any, transcript: Callable[[], Transcript]) -> Iterator[None]:
    """dpmm's AIM (aim.py): the one-way marginals through the module's
    ``measure_one_way`` (aim.py:146-176, called at aim.py:490-493, before the domain
    is compressed at aim.py:495-497), wrapped; each round's measurement is built in
    line (aim.py:537-546, ``y = x + gaussian_noise(sigma=sigma)``, appended as ``(Q,
    y, sigma, cl)``) on the compressed domain, and read after the fit from the list
    the mechanism keeps (``_measures``, base/mechanisms/mechanism.py:140): its
    entries after the one-way ones are exactly those tuples."""
    module: Any = importlib.import_module("dpmm.models.aim")
    one_way = module.measure_one_way
    count = [0]

    def measured(
        cl: Any, data: Any, sigma: Any, prng: Any, public: bool = False
    ) -> Any:
        out = one_way(cl, data, sigma, prng, public)
        if not public:
            count[0] += 1
            _add(transcript(), mech.compressor, cl, out[1], sigma, compressed=False)
        return out

    with patched(module, measure_one_way=measured):
        yield
    if count[0] == 0:
        raise RuntimeError(
            "dpmm's AIM measured no one-way marginal through measure_one_way in "
            "this process (n_jobs > 1?): the transcript would be incomplete."
        )
    for _, y, sigma, clique in list(mech._measures)[count[0] :]:
        _add(transcript(), mech.compressor, clique, y, sigma, compressed=True)
