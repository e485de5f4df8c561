"""``dpaudit check`` with schema-version-2 results: a runner that returns an
:class:`AuditResult`, INCONCLUSIVE audits (exit 4) and the power they report (the constant-release flag
included)."""

from __future__ import annotations

import argparse
import functools
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpaudit import ci
from dpaudit.audit.result.model import AuditResult, Verdict
from dpaudit.ci import as_result, parse_policy, run_check
from dpaudit.commands import check as check_command
from dpaudit.errors import InvalidParameterError

from .test_check import fake_result  # noqa: TID252 (a sibling test module)

#: verdict -> (eps_emp, attainable maximum, rounds needed, saturated, reason)
POWER: Mapping[str, tuple[float, float, int | None, bool, str]] = {
    "CONSISTENT": (0.3, 4.6, None, False, "eps_emp 0.30 is below the claim."),
    "VIOLATION": (4.6, 4.6, None, True, "eps_emp 4.60 exceeds the claimed 1."),
    "INCONCLUSIVE": (
        0.535,
        0.535,
        45,
        True,
        "the attainable maximum 0.535 does not exceed the claimed epsilon 1.",
    ),
}


def v2_result(
    settings: Mapping[str, Any],
    verdict: str,
    *,
    approximate: bool = False,
    constant_release: bool = False,
) -> AuditResult:
    """A schema-version-2 result, as the split runner returns it."""
    eps, top, needed, saturated, reason = POWER[verdict]
    doc = fake_result(settings, verdict)
    doc.update(
        schema_version=2,
        eps_emp=eps,
        eps_max_attainable=top,
        verdict_reason=reason,
        power={
            "eps_max_attainable": top,
            "rounds_needed": needed,
            "saturated": saturated,
            "tightness": eps / 1.0,
            "constant_release": constant_release,
        },
        approximate=approximate,
        randomness="fixed_public",
    )
    doc["attacks"]["querybased"].update(eps_emp=eps, eps_max_attainable=top)
    return AuditResult.from_json(doc)


class ResultRunner:
    """Stands in for the split run_audit: returns an AuditResult, writes nothing."""

    def __init__(self, verdicts: Mapping[str | None, str], **kwargs: Any) -> None:
        self.verdicts = dict(verdicts)
        self.kwargs = kwargs

    def __call__(
        self, config: dict[str, Any], *, out_dir: Path, progress: bool = False
    ) -> AuditResult:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        verdict = self.verdicts.get(config.get("variant"), "CONSISTENT")
        return v2_result(config, verdict, **self.kwargs)


POLICY = {
    "audit": [
        {"generator": "pategan", "name": "ref"},
        {"generator": "pategan", "variant": "weak", "name": "short", "rounds": 20},
    ]
}


def test_as_result_accepts_a_result_or_its_json(tmp_path: Path) -> None:
    settings = {"generator": "pategan", "alpha": 0.05}
    result = v2_result(settings, "INCONCLUSIVE")
    assert as_result(result) is result
    placed = as_result(result, source=tmp_path / "result.json")
    assert placed.source == tmp_path / "result.json" and placed.power == result.power
    again = as_result(result.to_json())
    assert again.verdict is Verdict.INCONCLUSIVE and again.power == result.power
    old = as_result(fake_result(settings, "CONSISTENT"))  # schema version 1
    assert old.schema_version == 1 and old.power is None and old.randomness is None
    with pytest.raises(InvalidParameterError, match="not a valid dpaudit result"):
        as_result({"schema_version": 2})


def test_a_runner_returning_audit_results_is_consumed(tmp_path: Path) -> None:
    policy = parse_policy(POLICY)
    lines: list[str] = []
    report = run_check(
        policy,
        out_dir=tmp_path,
        runner=ResultRunner({"weak": "INCONCLUSIVE"}),
        make_config=dict,
        log=lines.append,
    )
    assert [o.status for o in report.outcomes] == ["CONSISTENT", "INCONCLUSIVE"]
    assert report.exit_code == 4
    short = report.outcomes[1]
    assert short.result is not None and short.result.power is not None
    assert short.result.source == tmp_path / "short" / "result.json"
    assert (tmp_path / "short" / "report.html").is_file()
    assert lines[1].startswith(
        "[2/2] short: INCONCLUSIVE (max attainable 0.54 <= claimed 1: could not "
        "refute the claim; eps_emp 0.54; needs 45 rounds per world)"
    )


def test_a_violation_wins_over_an_inconclusive_audit(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "variant": "bad", "name": "bad"},
                {"generator": "pategan", "variant": "weak", "name": "short"},
            ]
        }
    )
    runner = ResultRunner({"bad": "VIOLATION", "weak": "INCONCLUSIVE"})
    report = run_check(
        policy, out_dir=tmp_path, runner=runner, make_config=dict, reports=False
    )
    assert report.exit_code == 1
    assert ci.render_check_markdown(report).startswith(
        "## dpaudit check FAILED: 1 VIOLATION (bad: privacy violation found); "
        "1 INCONCLUSIVE (short: "
    )


def test_inconclusive_in_summary_and_junit(tmp_path: Path) -> None:
    policy = parse_policy(POLICY)
    runner = ResultRunner({"weak": "INCONCLUSIVE"})
    report = run_check(
        policy, out_dir=tmp_path, runner=runner, make_config=dict, reports=False
    )
    text = ci.render_check_markdown(report)
    assert text.startswith("## dpaudit check FAILED: 1 INCONCLUSIVE (short: ")
    assert "| rounds/world needed |" in text
    assert "| **INCONCLUSIVE** | short |" in text and "| 45 |" in text
    assert "does not exceed the claimed epsilon 1" in text  # the verdict reason
    assert "Run at least 45 rounds per world." in text
    assert "fixed\\_public" in text
    root = ET.fromstring(ci.junit_text(report))
    case = root.find(".//testcase[@name='short']")
    assert case is not None
    error = case.find("error")
    assert error is not None
    assert "could not have refuted the claim; 45 rounds per world needed" in (
        error.get("message") or ""
    )
    # Per-case properties are `name: value` lines of <system-out> (the xunit
    # schema allows <properties> only on the suite).
    assert case.find("properties") is None
    out = case.findtext("system-out") or ""
    props = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert props["rounds_needed"] == "45" and props["saturated"] == "true"
    assert props["randomness"] == "fixed_public"
    suite_props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert suite_props["exit_code"] == "4"


def test_approximate_violation_is_marked(tmp_path: Path) -> None:
    policy = parse_policy({"audit": [{"generator": "pategan", "variant": "bad"}]})
    runner = ResultRunner({"bad": "VIOLATION"}, approximate=True)
    lines: list[str] = []
    report = run_check(
        policy,
        out_dir=tmp_path,
        runner=runner,
        make_config=dict,
        reports=False,
        log=lines.append,
    )
    assert report.exit_code == 1
    assert "approximate (clopper_pearson)" in lines[0]
    assert "**VIOLATION** (approximate)" in ci.render_check_markdown(report)


def test_command_exits_4_on_an_inconclusive_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "privacy.toml"
    policy.write_text(
        '[[audit]]\nname = "short"\ngenerator = "pategan"\nvariant = "weak"\n'
        "rounds = 20\n",
        encoding="utf-8",
    )
    fake = functools.partial(
        ci.run_check, runner=ResultRunner({"weak": "INCONCLUSIVE"}), make_config=dict
    )
    monkeypatch.setattr(ci, "run_check", fake)  # check.run imports it at run time
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    parser = argparse.ArgumentParser(prog="dpaudit")
    check_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["check", "--policy", str(policy), "--out", str(tmp_path / "out")]
    )
    assert check_command.run(args) == 4
    captured = capsys.readouterr()
    assert "[1/1] short: INCONCLUSIVE (max attainable 0.54 <= claimed 1" in captured.out
    assert (
        "dpaudit check FAILED: 1 INCONCLUSIVE (short: too weak to refute the claim: "
        "give it more rounds) (exit 4)" in captured.err
    )


def test_constant_release_in_the_log_line_and_the_summary(tmp_path: Path) -> None:
    """``power.constant_release`` (every round of both worlds released the same
    features) is stated in the CI log line and the step summary, as docs/ci.md says,
    for a CONSISTENT audit too; an audit without the flag does not mention it."""
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "name": "flat"},
                {"generator": "pategan", "variant": "weak", "name": "short"},
            ]
        }
    )
    lines: list[str] = []
    report = run_check(
        policy,
        out_dir=tmp_path,
        runner=ResultRunner({"weak": "INCONCLUSIVE"}, constant_release=True),
        make_config=dict,
        reports=False,
        log=lines.append,
    )
    flag = "constant release: every round of both worlds released the same features"
    assert lines[0].startswith("[1/2] flat: CONSISTENT (eps_emp 0.30 <= claimed 1")
    assert flag in lines[0]
    # An INCONCLUSIVE constant release needs no "more rounds": none would help.
    assert flag in lines[1] and "needs 45 rounds" not in lines[1]
    text = ci.render_check_markdown(report)
    assert "| **CONSISTENT** (constant release) | flat |" in text
    assert "**flat** (CONSISTENT, " in text and flag in text
    assert "the target record changed nothing in this release" in text
    assert report.headline.endswith(
        "; 2 with a constant release (flat, short: the target changed nothing released)"
    )
    plain = run_check(
        policy,
        out_dir=tmp_path / "plain",
        runner=ResultRunner({"weak": "INCONCLUSIVE"}),
        make_config=dict,
        reports=False,
    )
    assert "constant release" not in ci.render_check_markdown(plain)


def test_result_warnings_in_the_log_line_and_the_summary(tmp_path: Path) -> None:
    """A result's warnings (a release smaller than the attacks need) are stated in the
    check's log line and step summary, as in every report."""
    import dataclasses

    from dpaudit.audit.result.model import AuditWarning

    message = "the release has 4 rows per round; raise it with --synthetic-rows 100"

    class Warned(ResultRunner):
        def __call__(
            self, config: dict[str, Any], *, out_dir: Path, progress: bool = False
        ) -> AuditResult:
            result = super().__call__(config, out_dir=out_dir, progress=progress)
            return dataclasses.replace(
                result, warnings=(AuditWarning(code="small_release", message=message),)
            )

    policy = parse_policy({"audit": [{"generator": "pategan", "name": "tiny"}]})
    lines: list[str] = []
    report = run_check(
        policy,
        out_dir=tmp_path,
        runner=Warned({}),
        make_config=dict,
        reports=False,
        log=lines.append,
    )
    assert f"warning: {message}" in lines[0]
    assert message in ci.render_check_markdown(report)
