"""benchmarks/harness.py: the flags every benchmark takes, the table and the JSON;
and every maintained benchmark is on it, with a smoke test."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture
def harness(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "harness", raising=False)
    import harness

    return harness


def test_smoke_sizes_yield_to_the_command_line(harness: ModuleType) -> None:
    parser = harness.parser("doc")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=-1)
    smoke = {"rounds": 5, "jobs": 1}
    args = harness.parse(parser, ["--smoke", "--jobs", "2"], smoke=smoke)
    assert (args.rounds, args.jobs, args.seed, args.out) == (5, 2, 0, None)
    args = harness.parse(parser, ["--rounds", "7", "--seed", "3"], smoke=smoke)
    assert (args.rounds, args.jobs, args.seed, args.smoke) == (7, -1, 3, False)


def test_a_smoke_run_gets_a_temporary_work_dir(harness: ModuleType) -> None:
    parser = harness.parser("doc")
    parser.add_argument("--work-dir", default="bench_out")
    assert harness.parse(parser, []).work_dir == "bench_out"
    made = harness.parse(parser, ["--smoke"]).work_dir
    assert made != "bench_out" and Path(made).is_dir()
    assert harness.parse(parser, ["--smoke", "--work-dir", "x"]).work_dir == "x"
    assert not hasattr(harness.parse(harness.parser("doc"), ["--smoke"]), "work_dir")


def test_rows_are_timed_printed_and_written(
    harness: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "deep" / "run.json"
    args = harness.parse(harness.parser("doc"), ["--smoke", "--out", str(out)])
    rows = harness.Rows("benchmarks/toy.py", args)
    with rows.timed("first", size=3) as row:
        row["rate"] = 1.23456
    rows.add("second", size=40_000, rate=None, nested={"a": [1, 2]})
    payload = rows.finish(title="title", formats={"rate": ".2f"}, extra=7)
    printed = capsys.readouterr().out
    assert "title" in printed and f"wrote {out}" in printed
    assert "| first  | 3      | 1.23 |" in printed
    assert "| second | 40,000 | -    |" in printed
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(payload))
    assert written["benchmark"] == "toy" and written["smoke"] and written["extra"] == 7
    assert written["rows"][0]["seconds"] >= 0
    assert written["rows"][1]["nested"] == {"a": [1, 2]}
    assert written["args"]["out"] == str(out)


def test_env_python_is_dpaudit_envs_location(
    harness: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DPAUDIT_ENV_HOME", raising=False)
    expected = Path.home() / ".cache/dpaudit/envs/smartnoise/bin/python"
    assert harness.env_python("smartnoise") == expected
    monkeypatch.setenv("DPAUDIT_ENV_HOME", str(tmp_path))
    assert harness.env_python("x") == tmp_path / "x" / "bin" / "python"
    parser = harness.parser("doc")
    harness.add_python(parser, "x", "x")
    args = harness.parse(parser, [])
    assert harness.python_for(args, "x", required=False) is None
    with pytest.raises(SystemExit, match="dpaudit env"):
        harness.python_for(args, "x", required=True)


def _maintained() -> list[Path]:
    """Every benchmark script (``harness.py`` and the shared ``_*.py`` modules that
    benchmarks import are not benchmarks)."""
    return sorted(
        p
        for p in BENCHMARKS.glob("*.py")
        if p.name != "harness.py" and not p.name.startswith("_")
    )


def test_every_maintained_benchmark_is_on_the_harness_with_a_smoke_test() -> None:
    tests = " ".join(
        p.read_text() for p in (ROOT / "tests").glob("test_benchmark_*.py")
    )
    for script in _maintained():
        text = script.read_text()
        assert re.search(r"^\s*import harness\b", text, re.M), script.name
        assert "harness.parser(" in text and "harness.parse(" in text, script.name
        assert f'"{script.name}"' in tests, f"no smoke test runs {script.name}"


def test_no_benchmark_names_one_machines_path() -> None:
    for script in [
        *_maintained(),
        *BENCHMARKS.glob("_*.py"),
        BENCHMARKS / "harness.py",
    ]:
        assert "/work/" not in script.read_text(), script.name
