"""The generator registry: the static table, capabilities, and the options an audit
gives each generator (what ``build_setup`` did by name before the registry)."""

from __future__ import annotations

from typing import Any

import pytest

from dpaudit.errors import InvalidParameterError
from dpaudit.generators import registry
from dpaudit.generators.bugs import bugs, variants
from dpaudit.generators.g_pate import GPate, with_small_table_defaults
from dpaudit.generators.pate_gan import PateGan, default_num_teachers
from dpaudit.generators.toy import CopyGenerator, RandomizedResponseGenerator

BUILTINS = ("pategan", "gpate", "randomized-response", "copy")


def options(
    name: str, given: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "n_rows": 4,
        "worst_case": True,
        "epsilon": 1.0,
        "delta": 1e-5,
        "device": "auto",
        "variant": None,
        "bugs": (),
    }
    args.update(kw)
    return registry.audit_options(name, given or {}, **args)


def test_builtins_listed_with_descriptions() -> None:
    listed = registry.registered_generators()
    assert tuple(listed)[:4] == BUILTINS
    assert "PATE-GAN" in listed["pategan"] and "G-PATE" in listed["gpate"]
    assert registry.DEFAULT_GENERATOR in listed


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("pategan", PateGan),
        ("gpate", GPate),
        ("randomized-response", RandomizedResponseGenerator),
        ("copy", CopyGenerator),
    ],
)
def test_factory_builds_the_class(name: str, cls: type) -> None:
    extra = {"device": "cpu"} if registry.get_spec(name).devices else {}
    assert isinstance(
        registry.generator_factory(name)(epsilon=1.0, delta=1e-5, **extra), cls
    )


def test_capabilities_derive_from_the_code() -> None:
    pategan, gpate = registry.get_spec("pategan"), registry.get_spec("gpate")
    assert pategan.batched and gpate.batched
    assert not registry.get_spec("copy").batched
    assert set(pategan.variants) == {
        n for n, v in variants().items() if v.generator == "pategan"
    }
    assert "original" in pategan.variants and gpate.variants == ()
    assert set(gpate.bug_flags) == {b.name for b in bugs("gpate")}
    assert "partition_last_only" in pategan.bug_flags
    assert registry.get_spec("copy").bug_flags == ()
    for name in BUILTINS:
        spec = registry.get_spec(name)
        assert spec.supports_public_randomness == bool(
            getattr(spec.load_class(), "supports_public_randomness", False)
        )
    assert registry.get_spec("randomized-response").supports_public_randomness
    assert pategan.records_trace and gpate.records_trace
    assert not registry.get_spec("copy").records_trace


def test_pategan_audit_options() -> None:
    # The reference (no variant) gets hidden layers at least 8 wide; a variant keeps
    # the widths of the code it reproduces.
    assert options("pategan") == {
        "device": "auto",
        "num_teachers": 2,
        "lam": 1e-3,
        "min_width": 8,
        "max_iterations": 100,
    }
    real = options(
        "pategan",
        n_rows=686,
        worst_case=False,
        device="cpu",
        variant="original",
        bugs=("data_bounds",),
    )
    assert real == {
        "device": "cpu",
        "variant": "original",
        "bugs": ["data_bounds"],
        "num_teachers": default_num_teachers(686),
        "lam": 1e-3,
        "max_iterations": 1000,
    }
    given = {
        "device": "cuda",
        "num_teachers": 7,
        "lam": 0.5,
        "max_iterations": 3,
        "min_width": 1,
    }
    assert options("pategan", dict(given), device="cpu") == given, (
        "the user's options win"
    )


def test_gpate_audit_options_calibrate_small_tables() -> None:
    small = options("gpate", n_rows=686, worst_case=False, epsilon=2.0)
    expected = with_small_table_defaults(
        {"device": "auto", "max_iterations": 1000}, 686, epsilon=2.0, delta=1e-5
    )
    assert small == expected
    assert small["num_teachers"] < 686
    large = options("gpate", n_rows=50_000, worst_case=True, bugs=["data_bounds"])
    assert large == {"device": "auto", "bugs": ["data_bounds"], "max_iterations": 100}
    assert options("gpate", {"num_teachers": 3}, n_rows=686) == {
        "num_teachers": 3,
        "device": "auto",
        "max_iterations": 100,
    }


def test_toys_get_no_generator_options() -> None:
    for name in ("randomized-response", "copy"):
        assert options(name, {"target": None}) == {"target": None}
        with pytest.raises(
            InvalidParameterError,
            match=r"`variant/bugs` must be unset for .*pategan, gpate",
        ):
            options(name, bugs=("data_bounds",))


def test_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="`n_rows` must be an integer"):
        options("pategan", n_rows=0)
    with pytest.raises(
        InvalidParameterError, match="`device` must be one of auto, cpu, cuda"
    ):
        options("gpate", device="gpu")
    with pytest.raises(InvalidParameterError, match="`generator` must be"):
        registry.get_spec("")
    with pytest.raises(InvalidParameterError, match="records training traces: pategan"):
        registry.trace_options("copy", iterations=3)
    assert registry.trace_options("pategan", iterations=3) == {
        "record_trace": True,
        "max_iterations": 3,
        "fixed_iterations": 3,
    }


def test_one_table_names_each_config_class() -> None:
    """The spec table is the one map from generator to config class: a generator
    built from a config names its class, the builder makes an instance of it, and
    the catalogue's flags and variants are those of the classes it names (G-PATE's
    included)."""
    configurable = {
        name: spec
        for name, spec in registry.builtin_generators().items()
        if spec.configurable
    }
    assert set(configurable) == {"pategan", "gpate"}
    for name, spec in configurable.items():
        cls = spec.load_config_class()
        assert cls is not None, name
        built = registry._load(spec.config_builder)(epsilon=1.0, delta=1e-5)
        assert isinstance(built, cls), name
        assert spec.bug_flags == tuple(b.name for b in bugs(name)), name
        assert spec.bug_flags, name
    for name, spec in registry.builtin_generators().items():
        assert (spec.config_class is None) == (not spec.configurable), name
    assert {v.generator for v in variants().values()} == {"pategan"}
