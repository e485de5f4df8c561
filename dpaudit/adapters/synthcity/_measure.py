"""Recorder of synthcity 0.2.12's PrivBayes measurements (docs/adapters.md,
"White-box transcripts"; line numbers are the library's, in
``synthcity/plugins/privacy/plugin_privbayes.py``).

``PrivBayes._get_noisy_counts_for_attributes`` (lines 267-284) counts each group of
values present in the records (``groupby(...).size()``, 271-275), adds
``np.random.laplace`` at ``loc=0, scale=noise_para`` with ``noise_para =
_laplace_noise_parameter(n, d)`` (278-281; 260-265), then clips negatives to 0 (282).
The recorder wraps that method on the class for one fit, and ``np.random.laplace``
inside it: it states ``exact + noise`` before the clip (the library's own sum) at the
scale the library passed. Standard library, numpy and pandas only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpaudit.adapters._transcript import (
    Transcript,
    domain_values,
    patched,
    public_value,
)


@contextmanager
def record_privbayes(
    names: list[str], domain: dict[str, Any], sink: Callable[[Transcript], None]
) -> Iterator[None]:
    """Records every noisy count of the fit; ``sink`` receives the transcript (made at
    the first call, once the records' encoders exist)."""
    module: Any = importlib.import_module("synthcity.plugins.privacy.plugin_privbayes")
    cls = module.PrivBayes
    real = cls._get_noisy_counts_for_attributes
    public = domain_values(domain)
    box: list[Transcript] = []

    def counted(model: Any, raw_data: Any, attributes: Any) -> Any:
        drawn: list[tuple[float, np.ndarray]] = []
        laplace = np.random.laplace

        def noise(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
            value = laplace(loc, scale=scale, size=size)
            drawn.append((float(scale), np.asarray(value, dtype=float)))
            return value

        with patched(np.random, laplace=noise):
            out = real(model, raw_data, attributes)
        if not box:
            codes: list[list[Any] | None] = []
            for name in names:
                encoder, values = model.encoders[name], public[name]
                mapped = [public_value(v, values) for v in encoder["model"].classes_]
                # A value that is no public value (synthcity's loader hands PrivBayes
                # its own codes of a string column): the column is left out.
                known = values is not None and all(
                    any(m == v and type(m) is type(v) for v in values) for m in mapped
                )
                codes.append(
                    mapped if encoder["type"] == "categorical" and known else None
                )
            box.append(Transcript(names, codes))
            sink(box[0])
        # The library's groups and exact counts, as it computed them (271-275).
        data = raw_data.copy().loc[:, list(attributes)].sort_values(list(attributes))
        stats = data.groupby(list(attributes)).size().reset_index()
        ((scale, noise_drawn),) = drawn
        exact = stats[0].to_numpy()
        cells = [
            tuple(int(v) for v in row)
            for row in stats[list(attributes)].itertuples(index=False)
        ]
        box[0].add_answers(
            [names.index(str(a)) for a in attributes],
            [[cell] for cell in cells],
            exact + noise_drawn,
            {"laplace": scale},
        )
        return out

    with patched(cls, _get_noisy_counts_for_attributes=counted):
        yield
