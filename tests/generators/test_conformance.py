"""`dpaudit check-generator`: the plug-in contract's checks pass every built-in
generator and example plug-in, fail a plug-in that breaks one rule (naming the
check), refuse bad input with exit 2, and run on every adapter whose library
environment is present (skipped, with the reason, where it is not)."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import norm

from dpaudit.cli import main
from dpaudit.generators.base import PrivacyClaim, RdpCurve
from dpaudit.generators.conformance import (
    CHECKS,
    Checker,
    Subject,
    check_claim_profile,
    check_generator,
    implied_epsilon,
)
from dpaudit.generators.foreign import pool

REPO = Path(__file__).resolve().parents[2]
HERE = "conformance_plugins"  # tests/generators/conformance_plugins.py


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The bad plug-ins and examples/ importable here and in the workers."""
    paths = [str(Path(__file__).parent), str(REPO / "examples"), str(REPO)]
    for path in paths:
        monkeypatch.syspath_prepend(path)
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([*paths, *filter(None, [old])]))
    yield
    pool.stop_all()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["check-generator", *argv])
    out = capsys.readouterr()
    return code, out.out.splitlines() + out.err.splitlines()


def _failed(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("failed")]


# The built-in toys and the example plug-ins: every check passes (or is skipped).
EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("randomized-response", {}),
    ("copy", {}),
    ("dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse", {}),
    ("dpaudit.generators.toy_plugins:CopyData", {}),
    ("dpaudit.generators.toy_plugins:ConstantRelease", {}),
    ("dpaudit.generators.toy_plugins:BusyUniform", {"work": 1000}),
    ("dpaudit.generators.toy_plugins:NoisyMarginals", {}),
    ("dpaudit.generators.zoo:ExactRandomizedResponse", {}),
    ("dpaudit.generators.zoo:ExactLaplace", {}),
    ("dpaudit.generators.zoo:ExactGaussian", {}),
    ("dpaudit.generators.leaky_plugins:SubsampleCopy", {}),
    ("laplace_marginals:LaplaceMarginals", {}),
    (f"{HERE}:UniformRows", {}),
]


def test_passes_the_builtin_toys_and_example_plugins() -> None:
    """Through the library (one worker for all the plug-ins: the command starts
    and stops its own per run, a second each on this machine)."""
    for name, options in EXAMPLES:
        results = check_generator(name, options=options)
        assert [r.check for r in results] == [n for n, _ in CHECKS]
        failed = [r.line() for r in results if r.status == "failed"]
        assert failed == [], (name, failed)


def test_the_command_prints_a_line_per_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, lines = _run(capsys, "dpaudit.generators.toy_plugins:NoisyMarginals")
    assert code == 0, lines
    assert len(lines) == len(CHECKS) + 1, lines
    assert [line.split()[1].rstrip(":") for line in lines[:-1]] == [
        n for n, _ in CHECKS
    ]
    assert lines[-1].startswith("dpaudit.generators.toy_plugins:NoisyMarginals: ")
    assert " 0 failed, " in lines[-1] and "on worst-case (4 rows)" in lines[-1]
    assert any(
        x.startswith("passed   transcript: 3 measurement records") for x in lines
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pategan", "gpate"])
def test_passes_the_builtin_networks(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """PATE-GAN and G-PATE at 3 iterations (CHECK_ITERATIONS): 1.9 s and 0.6 s of
    checks measured in pytest, 38 s and 6 s from the command line at load 15 on two
    cores (torch's start included)."""
    code, lines = _run(capsys, name)
    assert _failed(lines) == [], lines
    assert code == 0


def test_continuous_worst_case() -> None:
    results = check_generator(
        "laplace_marginals:LaplaceMarginals", dataset="worst-case-continuous"
    )
    assert [r for r in results if r.status == "failed"] == []


BAD = [
    ("IgnoresSeed", "seeds-matter", "deterministic function of the data"),
    ("ChangesInput", "input-unchanged", "values of column 'a'"),
    ("WrongRows", "sample-rows", "returned 5 rows, not 4"),
    ("OutOfDomain", "sample-in-domain", "outside the public domain"),
]


@pytest.mark.parametrize(("cls", "check", "words"), BAD, ids=[b[0] for b in BAD])
def test_fails_a_plugin_that_breaks_one_rule(
    capsys: pytest.CaptureFixture[str], cls: str, check: str, words: str
) -> None:
    code, lines = _run(capsys, f"{HERE}:{cls}")
    assert code == 1
    failed = [line for line in _failed(lines) if line.startswith(f"failed   {check}:")]
    assert failed and words in failed[0], lines
    assert f"1 failed ({check})" in lines[-1] or f"({check}" in lines[-1], lines[-1]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["nosuch"], "unknown generator 'nosuch'"),
        (["nosuch_module:Gen"], "cannot import module 'nosuch_module'"),
        (["copy", "--python", sys.executable], "`--python` must be unset"),
        ([f"{HERE}:UniformRows", "--option", "bad=1"], "takes no option 'bad'"),
        (["copy", "--epsilon", "-1"], "--epsilon"),
        (["copy", "--dataset", "nosuch.csv"], "nosuch.csv"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    code = main(["check-generator", *argv])
    out = capsys.readouterr()
    assert code == 2
    assert out.out == ""
    assert len(out.err.strip().splitlines()) == 1 and words in out.err, out.err


def test_library_use_names_every_check() -> None:
    results = check_generator(f"{HERE}:WrongRows")
    assert [r.check for r in results] == [name for name, _ in CHECKS]
    by_name = {r.check: r for r in results}
    assert by_name["sample-rows"].status == "failed"
    assert by_name["same-seeds"].status == "passed"


def _profile_result(claim: PrivacyClaim) -> tuple[str, str]:
    class Fitted:
        def first(self) -> Any:
            return type("F", (), {"claim": claim})()

    checker: Any = Fitted()
    result = Checker.run(checker, "claim-profile", check_claim_profile)
    return result.status, result.reason


def test_claim_profile_consistency() -> None:
    """mu-GDP at mu 0.5 gives epsilon 1.9931 at delta 1e-5 (Dong, Roth, Su 2022,
    Cor. 2.13): a claim of 2.0 follows from it, 1.5 passes as a tighter accountant's,
    0.9 (less than half) fails; a
    sigma-for-mu slip (mu = 4, epsilon from mu 0.25) fails; a pure claim is skipped."""
    mu = 0.5
    eps = implied_epsilon(
        PrivacyClaim(epsilon=0.0, delta=1e-5, accountant="x", gdp_mu=mu)
    )["gdp"]
    # mu-GDP's delta at that epsilon, written out with scipy's normal CDF.
    delta = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert math.isclose(delta, 1e-5, rel_tol=1e-6)
    assert math.isclose(eps, 1.9931, abs_tol=1e-4)
    status, _ = _profile_result(
        PrivacyClaim(epsilon=2.0, delta=1e-5, accountant="x", gdp_mu=mu)
    )
    assert status == "passed"
    # 1.5 is 25% below 1.9931: a tighter accountant's point, passed with a note;
    # 0.9 is less than half of it: not one accounting.
    status, reason = _profile_result(
        PrivacyClaim(epsilon=1.5, delta=1e-5, accountant="x", gdp_mu=mu)
    )
    assert status == "passed" and "25% below" in reason, reason
    status, reason = _profile_result(
        PrivacyClaim(epsilon=0.9, delta=1e-5, accountant="x", gdp_mu=mu)
    )
    assert status == "failed" and "less than half" in reason, reason
    status, _ = _profile_result(
        PrivacyClaim(epsilon=1.0, delta=1e-5, accountant="x", gdp_mu=4.0)
    )
    assert status == "failed"
    # zCDP rho = mu^2 / 2 implies a larger epsilon than mu-GDP: the smaller decides.
    status, _ = _profile_result(
        PrivacyClaim(
            epsilon=2.0, delta=1e-5, accountant="x", gdp_mu=mu, zcdp_rho=mu**2 / 2
        )
    )
    assert status == "passed"
    rdp = RdpCurve(orders=(2.0, 8.0), epsilons=(0.1, 0.4))
    status, reason = _profile_result(
        PrivacyClaim(epsilon=1.0, delta=0.0, accountant="x", rdp=rdp)
    )
    assert status == "skipped" and "pure" in reason


def test_subject_caps_iterations_unless_set() -> None:
    from dpaudit.data import load_dataset

    subject = Subject(
        name="copy",
        epsilon=1.0,
        delta=1e-5,
        options={},
        dataset=load_dataset("worst-case"),
    )
    assert subject.spec.audit.iteration_option is None  # nothing to cap
    assert subject.build(4) is not None


def _adapter_cases() -> list[Any]:
    from dpaudit.generators.registry import foreign_adapters

    return [pytest.param(name, id=name) for name in sorted(foreign_adapters())]


# Options that make each adapter's fits take seconds (the contract, not the model),
# and the rows of libraries with a minimum table size (docs/adapters.md).
QUICK: dict[str, tuple[str, ...]] = {
    "smartnoise-pategan": ("--dataset-rows", "1001"),
    "smartnoise-pacsynth": ("--dataset-rows", "601"),
    "smartnoise-patectgan": ("--option", "epochs=1", "--option", "batch_size=50"),
    "smartnoise-dpctgan": ("--option", "epochs=1", "--option", "batch_size=50"),
    "smartnoise-dpgan": ("--option", "epochs=1", "--option", "batch_size=50"),
    "synthcity-pategan": (
        *("--option", "n_iter=1", "--option", "n_teachers=2"),
        *("--option", "teacher_template=linear"),
    ),
    "synthcity-dpgan": (
        *("--option", "n_iter=1", "--option", "batch_size=50"),
        *("--option", "generator_n_units_hidden=20"),
        *("--option", "discriminator_n_units_hidden=20"),
    ),
    "dpmm-mst": ("--option", "n_iters=100"),
    "dpmm-aim": ("--option", "n_iters=100"),
    "dpmm-privbayes": ("--option", "n_iters=100"),
}

#: Adapters whose library draws noise nothing seeds (docs/adapters.md, "Seeding":
#: OpenDP's CSPRNG, Opacus reseeding torch from os.urandom, pac-synth's Rust
#: generator): two fits with the same seeds may differ, and `same-seeds` then says
#: so (smartnoise's MWEM released equal tables on this table: its unseeded noise
#: did not reach them).
UNSEEDABLE = {
    "smartnoise-mst",
    "smartnoise-aim",
    "smartnoise-mwem",
    "smartnoise-dpctgan",
    "smartnoise-dpgan",
    "smartnoise-pacsynth",
    "opendp-mst",
    "opendp-aim",
    "dpmm-mst",
    "dpmm-aim",
    "dpmm-privbayes",
}


#: pac-synth panics now and then on the 600-row worst case (docs/adapters.md: on
#: small tables); over the checks' 25 fits one in three runs met it here.
PAC_SYNTH_PANIC = "PanicException: adding noise to number of records"

#: Library defects the checks find (documented): synthcity's PrivBayes states
#: Laplace noise of scale 0 once its degree reaches the number of columns, as on the
#: 200-row worst case (docs/findings.md 11): `transcript` refuses the record.
KNOWN: dict[str, set[str]] = {"synthcity-privbayes": {"transcript"}}


@pytest.mark.slow
@pytest.mark.parametrize("name", _adapter_cases())
def test_runs_on_every_adapter_whose_environment_is_present(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Every adapter, in its library's environment (``dpaudit env LIBRARY``), on
    the worst case of 200 rows (more where the library needs them): the documented
    defects of :data:`KNOWN` fail, no other check does but `same-seeds` for a
    library whose noise cannot be seeded. 20 s to 5 minutes per adapter on two busy
    cores."""
    from dpaudit.adapters.envs import env_python
    from dpaudit.generators.registry import foreign_adapters

    # dpaudit.adapters.LIBRARY[.module]:Class
    library = foreign_adapters()[name].partition(":")[0].split(".")[2]
    python = env_python(library)
    if not python.exists():
        pytest.skip(f"`dpaudit env {library}` has not built {python}")
    extra = QUICK.get(name, ())
    rows = () if "--dataset-rows" in extra else ("--dataset-rows", "200")
    code, lines = _run(capsys, name, "--python", str(python), *rows, *extra)
    failed = {
        line.split()[1].rstrip(":")
        for line in _failed(lines)
        if not (name == "smartnoise-pacsynth" and PAC_SYNTH_PANIC in line)
    }
    known = KNOWN.get(name, set())
    allowed = known | ({"same-seeds"} if name in UNSEEDABLE else set())
    assert known <= failed <= allowed, lines
    assert code == (1 if _failed(lines) else 0)


def test_the_worker_names_what_fit_changed() -> None:
    """The worker's comparison after ``fit`` (``check_input``): columns, rows,
    dtypes, values, and the domain dict."""
    import json

    import pandas as pd

    from dpaudit.generators.foreign.worker import input_change

    original = pd.DataFrame({"a": [0, 1], "b": ["x", "y"]})
    domain = {"columns": [{"name": "a", "kind": "binary"}]}
    before = json.dumps(domain, sort_keys=True)
    assert input_change(original, original.copy(), before, domain) is None
    changed = original.copy()
    changed.loc[1, "b"] = "z"
    assert input_change(original, changed, before, domain) == "values of column 'b'"
    assert "dtype of column 'a'" in str(
        input_change(original, original.astype({"a": float}), before, domain)
    )
    assert "rows" in str(input_change(original, original.iloc[:1], before, domain))
    assert "columns" in str(
        input_change(original, original.drop(columns="b"), before, domain)
    )
    domain["columns"].append({"name": "b", "kind": "binary"})
    assert input_change(original, original.copy(), before, domain) == (
        "the `domain` dict"
    )
