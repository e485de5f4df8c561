"""Each attack declares whether it learns from training rounds: the registry field
(dpaudit.attacks.names.FITS) agrees with the class attribute (trains_classifier)."""

from __future__ import annotations

from dpaudit.attacks.likelihood_ratio import LikelihoodRatioAttack
from dpaudit.attacks.measurements import MeasurementAttack
from dpaudit.attacks.names import (
    ATTACK_NAMES,
    FITS,
    LIKELIHOOD_RATIO,
    TRANSCRIPT_ATTACKS,
    any_fits,
)
from dpaudit.attacks.registry import _FACTORIES


def test_the_registry_field_agrees_with_the_classes() -> None:
    assert set(FITS) == {*ATTACK_NAMES, *TRANSCRIPT_ATTACKS}
    for name in ATTACK_NAMES:
        cls = _FACTORIES[name][0]
        assert FITS[name] is cls.trains_classifier, name  # type: ignore[attr-defined]
    assert FITS[LIKELIHOOD_RATIO] is LikelihoodRatioAttack.trains_classifier is False
    assert FITS["measurement-ratio"] is MeasurementAttack.trains_classifier is False


def test_which_attacks_fit() -> None:
    assert not any_fits(["distance"])
    assert not any_fits([LIKELIHOOD_RATIO])
    assert any_fits(["distance", "fingerprint"])
    assert any_fits(["not-an-attack"])  # refused elsewhere; counted as fitting
