"""Malformed inputs, one test per class: exit 2, one line on stderr naming the input and
the fix, no traceback, nothing written (tests/test_malformed_inputs.py tries 200)."""

from __future__ import annotations

import importlib.metadata
import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from dpaudit.cli import main
from dpaudit.generators.plugins import ENTRY_POINT_GROUP

GOOD_DOMAIN = {"columns": [{"name": n, "kind": "binary"} for n in "abc"]}
FIT = ("fit", "--device", "cpu", "--option", "max_iterations=1")
AUDIT = (
    "audit",
    "--generator",
    "randomized-response",
    "--rounds",
    "5",
    "--synthetic-rows",
    "5",
    "--jobs",
    "1",
    "--quiet",
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "good.csv": "a,b,c\n0,0,0\n0,1,0\n1,0,0\n",
        "empty.csv": "",
        "header.csv": "a,b,c\n",
        "dup.csv": "a,a,c\n0,0,0\n1,1,1\n",
        "good.json": json.dumps(GOOD_DOMAIN),
    }
    paths = {}
    for name, text in out.items():
        (tmp_path / name).write_text(text)
        paths[name] = tmp_path / name
    paths["binary.bin"] = tmp_path / "binary.bin"
    paths["binary.bin"].write_bytes(bytes(range(256)) * 4)
    paths["latin1.csv"] = tmp_path / "latin1.csv"
    paths["latin1.csv"].write_bytes(b"a,b,c\n" + "\xe9,1,0\n".encode("latin-1"))
    paths["dir"] = tmp_path / "adir"
    paths["dir"].mkdir()
    for name, col in (
        ("bound_str.json", {"lower": "abc", "upper": 1}),
        ("bound_list.json", {"lower": [0], "upper": 1}),
        ("minmax.json", {"lower": 5, "upper": 1}),
    ):
        paths[name] = tmp_path / name
        paths[name].write_text(
            json.dumps(
                {
                    "columns": [
                        {"name": "a", "kind": "integer", **col},
                        {"name": "b", "kind": "binary"},
                        {"name": "c", "kind": "binary"},
                    ]
                }
            )
        )
    paths["out"] = tmp_path / "out"
    return paths


def refused(
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    message: str,
    out: Path | None = None,
) -> str:
    """Runs ``dpaudit argv``; asserts exit 2, one line with ``message``, no traceback,
    and ``out`` not written. Returns stderr."""
    code = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err
    assert err.count("\n") == 1, err
    assert message in err, err
    if out is not None:
        assert not out.exists()
    return err


@pytest.mark.parametrize("argv", [("fit",), ("domain",), ("audit",)])
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty.csv", "is empty"),
        ("header.csv", "no data rows"),
        ("binary.bin", "not UTF-8"),
        ("latin1.csv", "not UTF-8"),
        ("dir", "is a directory"),
        ("dup.csv", "duplicated column name(s) ['a']"),
    ],
)
def test_csv_files_that_are_not_tables(
    capsys, files, argv, name: str, message: str
) -> None:
    """Empty, header-only, binary, non-UTF-8, a directory, a duplicated header (pandas
    would rename it `a.1`): the loader names the file and refuses it."""
    data = files[name]
    if argv == ("domain",):
        refused(capsys, "domain", "infer", data, message=message)
    elif argv == ("fit",):
        refused(
            capsys,
            *FIT,
            "--dataset",
            data,
            "--domain",
            files["good.json"],
            "--out",
            files["out"],
            message=message,
            out=files["out"],
        )
    else:
        err = refused(
            capsys,
            *AUDIT,
            "--dataset",
            data,
            "--domain",
            files["good.json"],
            "--out",
            files["out"],
            message=message,
            out=files["out"],
        )
        assert str(data) in err


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bound_str.json", "`a.lower` must be a number. Got 'abc'"),
        ("bound_list.json", "`a.lower` must be a number. Got [0]"),
        ("minmax.json", "`a.lower` must be <= `upper`"),
        ("binary.bin", "not UTF-8 text"),
        ("dir", "is a directory"),
    ],
)
def test_domain_files(capsys, files, name: str, message: str) -> None:
    """A bound that is a string or a list, min > max, a binary file, a directory: the
    message names the domain file."""
    err = refused(
        capsys,
        *FIT,
        "--dataset",
        files["good.csv"],
        "--domain",
        files[name],
        "--out",
        files["out"],
        message=message,
        out=files["out"],
    )
    assert str(files[name]) in err


def test_directory_as_config(capsys, files) -> None:
    """An OSError of a file the command opens is one line naming the file."""
    err = refused(
        capsys,
        *AUDIT,
        "--config",
        files["dir"],
        "--out",
        files["out"],
        message="`--config` must be an existing TOML file",
        out=files["out"],
    )
    assert str(files["dir"]) in err


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("[1, 2]", "`target_record` must be a JSON object"),
        ("notjson", "`target_record` must be a JSON object"),
        ('{"a": 1, "b": 1, "zz": 1}', "Use the domain's column names"),
    ],
)
def test_target_record(capsys, files, record: str, message: str) -> None:
    """A JSON list, not JSON, a typo in a column name (not told to fix a CSV header)."""
    err = refused(
        capsys,
        *AUDIT,
        "--target-record",
        record,
        "--out",
        files["out"],
        message=message,
        out=files["out"],
    )
    assert "CSV header" not in err


def test_target_conflicts_with_target_record(capsys, files) -> None:
    refused(
        capsys,
        *AUDIT,
        "--target",
        "0",
        "--target-record",
        '{"a": 1, "b": 1, "c": 1}',
        "--out",
        files["out"],
        message="give one of --target and --target-record",
        out=files["out"],
    )


@pytest.mark.parametrize(
    "argv",
    [
        (*FIT, "--dataset", "worst-case"),
        ("audit", "--generator", "pategan", "--rounds", "5"),
    ],
)
def test_option_of_the_wrong_type(capsys, files, argv) -> None:
    refused(
        capsys,
        *argv,
        "--option",
        "lam=abc",
        "--out",
        files["out"],
        message="`--option lam` must be a finite number",
        out=files["out"],
    )


def test_named_dataset_with_a_domain(capsys, files) -> None:
    refused(
        capsys,
        *FIT,
        "--dataset",
        "worst-case",
        "--domain",
        files["good.json"],
        "--out",
        files["out"],
        message="`--domain` must be unset for the worst-case",
        out=files["out"],
    )


def test_named_dataset_with_a_mismatched_domain(capsys, files, tmp_path: Path) -> None:
    """A named dataset read from --data-dir, with a domain of other columns."""
    table = pd.DataFrame({"f1": [0.1, 0.2, 0.3, 0.4, 0.5] * 4, "class": [1, 2] * 10})
    table.to_csv(tmp_path / "isolet5.csv.gz", index=False)
    refused(
        capsys,
        *FIT,
        "--dataset",
        "isolet5",
        "--data-dir",
        tmp_path,
        "--domain",
        files["good.json"],
        "--out",
        files["out"],
        message="`dataset isolet5` columns do not match the domain",
        out=files["out"],
    )


def test_numbers_checked_before_training(capsys, files, monkeypatch) -> None:
    """`--rows -5` is refused as `--rows`, before any training."""
    from dpaudit.commands import fit

    monkeypatch.setattr(fit, "fit_one", lambda *a, **k: pytest.fail("trained"))
    refused(
        capsys,
        *FIT,
        "--dataset",
        "worst-case",
        "--rows",
        "-5",
        "--out",
        files["out"],
        message="`--rows` must be an integer in [1, inf). Got -5.",
        out=files["out"],
    )
    monkeypatch.undo()
    for flag, value, message in (
        ("--delta", "1", "`--delta` must be a number in [0, 1)"),
        ("--epsilon", "nan", "`--epsilon` must be a number in"),
        ("--seed", "-1", "`--seed` must be an integer in [0"),
    ):
        refused(
            capsys,
            *FIT,
            "--dataset",
            "worst-case",
            flag,
            value,
            "--out",
            files["out"],
            message=message,
            out=files["out"],
        )


def test_delta_range_is_the_same_for_fit_and_audit(capsys, files) -> None:
    """Both commands take delta in [0, 1) (a generator whose accountant needs delta > 0
    says so itself, in both)."""
    for argv in ((*FIT, "--dataset", "worst-case"), AUDIT):
        refused(capsys, *argv, "--delta", "1", "--out", files["out"], message="[0, 1)")


@pytest.mark.parametrize(
    "argv",
    [(*FIT, "--dataset", "worst-case"), AUDIT, ("trace", "--dataset", "worst-case")],
)
def test_empty_out(capsys, argv) -> None:
    refused(capsys, *argv, "--out", "", message="--out")


def test_fit_out_dash_writes_the_csv_to_stdout(capsys) -> None:
    code = main([*FIT, "--dataset", "worst-case", "--rows", "4", "--out", "-"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines()[0] == "a,b,c"
    assert len(out.splitlines()) == 5
    assert "wrote 4 rows to stdout" in err
    assert not Path("-").exists()


def test_fit_checks_outputs_before_training(capsys, files, tmp_path: Path) -> None:
    refused(
        capsys,
        *FIT,
        "--dataset",
        "worst-case",
        "--out",
        tmp_path / "no" / "s.csv",
        message="in an existing folder",
    )
    refused(
        capsys,
        *FIT,
        "--dataset",
        "worst-case",
        "--out",
        files["out"],
        "--claim-out",
        files["dir"],
        message="`--claim-out` must be a file path",
        out=files["out"],
    )


def test_uncaught_error_is_exit_3_and_debug_shows_the_traceback(
    capsys, monkeypatch
) -> None:
    """A crash is a failed run: exit 3, never 1 (check's VIOLATION) nor 2 (bad input);
    the traceback only with --debug."""
    from dpaudit.commands import listing

    def boom(args):
        raise RuntimeError("internal")

    monkeypatch.setattr(listing, "run", boom)
    assert main(["list", "datasets"]) == 3
    _, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert "unexpected RuntimeError: internal" in err
    assert "--debug" in err
    assert main(["--debug", "list", "datasets"]) == 3
    _, err = capsys.readouterr()
    assert "Traceback" in err
    assert main(["list", "datasets", "--debug"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_usage_errors_are_one_line(capsys) -> None:
    assert main(["fit", "--rows", "abc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "invalid int value: 'abc'" in err


def test_interrupt_exits_130(capsys, monkeypatch) -> None:
    from dpaudit.commands import listing

    def interrupt(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(listing, "run", interrupt)
    assert main(["list", "datasets"]) == 130


PLUGINS = """
import math


class Base:
    claim = {"epsilon": 1.0, "delta": 0.0}

    def __init__(self, *, epsilon, delta=0.0):
        pass

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = dict(self.claim)

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=0).reset_index(drop=True)


class RaisesInFit(Base):
    def fit(self, data, *, domain, seed):
        raise RuntimeError("boom")


class NoEpsilon:
    def __init__(self, lam=1.0):
        pass

    def fit(self, data, *, domain, seed):
        pass

    def sample(self, n, *, seed):
        pass


class NegativeClaim(Base):
    claim = {"epsilon": -1.0}


class ReleaseOutside(Base):
    def sample(self, n, *, seed):
        out = super().sample(n, seed=seed)
        out.iloc[0, 0] = 7
        return out
"""


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch) -> str:
    (tmp_path / "inputs_plugins.py").write_text(textwrap.dedent(PLUGINS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "inputs_plugins:"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("RaisesInFit", "its `fit` raised RuntimeError: boom"),
        ("NoEpsilon", "`__init__` must accept the keyword arguments `epsilon`"),
        (
            "NegativeClaim",
            "`privacy_claim['epsilon']` must be a finite number >= 0. Got -1.0",
        ),
        ("ReleaseOutside", "released data outside the public domain"),
    ],
)
def test_broken_plugins(capsys, files, plugins: str, name: str, message: str) -> None:
    err = refused(
        capsys,
        "fit",
        "--generator",
        plugins + name,
        "--dataset",
        "worst-case",
        "--out",
        files["out"],
        message=message,
        out=files["out"],
    )
    assert f"'{plugins}{name}'" in err


def test_plugin_claim_refused_in_an_audit_before_a_result(
    capsys, files, plugins
) -> None:
    refused(
        capsys,
        "audit",
        "--generator",
        plugins + "NegativeClaim",
        "--rounds",
        "5",
        "--synthetic-rows",
        "5",
        "--jobs",
        "1",
        "--quiet",
        "--out",
        files["out"],
        message="`privacy_claim['epsilon']`",
    )
    assert not (files["out"] / "result.json").exists()


def test_entry_point_with_a_missing_module(capsys, files, monkeypatch) -> None:
    point = importlib.metadata.EntryPoint(
        name="broken", value="no_such_module_xyz:Gen", group=ENTRY_POINT_GROUP
    )
    real = importlib.metadata.entry_points

    def entry_points(**kwargs):
        if kwargs.get("group") == ENTRY_POINT_GROUP:
            return importlib.metadata.EntryPoints([point])
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    refused(
        capsys,
        "fit",
        "--generator",
        "broken",
        "--dataset",
        "worst-case",
        "--out",
        files["out"],
        message="its entry point 'no_such_module_xyz:Gen' cannot be loaded",
        out=files["out"],
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bugs = 5\n", "must be a name or a list of names. Got 5."),
        ('epsilon = "abc"\n', "must be a number. Got 'abc'."),
        ('generator_options = "lam=1"\n', "must be a table"),
        ('split = ["a", "b", "c"]\n', "must be a list of three fractions"),
        ("target_record = [1, 2]\n", "must be a table (column -> value)"),
    ],
)
def test_config_values_of_the_wrong_type(
    capsys, tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "audit.toml"
    config.write_text(text)
    err = refused(
        capsys,
        "audit",
        "--config",
        config,
        "--out",
        tmp_path / "out",
        message=message,
        out=tmp_path / "out",
    )
    # The key and the file are named.
    assert f"`{text.split()[0]}` in {str(config)!r}" in err


def test_binary_result_and_policy_files(capsys, tmp_path: Path) -> None:
    """A binary result.json (report) or policy (check): one line naming the file."""
    blob = b"\x00\x01\xff"
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "result.json").write_bytes(blob)
    refused(capsys, "report", tmp_path / "audit", message="is not UTF-8 text")
    (tmp_path / "policy.toml").write_bytes(blob)
    refused(
        capsys,
        "check",
        "--policy",
        tmp_path / "policy.toml",
        "--out",
        tmp_path / "check",
        message="`--policy` must be a UTF-8 TOML file",
        out=tmp_path / "check",
    )


@pytest.mark.parametrize(
    ("rows", "kind", "message"),
    [
        ("a,y\n1,1\n", "binary", "at least two classes of 5 rows"),
        ("a,y\n1,0.5\n0.3,0.2\n1.2,0.9\n0.1,0.1\n", "continuous", "a discrete"),
    ],
)
def test_utility_label_that_cannot_be_scored(
    capsys, tmp_path: Path, rows: str, kind: str, message: str
) -> None:
    """A one-row table or a continuous label: refused before any training."""
    data = tmp_path / "t.csv"
    data.write_text(rows)
    label = {"name": "y", "kind": kind}
    if kind == "continuous":
        label.update(lower=0, upper=1)
    domain = tmp_path / "t.domain.json"
    domain.write_text(
        json.dumps(
            {
                "columns": [
                    {"name": "a", "kind": "continuous", "lower": 0, "upper": 2},
                    label,
                ]
            }
        )
    )
    refused(
        capsys,
        "utility",
        "--dataset",
        data,
        "--domain",
        domain,
        "--label",
        "y",
        "--out",
        tmp_path / "u",
        message=message,
        out=tmp_path / "u",
    )


def test_toy_target_of_the_wrong_type(capsys, tmp_path: Path) -> None:
    refused(
        capsys,
        "audit",
        "--generator",
        "randomized-response",
        "--option",
        "target=5",
        "--rounds",
        "20",
        "--out",
        tmp_path / "a",
        message="`target` must be a record",
        out=tmp_path / "a",
    )
