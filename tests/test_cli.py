"""The command line: exit codes, messages, and nothing half-written."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dpaudit.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list(capsys) -> None:
    code, out, _ = run(capsys, "list", "variants")
    assert code == 0
    for name in (
        "original",
        "updated",
        "synthcity",
        "turing",
        "borealis",
        "smartnoise",
    ):
        assert name in out
    code, out, _ = run(capsys, "list", "bugs")
    assert "partition_last_only" in out
    assert "unsanitised_data_dependent" in out
    code, out, _ = run(capsys, "list", "generators")
    assert "pategan" in out
    assert "gpate" in out


def test_fit_writes_csv_and_claim(capsys, tmp_path: Path) -> None:
    out, claim = tmp_path / "s.csv", tmp_path / "c.json"
    code, text, _ = run(
        capsys,
        "fit",
        "--dataset",
        "worst-case",
        "--device",
        "cpu",
        "--option",
        "max_iterations=2",
        "--out",
        str(out),
        "--claim-out",
        str(claim),
        "--rows",
        "7",
    )
    assert code == 0
    assert "claimed epsilon" in text
    assert "data-independent epsilon" in text
    assert len(pd.read_csv(out)) == 7
    data = json.loads(claim.read_text())
    for key in (
        "epsilon",
        "delta",
        "accountant",
        "epsilon_data_independent",
        "reference_epsilon",
        "iterations",
        "trace",
    ):
        assert key in data


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "--dataset", "no-such"], "neither a known dataset"),
        (
            ["fit", "--dataset", "worst-case", "--epsilon", "-1"],
            "`--epsilon` must be a number in (0, inf)",
        ),
        (["fit", "--dataset", "worst-case", "--bug", "nope"], "unknown bug flag"),
        (
            ["fit", "--dataset", "worst-case", "--variant", "nope"],
            "`--variant` must be one of",
        ),
        (["fit", "--generator", "nomodule:Gen"], "cannot import module"),
        (["audit", "--rounds", "2"], "`rounds` must be an integer >= 5"),
        (["audit", "--dataset", "cervical_cancer"], "needs a target"),
        (["audit", "--resume", "nowhere"], "does not exist"),
    ],
)
def test_bad_input_exit_2_one_line(capsys, tmp_path: Path, argv, message: str) -> None:
    out = tmp_path / "out"
    code, _, err = run(capsys, *argv, "--out", str(out))
    assert code == 2
    assert message in err
    assert err.count("\n") == 1
    assert not out.exists()


def test_audit_and_config_file(capsys, tmp_path: Path) -> None:
    config = tmp_path / "audit.toml"
    config.write_text(
        'generator = "randomized-response"\nrounds = 20\n'
        "synthetic_rows = 10\nepsilon = 3.0\njobs = 1\n"
    )
    out = tmp_path / "a"
    code, text, _ = run(
        capsys,
        "audit",
        "--config",
        str(config),
        "--epsilon",
        "2.0",
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0
    assert "verdict" in text
    result = json.loads((out / "result.json").read_text())
    assert result["eps_claimed"] == 2.0  # the flag overrides the file
    assert result["config"]["rounds"] == 20
    code, _, err = run(
        capsys, "audit", "--config", str(config), "--out", str(out), "--quiet"
    )
    assert code == 2
    assert "--force" in err


def test_domain_infer_warns(capsys, tmp_path: Path) -> None:
    csv = tmp_path / "t.csv"
    pd.DataFrame({"x": [1, 5, 9], "y": [0.5, 0.1, 0.2]}).to_csv(csv, index=False)
    code, out, err = run(capsys, "domain", "infer", str(csv))
    assert code == 0
    assert "NOT private" in err and err.count("\n") == 1
    # It names the columns whose bounds came from the records, and the fix.
    assert "x (lower, upper)" in err and "y (lower, upper)" in err
    assert "replace each with a public value" in err
    assert json.loads(out)["columns"][0] == {
        "name": "x",
        "kind": "integer",
        "lower": 1,
        "upper": 9,
    }


def test_console_script_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dpaudit", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("dpaudit ")


HEAVY = ("torch", "pandas", "scipy", "sklearn")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["audit", "--help"],
        ["check", "--help"],
        ["study", "--help"],
        ["utility", "--help"],
        ["list", "generators"],
        ["list", "attacks"],
        ["list", "datasets"],
    ],
)
def test_help_and_lists_import_no_heavy_library(argv: list[str]) -> None:
    """Building the parser (every `--help`) and the name lists import neither torch,
    pandas, scipy nor scikit-learn: they answer in a fraction of a second."""
    code = (
        "import sys\n"
        "from dpaudit.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "package", ["dpaudit.ci", "dpaudit.ci.study", "dpaudit.utility"]
)
def test_lazy_packages_export_exactly_their_names(package: str) -> None:
    """The names a package loads on first use are its ``__all__``, each from the
    module that defines it (the export table cannot drift from ``__all__``)."""
    import importlib

    module = importlib.import_module(package)
    table = {n for names in module._EXPORTS.values() for n in names}
    assert table == set(module.__all__)
    for source, names in module._EXPORTS.items():
        for name in names:
            assert getattr(module, name) is getattr(
                importlib.import_module(source), name
            )
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = module.nope


def test_trace_writes_csv_and_json(capsys, tmp_path: Path) -> None:
    out = tmp_path / "trace"
    argv = (
        "trace",
        "--variant",
        "updated",
        "--dataset",
        "worst-case",
        "--iterations",
        "3",
        "--device",
        "cpu",
        "--option",
        "num_teachers=2",
    )
    # The default budget is a real one: `updated` spends it in its first iteration here.
    code, text, _ = run(capsys, *argv, "--out", str(tmp_path / "budget"))
    assert code == 0
    assert "stopped training after 1 of 3 iterations" in text
    code, text, _ = run(capsys, *argv, "--epsilon", "1e4", "--out", str(out))
    assert code == 0
    assert "records seen per teacher" in text
    seen = pd.read_csv(out / "records_seen.csv")
    assert list(seen.columns) == ["model", "teacher", "records_seen"]
    eps = pd.read_csv(out / "epsilon.csv")
    assert len(eps) == 3
    assert {"epsilon", "epsilon_data_independent", "moment1"} <= set(eps.columns)
    assert json.loads((out / "trace.json").read_text())["iterations"] == 3
    code, _, err = run(
        capsys, "trace", "--generator", "copy", "--out", str(tmp_path / "g")
    )
    assert code == 2
    assert "records training traces" in err


def test_utility_with_gpate_on_a_small_table(capsys) -> None:
    """686 rows < the published 2,100 teachers: the small-table defaults apply (the
    command used to fail with "fewer rows than teachers")."""
    code, out, err = run(
        capsys,
        "utility",
        "--generator",
        "gpate",
        "--models",
        "1",
        "--samples",
        "1",
        "--classifier",
        "LogisticRegression",
        "--no-progress",
    )
    assert code == 0, err
    assert "utility of gpate on cervical_cancer" in out
    assert "LogisticRegression" in out


def test_every_flag_has_help_and_one_progress_convention() -> None:
    """`dpaudit audit --help` documents every flag; fit, trace and audit take
    `--quiet` and its alias `--no-progress`."""
    from dpaudit.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in ("audit", "fit", "trace"):
        for action in commands[name]._actions:
            assert action.help, f"{name} {action.option_strings} has no help"
        for flag in ("--quiet", "--no-progress"):
            assert parser.parse_args([name, flag, "--out", "x"]).quiet is True


def test_progress_note_on_stderr_only_when_enabled(capsys) -> None:
    from dpaudit.commands import progress_note

    with progress_note("training", enabled=False):
        pass
    assert capsys.readouterr().err == ""
    with progress_note("training", enabled=True, every=0.01):
        pass
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "training" in captured.err
    assert "done in" in captured.err


def test_one_progress_convention() -> None:
    """Every long-running command takes --quiet, alias --no-progress."""
    import argparse

    from dpaudit.cli import build_parser

    sub = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    )
    for name in ("fit", "trace", "audit", "check", "utility", "study"):
        options = {o for a in sub.choices[name]._actions for o in a.option_strings}
        assert {"--quiet", "--no-progress"} <= options, name


# ------------------------------------------------------------------ exit codes


def test_help_states_every_exit_code(capsys) -> None:
    """`dpaudit --help` and every command's `--help` end with the exit codes, and
    docs/ci.md's table names the same codes."""
    from dpaudit.commands import EXIT_CODES_HELP

    for argv in (
        ["--help"],
        ["check", "--help"],
        ["audit", "--help"],
        ["study", "--help"],
        ["fit", "--help"],
        ["report", "--help"],
    ):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert out.rstrip().endswith(EXIT_CODES_HELP.rstrip().splitlines()[-1])
        for line in (
            "  0    success",
            "  1    `check`: an audit is a VIOLATION",
            "  2    bad input",
            "  3    a run that failed",
            "  4    `check`: an audit is INCONCLUSIVE",
            "  130  interrupted",
        ):
            assert line in out, (argv, line)
    docs = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text()
    table = docs[docs.index("| code | meaning |") :]
    rows = itertools.takewhile(lambda row: row.startswith("|"), table.splitlines()[2:])
    assert [row.split("|")[1].strip() for row in rows] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "130",
    ]


def _failing(monkeypatch, err: BaseException) -> None:
    """`dpaudit list` raises ``err`` (standing in for any command's failure)."""
    from dpaudit.commands import listing

    def run(args) -> int:
        raise err

    monkeypatch.setattr(listing, "run", run)


@pytest.mark.parametrize(
    ("err", "code", "message"),
    [
        (
            RuntimeError("tensor shapes do not match"),
            3,
            "unexpected RuntimeError: tensor shapes do not match (rerun with --debug",
        ),
        (MemoryError(), 3, "out of memory"),
        (OSError(28, "No space left on device"), 3, "the run failed: [Errno 28]"),
        (
            FileNotFoundError(2, "No such file or directory", "x.csv"),
            2,
            "No such file or directory: 'x.csv'",
        ),
    ],
)
def test_failed_run_exit_3_bad_input_exit_2(
    capsys, monkeypatch, err, code: int, message: str
) -> None:
    """A run that fails for a reason other than its input (a bug, out of memory, a
    full disk) exits 3 with one line; a path that does not exist is bad input (2)."""
    _failing(monkeypatch, err)
    got, _, stderr = run(capsys, "list", "generators")
    assert got == code
    assert message in stderr and stderr.count("\n") == 1


def test_a_plugin_that_breaks_its_contract_exits_2_unless_out_of_memory(
    capsys, monkeypatch
) -> None:
    from dpaudit.errors import PluginError

    _failing(monkeypatch, PluginError("generator 'm:G' breaks the plug-in contract"))
    assert run(capsys, "list", "generators")[0] == 2
    try:
        raise MemoryError
    except MemoryError as cause:
        wrapped = PluginError("generator 'm:G': its `fit` raised MemoryError")
        wrapped.__cause__ = cause
    _failing(monkeypatch, wrapped)
    code, _, err = run(capsys, "list", "generators")
    assert code == 3 and "out of memory" in err


CHECK_POLICY = """
[defaults]
dataset = "worst-case"
generator = "copy"
attack = "querybased"
rounds = 20
jobs = 1
backend = "threading"
device = "cpu"

[[audit]]
name = "weak"        # eps_emp can reach at most 0.21 here: INCONCLUSIVE
epsilon = 10.0
"""


@pytest.mark.slow
def test_check_violation_dominates_an_inconclusive_audit(
    capsys, monkeypatch, tmp_path: Path
) -> None:
    """Issue 25 item 7, end to end with the real runner and a generator that copies
    its data: a policy with an INCONCLUSIVE audit (first) and a VIOLATION exits 1,
    and the last line names the VIOLATION first; the INCONCLUSIVE audit alone exits
    4. Deterministic (fixed seeds); about 10 s on 2 cores. The output is the one
    docs/ci.md shows, line for line."""
    monkeypatch.chdir(tmp_path)
    policy = tmp_path / "privacy.toml"
    policy.write_text(CHECK_POLICY, encoding="utf-8")
    code, out, err = run(
        capsys, "check", "--policy", str(policy), "--out", str(tmp_path / "weak")
    )
    assert code == 4, err
    assert "[1/1] weak: INCONCLUSIVE" in out
    assert (
        err.strip().splitlines()[-1].startswith("dpaudit check FAILED: 1 INCONCLUSIVE")
    )
    policy.write_text(
        CHECK_POLICY + '\n[[audit]]\nname = "leak"\nepsilon = 0.1\n', encoding="utf-8"
    )
    summary = tmp_path / "summary.md"
    code, out, err = run(
        capsys,
        "check",
        "--policy",
        str(policy),
        "--summary",
        str(summary),
        "--out",
        "dpaudit-check",
    )
    assert code == 1, err
    assert "[1/2] weak: INCONCLUSIVE" in out and "[2/2] leak: VIOLATION" in out
    last = err.strip().splitlines()[-1]
    assert last.startswith("dpaudit check FAILED: 1 VIOLATION (leak: privacy violation")
    assert last.index("VIOLATION") < last.index("INCONCLUSIVE") and last.endswith(
        "(exit 1)"
    )
    assert summary.read_text().startswith("## dpaudit check FAILED: 1 VIOLATION (leak")
    docs = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text()
    shown = docs[docs.index("```\n[1/2] weak:") + 4 :]
    shown = shown[: shown.index("```")].splitlines()
    assert shown == [*out.splitlines()[1:3], last]


# ------------------------------------------------------------------ progress


@pytest.fixture
def planted_csv(tmp_path: Path) -> tuple[Path, Path]:
    """Ten records, each twice, and one far outlier: a tiny table for --target auto."""
    from dpaudit.data import Column, Domain

    base = [[i % 3, (i // 3) % 3, i % 2] for i in range(10)]
    rows = [*base, *base, [10, 10, 10]]
    csv, domain = tmp_path / "planted.csv", tmp_path / "planted.json"
    pd.DataFrame(rows, columns=["a", "b", "c"]).to_csv(csv, index=False)
    Domain(
        tuple(Column(name=n, kind="integer", lower=0.0, upper=10.0) for n in "abc")
    ).save(domain)
    return csv, domain


TINY = ("--rounds", "10", "--jobs", "1", "--selection-rounds", "5", "--device", "cpu")


@pytest.mark.slow
def test_target_auto_shows_progress(capsys, monkeypatch, tmp_path, planted_csv) -> None:
    """Issue 25 item 6: every phase of a run reports progress on stderr (on a
    terminal), target selection and the analysis included; --quiet silences all of
    it; stdout never holds a progress bar."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    csv, domain = planted_csv
    target_auto = (
        "audit",
        "--generator",
        "copy",
        "--attack",
        "distance",
        "--dataset",
        str(csv),
        "--domain",
        str(domain),
        "--target",
        "auto",
        "--candidates",
        "2",
        "--synthetic-rows",
        "21",
        *TINY,
    )
    code, out, err = run(capsys, *target_auto, "--out", str(tmp_path / "a"))
    assert code == 0, err
    phases = [
        "target selection (models)",
        "target selection (candidates scored)",
        "audit (models, both worlds)",
        "analysis (attacks)",
    ]
    for phase in phases:
        assert f"{phase}: 100%" in err, phase
    # In the order they run; the pool's 10 models, then the 2 candidates.
    assert [err.index(p) for p in phases] == sorted(err.index(p) for p in phases)
    assert "10/10" in err and "2/2" in err
    assert not any(p in out for p in phases)
    code, _, err = run(capsys, *target_auto, "--out", str(tmp_path / "q"), "--quiet")
    assert code == 0 and err == ""


@pytest.mark.slow
def test_public_seed_auto_shows_progress(capsys, monkeypatch, tmp_path) -> None:
    """`--public-seed auto` reports its models on stderr; --quiet silences it."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    public_auto = (
        "audit",
        "--generator",
        "dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse",
        "--attack",
        "querybased",
        "--public-seed",
        "auto",
        "--public-candidates",
        "2",
        *TINY,
    )
    code, _, err = run(capsys, *public_auto, "--out", str(tmp_path / "b"))
    assert code == 0, err
    # 2 candidates x 2 x 5 selection rounds = 20 models.
    assert (
        "public-seed selection (2 candidates, models): 100%" in err and "20/20" in err
    )
    code, _, err = run(capsys, *public_auto, "--out", str(tmp_path / "q"), "--quiet")
    assert code == 0 and err == ""


@pytest.mark.slow
def test_check_progress_shows_the_selection_in_a_log(
    capsys, tmp_path, planted_csv
) -> None:
    """`dpaudit check --progress` shows progress although stderr is not a terminal (a
    CI log), target selection included; without it a log gets none."""
    csv, domain = planted_csv
    policy = tmp_path / "p.toml"
    policy.write_text(
        f'[[audit]]\nname = "auto"\ngenerator = "copy"\nattack = "distance"\n'
        f'dataset = "{csv}"\ndomain = "{domain}"\ntarget = "auto"\ncandidates = 2\n'
        "selection_rounds = 5\nrounds = 10\njobs = 1\nsynthetic_rows = 21\nepsilon = 10.0\n"
        'device = "cpu"\n',
        encoding="utf-8",
    )
    code, _, err = run(
        capsys,
        "check",
        "--policy",
        str(policy),
        "--progress",
        "--out",
        str(tmp_path / "a"),
    )
    assert code == 4, err  # 10 rounds per world cannot refute epsilon 1
    assert "target selection (models): 100%" in err and "analysis (attacks)" in err
    code, _, err = run(
        capsys, "check", "--policy", str(policy), "--out", str(tmp_path / "b")
    )
    assert code == 4 and "target selection" not in err
