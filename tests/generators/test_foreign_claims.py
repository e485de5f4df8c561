"""A plug-in's extra claim fields are kept: ``iterations`` in
:attr:`PrivacyClaim.iterations`, every other JSON key in :attr:`PrivacyClaim.extra`
(stored with each round); a key whose value is not JSON is refused in one line."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage.store import ResultStore
from dpaudit.cli import main
from dpaudit.errors import PluginError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.plugins import check_claim

REPO = Path(__file__).resolve().parents[2]

PLUGIN = """
class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {{"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "own", {extra}}}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
"""


def test_extra_keys_and_iterations_are_kept() -> None:
    claim = check_claim(
        {
            "epsilon": 1,
            "delta": 0,
            "accountant": "rdp",
            "iterations": 7,
            "final_epsilon": 1.0074,
            "settings": {"teachers": [2, 3]},
        },
        "my:Gen",
    )
    assert claim.iterations == 7
    assert dict(claim.extra) == {
        "final_epsilon": 1.0074,
        "settings": {"teachers": [2, 3]},
    }
    again = PrivacyClaim.from_json(claim.to_json())
    assert again == claim and again.to_json()["extra"] == dict(claim.extra)
    # A claim stored before the field existed reads as no extra keys.
    old = {k: v for k, v in claim.to_json().items() if k != "extra"}
    assert PrivacyClaim.from_json(old).extra == {}


@pytest.mark.parametrize(
    ("claim", "words"),
    [
        (
            {"epsilon": 1, "model": object()},
            "`privacy_claim['model']` must be a JSON value",
        ),
        (
            {"epsilon": 1, "loss": math.nan},
            "`privacy_claim['loss']` must be a JSON value",
        ),
        ({"epsilon": 1, 3: "x"}, "`privacy_claim[3]` must be a JSON value"),
        (
            {"epsilon": 1, "iterations": 2.5},
            "`privacy_claim['iterations']` must be an integer",
        ),
    ],
)
def test_values_that_are_not_json_are_refused(claim, words: str) -> None:
    with pytest.raises(PluginError, match="generator 'my:Gen'") as info:
        check_claim(claim, "my:Gen")
    assert words in str(info.value)


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    return tmp_path


def test_an_audit_stores_the_extra_keys(plugin_path: Path) -> None:
    (plugin_path / "extra_claim.py").write_text(
        PLUGIN.format(extra='"iterations": 12, "final_epsilon": 1.0074')
    )
    out = plugin_path / "audit"
    run_audit(
        AuditConfig(generator="extra_claim:Gen", rounds=5, attack="querybased", jobs=1),
        out_dir=out,
    )
    with ResultStore(out) as store:
        claims = store.claims()
    assert len(claims) == 10
    for claim in claims.values():
        extra = dict(claim["extra"])
        # The claim is the plug-in's alone (the worker's Python is the result's).
        assert claim["iterations"] == 12 and extra == {"final_epsilon": 1.0074}


def test_a_claim_that_cannot_cross_is_one_line(plugin_path: Path, capsys) -> None:
    (plugin_path / "object_claim.py").write_text(
        PLUGIN.format(extra='"model": object()')
    )
    code = main(
        [
            "audit",
            "--generator",
            "object_claim:Gen",
            "--rounds",
            "5",
            "--jobs",
            "1",
            "--attack",
            "querybased",
            "--quiet",
            "--out",
            str(plugin_path / "a"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "object_claim:Gen" in err and "`privacy_claim['model']`" in err
    assert "Got a object" in err
