"""The distinguishing game's soundness rules, the runner, the store and resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit import AuditConfig
from dpaudit.audit import run_audit as run_typed_audit
from dpaudit.audit.games import build_setup
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.stats import calibrated
from dpaudit.audit.stats.thresholds import select_threshold
from dpaudit.audit.storage.store import ResultStore
from dpaudit.errors import InvalidParameterError


def run_audit(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The audit's ``result.json`` document (the typed result's JSON form)."""
    return run_typed_audit(*args, **kwargs).to_json()


def rr(epsilon: float, **kw) -> AuditConfig:
    """A randomized-response audit (exact epsilon, no training: fast)."""
    base = dict(
        generator="randomized-response",
        epsilon=epsilon,
        rounds=100,
        batch_size=50,
        jobs=1,
        synthetic_rows=20,
        dataset="worst-case",
    )
    base.update(kw)
    return AuditConfig(**base)


# ---------------------------------------------------------------- rule 1, 4


def test_plan_splits_are_disjoint_and_balanced() -> None:
    plan = GamePlan.create(rounds=1000, seed=0)
    assert plan.n_rounds == 2000
    assert plan.bits.sum() == 1000
    idx = {s: set(plan.indices(s).tolist()) for s in ("train", "validation", "test")}
    assert not (
        idx["train"] & idx["validation"]
        or idx["train"] & idx["test"]
        or idx["validation"] & idx["test"]
    )
    assert sum(len(v) for v in idx.values()) == 2000
    assert plan.world_sizes("train") == (400, 400)
    assert plan.world_sizes("validation") == (200, 200)
    assert plan.world_sizes("test") == (400, 400)
    again = GamePlan.create(rounds=1000, seed=0)
    np.testing.assert_array_equal(plan.bits, again.bits)
    assert not np.array_equal(plan.bits, GamePlan.create(rounds=1000, seed=1).bits)


def test_round_streams_are_distinct_and_reproducible() -> None:
    plan = GamePlan.create(rounds=10, seed=3)
    seeds = [r.int_seed() for r in plan.round_rngs()]
    assert len(set(seeds)) == 20
    assert seeds == [r.int_seed() for r in plan.round_rngs()]
    attack = {r.int_seed() for r in plan.attack_rngs(6)}
    assert not attack & set(seeds)


# ---------------------------------------------------------------- rule 2, 3

PLUGIN = '''
import json
import pathlib

import pandas as pd

SEEN = pathlib.Path(__file__).with_name("seen.jsonl")

class SpyGenerator:
    """Records the domain it receives (in `seen.jsonl`: it runs in a foreign worker
    process); releases len(data) rows if asked to."""

    def __init__(self, *, epsilon, delta, leak_count=False, claim_delta=None):
        self.epsilon, self.delta, self.leak_count = epsilon, delta, leak_count
        self.claim_delta = delta if claim_delta is None else claim_delta

    def fit(self, data, *, domain, seed):
        with SEEN.open("a") as fh:
            fh.write(json.dumps(domain) + "\\n")
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.claim_delta,
                              "accountant": "spy"}
        return self

    def sample(self, n, *, seed):
        rows = len(self.data) if self.leak_count else n
        return self.data.sample(rows, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
'''


@pytest.fixture
def spy_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "spy_plugin.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("spy_plugin", None)
    return "spy_plugin:SpyGenerator"


def test_generator_gets_public_domain_and_fixed_release(
    spy_module: str, tmp_path: Path
) -> None:
    config = AuditConfig(generator=spy_module, rounds=5, jobs=1, attack="querybased")
    run_audit(config, out_dir=tmp_path / "a")
    seen = [
        json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()
    ]
    public = build_setup(config).domain.to_json()
    assert len(seen) == 10
    assert all(d == public for d in seen)
    leaky = replace(config, generator_options={"leak_count": True})
    with pytest.raises(InvalidParameterError, match="release size must be fixed"):
        run_audit(leaky, out_dir=tmp_path / "b")


# ------------------------------------------------------------------- rule 4


def test_threshold_chosen_on_validation_only(tmp_path: Path) -> None:
    result = run_audit(rr(2.0), out_dir=tmp_path)
    setup = build_setup(rr(2.0))
    attack = setup.make_attacks()["querybased"]
    with ResultStore(tmp_path) as store:
        plan = setup.plan
        attack.fit(
            store.features("querybased", plan.indices("train")),
            plan.bits[plan.indices("train")],
        )
        val = attack.score(store.features("querybased", plan.indices("validation")))
    threshold, direction = select_threshold(
        val, plan.bits[plan.indices("validation")], delta=1e-5
    )
    head = result["attacks"]["querybased"]
    assert (head["threshold"], head["direction"]) == (threshold, direction)


# ---------------------------------------------------------------- rule 5, 6


def test_result_schema_and_verdict(tmp_path: Path) -> None:
    result = run_audit(rr(1.0, attack="querybased"), out_dir=tmp_path)
    on_disk = json.loads((tmp_path / "result.json").read_text())
    assert on_disk["verdict"] == result["verdict"]
    for key in (
        "eps_emp",
        "eps_claimed",
        "eps_reference",
        "eps_max_attainable",
        "verdict",
        "auc",
        "counts",
        "config",
        "seed",
        "version",
        "attacks",
        "schema_version",
    ):
        assert key in on_disk
    assert set(on_disk["counts"]) == {"tp", "fp", "tn", "fn"}
    assert on_disk["eps_max_attainable"] == pytest.approx(
        calibrated.eps_max_attainable(40, 40, alpha=0.05, delta=1e-5)
    )
    expected = (
        "VIOLATION" if result["eps_emp"] > result["eps_claimed"] else "CONSISTENT"
    )
    assert result["verdict"] == expected


# -------------------------------------------------------------- calibration


@pytest.mark.slow
@pytest.mark.statistical
def test_calibration_does_not_cry_wolf(tmp_path: Path, seed: int) -> None:
    """Randomized response at epsilon_0 = 1 is exactly 1-DP. Each audit's eps_emp
    exceeds 1 with probability at most 0.05 (the estimator's confidence), so among 12
    independent audits the number of false alarms is stochastically below
    Binomial(12, 0.05); 4 or more happen with probability < 0.0023 = this test's
    failure probability."""
    alarms = 0
    for i in range(12):
        result = run_audit(
            rr(1.0, seed=1000 * seed + i, rounds=60), out_dir=tmp_path / str(i)
        )
        alarms += result["eps_emp"] > 1.0
    assert stats.binom.sf(3, 12, 0.05) < 0.0023
    assert alarms <= 3


@pytest.mark.statistical
def test_large_epsilon_reaches_attainable_maximum(tmp_path: Path, seed: int) -> None:
    """At epsilon_0 = 15 randomized response lies with probability 3.1e-7; an error
    in the 120 validation and test rounds happens with probability < 4e-5, so eps_emp
    equals the attainable maximum except with that probability. The maximum of 40 + 40
    test rounds is far below 15: no false alarm, and since no outcome of this audit
    could have refuted a claim of 15, the verdict is INCONCLUSIVE (saturated)."""
    result = run_audit(rr(15.0, seed=seed), out_dir=tmp_path)
    assert result["eps_emp"] == pytest.approx(result["eps_max_attainable"])
    assert result["auc"] == 1.0
    assert result["verdict"] == "INCONCLUSIVE"
    assert result["power"]["saturated"] is True
    # The attainable maximum grows like log(test rounds): refuting 15 would take
    # more than the search limit of 10 million rounds per world.
    assert result["power"]["rounds_needed"] is None


@pytest.mark.slow
def test_reference_pate_gan_worst_case_consistent(tmp_path: Path) -> None:
    config = AuditConfig(rounds=150, batch_size=150, jobs=1, device="cpu")
    result = run_audit(config, out_dir=tmp_path)
    assert result["verdict"] == "CONSISTENT"
    assert result["eps_claimed"] <= 1.0
    assert result["synthetic_rows"] == 100


@pytest.mark.slow
def test_leaky_variant_worst_case_violation(tmp_path: Path) -> None:
    config = AuditConfig(
        rounds=60, batch_size=120, jobs=1, device="cpu", bugs=("data_bounds",)
    )
    result = run_audit(config, out_dir=tmp_path)
    assert result["verdict"] == "VIOLATION"
    assert result["eps_reference"] is None


# ------------------------------------------------------------ store, resume


def test_existing_audit_is_never_overwritten(tmp_path: Path) -> None:
    run_audit(rr(1.0), out_dir=tmp_path)
    with pytest.raises(InvalidParameterError, match=r"different audit.*--force"):
        run_audit(rr(2.0), out_dir=tmp_path)
    with pytest.raises(InvalidParameterError, match="--resume"):
        run_audit(rr(1.0), out_dir=tmp_path)
    result = run_audit(rr(2.0), out_dir=tmp_path, force=True)
    assert result["eps_claimed"] == 2.0


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(InvalidParameterError, match="neither a known dataset"):
        run_audit(replace(rr(1.0), dataset="no-such-data"), out_dir=out)
    assert not out.exists()
    with pytest.raises(InvalidParameterError, match="unknown audit key"):
        AuditConfig.from_mapping({"roundz": 3})
    with pytest.raises(InvalidParameterError, match="`rounds` must be an integer >= 5"):
        AuditConfig(rounds=2)


def _strip(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "timing"}


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    """PATE-GAN trains whole training groups of 128 rounds (dpaudit.audit.games.execution):
    80 rounds per world are a batch of 128 models, committed, then one of 32, during
    which the audit is killed."""
    args = [
        "--rounds",
        "80",
        "--batch-size",
        "8",
        "--jobs",
        "1",
        "--device",
        "cpu",
        "--quiet",
        "--seed",
        "5",
    ]
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpaudit", "audit", *args, "--out", str(killed)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 240
    done = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        db = killed / "audit.sqlite"
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    done = conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if done >= 128:
                break
    assert proc.poll() is None, "the audit finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 128 <= done < 160
    assert not (killed / "result.json").exists()
    resumed = subprocess.run(
        [sys.executable, "-m", "dpaudit", "audit", "--resume", str(killed), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    clean = tmp_path / "clean"
    fresh = subprocess.run(
        [sys.executable, "-m", "dpaudit", "audit", *args, "--out", str(clean)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fresh.returncode == 0, fresh.stderr
    a = json.loads((killed / "result.json").read_text())
    b = json.loads((clean / "result.json").read_text())
    assert _strip(a) == _strip(b)


@pytest.mark.slow
def test_dask_backend_equals_loky(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = run_audit(
            rr(2.0, backend="dask", scheduler=cluster.scheduler_address),
            out_dir=tmp_path / "dask",
        )
    local = run_audit(rr(2.0), out_dir=tmp_path / "local")
    assert _strip(on_dask)["attacks"] == _strip(local)["attacks"]


def test_same_seed_same_result_in_one_process(tmp_path: Path) -> None:
    """Caches inside the runner must not make a second identical audit drift."""
    a = run_audit(rr(2.0), out_dir=tmp_path / "a")
    b = run_audit(rr(2.0), out_dir=tmp_path / "b")
    assert _strip(a) == _strip(b)
    c = run_audit(rr(2.0, seed=1), out_dir=tmp_path / "c")
    assert _strip(c)["attacks"] != _strip(a)["attacks"]


def test_judged_at_the_claimed_delta(spy_module: str, tmp_path: Path) -> None:
    """An implementation that claims a larger delta than asked is judged at its own."""
    config = AuditConfig(
        generator=spy_module, rounds=10, jobs=1, generator_options={"claim_delta": 0.2}
    )
    result = run_audit(config, out_dir=tmp_path)
    assert result["delta"] == 0.2
    assert result["delta_requested"] == 1e-5
    n0, n1 = (
        result["estimator"]["test_non_members"],
        result["estimator"]["test_members"],
    )
    assert result["eps_max_attainable"] == pytest.approx(
        calibrated.eps_max_attainable(
            n0, n1, alpha=result["estimator"]["alpha"], delta=0.2
        )
    )


# ------------------------------------------------------- trace from the audit


def _member_parameters(model: Any) -> list[Any]:
    """The trained parameters of one fitted PATE-GAN or G-PATE model."""
    generator = getattr(model, "generator_", None)
    if generator is not None:  # PATE-GAN: member `index` of the batched generator
        return [
            p[generator.index].detach().clone() for p in generator.ensemble.parameters()
        ]
    return [p.detach().clone() for p in model._fitted.generator.parameters()]


@pytest.mark.parametrize(
    ("generator", "options"),
    [
        ("pategan", {"max_iterations": 3}),
        ("gpate", {"max_iterations": 3, "batch_size": 8}),
    ],
)
def test_trace_switch_changes_no_model(generator: str, options: dict[str, Any]) -> None:
    """The trace switch only records: with it on, a batch trains the same models
    (parameters), releases the same rows and makes the same claims, so the audit may
    keep the trace of one of its own rounds (no extra fit)."""
    import functools

    import pandas as pd
    import torch

    from dpaudit.audit.games.releases import train_and_release
    from dpaudit.audit.games.two_world import rounds

    setup = build_setup(
        AuditConfig(
            generator=generator, rounds=5, device="cpu", generator_options=options
        )
    )
    picked = [rounds.trace_round(setup), int(np.flatnonzero(setup.plan.bits == 0)[0])]
    assert picked[0] is not None and setup.plan.bits[picked[0]] == 1
    data = [setup.with_target if setup.plan.bits[r] else setup.without for r in picked]
    streams = [setup.plan.round_rngs()[r] for r in picked]
    runs = {}
    for traced in (False, True):
        make = (
            functools.partial(rounds._traced_generator, setup)
            if traced
            else setup.make_generator
        )
        runs[traced] = train_and_release(
            make,
            data,
            streams,
            domain=setup.domain,
            rows=setup.synthetic_rows,
            public=setup.public_streams(),
            name=generator,
        )
    (plain, plain_release), (traced, traced_release) = runs[False], runs[True]
    pd.testing.assert_frame_equal(plain_release.table, traced_release.table)
    for a, b in zip(plain, traced):
        pa, pb = _member_parameters(a), _member_parameters(b)
        assert len(pa) == len(pb) > 0
        assert all(torch.equal(x, y) for x, y in zip(pa, pb))
        ca = rounds.compact_claim(a.privacy_claim_.to_json())
        cb = rounds.compact_claim(b.privacy_claim_.to_json())
        if generator == "gpate":
            # G-PATE's switch adds the records each teacher holds (public: the
            # teacher assignment), and only that.
            assert "records_seen" not in ca["trace"]
            cb["trace"].pop("records_seen")
        assert ca == cb
    assert "records_seen" in traced[0].privacy_claim_.trace
    assert len(traced[0].privacy_claim_.trace["epsilon"]) >= 1


def _without_wall(claim: dict[str, Any]) -> dict[str, Any]:
    return {
        **claim,
        "trace": {k: v for k, v in claim["trace"].items() if k != "wall_seconds"},
    }


def test_audit_trace_is_its_first_member_round_and_kept_on_resume(
    tmp_path: Path,
) -> None:
    from dpaudit.audit.games.releases import compact_claim
    from dpaudit.audit.games.two_world.rounds import trace_round

    config = AuditConfig(
        rounds=5,
        jobs=1,
        batch_size=3,
        device="cpu",
        generator_options={"max_iterations": 3},
    )
    out = tmp_path / "a"
    first = run_audit(config, out_dir=out)
    traced = json.loads((out / "trace" / "trace.json").read_text())
    r = trace_round(build_setup(config))
    with ResultStore(out) as store:
        stored = store.claims()[r]
    assert compact_claim(_without_wall(traced)) == _without_wall(stored)
    assert len(traced["trace"]["epsilon"]) == traced["iterations"]
    assert (out / "trace" / "losses.csv").read_text().count("\n") > 1
    # Resumed: the trace written is kept (not trained again).
    (out / "trace" / "trace.json").write_text(json.dumps({**traced, "mark": 1}))
    again = run_audit(config, out_dir=out, resume=True)
    assert json.loads((out / "trace" / "trace.json").read_text())["mark"] == 1
    # A store without its trace (stopped between the commit and the trace): the
    # round is trained again alone and gives the same trace; nothing else changes.
    import shutil

    shutil.rmtree(out / "trace")
    third = run_audit(config, out_dir=out, resume=True)
    assert _without_wall(
        json.loads((out / "trace" / "trace.json").read_text())
    ) == _without_wall(traced)
    for doc in (again, third):
        assert (doc["eps_emp"], doc["auc"]) == (first["eps_emp"], first["auc"])
    # The store records the trace it wrote; --force replaces that trace (its own)
    # with the new audit's.
    from dpaudit.audit.storage.traces import trace_digest

    with ResultStore(out) as store:
        assert store.get_meta("trace") == {"digest": trace_digest(out / "trace")}
    run_audit(replace(config, seed=1), out_dir=out, force=True)
    replaced = json.loads((out / "trace" / "trace.json").read_text())
    assert _without_wall(replaced) != _without_wall(traced)
    with ResultStore(out) as store:
        assert store.get_meta("trace") == {"digest": trace_digest(out / "trace")}


def test_threads_processes_and_one_process_give_one_result(tmp_path: Path) -> None:
    """Every round depends on its index and the seed alone: the backend, the number
    of jobs and the batch size change nothing in the result."""
    base = AuditConfig(
        rounds=6,
        device="cpu",
        variant="original",
        generator_options={"max_iterations": 2},
    )
    results = [
        run_audit(replace(base, **kw), out_dir=tmp_path / str(i))
        for i, kw in enumerate(
            [
                {"backend": "threading", "jobs": 2, "batch_size": 2},
                {"jobs": 1, "batch_size": 12},
            ]
        )
    ]
    keep = ("eps_emp", "auc", "counts", "attacks", "claim")
    assert AuditConfig().backend == "threading"
    assert [{k: r[k] for k in keep} for r in results[1:]] == [
        {k: results[0][k] for k in keep}
    ] * (len(results) - 1)
