"""Randomness modes: one public stream for the whole audit, a privacy stream per round."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Self

import pandas as pd
import pytest

from dpaudit.audit import AuditConfig
from dpaudit.audit import run_audit as run_typed_audit
from dpaudit.data import Domain
from dpaudit.generators import registry
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.registry import GeneratorSpec
from dpaudit.rng import Rngs

Record = dict[str, Any]


def run_audit(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The audit's ``result.json`` document (the typed result's JSON form)."""
    return run_typed_audit(*args, **kwargs).to_json()


class _Recorder:
    """Records the streams it is given; releases copies of its first row."""

    supports_public_randomness: ClassVar[bool] = True
    LOG: ClassVar[list[Record]] = []

    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon, self.delta = epsilon, delta

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        self.LOG.append(
            {
                "call": "fit",
                "rows": len(data),
                "privacy": rng.int_seed(),
                "public": None if public_rng is None else public_rng.int_seed(),
            }
        )
        self.row_ = data.iloc[[0]]
        return self

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        self.LOG.append(
            {
                "call": "sample",
                "privacy": rng.int_seed(),
                "public": None if public_rng is None else public_rng.int_seed(),
            }
        )
        return pd.concat([self.row_] * n, ignore_index=True)

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        return PrivacyClaim(epsilon=self.epsilon, delta=self.delta, accountant="test")


class _Unsupported(_Recorder):
    supports_public_randomness: ClassVar[bool] = False


@pytest.fixture(autouse=True)
def _register(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorders as registry entries (the table is static: patch it for the test)."""
    table = dict(registry._BUILTINS)
    for name, cls in (
        ("test-recorder", _Recorder),
        ("test-recorder-off", _Unsupported),
    ):
        table[name] = GeneratorSpec(
            name=name,
            description="test: records its streams",
            label=name,
            factory=f"{cls.__module__}:{cls.__name__}",
        )
    monkeypatch.setattr(registry, "_BUILTINS", MappingProxyType(table))


def _run(
    tmp_path: Path, generator: str, randomness: str
) -> tuple[dict[str, Any], list[Record]]:
    _Recorder.LOG.clear()
    config = AuditConfig(
        generator=generator,
        rounds=10,
        jobs=1,
        batch_size=7,
        attack="querybased",
        randomness=randomness,
    )  # type: ignore[arg-type]
    result = run_audit(config, out_dir=tmp_path / generator / randomness)
    return result, list(_Recorder.LOG)


def test_fixed_public_passes_one_public_stream_and_fresh_privacy(
    tmp_path: Path,
) -> None:
    result, log = _run(tmp_path, "test-recorder", "fixed_public")
    assert result["randomness"] == "fixed_public"
    fits = [r for r in log if r["call"] == "fit"]
    samples = [r for r in log if r["call"] == "sample"]
    assert len(fits) == len(samples) == 20
    # Both worlds are present (|D| and |D| + 1 rows) ...
    assert len({r["rows"] for r in fits}) == 2
    # ... and every round of both worlds gets the same public streams: one for fit,
    # another for sample.
    assert len({r["public"] for r in fits}) == 1
    assert len({r["public"] for r in samples}) == 1
    assert fits[0]["public"] != samples[0]["public"]
    # The privacy streams are all different (per round, fit apart from sample).
    privacy = [r["privacy"] for r in log]
    assert len(set(privacy)) == len(privacy) == 40
    assert not {fits[0]["public"], samples[0]["public"]} & set(privacy)


@pytest.mark.parametrize(
    ("generator", "randomness"),
    [("test-recorder", "independent"), ("test-recorder-off", "fixed_public")],
)
def test_independent_game_passes_no_public_stream(
    tmp_path: Path, generator: str, randomness: str
) -> None:
    """Asked for, or forced by a generator that does not declare support."""
    result, log = _run(tmp_path, generator, randomness)
    assert result["randomness"] == "independent"
    assert len(log) == 40 and all(r["public"] is None for r in log)
    assert len({r["privacy"] for r in log}) == 40


def test_randomness_mode_is_validated() -> None:
    from dpaudit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="`randomness`"):
        AuditConfig(randomness="shared")  # type: ignore[arg-type]
