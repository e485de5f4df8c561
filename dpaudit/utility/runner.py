"""The benchmark's runner: train a generator, sample, and evaluate (:func:`run_utility`)."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from dpaudit.data import Dataset
from dpaudit.errors import InvalidParameterError
from dpaudit.utility.evaluate import evaluate_synthetic
from dpaudit.utility.results import UtilityResult
from dpaudit.utility.settings import (
    DEFAULT_MODELS,
    DEFAULT_SAMPLES,
    PROTOCOLS,
    SETTINGS,
    Setting,
    UtilityProtocol,
    check_classifiers,
    check_settings,
)
from dpaudit.validation import check_choice, check_positive_int, require

if TYPE_CHECKING:
    from dpaudit.generators.base import GeneratorFactory
    from dpaudit.generators.foreign.options import WorkerOptions
    from dpaudit.rng import Rngs


def generator_factory(
    name: str, worker: WorkerOptions | None = None
) -> GeneratorFactory:
    """:func:`dpaudit.generators.registry.generator_factory`, imported on first use.

    The import is deferred so that joblib workers, which import this package to run
    the classifier fits, do not import torch.
    """
    from dpaudit.generators.registry import generator_factory as factory

    return factory(name, worker=worker)


def _model_streams(
    root: Rngs, *, n_models: int, n_samples: int
) -> Iterator[tuple[Rngs, list[Rngs], list[Rngs]]]:
    """Per model: the fit stream, the training-sample streams, the test-sample streams."""
    for model_rng in root.spawn(n_models):
        fit_rng, train_root, test_root = model_rng.spawn(3)
        yield fit_rng, train_root.spawn(n_samples), test_root.spawn(n_samples)


def run_utility(
    *,
    generator_name: str,
    dataset: Dataset,
    epsilon: float,
    delta: float,
    seed: int,
    generator_options: Mapping[str, Any] | None = None,
    protocol: UtilityProtocol = "plain",
    n_models: int = DEFAULT_MODELS,
    n_samples: int = DEFAULT_SAMPLES,
    classifiers: Sequence[str] | None = None,
    settings: Sequence[Setting] = SETTINGS,
    n_jobs: int = 1,
    progress: bool = True,
    worker: WorkerOptions | None = None,
) -> UtilityResult:
    """Trains a generator ``n_models`` times, samples, and runs Settings A, B, C.

    Each model ``i`` is a fresh generator from
    ``generator_factory(generator_name)(epsilon=, delta=, **generator_options)``
    fitted on ``dataset.train`` with its public domain; a generator with
    ``fit_many`` (:class:`~dpaudit.generators.base.BatchedGenerator`) trains the
    ``n_models`` models as one tensor program instead. Each model releases
    ``n_samples`` training tables of ``len(dataset.train)`` rows and, for Setting C,
    as many separate test tables of ``len(dataset.test)`` rows. All streams are
    spawned from ``Rngs.from_seed(seed)``: child 0 for the generators (per model: fit,
    training samples, test samples), child 1 for the classifiers.

    Args:
        generator_name: a registered generator (``dpaudit list generators``) or a
            plug-in ``module:Class``.
        dataset: a dataset with a held-out ``test`` table and a binary ``label``.
        epsilon: the generator's target epsilon.
        delta: the generator's target delta.
        seed: the root seed (non-negative integer).
        generator_options: extra factory options (``variant``, ``bugs``, ...).
        protocol: ``plain`` (mean and std) or ``best-of`` (the study's best of
            ``n_models x n_samples``).
        n_models: generator seeds.
        n_samples: synthetic datasets per model.
        classifiers: a subset of :data:`CLASSIFIERS`; default all twelve.
        settings: the settings to run (default A, B and C).
        n_jobs: joblib workers for the classifier fits.
        progress: show tqdm progress bars on stderr.

    Returns:
        The :class:`UtilityResult`, with the generator's metadata.

    Raises:
        InvalidParameterError: for bad arguments or a dataset without a test split.
    """

    from dpaudit.rng import Rngs

    if not isinstance(dataset, Dataset):
        raise InvalidParameterError(
            f"`dataset` must be a dpaudit Dataset. Got {type(dataset).__name__}."
        )
    if dataset.test is None or dataset.label is None:
        raise InvalidParameterError(
            f"`dataset` must have a held-out test table and a label. Got {dataset.name!r} "
            "without them; split it with dpaudit.data.stratified_split first."
        )
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        finite = (
            not isinstance(value, bool)
            and isinstance(value, int | float)
            and math.isfinite(value)
        )
        require(finite, name, "a finite number", value)
    require(epsilon > 0, "epsilon", "positive", epsilon)
    require(0 <= delta < 1, "delta", "in [0, 1)", delta)
    check_choice(protocol, "protocol", PROTOCOLS)
    n_models = check_positive_int(n_models, name="n_models")
    n_samples = check_positive_int(n_samples, name="n_samples")
    chosen = check_settings(settings)
    check_classifiers(classifiers)
    options = dict(generator_options or {})
    root = Rngs.from_seed(seed)
    generator_root, classifier_root = root.spawn(2)
    factory = (
        generator_factory(generator_name)
        if worker is None
        else generator_factory(generator_name, worker)
    )

    train_sets: list[pd.DataFrame] = []
    test_sets: list[pd.DataFrame] = []
    claims: list[float | None] = []
    need_synthetic = "B" in chosen or "C" in chosen
    start = time.perf_counter()
    if need_synthetic:
        streams = list(
            _model_streams(generator_root, n_models=n_models, n_samples=n_samples)
        )
        models = _fit_models(
            factory,
            dataset,
            fit_rngs=[fit_rng for fit_rng, _, _ in streams],
            options={"epsilon": epsilon, "delta": delta, **options},
            desc=f"utility: training {generator_name}",
            progress=progress,
        )
        for model, (_, train_rngs, test_rngs) in zip(models, streams):
            claims.append(_claimed_epsilon(model))
            for sample_rng in train_rngs:
                train_sets.append(model.sample(len(dataset.train), rng=sample_rng))
            if "C" in chosen:
                for sample_rng in test_rngs:
                    test_sets.append(model.sample(len(dataset.test), rng=sample_rng))
    fit_seconds = time.perf_counter() - start

    result = evaluate_synthetic(
        train_sets,
        dataset.test,
        dataset.label,
        rng=classifier_root,
        train_real=dataset.train,
        test_synthetic=test_sets if "C" in chosen else None,
        domain=dataset.domain,
        settings=chosen,
        protocol=protocol,
        classifiers=classifiers,
        dataset=dataset.name,
        n_jobs=n_jobs,
        progress=progress,
    )
    return replace(
        result,
        generator=generator_name,
        generator_options=options,
        epsilon=float(epsilon),
        delta=float(delta),
        seed=int(seed),
        seed_entropy=root.entropy,
        n_models=n_models,
        n_samples=n_samples,
        n_train_rows=len(dataset.train),
        claimed_epsilons=tuple(claims),
        fit_seconds=fit_seconds,
    )


def _fit_models(
    factory: GeneratorFactory,
    dataset: Dataset,
    *,
    fit_rngs: Sequence[Rngs],
    options: Mapping[str, Any],
    desc: str,
    progress: bool,
) -> list[Any]:
    """Trains one model per stream; as one tensor program when the generator has
    ``fit_many`` (the same seed and ``n_models`` then give the same models)."""
    from tqdm.auto import tqdm

    first = factory(**options)
    fit_many = getattr(first, "fit_many", None)
    with tqdm(
        total=len(fit_rngs),
        desc=desc,
        unit="model",
        disable=not progress,
        file=sys.stderr,
    ) as bar:
        if callable(fit_many):
            models = list(
                fit_many(
                    [dataset.train] * len(fit_rngs),
                    domain=dataset.domain,
                    rngs=list(fit_rngs),
                )
            )
            bar.update(len(fit_rngs))
            return models
        models = []
        for i, fit_rng in enumerate(fit_rngs):
            # A fresh generator per model: nothing carries over between fits.
            model = first if i == 0 else factory(**options)
            models.append(model.fit(dataset.train, domain=dataset.domain, rng=fit_rng))
            bar.update(1)
        return models


def _claimed_epsilon(model: Any) -> float | None:
    try:
        claim = model.privacy_claim_
    except AttributeError:
        # A plug-in without a claim still has a utility; the claim is just unknown.
        return None
    value = getattr(claim, "epsilon", None)
    return None if value is None else float(value)
