"""Malformed and hostile inputs across ``dpaudit fit, audit, report, check, utility,
trace`` and ``domain infer``: about 200 cases (once benchmarks/malformed_inputs.py,
subprocesses; here in-process), beside tests/test_inputs.py (one test per class) and
tests/test_input_battery.py (TOML, CSV, domain and flag shapes, each with its message).

A case passes when it exits 2 (bad input; never 3, a crash on bad input, never 1,
``check``'s VIOLATION, and never 0) with no traceback and one line on stderr, and
leaves nothing where its ``--out`` points nor a default output folder: nothing
half-written. The plug-in cases load ``badplugins`` (and two broken entry points)
from a folder put on the path.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpaudit.cli import main

PLUGINS = """
import math
import numpy as np
import pandas as pd


class _Base:
    claim = {"epsilon": 1.0, "delta": 0.0, "accountant": "test"}

    def __init__(self, *, epsilon, delta=0.0, **options):
        self.epsilon = epsilon

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = dict(self.claim)
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32)\\
            .reset_index(drop=True)


class RaisesInFit(_Base):
    def fit(self, data, *, domain, seed):
        raise RuntimeError("boom inside the plug-in")


class NoEpsilonInit:
    def __init__(self, lam=1.0):
        pass

    def fit(self, data, *, domain, seed):
        return self

    def sample(self, n, *, seed):
        return None


class NoClaim(_Base):
    def fit(self, data, *, domain, seed):
        self.data = data
        return self


class ClaimNegative(_Base):
    claim = {"epsilon": -1.0, "delta": 0.0}


class ClaimString(_Base):
    claim = {"epsilon": "abc", "delta": 0.0}


class ClaimNaN(_Base):
    claim = {"epsilon": math.nan, "delta": 0.0}


class ClaimInf(_Base):
    claim = {"epsilon": math.inf, "delta": 0.0}


class ClaimDelta5(_Base):
    claim = {"epsilon": 1.0, "delta": 5}


class ClaimBool(_Base):
    claim = {"epsilon": True, "delta": 0.0}


class ReleaseNaN(_Base):
    def sample(self, n, *, seed):
        out = super().sample(n, seed=seed).astype(float)
        out.iloc[0, 0] = math.nan
        return out


class ReleaseOutside(_Base):
    def sample(self, n, *, seed):
        out = super().sample(n, seed=seed)
        out.iloc[0, 0] = 7
        return out


class ReleaseStrings(_Base):
    def sample(self, n, *, seed):
        out = super().sample(n, seed=seed).astype(object)
        out.iloc[0, 0] = "x"
        return out


class ReleaseList(_Base):
    def sample(self, n, *, seed):
        return [[0, 0, 0]] * n


class ReleaseShort(_Base):
    def sample(self, n, *, seed):
        return super().sample(n, seed=seed).iloc[:1]


class RaisesInSample(_Base):
    def sample(self, n, *, seed):
        raise ValueError("sampling failed")


class InitRaises(_Base):
    def __init__(self, *, epsilon, delta=0.0):
        raise TypeError("bad option")


NotAClass = 3
"""

TOY = "randomized-response"
FAST_AUDIT = (
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


def make_fixtures(root: Path) -> dict[str, str]:
    """Writes the fixture files; returns name -> path."""
    f: dict[str, str] = {}

    def put(name: str, content: str | bytes) -> str:
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        f[name] = str(path)
        return str(path)

    good_domain = {"columns": [{"name": n, "kind": "binary"} for n in "abc"]}
    put("good.csv", "a,b,c\n0,0,0\n0,0,0\n0,1,0\n1,0,0\n0,0,1\n")
    put("good.json", json.dumps(good_domain))
    put("empty.csv", "")
    put("header.csv", "a,b,c\n")
    put("binary.bin", bytes(range(256)) * 8)
    put("latin1.csv", b"a,b,c\n0,0,0\n" + "\xe9,1,0\n".encode("latin-1"))
    put("dup.csv", "a,a,c\n0,0,0\n1,1,1\n0,1,0\n")
    put("outside.csv", "a,b,c\n0,0,0\n5,0,0\n")
    put("text.csv", "a,b,c\n0,0,0\nyes,0,0\n")
    put("nan.csv", "a,b,c\n0,0,0\n,0,0\n")
    put("extra.csv", "a,b,c,d\n0,0,0,1\n")
    put("onerow.csv", "a,b,c\n1,0,1\n")
    put("cont.csv", "a,b,c\n0.5,0,0\n0.25,1,1\n0.75,0,1\n0.1,1,0\n")
    put(
        "cont.json",
        json.dumps(
            {
                "columns": [
                    {"name": "a", "kind": "continuous", "lower": 0, "upper": 1},
                    {"name": "b", "kind": "binary"},
                    {"name": "c", "kind": "binary"},
                ]
            }
        ),
    )
    put("bom.csv", "\ufeffa,b,c\n0,0,0\n1,1,1\n")
    put("semicolon.csv", "a;b;c\n0;0;0\n")
    put("ragged.csv", "a,b,c\n0,0\n1,1,1,1,1\n")

    def dom(name: str, col: object) -> str:
        return put(
            name,
            json.dumps(
                {
                    "columns": [
                        col,
                        {"name": "b", "kind": "binary"},
                        {"name": "c", "kind": "binary"},
                    ]
                }
            ),
        )

    dom("bound_str.json", {"name": "a", "kind": "integer", "lower": "abc", "upper": 1})
    dom("bound_list.json", {"name": "a", "kind": "integer", "lower": [0], "upper": 1})
    dom("bound_bool.json", {"name": "a", "kind": "integer", "lower": False, "upper": 1})
    dom("bound_dict.json", {"name": "a", "kind": "integer", "lower": {}, "upper": 1})
    dom("minmax.json", {"name": "a", "kind": "integer", "lower": 5, "upper": 1})
    dom("kind.json", {"name": "a", "kind": "float"})
    dom("noname.json", {"kind": "binary"})
    dom("name_int.json", {"name": 3, "kind": "binary"})
    dom("cats_str.json", {"name": "a", "kind": "categorical", "categories": "xyz"})
    dom("cats_empty.json", {"name": "a", "kind": "categorical", "categories": []})
    dom("bound_nan.json", {"name": "a", "kind": "integer", "lower": "NaN", "upper": 1})
    put("dom_list.json", "[1, 2, 3]")
    put("dom_empty_cols.json", '{"columns": []}')
    put("dom_cols_obj.json", '{"columns": {"a": 1}}')
    put("dom_invalid.json", '{"columns": [')
    put("dom_dup.json", json.dumps({"columns": [{"name": "a", "kind": "binary"}] * 2}))
    (root / "adir").mkdir()
    f["adir"] = str(root / "adir")

    put("cfg_bad.toml", "rounds = [\n")
    put("cfg_unknown.toml", "rownds = 5\n")
    put("cfg_eps_str.toml", 'epsilon = "abc"\n')
    put("cfg_rounds_float.toml", "rounds = 5.5\n")
    put("cfg_rounds_str.toml", 'rounds = "many"\n')
    put("cfg_bugs_int.toml", "bugs = 5\n")
    put("cfg_opts_str.toml", 'generator_options = "lam=1"\n')
    put("cfg_split.toml", "split = [0.5, 0.5]\n")
    put("cfg_split_str.toml", 'split = ["a", "b", "c"]\n')
    put("cfg_target_list.toml", "target_record = [1, 2]\n")
    put("cfg_seed_float.toml", "seed = 1.5\n")
    put("cfg_delta_str.toml", 'delta = "small"\n')
    put("cfg_alpha_str.toml", 'alpha = "x"\n')
    put("cfg_dataset_int.toml", "dataset = 3\n")
    put("cfg_generator_list.toml", "generator = [1]\n")
    put("cfg_randomness.toml", 'randomness = "sometimes"\n')
    put("cfg_target_float.toml", "target = 1.5\n")

    put("policy_bad.toml", "alpha = [\n")
    put("policy_empty.toml", "")
    put("policy_unknown.toml", "alhpa = 0.05\n")
    put("policy_gen.toml", '[[audit]]\nname = "x"\ngenerator = "nosuch"\n')

    (root / "rep_empty").mkdir()
    (root / "rep_bin").mkdir()
    (root / "rep_bin" / "result.json").write_bytes(bytes(range(256)))
    (root / "rep_list").mkdir()
    (root / "rep_list" / "result.json").write_text("[1, 2]")
    (root / "rep_partial").mkdir()
    (root / "rep_partial" / "result.json").write_text('{"verdict": "CONSISTENT"}')
    for name in ("rep_empty", "rep_bin", "rep_list", "rep_partial"):
        f[name] = str(root / name)

    pkg = root / "plugpath"
    pkg.mkdir()
    (pkg / "badplugins.py").write_text(textwrap.dedent(PLUGINS))
    dist = pkg / "brokenplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[dpaudit.generators]\nbroken-ep = no_such_module_xyz:Gen\n"
        "broken-attr = badplugins:Missing\n"
    )
    f["plugpath"] = str(pkg)
    return f


def cases(f: dict[str, str], out: str) -> list[tuple[str, list[str]]]:
    """(input class, argv) of every case; ``out`` is a path that must stay absent."""
    ds, good = ("--dataset", f["good.csv"]), ("--domain", f["good.json"])
    fit = ["fit", "--device", "cpu", "--option", "max_iterations=1"]
    fitc = [*fit, *ds, *good]
    aud = ["audit", "--generator", TOY, *FAST_AUDIT]
    plug = "badplugins:"
    c: list[tuple[str, list[str]]] = []
    add = c.append

    # Files that are not CSV tables.
    for cmd in ("fit", "audit", "domain"):
        for name, cls in (
            ("empty.csv", "empty-csv"),
            ("header.csv", "empty-csv"),
            ("binary.bin", "binary-file"),
            ("latin1.csv", "non-utf8"),
            ("adir", "directory"),
            ("ragged.csv", "malformed-csv"),
        ):
            if cmd == "fit":
                add((cls, [*fitc[:-4], "--dataset", f[name], *good, "--out", out]))
            elif cmd == "audit":
                add((cls, [*aud, "--dataset", f[name], *good, "--out", out]))
            else:
                add((cls, ["domain", "infer", f[name]]))
    add(("missing-file", ["domain", "infer", "/no/such.csv"]))
    add(("duplicate-header", ["domain", "infer", f["dup.csv"]]))
    add(("duplicate-header", [*fit, "--dataset", f["dup.csv"], *good, "--out", out]))
    add(("duplicate-header", [*aud, "--dataset", f["dup.csv"], *good, "--out", out]))
    for name in ("outside.csv", "text.csv", "nan.csv", "extra.csv", "semicolon.csv"):
        add(("data-vs-domain", [*fit, "--dataset", f[name], *good, "--out", out]))

    # Domain files.
    for name in (
        "bound_str.json",
        "bound_list.json",
        "bound_bool.json",
        "bound_dict.json",
        "bound_nan.json",
        "kind.json",
        "noname.json",
        "name_int.json",
        "cats_str.json",
        "cats_empty.json",
        "dom_list.json",
        "dom_empty_cols.json",
        "dom_cols_obj.json",
        "dom_invalid.json",
        "dom_dup.json",
        "binary.bin",
    ):
        add(("domain-file", [*fit, *ds, "--domain", f[name], "--out", out]))
    add(("domain-minmax", [*fit, *ds, "--domain", f["minmax.json"], "--out", out]))
    add(("domain-minmax", [*aud, *ds, "--domain", f["minmax.json"], "--out", out]))
    add(("directory", [*fit, *ds, "--domain", f["adir"], "--out", out]))
    add(("directory", [*aud, *ds, "--domain", f["adir"], "--out", out]))
    add(("named-dataset-domain", [*fit, "--dataset", "isolet5", *good, "--out", out]))
    add(
        (
            "named-dataset-domain",
            [*fit, "--dataset", "cervical_cancer", *good, "--out", out],
        )
    )
    add(
        (
            "named-dataset-domain",
            [
                *aud,
                "--dataset",
                "cervical_cancer",
                *good,
                "--target",
                "0",
                "--out",
                out,
            ],
        )
    )
    add(
        ("named-dataset-domain", [*fit, "--dataset", "worst-case", *good, "--out", out])
    )
    add(
        (
            "data-dir",
            [*fit, "--dataset", "isolet5", "--data-dir", f["adir"], "--out", out],
        )
    )

    # Options.
    for opt in (
        "lam=abc",
        "max_iterations=abc",
        "max_iterations=-1",
        "max_iterations=1.5",
        "noequals",
        "=3",
        "no_such_option=1",
        "num_teachers=0",
        "lam=[1,2]",
        "batch_size=0",
    ):
        add(
            (
                "option-type",
                [*fit, "--dataset", "worst-case", "--option", opt, "--out", out],
            )
        )
    add(
        (
            "option-type",
            [*aud[:2], "pategan", *aud[3:], "--option", "lam=abc", "--out", out],
        )
    )
    add(("option-type", [*aud, "--option", "target=5", "--out", out]))

    # Numbers.
    for flag, value in (
        ("--rows", "-5"),
        ("--rows", "0"),
        ("--epsilon", "nan"),
        ("--epsilon", "inf"),
        ("--epsilon", "0"),
        ("--epsilon", "-1"),
        ("--delta", "1"),
        ("--delta", "-0.1"),
        ("--delta", "5"),
        ("--delta", "nan"),
        ("--seed", "-1"),
        ("--epsilon", "abc"),
    ):
        add(("number", [*fit, "--dataset", "worst-case", flag, value, "--out", out]))
    for flag, value in (
        ("--rounds", "-5"),
        ("--rounds", "abc"),
        ("--epsilon", "nan"),
        ("--epsilon", "inf"),
        ("--delta", "1"),
        ("--delta", "nan"),
        ("--alpha", "0"),
        ("--alpha", "nan"),
        ("--synthetic-rows", "0"),
        ("--batch-size", "0"),
        ("--jobs", "0"),
        ("--candidates", "0"),
        ("--selection-rounds", "2"),
        ("--seed", "-1"),
    ):
        add(("number", [*aud, flag, value, "--out", out]))
    add(
        (
            "number",
            ["trace", "--dataset", "worst-case", "--iterations", "0", "--out", out],
        )
    )
    add(
        (
            "number",
            ["trace", "--dataset", "worst-case", "--iterations", "-3", "--out", out],
        )
    )

    # Targets.
    for record in (
        "[1, 2]",
        '"abc"',
        "notjson",
        '{"a": 1}',
        '{"a": 1, "b": 1, "zz": 1}',
        '{"a": "x", "b": 1, "c": 1}',
        '{"a": 5, "b": 1, "c": 1}',
        "null",
        "{}",
    ):
        add(("target-record", [*aud, "--target-record", record, "--out", out]))
    add(
        (
            "target-conflict",
            [
                *aud,
                "--target",
                "0",
                "--target-record",
                '{"a": 1, "b": 1, "c": 1}',
                "--out",
                out,
            ],
        )
    )
    for target in ("-1", "abc", "999", "1.5"):
        add(("target", [*aud, "--target", target, "--out", out]))

    # Output paths.
    add(("out-path", [*fit, "--dataset", "worst-case", "--out", ""]))
    add(("out-path", [*fit, "--dataset", "worst-case", "--out", f["adir"]]))
    add(("out-path", [*fit, "--dataset", "worst-case", "--out", out + "-no/dir/s.csv"]))
    add(
        (
            "out-path",
            [*fit, "--dataset", "worst-case", "--out", out, "--claim-out", f["adir"]],
        )
    )
    add(
        ("out-path", [*fit, "--dataset", "worst-case", "--out", out, "--claim-out", ""])
    )
    add(("out-path", [*aud, "--out", ""]))
    add(("out-path", [*aud, "--out", f["good.csv"]]))
    add(("out-path", ["trace", "--dataset", "worst-case", "--out", ""]))
    add(("out-path", ["trace", "--dataset", "worst-case", "--out", f["good.csv"]]))

    # Configuration files.
    for name in (
        "cfg_bad.toml",
        "cfg_unknown.toml",
        "cfg_eps_str.toml",
        "cfg_rounds_float.toml",
        "cfg_rounds_str.toml",
        "cfg_bugs_int.toml",
        "cfg_opts_str.toml",
        "cfg_split.toml",
        "cfg_split_str.toml",
        "cfg_target_list.toml",
        "cfg_seed_float.toml",
        "cfg_delta_str.toml",
        "cfg_alpha_str.toml",
        "cfg_dataset_int.toml",
        "cfg_generator_list.toml",
        "cfg_randomness.toml",
        "cfg_target_float.toml",
        "binary.bin",
        "adir",
    ):
        # No --rounds/--generator flags: a flag overrides the file's key.
        add(
            (
                "config-file",
                ["audit", "--quiet", "--jobs", "1", "--config", f[name], "--out", out],
            )
        )

    # Plug-ins.
    for name, cls in (
        ("RaisesInFit", "plugin-raises"),
        ("RaisesInSample", "plugin-raises"),
        ("InitRaises", "plugin-raises"),
        ("NoEpsilonInit", "plugin-contract"),
        ("NoClaim", "plugin-contract"),
        ("NotAClass", "plugin-contract"),
        ("Missing", "plugin-contract"),
        ("ClaimNegative", "plugin-claim"),
        ("ClaimString", "plugin-claim"),
        ("ClaimNaN", "plugin-claim"),
        ("ClaimInf", "plugin-claim"),
        ("ClaimDelta5", "plugin-claim"),
        ("ClaimBool", "plugin-claim"),
        ("ReleaseNaN", "plugin-release"),
        ("ReleaseOutside", "plugin-release"),
        ("ReleaseStrings", "plugin-release"),
        ("ReleaseList", "plugin-release"),
        ("ReleaseShort", "plugin-release"),
    ):
        add(
            (
                cls,
                [
                    "fit",
                    "--generator",
                    plug + name,
                    "--dataset",
                    "worst-case",
                    "--out",
                    out,
                ],
            )
        )
        add((cls, [*aud[:2], plug + name, *aud[3:], "--out", out]))
    add(
        (
            "plugin-entry-point",
            [*fit, "--generator", "broken-ep", "--dataset", "worst-case", "--out", out],
        )
    )
    add(("plugin-entry-point", [*aud[:2], "broken-attr", *aud[3:], "--out", out]))
    add(("plugin-entry-point", [*aud[:2], "broken-ep", *aud[3:], "--out", out]))
    add(("plugin-name", [*fit, "--generator", "nomodule_xyz:Gen", "--out", out]))
    add(("plugin-name", [*fit, "--generator", ":", "--out", out]))
    add(("plugin-name", [*fit, "--generator", "dpaudit.data:Domain", "--out", out]))
    add(
        (
            "generator-choice",
            [
                *fit,
                "--dataset",
                "worst-case",
                "--generator",
                "copy",
                "--variant",
                "original",
                "--out",
                out,
            ],
        )
    )
    add(("generator-choice", [*aud, "--bug", "nope", "--out", out]))
    add(
        (
            "generator-choice",
            ["trace", "--dataset", "worst-case", "--generator", "copy", "--out", out],
        )
    )

    # report / check / utility / audit --resume.
    for name in ("rep_empty", "rep_bin", "rep_list", "rep_partial", "good.csv"):
        add(("report-input", ["report", f[name], "--out", out]))
    add(("report-input", ["report", "/no/such/dir", "--out", out]))
    for name in (
        "policy_bad.toml",
        "policy_empty.toml",
        "policy_unknown.toml",
        "policy_gen.toml",
        "binary.bin",
        "adir",
    ):
        add(("check-policy", ["check", "--policy", f[name], "--out", out]))
    add(("check-policy", ["check", "--policy", "/no/such.toml", "--out", out]))
    for name, extra in (
        ("empty.csv", []),
        ("binary.bin", []),
        ("onerow.csv", []),
        ("cont.csv", ["--label", "a"]),
        ("dup.csv", []),
    ):
        domain = f["cont.json"] if name == "cont.csv" else f["good.json"]
        add(
            (
                "utility-input",
                [
                    "utility",
                    "--dataset",
                    f[name],
                    "--domain",
                    domain,
                    "--label",
                    "c",
                    *extra,
                    "--models",
                    "1",
                    "--samples",
                    "1",
                    "--classifier",
                    "LogisticRegression",
                    "--no-progress",
                    "--out",
                    out,
                ],
            )
        )
    add(("resume", ["audit", "--resume", "/no/such/dir"]))
    add(("resume", ["audit", "--resume", f["good.csv"]]))
    add(("resume", ["audit", "--resume", f["rep_bin"]]))
    return c


#: Where the fixtures and the case's --out stand when the cases are listed; the
#: test puts the real folders in.
ROOT, OUT = "@ROOT@", "@ROOT@/OUT"


class _Paths(dict[str, str]):
    """The fixtures' paths under :data:`ROOT`, by name (for listing the cases)."""

    def __missing__(self, name: str) -> str:
        return f"{ROOT}/{name}"


CASES = cases(_Paths(), OUT)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("malformed")
    made = make_fixtures(root)
    assert all(p.startswith(str(root)) for p in made.values())
    return root


@pytest.fixture
def plugins_on_path(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``badplugins`` and the broken entry points importable here and in the
    plug-in workers; the module is forgotten afterwards."""
    plugpath = str(fixtures / "plugpath")
    monkeypatch.syspath_prepend(plugpath)
    paths = [plugpath, os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    yield
    sys.modules.pop("badplugins", None)


def test_the_battery_covers_every_class() -> None:
    classes = {cls for cls, _ in CASES}
    assert len(CASES) >= 200 and len(classes) == 30, (len(CASES), sorted(classes))


@pytest.mark.usefixtures("plugins_on_path")
@pytest.mark.parametrize(
    "argv",
    [argv for _, argv in CASES],
    ids=[f"{i}-{c}" for i, (c, _) in enumerate(CASES)],
)
def test_refused_before_any_work(
    capsys: pytest.CaptureFixture[str],
    fixtures: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    out = tmp_path / "OUT"
    argv = [a.replace(OUT, str(out)).replace(ROOT, str(fixtures)) for a in argv]
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback (most recent call last)" not in err
    assert len(lines) == 1, err
    assert not out.exists() and not (cwd / "dpaudit-audit").exists()
