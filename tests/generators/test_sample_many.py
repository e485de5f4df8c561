"""Batched sampling: ``sample_many`` releases what each model's own ``sample`` does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpaudit.data import Column, Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators.bugs import variants
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.nets import BatchedMLP, MLPSpec
from dpaudit.generators.pate_gan import PateGan, PateGanConfig, config_from_options
from dpaudit.generators.pate_gan import release as pate_gan_release
from dpaudit.generators.pate_gan.release import release_forward
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

DOMAIN = Domain(
    (
        Column(name="age", kind="integer", lower=18, upper=90),
        Column(name="income", kind="continuous", lower=0.0, upper=100.0),
        Column(name="smoker", kind="binary"),
        Column(
            name="region", kind="categorical", categories=("north", "south", "west")
        ),
    )
)


def table(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": gen.integers(20, 80, n).astype(np.int64),
            "income": gen.uniform(10.0, 60.0, n),
            "smoker": gen.integers(0, 2, n).astype(np.int64),
            "region": gen.choice(["north", "south", "west"], n).astype(object),
        }
    )


def pategan(**kw: object) -> PateGan:
    return PateGan(
        PateGanConfig(
            **{
                "device": "cpu",
                "max_iterations": 3,
                "batch_size": 16,
                "num_teachers": 3,
                "epsilon": 5.0,
                **kw,
            }
        )
    )


def gpate(**kw: object) -> GPate:
    return GPate(
        GPateConfig(
            **{
                "epsilon": 20.0,
                "delta": 1e-5,
                "num_teachers": 10,
                "batch_size": 8,
                "sigma1": 20.0,
                "sigma2": 10.0,
                "projection_dim": 2,
                "max_iterations": 3,
                "device": "cpu",
                **kw,
            }
        )
    )


def assert_same_release(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """Equal tables, every value bit for bit (pandas compares floats to 1e-5 by
    default, which would hide a last-bit difference)."""
    pd.testing.assert_frame_equal(left, right, check_exact=True)


def per_model(
    models: list, n: int, rngs: list[Rngs], public: list[Rngs] | None
) -> pd.DataFrame:
    frames = [
        m.sample(n, rng=r, public_rng=None if public is None else public[i])
        for i, (m, r) in enumerate(zip(models, rngs))
    ]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"variant": None, "real_category_frequencies": True, "integer_floor": True},
        {"output_not_rescaled": True},
        {
            "latent_mismatch": True,
            "label_column": "smoker",
            "label_distribution_given": True,
        },
    ],
)
@pytest.mark.parametrize("shared_public", [False, True])
def test_pategan_sample_many_equals_per_model_sample(
    options: dict[str, object], shared_public: bool
) -> None:
    # Bit for bit: sample and sample_many run one release pass
    # (dpaudit/generators/pate_gan/release.py).
    data = [table(60, s) for s in range(5)]
    fit_rngs = Rngs.from_seed(1).spawn(5)
    models = pategan(**options).fit_many(data, domain=DOMAIN, rngs=fit_rngs)
    rngs = Rngs.from_seed(2).spawn(5)
    public = [Rngs.from_seed(3)] * 5 if shared_public else None
    batched = PateGan.sample_many(models, 40, rngs=rngs, public_rngs=public)
    expected = per_model(models, 40, rngs, public)
    assert_same_release(batched, expected)
    # Not every model released the same rows (the comparison can fail).
    assert (
        not batched.iloc[:40]
        .reset_index(drop=True)
        .equals(batched.iloc[40:80].reset_index(drop=True))
    )
    # A sub-batch, out of order, from two fits: still each model's own release.
    other = pategan(**options).fit(data[0], domain=DOMAIN, rng=fit_rngs[0])
    mixed = [models[3], other, models[1]]
    mixed_rngs = [rngs[3], rngs[0], rngs[1]]
    mixed_public = None if public is None else public[:3]
    assert_same_release(
        PateGan.sample_many(mixed, 40, rngs=mixed_rngs, public_rngs=mixed_public),
        per_model(mixed, 40, mixed_rngs, mixed_public),
    )


def test_pategan_sample_many_reuses_no_stream_state() -> None:
    """The release-time draws come from the stream's seed, not from what the Rngs
    object drew before: sampling twice with one Rngs object gives the same rows."""
    model = pategan(real_category_frequencies=True).fit(
        table(60, 0), domain=DOMAIN, rng=Rngs.from_seed(0)
    )
    public = Rngs.from_seed(5)
    first = model.sample(30, rng=Rngs.from_seed(1), public_rng=public)
    assert_same_release(
        first, model.sample(30, rng=Rngs.from_seed(1), public_rng=public)
    )


@pytest.mark.parametrize(
    "options", [{}, {"label_column": "region"}, {"label_column": "smoker"}]
)
def test_gpate_sample_many_equals_per_model_sample(options: dict[str, object]) -> None:
    data = [table(120, s) for s in range(3)]
    models = gpate(**options).fit_many(
        data, domain=DOMAIN, rngs=Rngs.from_seed(4).spawn(3)
    )
    rngs = Rngs.from_seed(6).spawn(3)
    for public in (None, [Rngs.from_seed(7)] * 3):
        batched = GPate.sample_many(models, 25, rngs=rngs, public_rngs=public)
        assert_same_release(batched, per_model(models, 25, rngs, public))
    assert (
        not batched.iloc[:25]
        .reset_index(drop=True)
        .equals(batched.iloc[25:50].reset_index(drop=True))
    )
    # A sub-batch, out of order, from two fits, one stream shared by two models.
    other = gpate(**options).fit(
        data[0], domain=DOMAIN, rng=Rngs.from_seed(4).spawn(3)[0]
    )
    mixed = [models[2], other, models[0], models[1]]
    mixed_rngs = [rngs[2], rngs[0], rngs[2], rngs[1]]
    assert_same_release(
        GPate.sample_many(mixed, 25, rngs=mixed_rngs),
        per_model(mixed, 25, mixed_rngs, None),
    )


def gpate_ensemble(models: int, **options: object) -> list[GPate]:
    data = [table(120, s) for s in range(models)]
    return gpate(**options).fit_many(
        data, domain=DOMAIN, rngs=Rngs.from_seed(8).spawn(models)
    )


def test_gpate_sample_many_runs_one_forward_pass_per_ensemble(monkeypatch) -> None:
    """Five models of one fit_many: one batched pass of five members (not five)."""
    from dpaudit.generators.g_pate import release

    calls: list[int] = []
    forward = release._forward

    def spy(layout, ensemble, z, classes):
        calls.append(z.shape[0])
        return forward(layout, ensemble, z, classes)

    monkeypatch.setattr(release, "_forward", spy)
    models = gpate_ensemble(5)
    GPate.sample_many(models, 30, rngs=Rngs.from_seed(1).spawn(5))
    assert calls == [5]
    calls.clear()
    per_model(models, 30, Rngs.from_seed(1).spawn(5), None)
    assert calls == [1] * 5


@pytest.mark.parametrize("options", [{}, {"label_column": "region"}])
def test_gpate_sample_many_in_passes_and_row_chunks_equals_per_model(
    monkeypatch, options: dict[str, object]
) -> None:
    """Few members per pass (the memory cap) and short row chunks: still each model's
    own release (chunked the same way: the chunk length is fixed, and a matmul over
    fewer rows may round differently), and the rows agree with one chunk to 1e-5."""
    from dpaudit.generators.g_pate import release

    models = gpate_ensemble(5, **options)
    rngs = Rngs.from_seed(2).spawn(5)
    whole = GPate.sample_many(models, 23, rngs=rngs)
    monkeypatch.setattr(release, "SAMPLE_CHUNK", 7)
    monkeypatch.setattr(
        release, "PASS_FLOATS", 2 * 7 * release.row_floats(models[0]._fitted.generator)
    )  # two members per pass
    chunked = GPate.sample_many(models, 23, rngs=rngs)
    assert_same_release(chunked, per_model(models, 23, rngs, None))
    pd.testing.assert_frame_equal(chunked, whole, check_exact=False, rtol=1e-5)


def test_select_members_equals_each_member() -> None:
    """A selection of an ensemble's members computes what each member alone does; a
    consecutive run shares the ensemble's memory, any other order copies."""
    import torch

    from dpaudit.generators.g_pate.networks import load_member, select_members
    from dpaudit.generators.g_pate.release import mlp_forward

    models = gpate_ensemble(4, label_column="region")
    fitted = models[0]._fitted
    assert fitted is not None
    ensemble = fitted.ensemble
    z = torch.randn(4, 9, fitted.latent, generator=torch.Generator().manual_seed(0))
    cond = torch.eye(3)[torch.randint(0, 3, (4, 9), generator=torch.Generator())]
    with torch.no_grad():
        for index in ([1, 2], [3, 0, 2], [2], [0, 1, 2, 3]):
            sub = select_members(ensemble, index, 4)
            got = mlp_forward(sub, z[: len(index)], cond[: len(index)])
            for j, i in enumerate(index):
                alone = models[i]._fitted.generator  # type: ignore[union-attr]
                assert torch.equal(
                    got[j], mlp_forward(alone, z[j : j + 1], cond[j : j + 1])[0]
                )
    first = next(ensemble.parameters())
    assert (
        next(select_members(ensemble, [1, 2], 4).parameters()).data_ptr()
        != first.data_ptr()
    )
    assert (
        next(select_members(ensemble, [0, 1], 4).parameters()).data_ptr()
        == first.data_ptr()
    )
    template = models[0]._fitted.generator  # type: ignore[union-attr]
    load_member(template, select_members(ensemble, [3, 1], 4), 1, 2)
    for a, b in zip(template.parameters(), models[1]._fitted.generator.parameters()):  # type: ignore[union-attr]
        assert torch.equal(a, b)


def test_select_members_checks_its_index() -> None:
    fitted = gpate_ensemble(2)[0]._fitted
    assert fitted is not None
    from dpaudit.generators.g_pate.networks import select_members

    with pytest.raises(InvalidParameterError, match="`index` must be member indices"):
        select_members(fitted.ensemble, [2], 2)
    with pytest.raises(InvalidParameterError, match="`members` must be a divisor"):
        select_members(fitted.ensemble, [0], 3)


def test_pategan_sample_many_decodes_each_domain_of_the_data_bounds_defect() -> None:
    full = table(60, 5)
    no_west = full[full["region"] != "west"].reset_index(drop=True)
    models = pategan(data_bounds=True).fit_many(
        [full, no_west, no_west, full], domain=DOMAIN, rngs=Rngs.from_seed(0).spawn(4)
    )
    rngs = Rngs.from_seed(1).spawn(4)
    batched = PateGan.sample_many(models, 30, rngs=rngs)
    assert_same_release(batched, per_model(models, 30, rngs, None))
    assert set(batched["region"].iloc[30:90]) <= {"north", "south"}


def test_gpate_sample_many_decodes_each_domain_of_the_data_bounds_defect() -> None:
    full = table(120, 5)
    no_west = full[full["region"] != "west"].reset_index(drop=True)
    models = gpate(data_bounds=True).fit_many(
        [full, no_west, full], domain=DOMAIN, rngs=Rngs.from_seed(0).spawn(3)
    )
    rngs = Rngs.from_seed(1).spawn(3)
    batched = GPate.sample_many(models, 50, rngs=rngs)
    assert_same_release(batched, per_model(models, 50, rngs, None))


def test_sample_many_checks_its_input() -> None:
    model = pategan().fit(table(60, 0), domain=DOMAIN, rng=Rngs.from_seed(0))
    with pytest.raises(
        InvalidParameterError, match="`rngs` must be one stream per model"
    ):
        PateGan.sample_many([model, model], 5, rngs=[Rngs.from_seed(1)])
    with pytest.raises(InvalidParameterError, match="`models` must be at least one"):
        PateGan.sample_many([], 5, rngs=[])
    with pytest.raises(NotFittedError):
        PateGan.sample_many([pategan()], 5, rngs=[Rngs.from_seed(1)])
    with pytest.raises(InvalidParameterError, match="one configuration"):
        PateGan.sample_many(
            [
                model,
                pategan(lr=1e-3).fit(
                    table(60, 0), domain=DOMAIN, rng=Rngs.from_seed(0)
                ),
            ],
            5,
            rngs=Rngs.from_seed(1).spawn(2),
        )
    with pytest.raises(NotFittedError):
        GPate.sample_many([gpate()], 5, rngs=[Rngs.from_seed(1)])


def _columns(kinds: str) -> Domain:
    """A domain of binary (``b``), integer (``i``) and 3-category (``c``) columns."""
    make = {
        "b": lambda n: Column(name=n, kind="binary"),
        "i": lambda n: Column(name=n, kind="integer", lower=0, upper=9),
        "c": lambda n: Column(name=n, kind="categorical", categories=("x", "y", "z")),
    }
    return Domain(tuple(make[k](f"{k}{j}") for j, k in enumerate(kinds)))


@pytest.mark.parametrize(
    ("kinds", "label"),
    [
        ("bbb", None),  # the worst case: d = 3, a one-unit hidden layer
        ("bb", None),
        ("b", None),
        ("ic", "c1"),
        ("bic", None),
        ("iiiiiii", "i0"),
        ("bcicbiiciib", "c1"),
        ("iiiiiiiiiiiiiiiiiiiiiiiii", None),
    ],
)
def test_gpate_batched_release_has_each_models_bits(
    kinds: str, label: str | None
) -> None:
    """Before decoding (where rounding would hide a last-bit difference), each model's
    generated coordinates are bitwise those it generates alone, also for generators
    with a one-unit layer, whose ensemble reduction rounds with the member count."""
    import torch

    from dpaudit.generators.g_pate.release import encoded_releases

    domain = _columns(kinds)
    gen = np.random.default_rng(0)
    data = [domain.decode(gen.uniform(size=(40, domain.encoded_dim))) for _ in range(6)]
    models = gpate(label_column=label, num_teachers=4).fit_many(
        data, domain=domain, rngs=Rngs.from_seed(3).spawn(6)
    )
    fitted = [m._fitted for m in models]
    publics = Rngs.from_seed(4).spawn(6)
    batched = encoded_releases(fitted, 37, publics)
    for f, p, got in zip(fitted, publics, batched):
        alone = encoded_releases([f], 37, [p])[0]
        assert np.array_equal(got.free, alone.free)
        assert (
            got.classes is None
            if label is None
            else np.array_equal(got.classes, alone.classes)
        )
    # The models differ (the comparison can fail).
    assert not np.array_equal(batched[0].free, batched[1].free)
    # The release's forward pass is the generator module's own: bitwise without a
    # one-unit layer (d >= 4), else up to rounding.
    f, p = fitted[0], publics[0]
    z = torch.randn(1, 37, f.latent, generator=p.torch())
    cond = torch.zeros(1, 37, f.layout.classes)
    if f.layout.classes:
        cond = torch.eye(f.layout.classes)[
            torch.randint(0, f.layout.classes, (1, 37), generator=p.torch())
        ]
    with torch.no_grad():
        from dpaudit.generators.g_pate.release import mlp_forward

        ours, module = mlp_forward(f.generator, z, cond), f.generator(z, cond)
    if f.layout.width >= 4:
        assert torch.equal(ours, module)
    else:
        torch.testing.assert_close(ours, module)


@pytest.mark.parametrize("variant", [None, *variants()])
def test_pategan_sample_many_has_each_models_bits(variant: str | None) -> None:
    """The reference and every variant on the worst case (a one-unit hidden layer for
    the reference; ``updated`` releases raw [0, 1] floats): every batch of models,
    of any size, order and position, releases each model's own bits."""
    ds = worst_case_dataset()
    _, data = neighbouring_pair(
        ds.train, worst_case_target(ds.domain), domain=ds.domain
    )
    gen = PateGan(
        config_from_options(
            epsilon=1.0,
            delta=1e-5,
            variant=variant,
            max_iterations=2,
            num_teachers=2,
            device="cpu",
        )
    )
    models = gen.fit_many([data] * 5, domain=ds.domain, rngs=Rngs.from_seed(2).spawn(5))
    rngs = Rngs.from_seed(3).spawn(5)
    alone = [m.sample(20, rng=r) for m, r in zip(models, rngs)]
    for batch in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2], [1, 4], [3, 0, 2], [0, 0, 1]):
        release = PateGan.sample_many(
            [models[i] for i in batch], 20, rngs=[rngs[i] for i in batch]
        )
        assert_same_release(
            release, pd.concat([alone[i] for i in batch], ignore_index=True)
        )


def generator_net(
    members: int, *, n_in: int, hidden: tuple[int, ...], n_out: int, **spec: object
) -> BatchedMLP:
    return BatchedMLP(
        members,
        MLPSpec(n_in=n_in, hidden=hidden, n_out=n_out, **spec),  # type: ignore[arg-type]
        generator=torch.Generator().manual_seed(members + n_out),
    )


@pytest.mark.parametrize(
    ("hidden", "n_out", "spec"),
    [
        ((1,), 3, {"activation": "relu", "out_activation": "sigmoid"}),
        ((12, 12), 3, {"activation": "tanh", "out_activation": "sigmoid"}),
        ((7,), 1, {"activation": "leaky_relu", "out_activation": "sigmoid"}),
        (
            (9, 9),
            9,
            {
                "activation": "relu",
                "out_activation": "linear",
                "layer_norm": True,
                "residual": True,
            },
        ),
    ],
)
def test_release_forward_rows_are_independent_of_the_batch(
    hidden: tuple[int, ...], n_out: int, spec: dict[str, object]
) -> None:
    """Raw floats, exactly: each member of a release pass (batches of 1 to 8 members,
    any order, in several passes or one) gives the bits it gives alone; and the pass
    computes the training network's function (to float rounding)."""
    net = generator_net(8, n_in=9, hidden=hidden, n_out=n_out, **spec)
    z = torch.randn(8, 37, 9, generator=torch.Generator().manual_seed(0))
    alone = [release_forward(net, [i], z[i : i + 1])[0].numpy() for i in range(8)]
    for batch in (
        [0],
        [5],
        [0, 1],
        [6, 2, 7],
        list(range(8)),
        [7, 6, 5, 4, 3, 2, 1, 0],
        [3, 3, 1, 4, 0],
    ):
        out = release_forward(net, batch, z[batch]).numpy()
        for j, i in enumerate(batch):
            assert np.array_equal(out[j], alone[i]), (batch, i)
    with torch.no_grad():
        module = net(z).clamp(0.0, 1.0).numpy()
    np.testing.assert_allclose(np.stack(alone), module, rtol=1e-5, atol=1e-6)
    assert not np.array_equal(alone[0], alone[1])


def test_release_forward_in_several_passes_has_each_models_bits(monkeypatch) -> None:
    net = generator_net(
        6, n_in=5, hidden=(10,), n_out=5, activation="tanh", out_activation="sigmoid"
    )
    z = torch.randn(6, 30, 5, generator=torch.Generator().manual_seed(1))
    whole = release_forward(net, range(6), z).numpy()
    monkeypatch.setattr(pate_gan_release, "PASS_FLOATS", 2 * 30 * 10)
    assert np.array_equal(release_forward(net, range(6), z).numpy(), whole)


def test_release_forward_checks_its_input() -> None:
    net = generator_net(2, n_in=3, hidden=(4,), n_out=3)
    with pytest.raises(InvalidParameterError, match="`z` must be one latent block"):
        release_forward(net, [0], torch.zeros(2, 5, 3))
    with pytest.raises(InvalidParameterError, match="`index` must be members"):
        release_forward(net, [2], torch.zeros(1, 5, 3))


def test_gpate_dcgan_sample_many_equals_per_model_sample() -> None:
    """Convolutional generators run model by model inside ``sample_many`` (a grouped
    convolution rounds with its number of groups): still each model's own release."""
    pixels = tuple(
        Column(name=f"p{i}", kind="integer", lower=0, upper=255) for i in range(784)
    )
    domain = Domain(
        (Column(name="label", kind="categorical", categories=("a", "b")), *pixels)
    )
    gen = np.random.default_rng(0)
    data = pd.DataFrame(
        gen.integers(0, 256, (12, 784)), columns=[c.name for c in pixels]
    )
    data.insert(0, "label", gen.choice(["a", "b"], 12).astype(object))
    models = gpate(
        architecture="dcgan",
        label_column="label",
        num_teachers=3,
        batch_size=4,
        projection_dim=3,
        image_channels=2,
        latent_dim=8,
        max_iterations=2,
    ).fit_many([data, data], domain=domain, rngs=Rngs.from_seed(0).spawn(2))
    rngs = Rngs.from_seed(1).spawn(2)
    batched = GPate.sample_many(models, 5, rngs=rngs)
    assert_same_release(batched, per_model(models, 5, rngs, None))
    assert (
        not batched.iloc[:5]
        .reset_index(drop=True)
        .equals(batched.iloc[5:].reset_index(drop=True))
    )
