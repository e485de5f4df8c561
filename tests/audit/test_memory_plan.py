"""The memory plan (dpaudit/audit/games/memory.py): an audit whose estimated peak exceeds
the limit is refused before anything is written; normal audits are not.

The refusals pass ``--max-memory`` so that they do not depend on this machine's free
memory (each estimate is far above it: 80 GiB, 2 TiB, 22 TiB; without it the limit is
``MemAvailable``, tested on a file below). The subprocess timeout is generous, a guard
against a hang, not a claim about speed (benchmarks/memory_plan.py measures that).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games import memory
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.model_memory import ensemble_bytes

REPO = Path(__file__).resolve().parents[2]


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpaudit", "audit", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


def _assert_refused(run: subprocess.CompletedProcess[str], cwd: Path, *words: str):
    before = sorted(p.name for p in cwd.iterdir())
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert not (cwd / "out").exists()
    assert sorted(p.name for p in cwd.iterdir()) == before
    return lines[0]


@pytest.mark.slow
def test_a_million_rows_are_refused(tmp_path: Path) -> None:
    """PATE-GAN on 1e6 rows, one of them the target (|D u {target}| = 1e6 rows,
    7,999 teachers): the least batch of 128 models needs tens of GiB; refused
    naming the table and the limit."""
    values = np.random.default_rng(0).integers(0, 10, size=(1_000_000, 3))
    np.savetxt(
        tmp_path / "big.csv",
        values,
        fmt="%d",
        delimiter=",",
        header="a,b,c",
        comments="",
    )
    columns = [{"name": c, "kind": "integer", "lower": 0, "upper": 9} for c in "abc"]
    (tmp_path / "big.json").write_text(json.dumps({"columns": columns}))
    run = _cli(
        tmp_path,
        *("--dataset", "big.csv", "--domain", "big.json", "--target", "0"),
        *("--max-memory", "8192", "--out", "out", "--quiet"),
    )
    _assert_refused(run, tmp_path, "`--dataset`", "1000000 rows", "8.0 GiB")


@pytest.mark.slow
def test_a_billion_rounds_in_a_toml_are_refused(tmp_path: Path) -> None:
    (tmp_path / "audit.toml").write_text("[audit]\nrounds = 1000000000\n")
    run = _cli(
        tmp_path,
        *("--config", "audit.toml", "--max-memory", "8192", "--out", "out"),
    )
    _assert_refused(run, tmp_path, "`rounds` = 1000000000", "--max-memory")


@pytest.mark.slow
def test_ten_thousand_categories_are_refused(tmp_path: Path) -> None:
    categories = [f"c{i}" for i in range(10_000)]
    rows = "".join(f"c{i},{i % 5}\n" for i in range(200))
    (tmp_path / "cats.csv").write_text("x,y\n" + rows)
    columns = [
        {"name": "x", "kind": "categorical", "categories": categories},
        {"name": "y", "kind": "integer", "lower": 0, "upper": 4},
    ]
    (tmp_path / "cats.json").write_text(json.dumps({"columns": columns}))
    run = _cli(
        tmp_path,
        *("--dataset", "cats.csv", "--domain", "cats.json", "--target", "0"),
        *("--max-memory", "8192", "--out", "out"),
    )
    _assert_refused(run, tmp_path, "`--domain`", "encoded width 10001")


@pytest.mark.slow
def test_a_small_audit_runs_under_a_small_limit(tmp_path: Path) -> None:
    """A normal audit (40 rounds of randomized response) fits 2 GiB: it runs."""
    run = _cli(
        tmp_path,
        *("--generator", "randomized-response", "--rounds", "40", "--jobs", "1"),
        *("--synthetic-rows", "20", "--max-memory", "2048", "--out", "out"),
        "--quiet",
    )
    assert run.returncode != 2, run.stderr
    assert (tmp_path / "out" / "result.json").is_file()


def test_the_default_audit_is_planned_under_a_gib() -> None:
    """The default audit (worst case, PATE-GAN, 1,000 rounds) is planned at well under
    1 GiB (measured peak: about 400 MiB) and passes the check on this machine."""
    plan = memory.plan_memory(AuditConfig())
    assert plan.total < 2**30
    assert memory.check_memory(AuditConfig()) is not None or (
        memory.memory_limit(AuditConfig()) is None
    )


def test_a_real_table_audit_is_not_refused_at_a_modest_limit() -> None:
    """Cervical Cancer (858 rows), PATE-GAN, 50 rounds: planned under 1 GiB, so a
    2 GiB limit passes; a 300 MiB limit (below the interpreter alone) refuses."""
    config = AuditConfig(dataset="cervical_cancer", target=0, rounds=50)
    plan = memory.plan_memory(config)
    assert plan.total < 2**30
    assert memory.check_memory(replace(config, max_memory=2048)) is not None
    with pytest.raises(InvalidParameterError, match="--max-memory"):
        memory.check_memory(replace(config, max_memory=300))


def test_rounds_are_refused_before_the_table_is_read(monkeypatch) -> None:
    """In process: a billion rounds are refused from the configuration alone."""

    def no_table(*args: object, **kwargs: object) -> None:
        raise AssertionError("the table was read")

    monkeypatch.setattr(memory, "plan_memory", no_table)
    with pytest.raises(InvalidParameterError, match="`rounds` = 1000000000") as err:
        memory.check_memory(AuditConfig(rounds=1_000_000_000, max_memory=8192))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"synthetic_rows": 10**12}, "`synthetic_rows` = 1000000000000"),
        (
            {
                "target": "auto",
                "dataset": "cervical_cancer",
                "selection_rounds": 10**12,
            },
            "`selection_rounds` = 1000000000000",
        ),
    ],
)
def test_the_refusal_names_the_input_that_is_too_large(
    monkeypatch, settings: dict[str, object], named: str
) -> None:
    """The early refusal names the setting that drives the estimate (a trillion
    synthetic rows once blamed the domain; a trillion selection rounds, `rounds`)."""

    def no_table(*args: object, **kwargs: object) -> None:
        raise AssertionError("the table was read")

    monkeypatch.setattr(memory, "plan_memory", no_table)
    with pytest.raises(InvalidParameterError) as err:
        memory.check_memory(AuditConfig(max_memory=8192, **settings))  # type: ignore[arg-type]
    assert str(err.value).startswith(named) and "\n" not in str(err.value)


def test_the_limit_is_the_smaller_of_meminfo_and_the_cgroup(
    tmp_path: Path, monkeypatch
) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 100 kB\nMemAvailable:   2048 kB\n")
    assert memory.meminfo_available(str(meminfo)) == 2048 * 1024
    assert memory.meminfo_available(str(tmp_path / "absent")) is None
    cgroup = tmp_path / "cg"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text("1000000\n")
    (cgroup / "memory.current").write_text("400000\n")
    assert memory.cgroup_available(str(cgroup)) == 600_000
    (cgroup / "memory.max").write_text("max\n")
    assert memory.cgroup_available(str(cgroup)) is None
    monkeypatch.setattr(memory, "meminfo_available", lambda: 5 * 2**30)
    monkeypatch.setattr(memory, "cgroup_available", lambda: 3 * 2**30)
    limit = memory.memory_limit(AuditConfig())
    assert limit is not None and limit.bytes == 3 * 2**30 and "cgroup" in limit.source
    given = memory.memory_limit(AuditConfig(max_memory=100_000))
    assert given is not None and given.bytes == 100_000 * 2**20
    # A foreign generator's --max-memory bounds each of its workers, not the plan.
    workers = memory.memory_limit(AuditConfig(max_memory=200), foreign=True)
    assert workers is not None and workers.bytes == 3 * 2**30
    monkeypatch.setattr(memory, "cgroup_available", lambda: None)
    # Without --max-memory a small MemAvailable refuses the default audit.
    monkeypatch.setattr(memory, "meminfo_available", lambda: 100 * 2**20)
    with pytest.raises(InvalidParameterError, match="MemAvailable"):
        memory.check_memory(AuditConfig())


def test_the_estimate_grows_linearly_with_the_rows() -> None:
    """One model's estimate is linear in n at a fixed number of teachers (the rows
    seen are a bit per row, tests/generators/test_pate_gan_seen.py)."""
    small = ensemble_bytes(
        rows=10_000, width=8, teachers=10, batch=64, steps=5, released=0
    )
    large = ensemble_bytes(
        rows=100_000, width=8, teachers=10, batch=64, steps=5, released=0
    )
    assert large < 11 * small


def test_fit_refuses_a_release_beyond_memory_before_training(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    """`dpaudit fit --rows 1e12` asked torch for 12 TB after training (exit 3, out of
    memory); the fit's plan refuses it first, naming --rows, with nothing written."""
    from dpaudit.cli import main

    monkeypatch.setattr(
        memory, "system_limit", lambda: memory.Limit(bytes=2**33, source="a test")
    )
    with pytest.raises(InvalidParameterError, match="`--rows` = 1000000000000"):
        memory.check_fit_memory(rows=4, width=3, released=10**12)
    with pytest.raises(InvalidParameterError, match="`--dataset` \\(10000000 rows"):
        memory.check_fit_memory(rows=10**7, width=10_000, released=10)
    memory.check_fit_memory(rows=686, width=40, released=686)  # Cervical: fits
    out = tmp_path / "s.csv"
    code = main(
        ["fit", "--dataset", "worst-case", "--rows", str(10**12), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--rows" in err, err
    assert not out.exists()


def test_the_transcript_replay_is_counted() -> None:
    """A transcript audit holds the group's models and their replays in both
    worlds: three times a table audit's models (the rest unchanged)."""
    table = memory.plan_memory(AuditConfig(dataset="worst-case"))
    transcript = memory.plan_memory(
        AuditConfig(dataset="worst-case", release="transcript")
    )
    assert transcript.model_bytes == 3 * table.model_bytes
    assert transcript.table == table.table
