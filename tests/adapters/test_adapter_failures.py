"""A failure inside one of dpaudit's own adapters is dpaudit's to report (exit 3,
"report it", the adapter named), bad input to an adapter the user's to fix (exit 2),
and neither is ever "Fix the plug-in" (docs/adapters.md). Runs without any library:
a stand-in adapter module is registered in ``FOREIGN_ADAPTERS`` for the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import dpaudit.adapters
from dpaudit.cli import main

MODULE = """
from dpaudit.adapters._common import AdapterInputError, cast_release, import_library

class Stand:
    def __init__(self, *, epsilon, delta, behave="ok"):
        self.epsilon, self.delta, self.behave = epsilon, delta, behave

    def fit(self, data, *, domain, seed):
        if self.behave == "bug":
            [][None]  # TypeError, as pac-synth's empty cells once did
        if self.behave == "input":
            raise AdapterInputError("the table has 4 rows; the library needs 1,000.")
        if self.behave == "missing":
            import_library("no_such_library_dpaudit", package="no-such-library")
        if self.behave == "small":  # what sklearn's KMeans says inside synthcity
            raise ValueError(f"n_samples={len(data)} should be >= n_clusters=10")
        self.domain, self.n = domain, len(data)
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "stand-in"}
        return self

    def sample(self, n, *, seed):
        if self.behave == "rows":
            raise ValueError(f"cannot draw {n} rows")
        return cast_release(__import__("pandas").DataFrame(
            {c["name"]: [0] * n for c in self.domain["columns"]}), self.domain)


class Users(Stand):  # the same code as a user's plug-in (not in FOREIGN_ADAPTERS)
    pass
"""


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "stand_adapter.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(
        dpaudit.adapters.FOREIGN_ADAPTERS, "stand-in", "stand_adapter:Stand"
    )
    return "stand-in"


def _fit(name: str, behave: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(
        [
            "fit",
            "--generator",
            name,
            "--option",
            f"behave={behave}",
            "--dataset",
            "worst-case",
            "--out",
            "out.csv",
        ]
    )
    return code, capsys.readouterr().err


def test_a_failure_inside_an_adapter_is_dpaudits_exit_3(
    stand_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _fit(stand_in, "bug", capsys)
    assert code == 3, err
    assert "dpaudit's adapter stand_adapter:Stand failed" in err
    assert "TypeError" in err and "report it" in err
    assert "Fix the plug-in" not in err and ".." not in err
    assert len(err.strip().splitlines()) == 1


def test_bad_input_to_an_adapter_is_the_users_exit_2(
    stand_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _fit(stand_in, "input", capsys)
    assert code == 2, err
    assert "generator 'stand-in': the table has 4 rows" in err
    assert "Fix the plug-in" not in err and ".." not in err


def test_a_libraries_valueerror_on_fit_or_sample_is_the_users_exit_2(
    stand_in: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The library's own ValueError (a table too small for it, a row count it cannot
    draw) names what it was given and the settings to change, in one line."""
    code, err = _fit(stand_in, "small", capsys)
    assert code == 2, err
    assert err.startswith(
        "dpaudit: error: generator 'stand-in': the library refused a training table "
        "of 4 rows and "
    )
    assert "its `fit` raised ValueError: n_samples=4 should be >= n_clusters=10" in err
    assert "--dataset-rows N" in err and "--option" in err and "report it" in err
    assert "unexpected" not in err and "Fix the plug-in" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out.csv").exists()
    code, err = _fit(stand_in, "rows", capsys)
    assert code == 2, err
    assert "refused a request for 4 rows (its `sample` raised ValueError" in err
    assert "--synthetic-rows" in err and "unexpected" not in err
    assert not (tmp_path / "out.csv").exists()


def test_an_audit_of_a_table_too_small_for_the_library_writes_nothing(
    stand_in: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(
        [
            "audit",
            "--generator",
            stand_in,
            "--option",
            "behave=small",
            "--dataset",
            "worst-case",
            "--rounds",
            "5",
            "--quiet",
            "--out",
            "run",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the library refused a training table" in err and "--dataset-rows" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_a_missing_library_names_python_which_fit_accepts(
    stand_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _fit(stand_in, "missing", capsys)
    assert code == 2, err
    assert "no-such-library is not importable" in err and "--python" in err
    assert "Fix the plug-in" not in err and ".." not in err
    # The advice names a flag `fit` has.
    code = main(
        [
            "fit",
            "--generator",
            stand_in,
            "--python",
            "/no/such/python",
            "--dataset",
            "worst-case",
            "--out",
            "out.csv",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "`--python` '/no/such/python'" in err


def test_a_users_plugin_still_gets_fix_the_plugin_without_a_doubled_dot(
    stand_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _fit("stand_adapter:Users", "bug", capsys)
    assert code == 2, err
    assert "Fix the plug-in" in err and ".." not in err


def test_fit_writes_an_adapters_release_on_a_sized_worst_case(
    stand_in: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(
        [
            "fit",
            "--generator",
            stand_in,
            "--dataset",
            "worst-case",
            "--dataset-rows",
            "50",
            "--fit-timeout",
            "60",
            "--max-memory",
            "4000",
            "--out",
            "out.csv",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert len((tmp_path / "out.csv").read_text().splitlines()) == 1 + 49
    code = main(
        [
            "fit",
            "--dataset",
            "worst-case",
            "--python",
            "/usr/bin/python3",
            "--out",
            "x.csv",
        ]
    )
    assert code == 2 and "built-in" in capsys.readouterr().err


def test_utility_takes_the_worker_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["utility", "--python", "/usr/bin/python3", "--models", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "`--python`" in err and "built-in" in err
    code = main(["utility", "--generator", "x:Y", "--fit-timeout", "-1"])
    assert code == 2 and "--fit-timeout" in capsys.readouterr().err
