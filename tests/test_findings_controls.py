"""The control options of docs/findings.md (each patches a library inside the worker)
refuse a misspelt value in one line naming the option, before any library is
imported (the classes load without their library). Milliseconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters.smartnoise.adapter import SmartnoiseMWEM
from dpaudit.adapters.synthcity.adapter import (
    SynthcityAIM,
    SynthcityPATEGAN,
    SynthcityPrivBayes,
)

CASES = [
    (SmartnoiseMWEM, {"epsilon": 1.0}, "ranges"),
    (SynthcityPrivBayes, {"epsilon": 1.0}, "count_scale"),
    (SynthcityPrivBayes, {"epsilon": 1.0}, "column_domains"),
    (SynthcityAIM, {"epsilon": 1.0, "delta": 1e-5}, "column_domains"),
]


@pytest.mark.parametrize(("cls", "budget", "option"), CASES)
def test_a_misspelt_control_value_is_refused_in_one_line(
    cls: Any, budget: dict[str, Any], option: str
) -> None:
    with pytest.raises(AdapterInputError) as err:
        cls(**budget, **{option: "corected"})
    message = str(err.value)
    assert "\n" not in message
    assert f"`{option}`" in message and "library, corrected" in message
    assert "'corected'" in message


@pytest.mark.parametrize(("cls", "budget", "option"), CASES)
def test_the_default_is_the_library_as_shipped(
    cls: Any, budget: dict[str, Any], option: str
) -> None:
    assert getattr(cls(**budget), option) == "library"
    assert getattr(cls(**budget, **{option: "corrected"}), option) == "corrected"


def test_privbayes_domains_turn_the_records_schema_filter_off() -> None:
    """``column_domains=corrected`` sets ``strict`` false (the plug-in's schema
    filter reads the records) unless the user sets it."""
    assert SynthcityPrivBayes(epsilon=1.0).options == {}
    assert SynthcityPrivBayes(epsilon=1.0, column_domains="corrected").options == {
        "strict": False
    }
    assert SynthcityPrivBayes(
        epsilon=1.0, column_domains="corrected", strict=True
    ).options == {"strict": True}


def test_pategan_takes_the_public_encoder_route() -> None:
    """PATE-GAN takes ``preprocessing=public`` (the library's own ``encoder``
    argument, as DPGAN); PrivBayes and AIM still refuse it."""
    assert SynthcityPATEGAN(epsilon=1.0, preprocessing="public").preprocessing == (
        "public"
    )
    for cls in (SynthcityPrivBayes, SynthcityAIM):
        with pytest.raises(AdapterInputError, match="preprocessing=library"):
            cls(epsilon=1.0, preprocessing="public")
