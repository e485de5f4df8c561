"""Adapter for synthcity 0.2.12's PATE-GAN (docs/adapters.md).

synthcity pins torch < 2.3 and numpy < 2, so it cannot share dpaudit's environment:
install it in its own and audit through the worker,

    python -m venv /work/venvs/synthcity
    /work/venvs/synthcity/bin/pip install synthcity==0.2.12
    dpaudit audit --generator synthcity-pategan --python /work/venvs/synthcity/bin/python \\
        --dataset worst-case --dataset-rows 2000

This module imports only the standard library, numpy and pandas; synthcity is imported
when a model is fitted.

Preprocessing: only ``library`` (synthcity's own path, what its users run).
synthcity's ``Plugin.fit`` learns a schema from the private records (each column's set
of values and range), fits its encoders on them, and in its default ``strict`` mode
drops every generated row outside that schema. 0.2.12 offers no public route around
that, so ``preprocessing=public`` is refused rather than faked.

Seeding: synthcity seeds ``random``, numpy and torch itself from ``random_state``; the
adapter passes one derived from ``seed`` to ``fit`` (the teachers' partition and the
Laplace noise on their votes both come from numpy's global generator, so they cannot be
told apart, and ``fit`` takes nothing from ``public_seed``) and one derived from
``public_seed`` (else ``seed``) to ``generate``, which is post-processing. Fully
seedable: the same seeds give the same release.

Release size: in its default strict mode synthcity drops generated rows outside the
schema learned from the records (on the worst case's world D, every row with a 1), so
``generate(count=n)`` can return fewer than ``n`` rows (500 of 2,000 was seen). The
adapter draws again, up to 50 times, until it has ``n`` rows.

Claim: the library's own moments-accountant value ``epsilon_hat`` at its stop,
recomputed from the moments it accumulated (``alpha_dict``) with the delta it used.
synthcity's PATE-GAN ignores the ``delta`` it is given and uses ``1 / (n sqrt(n))``;
the claim carries the delta it used.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    cast_release,
    check_epsilon,
    check_preprocessing,
    columns_of,
    import_library,
    installed,
    moments_rdp,
    quiet,
    seed_globals,
)

LIBRARY = "synthcity 0.2.12"
_MAX_DRAWS = 50

__all__ = ["SynthcityPATEGAN"]


def _random_state(seed: int) -> int:
    """A 31-bit ``random_state`` for synthcity, derived from ``seed``."""
    word = np.random.SeedSequence([int(seed), 3]).generate_state(1, dtype=np.uint32)[0]
    return int(word) >> 1


class SynthcityPATEGAN:
    """synthcity's PATE-GAN plug-in (``synthcity.plugins.privacy.plugin_pategan``).

    Options: ``preprocessing`` (only ``library``) and any argument of synthcity's
    ``PATEGANPlugin`` (``n_iter``, ``n_teachers``, ``teacher_template``, ``lamda``,
    ``batch_size``, ...), e.g. ``--option n_iter=20``.
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        preprocessing: str = "library",
        **options: Any,
    ) -> None:
        check_epsilon(epsilon)
        if check_preprocessing(preprocessing) != "library":
            raise AdapterInputError(
                "synthcity-pategan supports only `preprocessing=library`: synthcity 0.2.12 "
                "learns its schema and encoders from the records and filters the release "
                "by them, with no public route (docs/adapters.md)."
            )
        for key in ("random_state", "epsilon", "delta"):
            if key in options:
                raise AdapterInputError(f"option `{key}` is set by dpaudit; remove it.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.options = dict(options)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> SynthcityPATEGAN:
        """Fits synthcity's PATE-GAN; sets ``privacy_claim``."""
        module = import_library(
            "synthcity.plugins.privacy.plugin_pategan", package="synthcity==0.2.12"
        )
        columns_of(domain)
        self.domain_ = domain
        seed_globals(seed)
        with quiet():
            plugin = module.PATEGANPlugin(
                epsilon=self.epsilon, random_state=_random_state(seed), **self.options
            )
            plugin.fit(data.reset_index(drop=True))
        self.plugin_ = plugin
        model = plugin.model
        delta = float(model.delta)
        moments = np.asarray(model.alpha_dict, dtype=float)
        orders = np.arange(1, moments.size + 1, dtype=float)
        library_epsilon = float(np.min((moments - math.log(delta)) / orders))
        self.privacy_claim = {
            "epsilon": library_epsilon,
            "delta": delta,
            "accountant": "synthcity PATE moments accountant (data-dependent)",
            "library": installed("synthcity"),
            "library_epsilon": library_epsilon,
            "nominal_epsilon": self.epsilon,
            "requested_delta": self.delta,
            "preprocessing": "library",
            "num_teachers": int(model.n_teachers),
        }
        # Its moments as the RDP curve they state (alpha(l) / l at order l + 1).
        curve, left_out = moments_rdp(moments)
        self.privacy_claim["rdp"] = curve
        if left_out:
            self.privacy_claim["rdp_orders_left_out"] = left_out
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        """``n`` rows from the fitted model (post-processing: from ``public_seed`` when
        given)."""
        if not hasattr(self, "plugin_"):
            raise RuntimeError("call `fit` first.")
        chosen = seed if public_seed is None else public_seed
        seed_globals(chosen)
        parts: list[pd.DataFrame] = []
        kept = 0
        with quiet():
            # In its default strict mode synthcity drops generated rows outside the
            # schema it learned from the records, so one call may return fewer than
            # asked for: draw again, as a user wanting n rows would.
            for attempt in range(_MAX_DRAWS):
                part = self.plugin_.generate(
                    count=int(n), random_state=_random_state(chosen + attempt)
                ).dataframe()
                parts.append(part)
                kept += len(part)
                if kept >= n:
                    break
        if kept < n:
            raise ValueError(
                f"synthcity kept only {kept} of the {n} rows asked for in {_MAX_DRAWS} "
                "draws (its strict mode drops generated rows outside the schema learned "
                "from the records)."
            )
        out = pd.concat(parts, ignore_index=True).head(int(n))
        return cast_release(out, self.domain_)
