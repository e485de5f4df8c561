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
from numpy.typing import NDArray
from torch import Tensor

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators.base import PrivacyClaim, check_release_streams
from dpaudit.generators.flags import build_config
from dpaudit.generators.names import PATE_GAN
from dpaudit.generators.nets import BatchedMLP
from dpaudit.generators.pate_gan.canary import CanaryTeachers, canary_mask
from dpaudit.generators.pate_gan.config import (
    PateGanConfig,
    rule_num_teachers,
    small_table_batch_size,
)
from dpaudit.generators.pate_gan.private_values import (
    ValueSets,
    restrict_encoded,
    snap_integers,
)
from dpaudit.generators.pate_gan.release import release_forward
from dpaudit.generators.pate_gan.state import latent
from dpaudit.generators.pate_gan.trainer import Fitted, Trainer
from dpaudit.generators.pate_gan.transcript import Recorder, Replay, VoteTranscript
from dpaudit.rng import ModelStreams, Rngs, public_and_privacy
from dpaudit.validation import require


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
    value_sets_: ValueSets
    _claim: PrivacyClaim

    def __init__(self, config: PateGanConfig | None = None, **options: Any) -> None:
        base = config or PateGanConfig()
        self.config = replace(base, **options) if options else base

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Trains one model on ``data`` (never mutated) with the public ``domain``."""
        (model,) = self.fit_many(
            [data],
            domain=domain,
            rngs=[rng],
            public_rngs=None if public_rng is None else [public_rng],
        )
        self.__dict__.update(model.__dict__)
        return self

    def _trainer(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> Trainer:
        """The trainer of ``len(datasets)`` models (inputs checked, ``k`` fixed)."""
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
        n_min = min(len(d) for d in datasets)
        # An explicit num_teachers is the caller's modification (smartnoise has no such
        # parameter); else the rule, which refuses what the real code cannot train.
        k = cfg.num_teachers or rule_num_teachers(
            n_min, teacher_rule=cfg.teacher_rule, small_table=cfg.small_table
        )
        batch_size = small_table_batch_size(cfg, n_rows=n_min, k=k)
        if batch_size != cfg.batch_size:
            # The study's smartnoise on a small table: batches of at most n // k rows.
            cfg = replace(cfg, batch_size=batch_size)
        checked: set[int] = set()
        for i, frame in enumerate(datasets):
            if id(frame) not in checked:
                domain.validate(frame, name=f"datasets[{i}]", min_rows=k)
                checked.add(id(frame))
        return Trainer(
            cfg,
            domain,
            k,
            list(datasets),
            list(rngs),
            None if public_rngs is None else list(public_rngs),
        )

    def fit_many(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> list[PateGan]:
        """Trains ``len(datasets)`` independent models as one tensor program.

        Model ``m`` trains on ``datasets[m]`` with the streams ``rngs[m]`` (privacy)
        and ``public_rngs[m]`` (public; both from ``rngs[m]`` when None). It is the
        model a single :meth:`fit` with the same streams gives: each model draws only
        from its own streams.
        """
        trainer = self._trainer(
            datasets, domain=domain, rngs=rngs, public_rngs=public_rngs
        )
        return self._models(trainer.run())

    def fit_many_with_transcripts(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
        canary: pd.DataFrame | None = None,
    ) -> tuple[list[PateGan], list[VoteTranscript]]:
        """:meth:`fit_many`, and each model's transcript: every noisy vote it
        received (:mod:`.transcript`). Recording draws nothing and changes no model.
        ``canary``: the target record, whose canary teachers (:mod:`.canary`) replace
        the trained ones; None: the teachers are trained as implemented.
        """
        trainer = self._trainer(
            datasets, domain=domain, rngs=rngs, public_rngs=public_rngs
        )
        _with_canary(trainer, datasets, canary)
        trainer.recorder = Recorder()
        models = self._models(trainer.run())
        return models, trainer.recorder.transcripts()

    def replay_log_likelihoods(
        self,
        datasets: Sequence[pd.DataFrame],
        transcripts: Sequence[VoteTranscript],
        *,
        domain: Domain,
        public_rngs: Sequence[Rngs],
        canary: pd.DataFrame | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Log-likelihood of ``transcripts[m]`` had the run trained on
        ``datasets[m]`` with the public streams ``public_rngs[m]``: training replayed
        with every noisy vote forced to the transcript's, as one tensor program.

        Returns ``(log_likelihood[M], contradicted[M])``: ``contradicted`` where the
        replay's accountant answered a step the transcript did not, or the reverse
        (the transcript is impossible in that world; its likelihood is 0). Only the
        public streams and the data are used: the privacy stream draws nothing
        in a replay (a defect whose noise lies outside the votes,
        ``gaussian_label_noise``, is replayed with a stream unrelated to the run's).
        ``canary``: as in :meth:`fit_many_with_transcripts` (the replay's teachers
        must be the run's).
        """
        if not (len(datasets) == len(transcripts) == len(public_rngs)):
            raise InvalidParameterError(
                "`datasets`, `transcripts` and `public_rngs` must have equal lengths. "
                f"Got {len(datasets)}, {len(transcripts)} and {len(public_rngs)}."
            )
        unrelated = Rngs.from_seed(0).spawn(len(datasets))
        trainer = self._trainer(
            datasets, domain=domain, rngs=unrelated, public_rngs=public_rngs
        )
        _with_canary(trainer, datasets, canary)
        trainer.replay = Replay(
            list(transcripts), batch=trainer.cfg.batch_size, device=trainer.device
        )
        trainer.run()
        trainer.replay.finish()
        return (
            trainer.replay.log_likelihood.cpu().numpy(),
            trainer.replay.contradicted.cpu().numpy(),
        )

    def transcript_support(self, *, canary: bool = False) -> str | None:
        """Why this configuration has no transcript to audit, or None when it has
        one (every noisy vote; :meth:`fit_many_with_transcripts`), with trained or
        (``canary``) canary teachers."""
        if self.config.single_discriminator:
            return "single_discriminator has no teacher votes (no transcript)"
        return None

    def _models(self, fitted: list[Fitted]) -> list[PateGan]:
        models = []
        for f in fitted:
            model = PateGan(self.config)
            model.generator_ = _Member(f.generator, f.index)
            model.device_ = f.device
            model.latent_dim_ = f.latent_dim
            model.domain_ = f.domain
            model.num_teachers_ = f.num_teachers
            if f.category_frequencies is not None:
                model.category_frequencies_ = f.category_frequencies
            if f.label is not None:
                model.label_column_, model.label_frequencies_ = f.label
            if f.values is not None:
                model.value_sets_ = f.values
            model._claim = f.claim
            models.append(model)
        return models

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        """Releases ``n`` synthetic rows with the original columns, dtypes and units.

        Every draw of the release (latents, category draws) comes from the public
        stream; the release adds no privacy noise.
        """
        self._check_sample(n)
        public, _ = public_and_privacy(rng, public_rng)
        streams = ModelStreams.from_rngs([public], device=self.device_)
        with torch.no_grad():
            z = latent(streams, int(n), self.latent_dim_, self._latent_distribution())
            # The release pass of sample_many, on a batch of one: the same bits.
            out = (
                release_forward(_ensemble(self), [_member_index(self)], z)[0]
                .cpu()
                .numpy()
            )
        return self._finish(out, [self], [public], int(n))

    @staticmethod
    def sample_many(
        models: Sequence[PateGan],
        n: int,
        *,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> pd.DataFrame:
        """The releases of several fitted models, drawn in one generator pass.

        Model ``m`` releases what ``models[m].sample(n, rng=rngs[m],
        public_rng=public_rngs[m])`` releases: its latents come from its own
        counter-based stream and its generator runs in the release pass of ``sample``
        (:func:`~dpaudit.generators.pate_gan.release.release_forward`), so neither
        its batch mates, their number nor its place among them change a bit of it.
        Models trained by one :meth:`fit_many` run as one batched forward pass; the
        table is decoded once.

        Returns:
            One table of ``len(models) * n`` rows: model ``m``'s release is rows
            ``m * n`` to ``(m + 1) * n - 1``, index ``0 .. M*n - 1``.

        Raises:
            InvalidParameterError: streams of the wrong number, or models of different
                configurations.
            NotFittedError: a model is not fitted.
        """
        models = list(models)
        check_release_streams(models, rngs, public_rngs, kind="PateGan")
        first = models[0]
        for model in models:
            require(
                isinstance(model, PateGan),
                "models",
                "PateGan models",
                type(model).__name__,
            )
            model._check_sample(n)
            require(
                model.config == first.config,
                "models",
                "models of one configuration",
                "models that differ",
            )
        publics = [
            public_and_privacy(r, None if public_rngs is None else public_rngs[i])[0]
            for i, r in enumerate(rngs)
        ]
        n = int(n)
        outs: list[NDArray[np.float32]] = [np.empty(0, dtype=np.float32)] * len(models)
        # Members of one batched ensemble run as one forward pass.
        groups: dict[int, list[int]] = {}
        for i, model in enumerate(models):
            groups.setdefault(id(_ensemble(model)), []).append(i)
        with torch.no_grad():
            for members in groups.values():
                lead = models[members[0]]
                streams = ModelStreams.from_rngs(
                    [publics[i] for i in members], device=lead.device_
                )
                z = latent(streams, n, lead.latent_dim_, lead._latent_distribution())
                index = [_member_index(models[i]) for i in members]
                out = release_forward(_ensemble(lead), index, z).cpu().numpy()
                for j, i in enumerate(members):
                    outs[i] = out[j]
        # Consecutive models of one domain (all of them, but with the data_bounds
        # defect) are decoded together.
        frames, start = [], 0
        for stop in range(1, len(models) + 1):
            if stop == len(models) or not _same(
                models[stop].domain_, models[start].domain_
            ):
                frames.append(
                    models[start]._finish(
                        np.concatenate(outs[start:stop]),
                        models[start:stop],
                        publics[start:stop],
                        n,
                    )
                )
                start = stop
        return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)

    def _check_sample(self, n: int) -> None:
        if not hasattr(self, "generator_"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        if not (isinstance(n, int | np.integer) and n >= 0):
            raise InvalidParameterError(
                f"`n` must be a non-negative integer. Got {n!r}."
            )

    def _latent_distribution(self) -> str:
        if self.config.latent_mismatch:
            # Trained on U(0,1), sampled from N(0,1): outside the training range.
            return "normal"
        return self.config.latent_distribution

    def _finish(
        self,
        out: NDArray[np.float32],
        models: Sequence[PateGan],
        publics: Sequence[Rngs],
        n: int,
    ) -> pd.DataFrame:
        """Decodes the generator's outputs of ``models`` (``n`` rows each, stacked,
        with their public streams) into one table, then applies the release-time
        variants (model ``self``'s configuration and domain)."""
        cfg, domain = self.config, self.domain_
        if cfg.private_categories:
            # Each model's release restricted to the values its private data hold.
            out = (
                np.concatenate(
                    [
                        restrict_encoded(
                            out[j * n : (j + 1) * n], domain, model.value_sets_
                        )
                        for j, model in enumerate(models)
                    ]
                )
                if models
                else out
            )
        if cfg.output_not_rescaled:
            # Released in the model's [0, 1] space, not in original units.
            frame = pd.DataFrame(
                {
                    col.name: out[:, sl].argmax(axis=1)
                    if col.kind == "categorical"
                    else out[:, sl.start]
                    for col, sl in zip(domain.columns, domain.slices())
                },
                columns=domain.names,
            )
        else:
            rounding: Literal["round", "floor"] = (
                "floor" if cfg.integer_floor else "round"
            )
            frame = domain.decode(out, integer_rounding=rounding)
            if cfg.private_categories:
                frame = (
                    pd.concat(
                        [
                            snap_integers(
                                frame.iloc[j * n : (j + 1) * n].copy(),
                                domain,
                                model.value_sets_,
                            )
                            for j, model in enumerate(models)
                        ]
                    )
                    if models
                    else frame
                )
        draws: list[tuple[str, bool]] = []  # (column, from the label frequencies)
        if cfg.real_category_frequencies:
            # Discrete columns drawn from the private data's exact frequencies.
            draws += [(name, False) for name in self.category_frequencies_]
        if cfg.label_distribution_given:
            # The private label distribution, passed to the generator, used at sampling.
            draws.append((self.label_column_, True))
        if draws:
            # Each model's own frequencies, drawn in order from a fresh generator on
            # its public seed: the draws depend on the stream alone, not on what the
            # Rngs object drew before.
            parts: list[list[np.ndarray]] = [[] for _ in draws]
            for model, public in zip(models, publics):
                gen = np.random.default_rng(public.seed_sequence)
                for j, (name, label) in enumerate(draws):
                    values, probs = (
                        model.label_frequencies_
                        if label
                        else model.category_frequencies_[name]
                    )
                    parts[j].append(gen.choice(values, size=n, p=probs))
            for (name, _), drawn in zip(draws, parts):
                frame[name] = np.concatenate(drawn)
        return frame

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "_claim"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        return self._claim


def _same(a: Domain, b: Domain) -> bool:
    return a is b or a == b


def _ensemble(model: PateGan) -> BatchedMLP:
    member = model.generator_
    ensemble = member.ensemble if isinstance(member, _Member) else member
    assert isinstance(ensemble, BatchedMLP)
    return ensemble


def _member_index(model: PateGan) -> int:
    member = model.generator_
    return member.index if isinstance(member, _Member) else 0


class _Member(torch.nn.Module):
    """Member ``index`` of a batched generator, as a module mapping ``[1, n, z]``."""

    def __init__(self, ensemble: BatchedMLP, index: int) -> None:
        super().__init__()
        self.ensemble = ensemble
        self.index = index

    def forward(self, z: Tensor) -> Tensor:
        out: Tensor = self.ensemble(z, member=self.index)
        return out


def config_from_options(
    *,
    epsilon: float,
    delta: float,
    variant: str | None = None,
    bugs: Sequence[str] = (),
    **options: Any,
) -> PateGanConfig:
    """A config from a variant name, extra bug flags and plain options (CLI/TOML)."""
    config: PateGanConfig = build_config(
        PateGanConfig,
        generator=PATE_GAN,
        label="PATE-GAN",
        epsilon=epsilon,
        delta=delta,
        variant=variant,
        bugs=bugs,
        **options,
    )
    return config


def _with_canary(
    trainer: Trainer, datasets: Sequence[pd.DataFrame], canary: pd.DataFrame | None
) -> None:
    """Gives ``trainer`` canary teachers for ``canary`` (:mod:`.canary`), if any."""
    if canary is None:
        return
    mask = canary_mask(list(datasets), canary, n_max=int(trainer.batch.data.shape[1]))
    trainer.canary = CanaryTeachers(mask, k=trainer.k, device=trainer.device)
