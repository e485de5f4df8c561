"""The G-PATE generator object: ``fit``, ``fit_many``, ``sample`` and the claim."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Self

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.errors import DpauditWarning, NotFittedError
from dpaudit.generators.base import PrivacyClaim, check_release_streams
from dpaudit.generators.g_pate.config import GPateConfig, config_from_options
from dpaudit.generators.g_pate.layout import Layout, resolve_device
from dpaudit.generators.g_pate.partition import assign_teachers
from dpaudit.generators.g_pate.release import encoded_releases, stack
from dpaudit.generators.g_pate.trainer import Fitted, Trainer
from dpaudit.generators.g_pate.transcript import (
    AnswerTranscript,
    Recorder,
    Replay,
    canary_counts,
    canary_holders,
    replay_usage,
    stack_transcripts,
    transcript_log_likelihoods,
)
from dpaudit.rng import Rngs, public_and_privacy
from dpaudit.validation import require


def _check_rngs(values: Sequence[Any], name: str) -> None:
    for value in values:
        require(
            isinstance(value, Rngs), name, "a dpaudit.rng.Rngs", type(value).__name__
        )


class GPate:
    """G-PATE (Long et al., NeurIPS 2021), reference implementation for auditing.

    ``fit`` trains on a table with its public domain; ``fit_many`` trains several
    independent models as one tensor program; ``sample`` releases synthetic rows in
    the original columns, dtypes and units; ``privacy_claim_`` states what training
    spent (see :class:`GPateConfig` for the accountant modes and defects).

    G-PATE's guarantee holds for every fixed value of the public stream (initial
    weights, teacher assignment, latents, projections, the release's sampling): only
    Confident-GNMax's threshold and vote noise, drawn from the privacy stream, carry
    it (:attr:`supports_public_randomness`, docs/soundness.md).

    Args:
        config: the configuration (only stored).
    """

    supports_public_randomness = True

    def __init__(self, config: GPateConfig) -> None:
        require(
            isinstance(config, GPateConfig),
            "config",
            "a GPateConfig",
            type(config).__name__,
        )
        self.config = config
        self._fitted: Fitted | None = None

    def __repr__(self) -> str:
        state = "fitted" if self._fitted is not None else "not fitted"
        return (
            f"GPate(epsilon={self.config.epsilon}, delta={self.config.delta}, {state})"
        )

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        """What training spent (raises :class:`NotFittedError` before ``fit``)."""
        if self._fitted is None:
            raise NotFittedError(
                "this GPate is not fitted: call `fit` before reading `privacy_claim_`."
            )
        return self._fitted.claim

    @property
    def num_teachers_(self) -> int:
        """The number of teachers of the fitted model."""
        if self._fitted is None:
            raise NotFittedError("this GPate is not fitted: call `fit` first.")
        return int(self.config.num_teachers)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Trains on ``data`` (validated against the public ``domain``).

        Args:
            data: the private table.
            domain: its public domain (bounds never read from ``data``, unless the
                ``data_bounds`` defect is on).
            rng: this fit's privacy stream (with ``public_rng=None``, both streams).
            public_rng: the public stream (weights, teacher assignment, latents,
                projections); None: a child of ``rng``.

        Returns:
            self.
        """
        self._fitted = self._train(
            [data],
            domain=domain,
            rngs=[rng],
            public_rngs=None if public_rng is None else [public_rng],
        )[0]
        return self

    def fit_many(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> list[GPate]:
        """Trains one independent model per dataset, as one tensor program.

        Model ``i`` is the model ``fit(datasets[i], rng=rngs[i],
        public_rng=public_rngs[i])`` would train: each draws from its own streams and
        members never interact.

        Returns:
            ``len(datasets)`` new fitted :class:`GPate` objects, in order.
        """
        return self._models(
            self._train(datasets, domain=domain, rngs=rngs, public_rngs=public_rngs)
        )

    def _models(self, fitted: Sequence[Fitted]) -> list[GPate]:
        out = []
        for f in fitted:
            model = GPate(self.config)
            model._fitted = f
            out.append(model)
        return out

    def fit_many_with_transcripts(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
        canary: pd.DataFrame | None = None,
    ) -> tuple[list[GPate], list[AnswerTranscript]]:
        """:meth:`fit_many`, and each model's transcript: every Confident-GNMax
        answer it received (:mod:`.transcript`). Recording draws nothing and changes
        no model.

        Args:
            canary: the target record (one row): the teachers are canary teachers
                (each votes bin ``bins - 1`` on every query iff the target is in its
                partition, else bin 0; they are not trained); None (default):
                trained teachers. Everything else runs as implemented.
        """
        transcripts: list[AnswerTranscript] = []
        fitted = self._train(
            datasets,
            domain=domain,
            rngs=rngs,
            public_rngs=public_rngs,
            canary=canary,
            transcripts=transcripts,
        )
        return self._models(fitted), transcripts

    def replay_log_likelihoods(
        self,
        datasets: Sequence[pd.DataFrame],
        transcripts: Sequence[AnswerTranscript],
        *,
        domain: Domain,
        public_rngs: Sequence[Rngs],
        canary: pd.DataFrame | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Log-likelihood of ``transcripts[m]`` had the run used ``datasets[m]`` and
        the public streams ``public_rngs[m]``.

        Under canary teachers (``canary``, the target record) every query's clean
        counts follow from the partition (public) and the data, so nothing is
        trained; the answers' probabilities are exact
        (:func:`.transcript.log_answer_probability`) and summed as sufficient
        statistics, all models at once. With trained teachers (``canary=None``)
        training is replayed as one tensor program with every answer forced to the
        transcript's (:class:`.transcript.Replay`): given the answers so far,
        training is deterministic, so the replay reads the clean counts each world
        would have had for every query. The privacy stream is not used (the replay
        draws its noise from a stream unrelated to the run's, then overrides it).

        Returns ``(log_likelihood[M], contradicted[M])``: ``contradicted`` where
        that world's accountant, given the transcript's answers, would have
        committed an iteration the transcript did not, or the reverse, or gone on
        after it (the transcript is impossible in that world; its likelihood is 0).

        Raises:
            InvalidParameterError: lengths differ.
        """
        datasets, transcripts = list(datasets), list(transcripts)
        require(
            len(datasets) == len(transcripts) == len(public_rngs) and bool(datasets),
            "datasets",
            "as many tables as transcripts and public streams (at least one)",
            f"{len(datasets)}, {len(transcripts)} and {len(public_rngs)}",
        )
        _check_rngs(public_rngs, "public_rngs")
        require(isinstance(domain, Domain), "domain", "a Domain", type(domain).__name__)
        if canary is None:
            out: dict[int, tuple[float, bool]] = {}
            self._train(
                datasets,
                domain=domain,
                rngs=Rngs.from_seed(0).spawn(len(datasets)),
                public_rngs=public_rngs,
                replays=(transcripts, out),
            )
            return (
                np.array([out[i][0] for i in range(len(datasets))], dtype=np.float64),
                np.array([out[i][1] for i in range(len(datasets))], dtype=np.bool_),
            )
        cfg = self.config
        counts = np.stack(
            [
                canary_counts(
                    canary_holders(
                        assign_teachers(
                            len(data), cfg.num_teachers, rng=public.spawn(3)[1]
                        )[0],
                        _target_rows(data, canary, domain),
                        cfg.num_teachers,
                    ),
                    cfg.bins,
                )
                for data, public in zip(datasets, public_rngs)
            ]
        )
        answered, winners, used = stack_transcripts(
            transcripts, batch=cfg.batch_size, projection_dim=cfg.projection_dim
        )
        log_likelihood = transcript_log_likelihoods(
            cfg, answered, winners, used, counts
        )
        replayed, continues = replay_usage(cfg, answered, counts)
        contradicted = (replayed != used).any(axis=1) | continues
        return log_likelihood, contradicted

    def transcript_support(self, *, canary: bool = False) -> str | None:
        """Why this configuration has no transcript to audit, or None when it has
        one (every Confident-GNMax answer; :meth:`fit_many_with_transcripts`), with
        trained or (``canary``) canary teachers."""
        return None

    def _train(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None,
        canary: pd.DataFrame | None = None,
        transcripts: list[AnswerTranscript] | None = None,
        replays: tuple[Sequence[AnswerTranscript], dict[int, tuple[float, bool]]]
        | None = None,
    ) -> list[Fitted]:
        """The fitted models, in order (and, into ``transcripts`` when given, each
        model's transcript, in order)."""
        cfg = self.config
        datasets, rngs = list(datasets), list(rngs)
        require(isinstance(domain, Domain), "domain", "a Domain", type(domain).__name__)
        require(bool(datasets), "datasets", "at least one table", len(datasets))
        require(
            len(rngs) == len(datasets),
            "rngs",
            f"one stream per dataset ({len(datasets)})",
            len(rngs),
        )
        _check_rngs(rngs, "rng")
        publics: list[Rngs | None] = [None] * len(datasets)
        if public_rngs is not None:
            publics = list(public_rngs)
            require(
                len(publics) == len(datasets),
                "public_rngs",
                f"one stream per dataset ({len(datasets)})",
                len(publics),
            )
            _check_rngs(publics, "public_rng")
        if canary is not None:
            require(
                isinstance(canary, pd.DataFrame) and len(canary) == 1,
                "canary",
                "the target record (a table of one row)",
                type(canary).__name__,
            )
            domain.validate(canary, name="canary")
        streams = [public_and_privacy(r, p) for r, p in zip(rngs, publics)]
        device = resolve_device(cfg.device)
        layouts, encoded = [], []
        for i, data in enumerate(datasets):
            name = "data" if len(datasets) == 1 else f"datasets[{i}]"
            domain.validate(data, name=name, min_rows=cfg.num_teachers)
            dom = domain.with_data_bounds(data) if cfg.data_bounds else domain
            layouts.append(Layout.build(dom, cfg))
            encoded.append(dom.encode(data))
        # With the data_bounds defect, per-dataset domains may differ in width
        # (categories absent from one dataset): train each shape as its own batch.
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, lay in enumerate(layouts):
            groups.setdefault(lay.signature(), []).append(i)
        results: list[Fitted | None] = [None] * len(datasets)
        untrained = 0
        recorded: list[AnswerTranscript | None] = [None] * len(datasets)
        for members in groups.values():
            trainer = Trainer(
                cfg,
                [layouts[i] for i in members],
                [encoded[i] for i in members],
                [streams[i] for i in members],
                device,
                target_rows=None
                if canary is None
                else [_target_rows(datasets[i], canary, domain) for i in members],
            )
            if transcripts is not None:
                trainer.recorder = Recorder()
            if replays is not None:
                trainer.replay = Replay([replays[0][i] for i in members], cfg, device)
            fitted, never = trainer.run()
            if trainer.replay is not None and replays is not None:
                trainer.replay.finish()
                for j, i in enumerate(members):
                    replays[1][i] = (
                        float(trainer.replay.log_likelihood[j]),
                        bool(trainer.replay.contradicted[j]),
                    )
            if trainer.recorder is not None:
                # A model never trained (budget below one batch) has none: empty.
                got = trainer.recorder.transcripts() or [
                    _empty_transcript(cfg) for _ in members
                ]
                for i, t in zip(members, got):
                    recorded[i] = t
            untrained += len(never)
            for i, model in zip(members, fitted):
                results[i] = model
        if untrained:
            # One warning per call, not one per model.
            warnings.warn(
                f"G-PATE: for {untrained} of {len(datasets)} model(s) the budget "
                f"epsilon={cfg.epsilon} does not cover one batch of queries; they were "
                "not trained. Raise `epsilon`, the sigmas, or lower `batch_size` or "
                "`projection_dim`.",
                DpauditWarning,
                stacklevel=3,
            )
        if transcripts is not None:
            transcripts.extend(t for t in recorded if t is not None)
        return [r for r in results if r is not None]

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        """``n`` synthetic rows in the original columns, dtypes and units.

        The release's sampling (latents, classes) is public randomness: it comes from
        ``public_rng`` (None: a child of ``rng``). With ``label_column``, each row's
        class is drawn uniformly over the label's public categories and the generator
        is conditioned on it: the released class frequencies are public (uniform), not
        the private label distribution.

        Raises:
            NotFittedError: before ``fit``.
        """
        if self._fitted is None:
            raise NotFittedError(
                "this GPate is not fitted: call `fit` before `sample`."
            )
        require(
            isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 0,
            "n",
            "an integer >= 0",
            n,
        )
        _check_rngs([rng], "rng")
        if public_rng is not None:
            _check_rngs([public_rng], "public_rng")
        public, _ = public_and_privacy(rng, public_rng)
        layout = self._fitted.layout
        rows = encoded_releases([self._fitted], int(n), [public])[0]
        return layout.domain.decode(layout.assemble(rows.free, rows.classes))

    @staticmethod
    def sample_many(
        models: Sequence[GPate],
        n: int,
        *,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> pd.DataFrame:
        """The releases of several fitted models, drawn in one generator pass and
        decoded as one table.

        Model ``m`` releases what ``models[m].sample(n, rng=rngs[m],
        public_rng=public_rngs[m])`` releases, bit for bit (each model draws from its
        own public stream; :mod:`~dpaudit.generators.g_pate.release`). Models trained
        by one :meth:`fit_many` run as one batched forward pass of their ensemble;
        the rows of models sharing a domain are decoded together, once.

        Returns:
            One table of ``len(models) * n`` rows: model ``m``'s release is rows
            ``m * n`` to ``(m + 1) * n - 1``, index ``0 .. M*n - 1``.

        Raises:
            InvalidParameterError: streams of the wrong number, or not GPate models.
            NotFittedError: a model is not fitted.
        """
        models = list(models)
        check_release_streams(models, rngs, public_rngs, kind="GPate")
        _check_rngs(rngs, "rngs")
        if public_rngs is not None:
            _check_rngs(public_rngs, "public_rngs")
        require(
            isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 0,
            "n",
            "an integer >= 0",
            n,
        )
        fitted: list[Fitted] = []
        for model in models:
            require(
                isinstance(model, GPate), "models", "GPate models", type(model).__name__
            )
            if model._fitted is None:
                raise NotFittedError(
                    "this GPate is not fitted: call `fit` before `sample`."
                )
            fitted.append(model._fitted)
        publics = [
            public_and_privacy(r, None if public_rngs is None else public_rngs[i])[0]
            for i, r in enumerate(rngs)
        ]
        encoded = encoded_releases(fitted, int(n), publics)
        # Consecutive models of one domain (all of them, but with the data_bounds
        # defect) are decoded together.
        frames, start = [], 0
        for stop in range(1, len(fitted) + 1):
            if (
                stop == len(fitted)
                or fitted[stop].layout.domain != fitted[start].layout.domain
            ):
                layout = fitted[start].layout
                rows = stack(encoded[start:stop])
                frames.append(
                    layout.domain.decode(layout.assemble(rows.free, rows.classes))
                )
                start = stop
        if len(frames) == 1:
            return frames[0]
        return pd.concat(frames, ignore_index=True)


def _empty_transcript(cfg: GPateConfig) -> AnswerTranscript:
    shape = (0, cfg.batch_size, cfg.projection_dim)
    return AnswerTranscript(
        answered=np.zeros(shape, dtype=np.bool_),
        winners=np.zeros(shape, dtype=np.int64),
        used=np.zeros(0, dtype=np.bool_),
    )


def _target_rows(
    data: pd.DataFrame, canary: pd.DataFrame, domain: Domain
) -> NDArray[np.bool_]:
    """Which rows of ``data`` equal the target record (in the domain's types)."""
    rows = domain.cast(data).reset_index(drop=True)
    target = domain.cast(canary).reset_index(drop=True)
    names = list(domain.names)
    same = (rows[names].to_numpy() == target[names].to_numpy()[:1]).all(axis=1)
    return np.asarray(same, dtype=np.bool_)


def make_gpate(*, epsilon: float, delta: float, **options: Any) -> GPate:
    """``gpate`` in the generator registry: ``GPate(config_from_options(...))``."""
    return GPate(config_from_options(epsilon=epsilon, delta=delta, **options))
