"""The exact test's calibrations kept between processes (dpaudit.audit.stats.memo,
dpaudit.audit.storage.exactcache): what is read back equals what is computed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from dpaudit.audit.stats import calibrated, families, levels, memo
from dpaudit.audit.stats.profile import ClaimedProfile
from dpaudit.audit.storage import exactcache
from dpaudit.audit.storage.exactcache import DiskStore

CLAIM = ClaimedProfile(
    epsilon=1.0,
    delta=1e-5,
    gdp_mu=0.3,
    rdp_orders=(2.0, 4.0, 8.0),
    rdp_epsilons=(0.09, 0.2, 0.45),
)
N = 60


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[DiskStore]:
    calibrated.clear_caches()
    store = DiskStore(tmp_path / "cache")
    previous = memo.use_store(store)
    yield store
    memo.use_store(previous)
    calibrated.clear_caches()


def _figures() -> dict[str, object]:
    """Everything the audit reads from the calibrations, on this claim and size."""
    out: dict[str, object] = {}
    for kind in ("eps", "mu"):
        f = families.family(kind, N, N, alpha=0.025, delta=1e-5)
        out[kind] = (f.values.tolist(), f.levels.tolist(), f.counts.tolist())
    found = calibrated._claim_test(CLAIM, N, N, 0.025, "clopper_pearson")
    assert found is not None
    out["claim"] = (found[0], found[1].tolist())
    r = calibrated.judge(3, N, 20, N, delta=1e-5, alpha=0.025, profile=CLAIM)
    out["judge"] = (r.eps_emp, r.mu_emp, r.point.ratio, r.eps_max_attainable)
    return out


def test_read_back_equals_computed_and_computes_nothing(
    disk: DiskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = _figures()
    files = sorted(disk.directory.glob("*.npz"))
    assert len(files) >= 3  # two families and the claim's test
    calibrated.clear_caches()

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed a kept calibration")

    monkeypatch.setattr(levels, "largest_level", fail)
    assert _figures() == computed


def test_a_damaged_or_foreign_file_is_recomputed(disk: DiskStore) -> None:
    computed = _figures()
    files = sorted(disk.directory.glob("*.npz"))
    files[0].write_bytes(b"not an npz")
    # Arrays of the wrong shape under another key: refused by the shape checks.
    for path in files[1:]:
        np.savez(path, values=np.zeros(3), levels=np.zeros(2, np.int64))
    calibrated.clear_caches()
    assert _figures() == computed


def test_the_code_digest_files_results_anew(
    disk: DiskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _figures()
    before = {p.name for p in disk.directory.glob("*.npz")}
    monkeypatch.setattr(exactcache, "code_digest", lambda: "another version")
    calibrated.clear_caches()
    _figures()
    after = {p.name for p in disk.directory.glob("*.npz")}
    assert before and len(after) == 2 * len(before)


def test_the_folder_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(exactcache.CACHE_VARIABLE, "off")
    assert exactcache.cache_dir() is None
    monkeypatch.setenv(exactcache.CACHE_VARIABLE, "/some/where")
    assert exactcache.cache_dir() == Path("/some/where")
    monkeypatch.delenv(exactcache.CACHE_VARIABLE)
    assert exactcache.cache_dir() == Path.home() / ".cache" / "dpaudit" / "exact"


def test_an_audit_with_and_without_the_cache_writes_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three runs of one small audit: no cache, filling one, reading it."""
    from dpaudit.audit import AuditConfig, run_audit

    config = AuditConfig(rounds=40, seed=3, attack="moments")
    outcomes = []
    for i, where in enumerate(("off", str(tmp_path / "c"), str(tmp_path / "c"))):
        monkeypatch.setenv(exactcache.CACHE_VARIABLE, where)
        calibrated.clear_caches()
        result = run_audit(config, out_dir=tmp_path / f"o{i}").to_json()
        result.pop("timing", None)
        outcomes.append(json.dumps(result, sort_keys=True))
    # run_audit restored the store it found (none): nothing stays installed.
    assert memo.use_store(None) is None
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert any((tmp_path / "c").glob("*.npz"))


def _forge(directory: Path, shift: int) -> int:
    """Moves every kept level by ``shift`` (the family's last one, its end, too) in
    every file of ``directory``, the files' shapes and dtypes kept; returns how many
    files it forged."""
    forged = 0
    for path in sorted(directory.glob("*.npz")):
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in data.files}
        for name, value in arrays.items():
            arrays[name] = (value + shift).astype(np.int64)
        np.savez(path, **arrays)
        forged += 1
    return forged


@pytest.mark.parametrize("shift", [-1, 1, 10_000])
def test_forged_levels_are_checked_and_recomputed(disk: DiskStore, shift: int) -> None:
    """A level read back is used only where it is the search's answer: levels one
    below (a weaker test), one above (a test over its size) or out of range are all
    found out, recomputed, and the files rewritten with the true levels."""
    computed = _figures()
    true = {p.name: dict(np.load(p)) for p in disk.directory.glob("*.npz")}
    assert _forge(disk.directory, shift) == len(true) >= 3
    calibrated.clear_caches()
    assert _figures() == computed
    for path in disk.directory.glob("*.npz"):
        again = dict(np.load(path))
        assert again.keys() == true[path.name].keys()
        for name, value in again.items():
            assert np.array_equal(value, true[path.name][name]), path.name


def _values(tree: object, key: str) -> list[object]:
    """Every value under ``key`` anywhere in a JSON tree, in order."""
    if isinstance(tree, dict):
        here = [tree[key]] if key in tree else []
        return here + [v for x in tree.values() for v in _values(x, key)]
    if isinstance(tree, list):
        return [v for x in tree for v in _values(x, key)]
    return []


@pytest.mark.slow
def test_forging_every_level_leaves_an_audit_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An audit of a claim with a profile and one of the lines alone, each run on a
    fresh cache, then with every level in the cache forged (one above: tests over
    their size, the forgery that would raise false alarms): the same verdict,
    eps_emp and mu_emp (the whole result.json but its timing)."""
    from dpaudit.audit import AuditConfig, run_audit

    monkeypatch.setenv(exactcache.CACHE_VARIABLE, str(tmp_path / "c"))
    configs = {
        name: AuditConfig(
            generator="dpaudit.generators.zoo:ExactGaussian",
            epsilon=2.5,
            delta=1e-5,
            rounds=20,
            seed=5,
            attack="moments",
            generator_options={"true_epsilon": 4.0, "profile": profile},
        )
        for name, profile in (("profile", "full"), ("lines", "none"))
    }
    for name, config in configs.items():
        outcomes = []
        for i in range(2):
            calibrated.clear_caches()
            if i:
                assert _forge(tmp_path / "c", 1) >= 3
            result = run_audit(config, out_dir=tmp_path / f"{name}{i}").to_json()
            result.pop("timing", None)
            outcomes.append(result)
        first, forged = outcomes
        assert first["verdict"] == forged["verdict"]
        assert first["eps_emp"] == forged["eps_emp"]
        assert _values(first, "mu_emp") == _values(forged, "mu_emp")
        assert _values(first, "mu_emp")  # the figure is there to compare
        assert json.dumps(first, sort_keys=True) == json.dumps(forged, sort_keys=True)


def test_the_code_digest_is_of_the_modules_as_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The digest follows the code in memory, not the files: a function or a constant
    of a loaded statistics module replaced changes it; the files are not read."""
    digest = exactcache.code_digest.__wrapped__
    before = digest()
    monkeypatch.setattr(Path, "read_bytes", lambda self: b"")
    assert digest() == before  # the files are not what it reads
    monkeypatch.setattr(families, "STEPS", {"eps": 0.01, "mu": 0.02})
    changed = digest()
    assert changed != before
    monkeypatch.setattr(levels, "is_largest_level", lambda *a, **k: (True, None))
    assert digest() not in {before, changed}
