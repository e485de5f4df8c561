"""``dpaudit check``: policy parsing, the Bonferroni split, exit codes, JUnit and
summary output, with an injected runner (and one slow end-to-end run)."""

from __future__ import annotations

import argparse
import functools
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpaudit import ci as check
from dpaudit.ci import (
    DEFAULT_ALPHA,
    PRESETS,
    exit_code_of,
    load_policy,
    parse_policy,
    run_check,
    write_junit,
    write_summary,
)
from dpaudit.commands import check as check_command
from dpaudit.errors import InvalidParameterError

POLICY = """
alpha = 0.1

[defaults]
epsilon = 1.0
delta = 1e-5

[[audit]]
name = "reference"
generator = "pategan"
attack = "querybased"

[[audit]]
name = "synthcity"
generator = "pategan"
variant = "synthcity"
bugs = ["data_bounds"]
dataset = "worst-case"
target = { a = 1, b = 1, c = 1 }
rounds = 300
synthetic_rows = 100
batch_size = 64
seed = 3

[[audit]]
generator = "mypkg.module:MyGenerator"
generator_options = { hidden = 8 }
"""


def fake_result(settings: Mapping[str, Any], verdict: str) -> dict[str, Any]:
    """A result.json as the runner writes it, for the injected runner."""
    eps = {"VIOLATION": 4.2, "CONSISTENT": 0.3}.get(verdict)
    counts = {"tp": 300, "fp": 20, "tn": 380, "fn": 100}
    return {
        "schema_version": 1,
        "version": "0.1.0",
        "verdict": verdict,
        "eps_emp": eps,
        "eps_claimed": settings.get("epsilon", 1.0),
        "eps_reference": None,
        "eps_max_attainable": 4.6,
        "auc": 0.8,
        "counts": counts,
        "attack": "querybased",
        "estimator": {
            "method": "clopper_pearson",
            "alpha": settings["alpha"],
            "confidence": 1 - settings["alpha"],
            "correction": "none",
            "n_attacks": 1,
            "test_non_members": 400,
            "test_members": 400,
        },
        "delta": settings.get("delta", 1e-5),
        "attacks": {
            "querybased": {
                "eps_emp": eps,
                "eps_max_attainable": 4.6,
                "auc": 0.8,
                "counts": counts,
                "threshold": 0.5,
                "direction": 1,
                "alpha": settings["alpha"],
                "roc": {"fpr": [0, 0.05, 1], "tpr": [0, 0.75, 1]},
                "scores": {"member": [0.9, 0.2], "non_member": [0.1, 0.3]},
            }
        },
        "generator": settings["generator"],
        "variant": settings.get("variant"),
        "bugs": list(settings.get("bugs", [])),
        "dataset": settings.get("dataset", "worst-case"),
        "target": dict(settings.get("target_record") or {"a": 1, "b": 1, "c": 1}),
        "claim": {
            "epsilon": settings.get("epsilon", 1.0),
            "delta": 1e-5,
            "accountant": "pate-moments",
        },
        "config": dict(settings),
        "seed": settings.get("seed", 0),
        "rounds": {
            "total": 2000,
            "per_world": 1000,
            "train": 800,
            "validation": 400,
            "test": 800,
        },
        "timing": {"train_seconds": 1.0, "total_seconds": 1.5},
    }


class FakeRunner:
    """Stands in for run_audit: writes result.json; verdict by variant."""

    def __init__(
        self,
        verdicts: Mapping[str | None, str] | None = None,
        fail: set[str] | None = None,
    ) -> None:
        self.verdicts = dict(verdicts or {})
        self.fail = fail or set()
        self.calls: list[tuple[dict[str, Any], Path, bool]] = []

    def __call__(
        self, config: dict[str, Any], *, out_dir: Path, progress: bool = False
    ) -> dict[str, Any]:
        self.calls.append((config, Path(out_dir), progress))
        if config["generator"] in self.fail:
            raise RuntimeError("training diverged")
        verdict = self.verdicts.get(config.get("variant"), "CONSISTENT")
        doc = fake_result(config, verdict)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "result.json").write_text(json.dumps(doc), encoding="utf-8")
        return doc


def run(
    policy: check.Policy, tmp_path: Path, runner: FakeRunner, **kwargs: Any
) -> check.CheckReport:
    return run_check(
        policy, out_dir=tmp_path / "out", runner=runner, make_config=dict, **kwargs
    )


# ------------------------------------------------------------------ parsing


def test_policy_parsing_merges_defaults_and_names(tmp_path: Path) -> None:
    path = tmp_path / "privacy.toml"
    path.write_text(POLICY, encoding="utf-8")
    policy = load_policy(path)
    assert policy.source == str(path)
    assert policy.alpha == 0.1 and policy.preset is None
    assert [a.name for a in policy.audits] == [
        "reference",
        "synthcity",
        "03-mypkg.module-MyGenerator",
    ]
    synthcity = policy.audits[1].settings
    assert synthcity["epsilon"] == 1.0 and synthcity["delta"] == 1e-5
    assert synthcity["rounds"] == 300 and synthcity["seed"] == 3
    assert synthcity["bugs"] == ["data_bounds"]
    # A target table is a record: it becomes the audit key `target_record`.
    assert synthcity["target_record"] == {"a": 1, "b": 1, "c": 1}
    assert "target" not in synthcity and "name" not in synthcity
    assert policy.audits[2].settings["generator_options"] == {"hidden": 8}


def test_bonferroni_split_over_audits() -> None:
    policy = parse_policy({"alpha": 0.1, "audit": [{"generator": "pategan"}] * 4})
    assert policy.audit_alpha == pytest.approx(0.025)
    assert all(a.settings["alpha"] == pytest.approx(0.025) for a in policy.audits)


def test_default_alpha_for_one_audit_is_the_study_level() -> None:
    policy = parse_policy({"audit": [{"generator": "pategan"}]})
    assert DEFAULT_ALPHA == 0.05
    assert policy.audits[0].settings["alpha"] == 0.05


def test_quick_preset_is_applied_under_the_audit_keys() -> None:
    policy = parse_policy(
        {
            "preset": "quick",
            "audit": [
                {"generator": "pategan", "name": "a"},
                {
                    "generator": "pategan",
                    "name": "b",
                    "rounds": 500,
                    "generator_options": {"max_iterations": 80, "lam": 0.01},
                },
                {"generator": "my.mod:Gen", "name": "c"},
            ],
        }
    )
    a, b, c = (x.settings for x in policy.audits)
    assert a["rounds"] == 500 and a["generator_options"] == {"max_iterations": 50}
    assert b["rounds"] == 500
    assert b["generator_options"] == {"max_iterations": 80, "lam": 0.01}
    # A plug-in never receives a built-in generator's options.
    assert c["rounds"] == 500 and "generator_options" not in c


@pytest.mark.parametrize(
    ("mapping", "fragment"),
    [
        ({}, "at least one [[audit]]"),
        ({"audit": []}, "at least one [[audit]]"),
        ({"audit": [{"variant": "x"}]}, "`generator` must be set"),
        (
            {"alpha": 0.7, "audit": [{"generator": "g"}]},
            "`alpha` must be a number in (0, 0.5)",
        ),
        ({"alpha": "0.1", "audit": [{"generator": "g"}]}, "`alpha` must be a number"),
        ({"preset": "slow", "audit": [{"generator": "g"}]}, "`preset` must be one of"),
        ({"generator": "g", "audit": [{"generator": "g"}]}, "unknown top-level key"),
        ({"audit": [{"generator": "g", "alpha": 0.01}]}, "`alpha` is set once"),
        (
            {"defaults": {"alpha": 0.01}, "audit": [{"generator": "g"}]},
            "`alpha` is set once",
        ),
        ({"audit": [{"generator": "g", "name": "a/b"}]}, "`name` must be"),
        (
            {
                "audit": [
                    {"generator": "g", "name": "x"},
                    {"generator": "h", "name": "x"},
                ]
            },
            "used twice",
        ),
        (
            {
                "audit": [
                    {"generator": "g", "target": {"a": 1}, "target_record": {"a": 1}}
                ]
            },
            "not both",
        ),
        (
            {"audit": [{"generator": "g", "generator_options": 3}]},
            "`generator_options` must be a table",
        ),
        ({"defaults": 1, "audit": [{"generator": "g"}]}, "`defaults` must be a table"),
    ],
)
def test_bad_policies_are_refused(mapping: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        parse_policy(mapping, source="p.toml")
    assert str(info.value).startswith("p.toml")
    assert fragment in str(info.value)


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("alpha = ", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="is not valid TOML"):
        load_policy(bad)
    with pytest.raises(InvalidParameterError, match="must be an existing TOML file"):
        load_policy(tmp_path / "none.toml")


def test_example_policy_parses() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "privacy.toml"
    policy = load_policy(example)
    assert policy.audits and all("generator" in a.settings for a in policy.audits)


# ------------------------------------------------------------------ exit codes


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        (["CONSISTENT"], 0),
        (["CONSISTENT", "CONSISTENT"], 0),
        (["CONSISTENT", "VIOLATION"], 1),
        # A VIOLATION dominates every other outcome.
        (["VIOLATION", "ERROR"], 1),
        (["INCONCLUSIVE", "VIOLATION"], 1),
        ([2, "VIOLATION", "INCONCLUSIVE"], 1),
        # Then bad input (2), a failed run (3), an INCONCLUSIVE audit (4).
        (["INCONCLUSIVE", "ERROR", 2], 2),
        (["CONSISTENT", "ERROR", "INCONCLUSIVE"], 3),
        (["CONSISTENT", "INCONCLUSIVE"], 4),
        ([], 2),
    ],
)
def test_exit_code_of(statuses: list[str], code: int) -> None:
    assert exit_code_of(statuses) == code


def test_all_consistent_passes(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "name": "a"},
                {"generator": "gpate", "name": "b"},
            ]
        }
    )
    runner = FakeRunner()
    lines: list[str] = []
    report = run(policy, tmp_path, runner, log=lines.append)
    assert report.exit_code == 0
    assert [o.status for o in report.outcomes] == ["CONSISTENT", "CONSISTENT"]
    assert [c[1] for c in runner.calls] == [
        tmp_path / "out" / "a",
        tmp_path / "out" / "b",
    ]
    assert all(c[0]["alpha"] == 0.025 for c in runner.calls)
    assert (tmp_path / "out" / "a" / "report.html").is_file()
    assert (tmp_path / "out" / "report.html").is_file()  # the comparison
    assert lines[0].startswith("[1/2] a: CONSISTENT (eps_emp 0.30 <= claimed 1")


def test_a_violation_fails_with_exit_1(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "name": "ref"},
                {"generator": "pategan", "variant": "synthcity", "name": "bad"},
            ]
        }
    )
    report = run(policy, tmp_path, FakeRunner({"synthcity": "VIOLATION"}))
    assert report.exit_code == 1
    assert [o.status for o in report.outcomes] == ["CONSISTENT", "VIOLATION"]
    assert report.outcomes[1].report_path == tmp_path / "out" / "bad" / "report.html"


def test_a_failed_run_is_recorded_and_a_violation_still_gives_exit_1(
    tmp_path: Path,
) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "boom", "name": "x"},
                {"generator": "pategan", "variant": "synthcity", "name": "y"},
            ]
        }
    )
    report = run(
        policy, tmp_path, FakeRunner({"synthcity": "VIOLATION"}, fail={"boom"})
    )
    first = report.outcomes[0]
    assert first.status == "ERROR" and first.result is None
    assert first.error == "RuntimeError: training diverged"
    assert first.exit_code == 3  # an unexpected error: a failed run
    assert report.outcomes[1].status == "VIOLATION"  # the others still ran
    assert report.exit_code == 1
    assert report.headline.startswith("FAILED: 1 VIOLATION (y: ")
    assert report.headline.index("VIOLATION") < report.headline.index("failed to run")


def test_a_failed_run_gives_exit_3(tmp_path: Path) -> None:
    policy = parse_policy({"audit": [{"generator": "boom"}, {"generator": "pategan"}]})
    report = run(policy, tmp_path, FakeRunner(fail={"boom"}))
    assert [o.status for o in report.outcomes] == ["ERROR", "CONSISTENT"]
    assert report.exit_code == 3
    assert report.headline == (
        "FAILED: 1 failed to run (01-boom: see the error); 1 CONSISTENT"
    )


class BadInputRunner(FakeRunner):
    """A runner whose audit stops on bad input found while running (a plug-in that
    breaks its contract) or on running out of memory."""

    def __call__(
        self, config: dict[str, Any], *, out_dir: Path, progress: bool = False
    ) -> dict[str, Any]:
        from dpaudit.errors import PluginError

        if config["generator"] == "oom":
            try:
                raise MemoryError
            except MemoryError as err:  # as the plug-in adapter wraps it
                raise PluginError(
                    "generator 'oom': its `fit` raised MemoryError"
                ) from err
        if config["generator"] == "mod:Broken":
            raise PluginError("generator 'mod:Broken' breaks the plug-in contract")
        return super().__call__(config, out_dir=out_dir, progress=progress)


def test_an_audit_stopped_on_bad_input_gives_exit_2(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "mod:Broken", "name": "broken"},
                {"generator": "oom", "name": "big"},
                {"generator": "pategan", "variant": "v", "name": "weak"},
            ]
        }
    )
    report = run(policy, tmp_path, BadInputRunner({"v": "INCONCLUSIVE"}))
    assert [o.exit_code for o in report.outcomes] == [2, 3, 4]
    assert report.exit_code == 2
    assert report.headline.startswith(
        "FAILED: 1 could not run (bad input) (broken: fix the input named); "
        "1 failed to run (big: see the error); 1 INCONCLUSIVE (weak: "
    )


def test_inconclusive_gives_exit_4(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "variant": "v", "name": "weak"},
                {"generator": "pategan", "name": "ok"},
            ]
        }
    )
    report = run(policy, tmp_path, FakeRunner({"v": "INCONCLUSIVE"}))
    assert report.outcomes[0].status == "INCONCLUSIVE" and report.exit_code == 4
    assert report.headline == (
        "FAILED: 1 INCONCLUSIVE (weak: too weak to refute the claim: give it more "
        "rounds); 1 CONSISTENT"
    )


def test_a_violation_and_an_inconclusive_audit_exit_1_violation_first(
    tmp_path: Path,
) -> None:
    """Issue 25 item 7: the INCONCLUSIVE audit comes first in the policy, and the
    check still exits 1 with the VIOLATION named first, in the log, the summary
    heading and the JUnit file."""
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "variant": "v", "name": "weak"},
                {"generator": "pategan", "variant": "synthcity", "name": "leak"},
            ]
        },
        source="privacy.toml",
    )
    runner = FakeRunner({"v": "INCONCLUSIVE", "synthcity": "VIOLATION"})
    report = run(policy, tmp_path, runner, reports=False)
    assert report.exit_code == 1
    assert report.headline.startswith("FAILED: 1 VIOLATION (leak: privacy violation")
    assert report.headline.index("VIOLATION") < report.headline.index("INCONCLUSIVE")
    text = check.render_check_markdown(report)
    assert text.startswith("## dpaudit check FAILED: 1 VIOLATION (leak")
    assert "(exit 1)" in text.splitlines()[0]
    # The explanations too: the VIOLATION's paragraph before the INCONCLUSIVE one.
    assert text.index("**leak** (VIOLATION") < text.index("**weak** (INCONCLUSIVE")
    write_junit(report, tmp_path / "j.xml")
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None
    props = {
        p.get("name"): p.get("value") for p in suite.findall("./properties/property")
    }
    assert props["exit_code"] == "1"


def test_a_result_off_schema_is_an_error(tmp_path: Path) -> None:
    def runner(config: dict[str, Any], *, out_dir: Path, progress: bool) -> dict:
        Path(out_dir).mkdir(parents=True)
        (Path(out_dir) / "result.json").write_text('{"schema_version": 1}', "utf-8")
        return {}

    policy = parse_policy({"audit": [{"generator": "pategan"}]})
    report = run_check(policy, out_dir=tmp_path, runner=runner, make_config=dict)
    assert report.outcomes[0].status == "ERROR"
    assert "is not a valid dpaudit result" in (report.outcomes[0].error or "")


def test_bad_settings_stop_the_check_before_any_run(tmp_path: Path) -> None:
    def make_config(settings: Mapping[str, Any]) -> dict:
        if settings.get("rounds", 0) < 0:
            raise InvalidParameterError("`rounds` must be an integer >= 5. Got -1.")
        return dict(settings)

    runner = FakeRunner()
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "name": "ok"},
                {"generator": "pategan", "rounds": -1, "name": "bad"},
            ]
        },
        source="p.toml",
    )
    with pytest.raises(InvalidParameterError, match=r"p\.toml, audit 'bad': `rounds`"):
        run_check(policy, out_dir=tmp_path, runner=runner, make_config=make_config)
    assert runner.calls == []


def test_planned_power_uses_the_game_split_and_the_split_alpha() -> None:
    from dpaudit.audit.stats import calibrated

    policy = parse_policy(
        {
            "preset": "quick",
            # Analysed once: the preset's description states those figures.
            "defaults": {"sequential": False},
            "audit": [
                {"generator": "pategan", "attack": "querybased"},
                {"generator": "pategan"},  # the default set: three attacks
            ],
            "alpha": 0.1,
        }
    )
    planned = check.planned_power(policy.audits[0].settings)
    assert planned == pytest.approx(
        calibrated.eps_max_attainable(200, 200, delta=1e-5, alpha=0.05)
    )
    # The default set splits the audit's alpha over its three attacks, as the
    # analysis does: the Power paragraph and the result's maximum agree.
    default = check.planned_power(policy.audits[1].settings)
    assert default == pytest.approx(
        calibrated.eps_max_attainable(200, 200, delta=1e-5, alpha=0.05 / 3)
    )
    # The preset's description states both numbers.
    text = PRESETS["quick"].description
    assert f"about {planned:.2f}" in text and f"{default:.2f} with the default" in text
    two = parse_policy(
        {
            "preset": "quick",
            "alpha": 0.05,
            "audit": [{"generator": "pategan", "attack": "querybased"}] * 2,
        }
    )
    weaker = check.planned_power(two.audits[0].settings)
    assert weaker is not None and weaker < planned
    # The check's default, sequential looks: the full size is the last look, at
    # its share of the audit's alpha (200 + 200 test rounds, as analysed once).
    from dpaudit.audit.games.looks import LOOK_WEIGHTS

    looks = parse_policy(
        {"preset": "quick", "alpha": 0.05, "audit": [{"generator": "pategan"}]}
    )
    assert looks.audits[0].settings["sequential"] is True
    assert check.planned_power(looks.audits[0].settings) == pytest.approx(
        calibrated.eps_max_attainable(
            200, 200, delta=1e-5, alpha=0.05 * LOOK_WEIGHTS[-1] / 3
        )
    )


# ------------------------------------------------------------------ outputs


def violation_report(tmp_path: Path) -> check.CheckReport:
    policy = parse_policy(
        {
            "alpha": 0.1,
            "preset": "quick",
            "audit": [
                {"generator": "pategan", "name": "ref"},
                {"generator": "pategan", "variant": "synthcity", "name": "bad"},
                {"generator": "boom", "name": "broken"},
            ],
        },
        source="privacy.toml",
    )
    return run(
        policy,
        tmp_path,
        FakeRunner({"synthcity": "VIOLATION"}, fail={"boom"}),
        reports=False,
    )


def test_junit_has_one_case_per_audit(tmp_path: Path) -> None:
    report = violation_report(tmp_path)
    path = write_junit(report, tmp_path / "junit.xml")
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "dpaudit check"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["ref", "bad", "broken"]
    assert cases["ref"].find("failure") is None and cases["ref"].find("error") is None
    failure = cases["bad"].find("failure")
    assert failure is not None and "eps_emp = 4.20 > claimed epsilon 1" in (
        failure.get("message") or ""
    )
    error = cases["broken"].find("error")
    assert error is not None and "training diverged" in (error.get("message") or "")
    props = {
        p.get("name"): p.get("value") for p in suite.findall("./properties/property")
    }
    assert props["alpha"] == "0.1" and props["alpha_per_audit"] == "0.0333333"
    assert props["preset"] == "quick" and props["exit_code"] == "1"


def test_summary_is_appended_and_states_the_statistics(tmp_path: Path) -> None:
    report = violation_report(tmp_path)
    path = tmp_path / "summary.md"
    path.write_text("previous step\n", encoding="utf-8")
    write_summary(report, path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("previous step\n## dpaudit check FAILED: 1 VIOLATION (bad")
    assert "1 consistent, 1 violation(s), 0 inconclusive, 1 failed to run" in text
    assert "alpha = 0.1 is split over its 3 audit(s) (Bonferroni)" in text
    assert "level 0.0333333" in text
    assert "**Preset `quick`.**" in text and "200 + 200 test rounds" in text
    assert "**Power.**" in text
    assert "with 96.7% overall confidence epsilon is at least 4.20" in text
    assert "training diverged" in text


def test_summary_path_from_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "gh.md"))
    assert check.summary_path(None) == tmp_path / "gh.md"
    assert check.summary_path(tmp_path / "x.md") == tmp_path / "x.md"
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert check.summary_path(None) is None


# ------------------------------------------------------------------ command


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="dpaudit")
    subparsers = parser.add_subparsers(dest="command", required=True)
    check_command.add_parser(subparsers)
    return parser.parse_args(argv)


def test_command_writes_junit_and_summary_and_returns_the_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "privacy.toml"
    policy.write_text(
        '[[audit]]\nname = "ref"\ngenerator = "pategan"\n'
        '[[audit]]\nname = "bad"\ngenerator = "pategan"\nvariant = "synthcity"\n',
        encoding="utf-8",
    )
    fake = functools.partial(
        check.run_check, runner=FakeRunner({"synthcity": "VIOLATION"}), make_config=dict
    )
    monkeypatch.setattr(check, "run_check", fake)  # check.run imports it at run time
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "gh.md"))
    args = parse(
        [
            "check",
            "--policy",
            str(policy),
            "--junit",
            str(tmp_path / "j.xml"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert args.func is check_command.run
    assert check_command.run(args) == 1
    assert (
        ET.parse(tmp_path / "j.xml").getroot().find("testsuite").get("failures") == "1"
    )
    assert "FAILED: 1 VIOLATION (bad: privacy violation found)" in (
        tmp_path / "gh.md"
    ).read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "alpha 0.05 overall, 0.025 per audit (Bonferroni)" in out
    assert "[2/2] bad: VIOLATION" in out


def test_command_bad_policy_raises(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text("alpha = 2\n[[audit]]\ngenerator = 'pategan'\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="`alpha` must be a number in"):
        check_command.run(parse(["check", "--policy", str(policy)]))


def test_policy_keys_are_audit_config_keys() -> None:
    """Every key the example policy and the quick preset set is one the runner knows."""
    from dpaudit.audit import AuditConfig

    example = Path(__file__).resolve().parents[2] / "examples" / "privacy.toml"
    for audit in load_policy(example).audits:
        config = AuditConfig.from_mapping(dict(audit.settings))
        assert config.alpha == audit.settings["alpha"]


# ------------------------------------------------------------------ end to end


@pytest.mark.slow
@pytest.mark.statistical
def test_end_to_end_quick_preset_on_the_worst_case(tmp_path: Path) -> None:
    """The quick preset with the real runner: reference PATE-GAN on the worst case.

    A correct implementation must come out CONSISTENT; a VIOLATION here is a false
    alarm, which happens with probability at most alpha = 0.05 over seeds (the seed
    is fixed, so the outcome is deterministic). A few minutes on 2 CPU cores: the
    audit's own ``rounds = 200`` (the preset's former size) wins over the preset's
    500 and keeps it so; the rest (PATE-GAN's cap, the looks) is the preset's.
    """
    policy = parse_policy(
        {
            "preset": "quick",
            "audit": [
                {
                    "name": "pategan-reference",
                    "generator": "pategan",
                    "dataset": "worst-case",
                    "attack": "querybased",
                    "device": "cpu",
                    "rounds": 200,
                }
            ],
        }
    )
    report = run_check(policy, out_dir=tmp_path / "out")
    outcome = report.outcomes[0]
    assert outcome.status != "ERROR", outcome.error
    assert outcome.result is not None
    assert outcome.result.rounds.per_world == 200
    n_test = outcome.result.estimator.test_members
    assert (
        n_test is not None and n_test + outcome.result.estimator.test_non_members == 160
    )
    assert outcome.result.eps_max_attainable == pytest.approx(outcome.eps_max_planned)
    assert outcome.status == "CONSISTENT" and report.exit_code == 0
    assert (tmp_path / "out" / "pategan-reference" / "report.html").is_file()
    write_junit(report, tmp_path / "junit.xml")
    write_summary(report, tmp_path / "summary.md")
    assert (
        ET.parse(tmp_path / "junit.xml").getroot().find("testsuite").get("failures")
        == "0"
    )


def test_bad_policy_through_the_dpaudit_command_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit import cli

    policy = tmp_path / "p.toml"
    policy.write_text("[[audit]]\nvariant = 'synthcity'\n", encoding="utf-8")
    assert cli.main(["check", "--policy", str(policy)]) == 2
    assert "`generator` must be set" in capsys.readouterr().err


def test_exit_code_doctests() -> None:
    """The examples in the docstrings of the exit-code mapping hold."""
    import doctest

    from dpaudit import errors
    from dpaudit.ci import run as ci_run

    for module in (errors, ci_run):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
