"""A hostile-input battery (issue 23), beside tests/test_inputs.py (one test per class)
and tests/test_malformed_inputs.py (200 cases across the commands, checked alike).

Every case runs ``dpaudit`` in-process and must be refused before any work: exit 2,
exactly one line on stderr naming the input, no traceback, never the generic
"unexpected ... report it" message, and nothing written where ``--out`` points. The
inputs: TOML of the wrong shape (arrays, tables, dates, NaN/inf), keys beside an
``[audit]`` table, policy names that are not folder names, CSV and domain files that
are not what they claim, names that are not valid text, bounds that overflow, paths
under a file, flags out of range, a ``result.json`` edited by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dpaudit.cli import main

TOY = (
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
    "--device",
    "cpu",
)
FIT = ("fit", "--device", "cpu", "--option", "max_iterations=1")
GOOD_CSV = "a,b,c\n0,0,0\n0,0,0\n0,1,0\n1,0,0\n0,0,1\n"
BINARY = [{"name": n, "kind": "binary"} for n in "bc"]
RRG = 'generator = "randomized-response"\n'
RR = RRG + "rounds = 5\n"
SURROGATE = chr(0xDCFF)  # how Python decodes the byte 0xff of a file name


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> str:
    """Runs ``dpaudit argv`` in-process; asserts the refusal. Returns stderr."""
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err
    assert "error: unexpected" not in err
    assert err.count("\n") == 1, err
    assert message in err, err
    return err


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a good CSV and domain; the working directory (relative --out)."""
    (tmp_path / "good.csv").write_text(GOOD_CSV)
    domain = {"columns": [{"name": "a", "kind": "binary"}, *BINARY]}
    (tmp_path / "good.json").write_text(json.dumps(domain))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ----------------------------------------------------------- audit --config TOML

CONFIGS = {
    "key-above-audit-table": (
        'rounds = 5\n[audit]\ngenerator = "randomized-response"\n',
        "`--config` key 'rounds' is outside the [audit] table",
    ),
    "table-beside-audit": (
        '[audit]\ngenerator = "randomized-response"\n[other]\nx = 1\n',
        "`--config` key 'other' is outside the [audit] table",
    ),
    "rounds-array": ("rounds = [1, 2]\n", "`rounds` in"),
    "rounds-table": ("rounds = {a = 1}\n", "`rounds` in"),
    "rounds-date": ("rounds = 1979-05-27\n", "must be an integer"),
    "epsilon-datetime": ("epsilon = 1979-05-27T07:32:00Z\n", "`epsilon` in"),
    "epsilon-time": ("epsilon = 07:32:00\n", "`epsilon` in"),
    "epsilon-nan": ("epsilon = nan\n", "`epsilon` must be"),
    "epsilon-inf": ("epsilon = inf\n", "`epsilon` must be"),
    "epsilon-overflow": ("epsilon = 1e400\n", "`epsilon` must be"),
    "delta-nan": ("delta = nan\n", "`delta` must be"),
    "alpha-inf": ("alpha = inf\n", "`alpha` must be"),
    "option-nan": (
        'generator = "pategan"\n[generator_options]\nlam = nan\n',
        "`--option lam`",
    ),
    "option-table": (
        'generator = "pategan"\n[generator_options.lam]\nx = 1\n',
        "`--option lam`",
    ),
    "option-inf-iterations": (
        'generator = "pategan"\n[generator_options]\nmax_iterations = inf\n',
        "`--option max_iterations`",
    ),
    "option-date": (
        'generator = "pategan"\n[generator_options]\nlam = 1979-05-27\n',
        "`--option lam`",
    ),
    "attack-option-unknown": (
        RR + "[attack_options]\nzzz = 1\n",
        "`attack_options` must be options that attack 'default' takes",
    ),
    "split-nan": ("split = [nan, 0.5, 0.5]\n", "`split` must be"),
    "split-table": ("split = {a = 1}\n", "`split` in"),
    "target-record-list": (
        RR + "[target_record]\na = [1]\nb = 1\nc = 1\n",
        "`target_record` must be",
    ),
    "target-record-date": (
        RR + "[target_record]\na = 1979-05-27\nb = 1\nc = 1\n",
        "`target_record` must be",
    ),
    "target-negative": (RR + "target = -1\n", "`target` must be"),
    "quiet-string": ('quiet = "yes"\n', "`quiet` in"),
    "audit-integer": ("audit = 5\n", "[audit] must be a table"),
    "audit-array-of-tables": (
        '[[audit]]\ngenerator = "randomized-response"\n',
        "[audit] must be a table",
    ),
    "bom": ("\ufeffrounds = 5\n", "`--config` must be valid TOML"),
    "nul": ("rounds = 5\x00\n", "`--config` must be valid TOML"),
    "fit-timeout-nan": (RR + "fit_timeout = nan\n", "`fit_timeout` must be"),
    "max-memory-negative": (RR + "max_memory = -1\n", "`max_memory` must be"),
}


@pytest.mark.parametrize(("text", "message"), CONFIGS.values(), ids=CONFIGS.keys())
def test_config_toml(capsys, files: Path, text: str, message: str) -> None:
    (files / "audit.toml").write_text(text, encoding="utf-8")
    refused(
        capsys,
        ["audit", "--quiet", "--jobs", "1", "--config", "audit.toml", "--out", "out"],
        message,
    )
    assert not (files / "out").exists()
    assert not (files / "dpaudit-audit").exists()


# --------------------------------------------------------- check --policy TOML

POLICIES = {
    "empty-audit-x-table": ("[audit.x]\n", "unknown key(s) ['x']"),
    "empty-audit-table": ("[[audit]]\n", "`generator` must be set"),
    "name-ending-in-newline": ('name = "x\\n"\n', "`name` must be letters"),
    "name-with-slash": ('name = "a/b"\n', "`name` must be letters"),
    "name-dotdot": ('name = ".."\n', "`name` must be letters"),
    "name-too-long": (f'name = "{"x" * 101}"\n', "at most 100 characters"),
    "name-integer": ("name = 5\n", "`name` must be letters"),
    "name-with-tab": ('name = "a\\tb"\n', "`name` must be letters"),
    "name-with-escape": ('name = "a\\u001b[2J"\n', "`name` must be letters"),
    "name-not-ascii": ('name = "caf\\u00e9"\n', "`name` must be letters"),
    "rounds-nan": ("rounds = nan\n", "`rounds` must be"),
    "rounds-list": ("rounds = [1]\n", "`rounds` must be"),
    "rounds-date": ("rounds = 1979-05-27\n", "`rounds` must be"),
    "epsilon-date": ("epsilon = 1979-05-27\n", "`epsilon` must be"),
    "target-list": ("target = [1]\n", "`target` must be"),
    "generator-options-list": (
        "generator_options = [1]\n",
        "`generator_options` must be a table",
    ),
    "split-string": ('split = "a"\n', "`split` must be"),
    "seed-negative": ("seed = -1\n", "`seed` must be"),
    "target-and-record": (
        "target = {a = 1, b = 1, c = 1}\ntarget_record = {a = 1, b = 1, c = 1}\n",
        "set `target` (a record) or `target_record`, not both",
    ),
}
TOP_POLICIES = {
    "alpha-nan": ("alpha = nan\n", "`alpha` must be"),
    "alpha-string": ('alpha = "0.05"\n', "`alpha` must be"),
    "alpha-bool": ("alpha = true\n", "`alpha` must be"),
    "preset-integer": ("preset = 5\n", "`preset` must be one of"),
    "preset-list": ("preset = [1]\n", "`preset` must be one of"),
    "defaults-list": ("defaults = [1]\n", "`defaults` must be a table"),
    "audit-integer": ("audit = 5\n[x]\n", "unknown top-level key(s) ['x']"),
    "audit-list-of-integers": ("audit = [1, 2]\n", "[[audit]] #1: must be a table"),
    "audit-empty-list": ("audit = []\n", "at least one [[audit]] table"),
    "generator-integer": ("[[audit]]\ngenerator = 5\n", "`generator` must be set"),
}


def _check(capsys, files: Path, text: str, message: str) -> None:
    (files / "policy.toml").write_text(text, encoding="utf-8")
    refused(
        capsys,
        ["check", "--quiet", "--policy", "policy.toml", "--out", "out"],
        message,
    )
    assert not (files / "out").exists()


@pytest.mark.parametrize(("text", "message"), POLICIES.values(), ids=POLICIES.keys())
def test_policy_audit_table(capsys, files: Path, text: str, message: str) -> None:
    """The keys of one [[audit]] (a name names a folder: never a newline, '/', ..)."""
    if not text.startswith("[audit.x]") and text != "[[audit]]\n":
        text = "[[audit]]\n" + (RRG if "rounds" in text else RR) + text
    _check(capsys, files, text, message)


@pytest.mark.parametrize(
    ("text", "message"), TOP_POLICIES.values(), ids=TOP_POLICIES.keys()
)
def test_policy_top_level(capsys, files: Path, text: str, message: str) -> None:
    if "audit" not in text:
        text += "[[audit]]\n" + RR
    _check(capsys, files, text, message)


# ------------------------------------------------------------- data and domain

CSVS: dict[str, tuple[str | bytes, str]] = {
    "nul-in-a-value": ("a,b,c\n0,0\x000\n1,1,1\n", "non-numeric value"),
    "nul-in-the-header": ("a\x00,b,c\n0,0,0\n", "columns do not match the domain"),
    "utf16": ("a,b,c\n0,0,0\n".encode("utf-16"), "is not UTF-8 text"),
    "encoded-surrogate": (b"\xed\xa0\x80,b,c\n0,0,0\n", "is not UTF-8 text"),
    "overflowing-number": ("a,b,c\n1e400,0,0\n", "column 'a' is binary"),
    "huge-integer": ("a,b,c\n99999999999999999999999,0,0\n", "column 'a'"),
    "nan-text": ("a,b,c\nnan,0,0\n", "missing values"),
    "quoted-newline-in-header": ('"a\nx",b,c\n0,0,0\n', "columns do not match"),
    "header-only-blank-lines": ("a,b,c\n\n\n\n", "no data rows"),
}


@pytest.mark.parametrize(("content", "message"), CSVS.values(), ids=CSVS.keys())
def test_csv(capsys, files: Path, content: str | bytes, message: str) -> None:
    path = files / "data.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    argv = [*TOY, "--target", "0", "--dataset", "data.csv", "--domain", "good.json"]
    refused(capsys, [*argv, "--out", "out"], message)
    assert not (files / "out").exists()


def _column(**fields: Any) -> list[dict[str, Any]]:
    return [{"name": "a", **fields}, *BINARY]


DOMAINS: dict[str, tuple[Any, str]] = {
    "name-lone-surrogate": (
        [{"name": "\ud800", "kind": "binary"}, *BINARY],
        "`name` must be valid Unicode text",
    ),
    "category-lone-surrogate": (
        _column(kind="categorical", categories=["\udc80", "x"]),
        "`a.categories` must be valid Unicode text",
    ),
    "categories-duplicated": (
        _column(kind="categorical", categories=["x", "x"]),
        "`a.categories` must be distinct values",
    ),
    "categories-equal-numbers": (
        _column(kind="categorical", categories=[0, 0.0, 1]),
        "`a.categories` must be distinct values",
    ),
    "categories-equal-as-csv-text": (
        _column(kind="categorical", categories=[0, "0", 1]),
        "`a.categories` must be distinct values",
    ),
    "category-nan": (
        _column(kind="categorical", categories=[float("nan"), 0, 1]),
        "`a.categories` must be finite numbers or strings",
    ),
    "bound-integer-beyond-float": (
        _column(kind="integer", lower=0, upper=10**400),
        "`a.upper` must be a number within the float range",
    ),
    "integer-bounds-beyond-2-53": (
        _column(kind="integer", lower=0, upper=1e30),
        "within +-2**53 for an integer column",
    ),
    "bounds-on-a-binary-column": (
        _column(kind="binary", lower=0, upper=5),
        "`a.lower/upper` must be unset for a binary column",
    ),
    "categories-on-a-binary-column": (
        _column(kind="binary", categories=[0, 1]),
        "`a.categories` must be unset for a binary column",
    ),
    "bounds-on-a-categorical-column": (
        _column(kind="categorical", categories=[0, 1], lower=0, upper=1),
        "`a.lower/upper` must be unset for a categorical column",
    ),
}
RAW_DOMAINS = {
    "unknown-top-level-key": (
        json.dumps({"columns": _column(kind="binary"), "colums": 1}),
        "`domain` must be a JSON object with the one key",
    ),
    "nested-too-deeply": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "nan-bound": (
        '{"columns": [{"name": "a", "kind": "integer", "lower": NaN, "upper": 1}]}',
        "finite bounds",
    ),
    "infinite-bound": (
        '{"columns": [{"name": "a", "kind": "integer", "lower": -Infinity, '
        '"upper": 1}]}',
        "finite bounds",
    ),
    "null": ("null", 'a domain must be a JSON object {"columns": [...]}'),
    "columns-null": ('{"columns": null}', "a domain must be a JSON object"),
    "empty": ("", "is not valid JSON"),
    "a-csv": (GOOD_CSV, "is not valid JSON"),
}


@pytest.mark.parametrize(("columns", "message"), DOMAINS.values(), ids=DOMAINS.keys())
def test_domain(capsys, files: Path, columns: Any, message: str) -> None:
    """Names that are not valid text, categories a CSV cannot tell apart, bounds that
    overflow or that the column's kind ignores: refused naming the domain file."""
    (files / "d.json").write_text(json.dumps({"columns": columns}))
    argv = [*TOY, "--target", "0", "--dataset", "good.csv", "--domain", "d.json"]
    err = refused(capsys, [*argv, "--out", "out"], message)
    assert "d.json" in err
    assert not (files / "out").exists()


@pytest.mark.parametrize(
    ("text", "message"), RAW_DOMAINS.values(), ids=RAW_DOMAINS.keys()
)
def test_domain_file(capsys, files: Path, text: str, message: str) -> None:
    (files / "d.json").write_text(text)
    argv = [*FIT, "--dataset", "good.csv", "--domain", "d.json", "--out", "s.csv"]
    err = refused(capsys, argv, message)
    assert "d.json" in err
    assert not (files / "s.csv").exists()


# ----------------------------------------------------- paths, names and flags

ARGVS: dict[str, tuple[tuple[str, ...], str]] = {
    "dataset-name-not-utf8": (
        (
            *TOY,
            "--target",
            "0",
            "--dataset",
            f"{SURROGATE}.csv",
            "--domain",
            "good.json",
        ),
        "is not valid UTF-8 text",
    ),
    "out-name-not-utf8": ((*TOY, "--out", f"out{SURROGATE}"), "not valid UTF-8 text"),
    "domain-under-a-file": (
        (*FIT, "--dataset", "good.csv", "--domain", "good.csv/x.json"),
        "under a file",
    ),
    "domain-is-the-csv": (
        (*FIT, "--dataset", "good.csv", "--domain", "good.csv"),
        "is not valid JSON",
    ),
    "config-is-a-csv": (("audit", "--config", "good.csv"), "must be valid TOML"),
    "data-dir-is-a-file": (
        (*FIT, "--dataset", "isolet5", "--data-dir", "good.csv"),
        "dataset 'isolet5' not found",
    ),
    "audit-out-under-a-file": ((*TOY, "--out", "good.csv/sub"), "good.csv"),
    "fit-out-under-a-file": (
        (*FIT, "--dataset", "worst-case", "--out", "good.csv/s.csv"),
        "`--out` must be in an existing folder",
    ),
    "fit-claim-out-under-a-file": (
        (*FIT, "--dataset", "worst-case", "--claim-out", "good.csv/c.json"),
        "`--claim-out` must be in an existing folder",
    ),
    "trace-out-under-a-file": (
        ("trace", "--dataset", "worst-case", "--out", "good.csv/t"),
        "good.csv",
    ),
    "check-out-is-a-file": (
        ("check", "--policy", "policy.toml", "--out", "good.csv"),
        "`--out` must be a directory",
    ),
    "check-junit-under-a-file": (
        ("check", "--policy", "policy.toml", "--junit", "good.csv/j.xml"),
        "`--junit` must be under a directory",
    ),
    "check-policy-is-a-folder": (("check", "--policy", "."), "cannot read"),
    "rounds-zero": ((*TOY, "--rounds", "0"), "`rounds` must be"),
    "rounds-four": ((*TOY, "--rounds", "4"), "`rounds` must be"),
    "jobs-minus-two": ((*TOY, "--jobs", "-2"), "`jobs` must be"),
    "dataset-rows-one": ((*TOY, "--dataset-rows", "1"), "`dataset_rows` must be"),
    "public-candidates-zero": (
        (*TOY, "--public-candidates", "0"),
        "`public_candidates` must be",
    ),
    "fit-timeout-nan": ((*TOY, "--fit-timeout", "nan"), "`fit_timeout` must be"),
    "fit-timeout-zero": ((*TOY, "--fit-timeout", "0"), "`fit_timeout` must be"),
    "max-memory-zero": ((*TOY, "--max-memory", "0"), "`max_memory` must be"),
    "split-nan": ((*TOY, "--split", "nan,0.5,0.5"), "`split` must be"),
    "split-two": ((*TOY, "--split", "0.5,0.5"), "`--split` must be"),
    "target-huge": ((*TOY, "--target", str(10**30)), "`target` must be"),
    "fit-option-overflow": (
        (*FIT, "--dataset", "worst-case", "--option", "max_iterations=1e400"),
        "`--option max_iterations`",
    ),
    "option-lone-surrogate-escape": (
        (*TOY, "--option", 'note="\\ud800"'),
        "`--option` must be KEY=VALUE of valid Unicode text",
    ),
    "toy-option-unknown": (
        (*TOY, "--option", "x=1"),
        "`--option` must be an option 'randomized-response' takes (target)",
    ),
    "fit-toy-option-unknown": (
        ("fit", "--generator", "copy", "--dataset", "worst-case", "--option", "x=1"),
        "`--option` must be an option 'copy' takes",
    ),
    "target-record-nested-too-deeply": (
        (*TOY, "--target-record", "[" * 5000 + "]" * 5000),
        "`target_record` must be a JSON object",
    ),
    "scheduler-without-dask": (
        (*TOY, "--scheduler", "tcp://x:8786"),
        "`--scheduler` needs --backend dask",
    ),
    "fit-option-nan": (
        (*FIT, "--dataset", "worst-case", "--option", "lam=NaN"),
        "`--option lam`",
    ),
    "utility-models-zero": (
        ("utility", "--dataset", "cervical_cancer", "--models", "0"),
        "`n_models` must be a positive integer",
    ),
    "utility-label-of-a-named-dataset": (
        ("utility", "--dataset", "cervical_cancer", "--label", "zzz"),
        "`--label` must be unset or 'Biopsy'",
    ),
    "utility-no-label": (
        ("utility", "--dataset", "good.csv", "--domain", "good.json"),
        "`--label` must name the label column",
    ),
    "study-rounds-zero": (("study", "--quick", "--rounds", "0"), "rounds"),
    "study-only-unknown": (("study", "--quick", "--only", "nosuch"), "nosuch"),
}


@pytest.mark.parametrize(("argv", "message"), ARGVS.values(), ids=ARGVS.keys())
def test_argv(capsys, files: Path, argv: tuple[str, ...], message: str) -> None:
    (files / "policy.toml").write_text("[[audit]]\n" + RR)
    if "--out" not in argv and argv[0] != "check":
        argv = (*argv, "--out", "out")
    before = sorted(p.name for p in files.iterdir())
    refused(capsys, list(argv), message)
    assert sorted(p.name for p in files.iterdir()) == before  # nothing written


# ----------------------------------------------------- a result.json by hand


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished toy audit (about a second)."""
    out = tmp_path_factory.mktemp("finished") / "audit"
    assert main([*TOY, "--out", str(out)]) == 0
    return out


REPORTS = {
    "nested-too-deeply": (lambda text: "[" * 100_000 + "]" * 100_000, "nested too"),
    "integer-beyond-float": (
        lambda text: json.dumps({**json.loads(text), "rounds": 10**400}),
        "is not a dpaudit result",
    ),
    "empty": (lambda text: "", "is not valid JSON"),
    "null": (lambda text: "null", "result.json"),
}


@pytest.mark.parametrize("fmt", ["html", "md", "junit"])
@pytest.mark.parametrize(("edit", "message"), REPORTS.values(), ids=REPORTS.keys())
def test_report_of_an_edited_result(
    capsys, tmp_path: Path, finished: Path, edit, fmt: str, message: str
) -> None:
    audit = tmp_path / "audit"
    shutil.copytree(finished, audit)
    result = audit / "result.json"
    result.write_text(edit(result.read_text()))
    out = tmp_path / "report.out"
    refused(capsys, ["report", str(audit), "--format", fmt, "--out", str(out)], message)
    assert not out.exists()
    assert sorted(p.name for p in audit.iterdir()) == sorted(
        p.name for p in finished.iterdir()
    )


@pytest.mark.parametrize("fmt", ["html", "md", "junit"])
def test_report_of_a_result_with_a_lone_surrogate_shows_it_escaped(
    capsys, tmp_path: Path, finished: Path, fmt: str
) -> None:
    """A lone surrogate (refused at input now, but in a result.json edited by hand or
    written by an older dpaudit) is reported, shown as its escape, not refused."""
    audit = tmp_path / "audit"
    shutil.copytree(finished, audit)
    result = audit / "result.json"
    result.write_text(
        result.read_text().replace('"randomized-response"', '"\\ud800"', 1)
    )
    out = tmp_path / f"report.{fmt}"
    code = main(["report", str(audit), "--format", fmt, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "\\ud800" in text and "\ud800" not in text


def test_report_out_under_a_file(capsys, tmp_path: Path, finished: Path) -> None:
    (tmp_path / "f").write_text("")
    refused(
        capsys, ["report", str(finished), "--out", str(tmp_path / "f" / "r.html")], "f"
    )


# ----------------------------------- inputs that reached the generic handler


def test_target_auto_with_more_candidates_than_rows(capsys, files: Path) -> None:
    """--target auto on the 4-row worst case with the default 64 candidates: a pool
    model could leave out every row (an IndexError reached the generic handler);
    one row always stays now."""
    auto = ("--target", "auto", "--candidates", "64", "--selection-rounds", "5")
    code = main([*TOY, *auto, "--out", "out"])
    assert code == 0, capsys.readouterr().err


def test_huge_epsilon_is_audited(capsys, files: Path) -> None:
    """epsilon = 1e308 is a valid (useless) claim: the toy generator's e^eps
    overflowed into the generic handler."""
    code = main([*TOY, "--epsilon", "1e308", "--out", "out"])
    assert code == 0, capsys.readouterr().err


def test_cuda_where_there_is_none(capsys, files: Path) -> None:
    """--device cuda without CUDA: an AssertionError of torch reached the generic
    handler; refused now, before anything runs."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    refused(capsys, [*TOY, "--device", "cuda", "--out", "out"], "`device` must be")
    assert not (files / "out").exists()


def test_torch_cpu_allocation_is_out_of_memory() -> None:
    """torch's CPU allocator refuses with a plain RuntimeError: exit 3, "out of
    memory" (not "unexpected ... report it")."""
    from dpaudit.cli import _message
    from dpaudit.errors import exit_code_for

    err = RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't "
        "allocate memory: you tried to allocate 12000000000000 bytes."
    )
    assert exit_code_for(err) == 3
    assert _message(err).startswith("out of memory")
