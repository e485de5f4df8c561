"""``dpaudit study``: the plan, the comparison with the study's figures, the resumable
run and the report (dpaudit/ci/study, dpaudit/commands/study.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.result.model import AuditResult, Power, Verdict
from dpaudit.ci.study import (
    PUBLISHED,
    QUICK,
    StudyAudit,
    compare,
    render_study_html,
    render_study_json,
    render_study_markdown,
    run_study,
    select_audits,
    study_plan,
)
from dpaudit.ci.study.report import fmt_wall
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError

DOC: dict[str, Any] = {
    "schema_version": 2,
    "version": "0.1.0",
    "verdict": "VIOLATION",
    "verdict_reason": "VIOLATION: eps_emp exceeds the claim.",
    "eps_emp": 1.35,
    "eps_claimed": 1.0,
    "eps_reference": None,
    "eps_max_attainable": 1.35,
    "power": {
        "eps_max_attainable": 1.35,
        "rounds_needed": None,
        "saturated": True,
        "tightness": 1.35,
    },
    "approximate": False,
    "randomness": "fixed_public",
    "auc": 1.0,
    "counts": {"tp": 16, "fp": 0, "tn": 16, "fn": 0},
    "attack": "querybased",
    "estimator": {
        "method": "clopper_pearson",
        "alpha": 0.05,
        "confidence": 0.95,
        "correction": "none",
        "n_attacks": 1,
        "test_non_members": 16,
        "test_members": 16,
    },
    "delta": 1e-05,
    "delta_requested": 1e-05,
    "attacks": {
        "querybased": {
            "eps_emp": 1.35,
            "eps_max_attainable": 1.35,
            "auc": 1.0,
            "counts": {"tp": 16, "fp": 0, "tn": 16, "fn": 0},
            "threshold": 1.0,
            "direction": 1,
            "alpha": 0.05,
        }
    },
    "generator": "pategan",
    "variant": "original",
    "bugs": ["data_bounds", "single_discriminator"],
    "bugs_added": [],
    "dataset": "worst-case",
    "target": {"a": 1, "b": 1, "c": 1},
    "target_index": None,
    "target_selection": None,
    "synthetic_rows": 100,
    "config": {"rounds": 40},
    "generator_options": {},
    "seed": 0,
    "rounds": {"total": 80, "per_world": 40, "train": 32, "validation": 16, "test": 32},
    "timing": {},
    "utility": None,
}


def _result(**changes: Any) -> AuditResult:
    return dataclasses.replace(
        AuditResult.from_json(json.loads(json.dumps(DOC))), **changes
    )


def _audit(name: str) -> StudyAudit:
    return next(a for a in study_plan() if a.name == name)


# ------------------------------------------------------------------- the plan
def test_plan_holds_every_subject_in_both_settings_with_the_published_figures() -> None:
    plan = study_plan()
    assert len(plan) == 16
    assert len({a.name for a in plan}) == 16
    published = {
        (a.setting, a.subject): a.published for a in plan if a.published is not None
    }
    assert published == {
        (s, v): f for s, figs in PUBLISHED.items() for v, f in figs.items()
    }
    assert published[("worst-case", "updated")] == 2.18
    assert published[("cervical", "turing")] == 2.05
    cervical = _audit("synthcity-cervical").settings
    assert cervical["dataset"] == "cervical_cancer"
    assert cervical["attack"] == "groundhog" and cervical["target"] == "auto"
    assert cervical["variant"] == "synthcity" and cervical["generator"] == "pategan"
    assert cervical["rounds"] == 1000 and "generator_options" not in cervical
    worst = _audit("gpate-worst-case").settings
    assert worst["generator"] == "gpate" and worst["attack"] == "querybased"
    assert "variant" not in _audit("reference-worst-case").settings


def test_quick_plan_caps_iterations_and_shrinks_selection() -> None:
    plan = {
        a.name: a.settings
        for a in study_plan(quick=True, jobs=2, device="cpu", randomness="independent")
    }
    assert plan["original-worst-case"]["rounds"] == QUICK.rounds
    assert plan["original-worst-case"]["generator_options"] == {
        "max_iterations": QUICK.worst_case_iterations
    }
    cervical = plan["original-cervical"]
    assert cervical["generator_options"] == {
        "max_iterations": QUICK.real_data_iterations
    }
    assert cervical["candidates"] == QUICK.candidates
    assert cervical["selection_rounds"] == QUICK.selection_rounds
    assert cervical["jobs"] == 2 and cervical["device"] == "cpu"
    assert cervical["randomness"] == "independent"
    assert study_plan(quick=True, rounds=20)[0].settings["rounds"] == 20


def test_every_plan_setting_is_a_valid_audit_config() -> None:
    from dpaudit.audit.config.model import AuditConfig

    for audit in study_plan(quick=True):
        AuditConfig.from_mapping(dict(audit.settings))


def test_select_by_subject_setting_and_name() -> None:
    plan = study_plan()
    names = lambda only: [a.name for a in select_audits(plan, only)]  # noqa: E731
    assert names(["reference", "original"]) == [
        "reference-worst-case",
        "reference-cervical",
        "original-worst-case",
        "original-cervical",
    ]
    assert names(["reference", "original", "worst-case"]) == [
        "reference-worst-case",
        "original-worst-case",
    ]
    assert names(["cervical"])[-1] == "gpate-cervical" and len(names(["cervical"])) == 8
    assert names(["turing-cervical", "gpate"]) == [
        "turing-cervical",
        "gpate-worst-case",
        "gpate-cervical",
    ]
    assert len(names(None)) == 16
    with pytest.raises(InvalidParameterError, match="--only"):
        select_audits(plan, ["orignal"])
    with pytest.raises(InvalidParameterError, match="rounds"):
        study_plan(rounds=3)


# -------------------------------------------------------------- the comparison
def test_lower_worst_case_figure_names_its_caveats() -> None:
    row = compare(_audit("original-worst-case"), _result())
    assert row.relation == "lower" and row.published == 4.68
    assert row.caveats == ("test size", "release size", "score direction")
    assert "40 rounds per world" in row.reason and "1.35" in row.reason
    assert "fixed 100 rows" in row.reason
    assert "flag data_bounds" in row.reason  # the leak dpaudit keeps
    assert row.study_verdict == "VIOLATION" and row.verdict == "VIOLATION"
    assert "Verdicts differ" not in row.reason


def test_bounds_caveat_only_where_the_code_does_not_read_bounds() -> None:
    full = Power(eps_max_attainable=4.68, saturated=False)
    turing = compare(
        _audit("turing-cervical"),
        _result(
            variant="turing",
            bugs=("single_discriminator",),
            eps_emp=1.2,
            power=full,
            dataset="cervical_cancer",
        ),
    )
    assert turing.caveats == ("target", "bounds", "score direction")
    assert "turing too" in turing.reason
    borealis = compare(
        _audit("borealis-cervical"),
        _result(variant="borealis", bugs=("data_bounds",), eps_emp=1.2, power=full),
    )
    assert borealis.caveats == ("target", "score direction")


def test_quick_iteration_cap_is_a_caveat() -> None:
    capped = compare(
        _audit("original-worst-case"), _result(generator_options={"max_iterations": 20})
    )
    assert capped.caveats == (
        "test size",
        "iterations",
        "release size",
        "score direction",
    )
    assert "capped at 20 iterations (the study: at most 100)" in capped.reason
    full = compare(
        _audit("original-worst-case"),
        _result(generator_options={"max_iterations": 100}),
    )
    assert "iterations" not in full.caveats


def test_same_and_higher_figures() -> None:
    top = Power(eps_max_attainable=4.68, saturated=True)
    same = compare(
        _audit("smartnoise-worst-case"),
        _result(variant="smartnoise", bugs=(), eps_emp=4.68, power=top),
    )
    assert same.relation == "same" and "largest value" in same.reason
    higher = compare(
        _audit("turing-cervical"),
        _result(
            variant="turing",
            bugs=(),
            eps_emp=3.1,
            power=top,
            target_index=397,
            target_selection=({"row": 397, "auc": 1.0}, {"row": 3, "auc": 0.5}),
        ),
    )
    assert higher.relation == "higher"
    assert "row 397" in higher.reason and "of 2 candidates" in higher.reason


def test_disagreeing_verdict_and_unpublished_audits_are_explained() -> None:
    weak = Power(eps_max_attainable=0.53, rounds_needed=30)
    row = compare(
        _audit("updated-worst-case"),
        _result(verdict=Verdict.INCONCLUSIVE, eps_emp=0.0, power=weak),
    )
    assert row.relation == "lower" and "Verdicts differ" in row.reason
    assert "explains only the gap above 0.53" in row.reason
    assert "INCONCLUSIVE" in row.reason
    reference = compare(
        _audit("reference-worst-case"),
        _result(verdict=Verdict.CONSISTENT, eps_emp=0.0, variant=None, bugs=()),
    )
    assert reference.relation == "not in the study"
    assert "CONSISTENT" in reference.reason and "does not prove" in reference.reason
    gpate = compare(_audit("gpate-cervical"), _result(generator="gpate", variant=None))
    assert "G-PATE" in gpate.reason and "investigate" in gpate.reason
    failed = compare(_audit("gpate-cervical"), None, error="RuntimeError: boom")
    assert failed.verdict == "ERROR" and "boom" in failed.reason


def test_fmt_wall() -> None:
    assert fmt_wall(3723.4) == "1 h 02 min 03 s"
    assert fmt_wall(125) == "2 min 05 s"
    assert fmt_wall(9.94) == "9.9 s"


# ------------------------------------------------------- running and resuming
class FakeRunner:
    """Writes a result.json (and a store) as run_audit would; records its calls."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.fail = fail

    def __call__(
        self,
        config: Mapping[str, Any],
        *,
        out_dir: Path,
        resume: bool = False,
        force: bool = False,
        progress: bool = False,
    ) -> AuditResult:
        out = Path(out_dir)
        self.calls.append((out.name, resume))
        if out.name == self.fail:
            raise RuntimeError("boom")
        out.mkdir(parents=True, exist_ok=True)
        (out / "audit.sqlite").write_bytes(b"")
        result = _result(variant=config.get("variant"), dataset=config["dataset"])
        (out / "result.json").write_text(json.dumps(result.to_json()))
        return dataclasses.replace(result, source=out / "result.json")


def _run(
    tmp: Path,
    runner: FakeRunner,
    *,
    resume: bool = False,
    only: tuple[str, ...] = ("original-worst-case", "turing-cervical"),
    options: Mapping[str, Any] | None = None,
) -> Any:
    plan = select_audits(study_plan(rounds=40), only)
    return run_study(
        plan,
        out_dir=tmp,
        options=options or {"rounds": 40},
        resume=resume,
        runner=runner,
        make_config=dict,
    )


def test_run_resume_and_errors(tmp_path: Path) -> None:
    lines: list[str] = []
    first = FakeRunner(fail="turing-cervical")
    plan = select_audits(
        study_plan(rounds=40), ["original-worst-case", "turing-cervical"]
    )
    run = run_study(
        plan,
        out_dir=tmp_path,
        options={"rounds": 40},
        runner=first,
        make_config=dict,
        log=lines.append,
    )
    assert [o.state for o in run.outcomes] == ["ran", "error"]
    assert run.outcomes[1].error == "RuntimeError: boom"
    assert (tmp_path / "original-worst-case" / "report.html").is_file()
    assert any("[1/2] original-worst-case: VIOLATION" in line for line in lines)
    assert any("ERROR" in line for line in lines)
    # A new study refuses a non-empty folder; a resume with other options too.
    with pytest.raises(InvalidParameterError, match="--resume"):
        _run(tmp_path, FakeRunner())
    with pytest.raises(InvalidParameterError, match="rounds=40"):
        _run(tmp_path, FakeRunner(), resume=True, options={"rounds": 100})
    # Resuming reads the finished audit back and runs the failed one.
    second = FakeRunner()
    again = _run(tmp_path, second, resume=True)
    assert second.calls == [("turing-cervical", False)]
    assert [o.state for o in again.outcomes] == ["done", "ran"]
    # A started audit (a store, no result) continues with resume=True.
    (tmp_path / "turing-cervical" / "result.json").unlink()
    third = FakeRunner()
    resumed = _run(tmp_path, third, resume=True)
    assert third.calls == [("turing-cervical", True)]
    assert resumed.outcomes[1].state == "resumed"


def test_report_formats(tmp_path: Path) -> None:
    run = _run(tmp_path, FakeRunner(fail="turing-cervical"))
    page = render_study_html(run)
    assert page.count("<h1>") == 2  # the study's section above the comparison
    assert "dpaudit next to the study" in page and "release size" in page
    assert "dpaudit comparison report" in page and "<script" not in page
    markdown = render_study_markdown(run)
    assert "| original-worst-case |" in markdown and "4.68" in markdown
    assert "dpaudit comparison" in markdown
    doc = json.loads(render_study_json(run))
    assert doc["kind"] == "study" and doc["options"] == {"rounds": 40}
    rows = {a["name"]: a for a in doc["audits"]}
    assert rows["original-worst-case"]["published"] == 4.68
    assert rows["original-worst-case"]["difference"] == "lower"
    assert rows["turing-cervical"]["verdict"] == "ERROR"
    assert doc["comparison"]["kind"] == "comparison"
    assert len(doc["comparison"]["audits"]) == 1


# ----------------------------------------------------------------- the command
def test_command_refuses_bad_input_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", "--only", "nope", "--out", str(tmp_path / "a")]) == 2
    assert "--only" in capsys.readouterr().err
    assert main(["study", "--resume", "--out", str(tmp_path / "b")]) == 2
    assert main(["study", "--rounds", "3", "--out", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "a").exists()


@pytest.mark.slow
def test_quick_study_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real (tiny) study: reference and original on the worst case, 20 rounds per
    world, then a resume that trains nothing. About 30 s on 2 CPU cores."""
    out = tmp_path / "study"
    args = [
        "study",
        "--quick",
        "--rounds",
        "20",
        "--only",
        "reference,original,worst-case",
        "--jobs",
        "1",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "wall time" in printed and "original-worst-case" in printed
    for name in ("study.html", "study.md", "study.json"):
        assert (out / name).is_file()
    doc = json.loads((out / "study.json").read_text())
    rows = {a["name"]: a for a in doc["audits"]}
    assert set(rows) == {"reference-worst-case", "original-worst-case"}
    assert rows["original-worst-case"]["published"] == 4.68
    assert rows["original-worst-case"]["eps_emp"] < 4.68  # 20 rounds cannot show more
    assert "test size" in rows["original-worst-case"]["caveats"]
    assert rows["reference-worst-case"]["difference"] == "not in the study"
    assert main([*args, "--resume"]) == 0
    again = json.loads((out / "study.json").read_text())
    assert [a["state"] for a in again["audits"]] == ["done", "done"]
    assert [a["eps_emp"] for a in again["audits"]] == [
        a["eps_emp"] for a in doc["audits"]
    ]
