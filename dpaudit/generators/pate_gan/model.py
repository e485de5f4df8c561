"""The PATE-GAN generator: ``fit``, ``fit_many``, ``sample``, ``privacy_claim_``.

This is a reference implementation for auditing, not for production: it makes no
attempt at floating-point-safe noise (compare Opacus' ``secure_mode``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar, Literal, Self

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.flags import build_config
from dpaudit.generators.nets import BatchedMLP
from dpaudit.generators.pate_gan.config import PateGanConfig, default_num_teachers
from dpaudit.generators.pate_gan.state import latent
from dpaudit.generators.pate_gan.trainer import Trainer
from dpaudit.rng import ModelStreams, Rngs, public_and_privacy


class PateGan:
    """PATE-GAN with the generator protocol (``fit``, ``fit_many``, ``sample``,
    ``privacy_claim_``). Construct with a :class:`PateGanConfig`.

    Randomness: ``rng`` is the privacy stream (the vote noise, a variant's label
    noise); ``public_rng`` feeds everything else (initial weights, teacher assignment,
    batches, latents, the release's sampling). PATE-GAN's proof holds for every fixed
    value of the public stream (docs/soundness.md), hence
    ``supports_public_randomness``.
    """

    supports_public_randomness: ClassVar[bool] = True

    # Fitted attributes (set by fit/fit_many; absent before).
    generator_: torch.nn.Module
    device_: torch.device
    latent_dim_: int
    domain_: Domain
    num_teachers_: int
    category_frequencies_: dict[str, tuple[np.ndarray, np.ndarray]]
    label_column_: str
    label_frequencies_: tuple[np.ndarray, np.ndarray]
    _claim: PrivacyClaim

    def __init__(self, config: PateGanConfig | None = None, **options: Any) -> None:
        base = config or PateGanConfig()
        self.config = replace(base, **options) if options else base

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs,
            public_rng: Rngs | None = None) -> Self:
        """Trains one model on ``data`` (never mutated) with the public ``domain``."""
        (model,) = self.fit_many([data], domain=domain, rngs=[rng],
                                 public_rngs=None if public_rng is None else [public_rng])
        self.__dict__.update(model.__dict__)
        return self

    def fit_many(self, datasets: Sequence[pd.DataFrame], *, domain: Domain,
                 rngs: Sequence[Rngs],
                 public_rngs: Sequence[Rngs] | None = None) -> list[PateGan]:
        """Trains ``len(datasets)`` independent models as one tensor program.

        Model ``m`` trains on ``datasets[m]`` with the streams ``rngs[m]`` (privacy)
        and ``public_rngs[m]`` (public; both from ``rngs[m]`` when None). It is the
        model a single :meth:`fit` with the same streams gives: each model draws only
        from its own streams.
        """
        if len(datasets) != len(rngs) or not datasets:
            raise InvalidParameterError(
                f"`datasets` and `rngs` must be non-empty and of equal length. Got "
                f"{len(datasets)} and {len(rngs)}."
            )
        if public_rngs is not None and len(public_rngs) != len(rngs):
            raise InvalidParameterError(
                f"`public_rngs` must have one stream per dataset. Got {len(public_rngs)} "
                f"for {len(rngs)}."
            )
        cfg = self.config
        k = cfg.num_teachers or default_num_teachers(min(len(d) for d in datasets))
        checked: set[int] = set()
        for i, frame in enumerate(datasets):
            if id(frame) not in checked:
                domain.validate(frame, name=f"datasets[{i}]", min_rows=k)
                checked.add(id(frame))
        fitted = Trainer(cfg, domain, k, list(datasets), list(rngs),
                         None if public_rngs is None else list(public_rngs)).run()
        models = []
        for f in fitted:
            model = PateGan(cfg)
            model.generator_ = _Member(f.generator, f.index)
            model.device_ = f.device
            model.latent_dim_ = f.latent_dim
            model.domain_ = f.domain
            model.num_teachers_ = f.num_teachers
            if f.category_frequencies is not None:
                model.category_frequencies_ = f.category_frequencies
            if f.label is not None:
                model.label_column_, model.label_frequencies_ = f.label
            model._claim = f.claim
            models.append(model)
        return models

    def sample(self, n: int, *, rng: Rngs, public_rng: Rngs | None = None) -> pd.DataFrame:
        """Releases ``n`` synthetic rows with the original columns, dtypes and units.

        Every draw of the release (latents, category draws) comes from the public
        stream; the release adds no privacy noise.
        """
        if not hasattr(self, "generator_"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        if not (isinstance(n, int | np.integer) and n >= 0):
            raise InvalidParameterError(f"`n` must be a non-negative integer. Got {n!r}.")
        cfg = self.config
        public, _ = public_and_privacy(rng, public_rng)
        streams = ModelStreams.from_rngs([public], device=self.device_)
        with torch.no_grad():
            latent_dist = cfg.latent_distribution
            if cfg.latent_mismatch:
                # Trained on U(0,1), sampled from N(0,1): outside the training range.
                latent_dist = "normal"
            z = latent(streams, int(n), self.latent_dim_, latent_dist)
            out = self.generator_(z)[0].clamp(0.0, 1.0).cpu().numpy()
        domain = self.domain_
        if cfg.output_not_rescaled:
            # Released in the model's [0, 1] space, not in original units.
            frame = pd.DataFrame(
                {col.name: out[:, sl].argmax(axis=1) if col.kind == "categorical"
                 else out[:, sl.start] for col, sl in zip(domain.columns, domain.slices())},
                columns=domain.names)
        else:
            rounding: Literal["round", "floor"] = "floor" if cfg.integer_floor else "round"
            frame = domain.decode(out, integer_rounding=rounding)
        if cfg.real_category_frequencies:
            # Discrete columns drawn from the private data's exact frequencies.
            for name, (values, probs) in self.category_frequencies_.items():
                frame[name] = public.numpy.choice(values, size=int(n), p=probs)
        if cfg.label_distribution_given:
            # The private label distribution, passed to the generator, used at sampling.
            values, probs = self.label_frequencies_
            frame[self.label_column_] = public.numpy.choice(values, size=int(n), p=probs)
        return frame

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "_claim"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        return self._claim


class _Member(torch.nn.Module):
    """Member ``index`` of a batched generator, as a module mapping ``[1, n, z]``."""

    def __init__(self, ensemble: BatchedMLP, index: int) -> None:
        super().__init__()
        self.ensemble = ensemble
        self.index = index

    def forward(self, z: Tensor) -> Tensor:
        out: Tensor = self.ensemble(z, member=self.index)
        return out


def config_from_options(*, epsilon: float, delta: float, variant: str | None = None,
                        bugs: Sequence[str] = (), **options: Any) -> PateGanConfig:
    """A config from a variant name, extra bug flags and plain options (CLI/TOML)."""
    config: PateGanConfig = build_config(
        PateGanConfig, generator="pategan", label="PATE-GAN", epsilon=epsilon,
        delta=delta, variant=variant, bugs=bugs, **options)
    return config
