"""Loading audit directories: validation, freezing, traces, utility."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from dpaudit.errors import InvalidParameterError
from dpaudit.reports.model import (
    find_result_dirs,
    load_result,
    load_results,
    result_from_mapping,
)


def test_load_result_reads_every_field(audit_dir: Path) -> None:
    result = load_result(audit_dir)
    assert result.verdict == "VIOLATION"
    assert result.eps_emp == pytest.approx(4.68)
    assert result.eps_claimed == 1.0
    assert result.eps_reference == pytest.approx(3.2)
    assert result.counts.tp == 400 and result.counts.n_members == 400
    assert result.estimator.confidence == pytest.approx(0.95)
    assert result.estimator.test_members == 400
    assert result.rounds.per_world == 1000 and result.rounds.test == 800
    assert result.target == {"a": 1, "b": 1, "c": 1}
    assert result.bugs == ("repartition_every_iteration", "accountant_index_bug")
    attack = result.attacks["querybased"]
    assert attack.direction == 1 and len(attack.scores_member) == 400
    assert result.source == audit_dir / "result.json"


def test_result_is_frozen(audit_dir: Path) -> None:
    result = load_result(audit_dir)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdict = "CONSISTENT"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.config.rounds = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.config.generator_options["lam"] = 5  # type: ignore[index]
    with pytest.raises(TypeError):
        result.raw["verdict"] = "CONSISTENT"  # type: ignore[index]


def test_load_result_accepts_the_file_itself(audit_dir: Path) -> None:
    assert load_result(audit_dir / "result.json").verdict == "VIOLATION"


def test_traces_and_utility_are_loaded(audit_dir: Path) -> None:
    result = load_result(audit_dir)
    assert result.trace is not None
    assert (
        result.trace.records_seen is not None and len(result.trace.records_seen) == 10
    )
    assert (
        result.trace.epsilon is not None and result.trace.epsilon[0]["iteration"] == 1
    )
    assert result.trace.details == {"iterations": 100, "stopped_by": "max_iterations"}
    assert result.utility is not None and result.utility["sra_auroc"] == 0.8


def test_no_trace_directory_means_no_trace(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    assert load_result(make_audit("plain", result_doc())).trace is None


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"schema_version": 3}, "must be one of 1, 2"),
        ({"schema_version": "1"}, "must be an integer"),
        ({"verdict": "MAYBE"}, "`verdict` must be one of"),
        ({"counts": {"tp": 1, "fp": 0, "tn": 1}}, "`counts.fn` is required"),
        (
            {"counts": {"tp": True, "fp": 0, "tn": 1, "fn": 0}},
            "`counts.tp` must be of type",
        ),
        ({"eps_emp": "high"}, "`eps_emp` must be of type"),
        ({"eps_emp": -1.0}, "`eps_emp` must be >= 0"),
        ({"estimator": {"method": "clopper_pearson", "alpha": 0}}, "`estimator.alpha`"),
        ({"attacks": {"q": {"eps_emp": 1.0}}}, "`attacks.q.counts` is required"),
    ],
)
def test_bad_results_are_refused_naming_the_file(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    change: dict,
    fragment: str,
) -> None:
    directory = make_audit("bad", result_doc(**change))
    with pytest.raises(InvalidParameterError) as info:
        load_result(directory)
    assert str(directory / "result.json") in str(info.value)
    assert fragment in str(info.value)


def test_missing_schema_version_is_refused(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    doc = result_doc()
    del doc["schema_version"]
    with pytest.raises(InvalidParameterError, match="no `schema_version`"):
        load_result(make_audit("old", doc))


def test_missing_required_key_is_named(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    doc = result_doc()
    del doc["rounds"]
    with pytest.raises(InvalidParameterError, match="`rounds` is required"):
        load_result(make_audit("norounds", doc))


def test_not_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="is not valid JSON"):
        load_result(tmp_path)


def test_json_array_is_refused(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="must hold a JSON object"):
        load_result(tmp_path)


def test_missing_result_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"result\.json does not exist"):
        load_result(tmp_path)


def test_bad_trace_csv_names_the_file(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    directory = make_audit("badtrace", result_doc(), trace=True)
    path = directory / "trace" / "losses.csv"
    path.write_text("iteration,teacher,loss_own\n1,0,0.5\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError) as info:
        load_result(directory)
    assert str(path) in str(info.value) and "loss_other" in str(info.value)


def test_non_numeric_trace_value_names_the_line(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    directory = make_audit("badvalue", result_doc(), trace=True)
    path = directory / "trace" / "epsilon.csv"
    path.write_text(
        "iteration,epsilon,epsilon_data_independent\n1,abc,2\n", encoding="utf-8"
    )
    with pytest.raises(InvalidParameterError, match="line 2"):
        load_result(directory)


def test_parent_directory_gives_every_audit(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    a = make_audit("runs/a", result_doc())
    b = make_audit("runs/nested/b", consistent_doc())
    parent = a.parent
    assert find_result_dirs(parent) == [a, b]
    assert [r.verdict for r in load_results(parent)] == ["VIOLATION", "CONSISTENT"]


def test_empty_parent_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"holds no result\.json"):
        find_result_dirs(tmp_path)


def test_extra_keys_are_kept(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    doc = result_doc(future_key={"x": 1})
    result = load_result(make_audit("extra", doc))
    assert result.raw["future_key"] == {"x": 1}


def test_result_from_mapping_round_trips_json(result_doc: Callable[..., dict]) -> None:
    doc = result_doc()
    result = result_from_mapping(json.loads(json.dumps(doc)), source="mem")
    assert result.label == (
        "pategan / synthcity + repartition_every_iteration, accountant_index_bug"
    )
