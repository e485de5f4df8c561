"""``dpaudit check`` validates every audit and every output before anything trains:
generator names and plug-ins, datasets, targets, attacks, the policy's keys, the
``--junit`` / ``--summary`` / ``--out`` paths and audits left by an earlier check."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.storage.store import ResultStore
from dpaudit.ci import parse_policy, run_check
from dpaudit.ci.policy import CHECK_DEFAULTS, POLICY_AUDIT_KEYS
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError


class Recorder:
    """A runner that records its calls and trains nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, Path, dict[str, Any]]] = []

    def __call__(
        self, config: Any, *, out_dir: Path, progress: bool = False, **flags: Any
    ) -> Mapping[str, Any]:
        self.calls.append((config, Path(out_dir), flags))
        raise RuntimeError("the recorder trains nothing")


def check(audits: list[dict[str, Any]], tmp_path: Path, **kwargs: Any) -> Recorder:
    runner = Recorder()
    policy = parse_policy({"audit": audits}, source="privacy.toml")
    run_check(
        policy,
        out_dir=tmp_path / "out",
        runner=runner,
        make_config=AuditConfig.from_mapping,
        reports=False,
        **kwargs,
    )
    return runner


GOOD = {"name": "good", "generator": "copy", "rounds": 20}


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ({"generator": "no-such-generator"}, "no-such-generator"),
        ({"generator": "no_such_module_xyz:Gen"}, "no_such_module_xyz"),
        ({"dataset": "no-such-dataset"}, "no-such-dataset"),
        ({"dataset": "missing/data.csv", "domain": "missing/domain.json"}, "missing"),
        ({"target": 999_999}, "`target` must be a row index below"),
        ({"attack": "no-such-attack"}, "`attack` must be one of"),
        ({"generator": "pategan", "variant": "no-such-variant"}, "no-such-variant"),
    ],
)
def test_an_invalid_audit_fails_the_check_before_any_run(
    tmp_path: Path, bad: dict[str, Any], words: str
) -> None:
    # The bad audit is the second: the first must not have run either.
    audits = [GOOD, {"name": "bad", "generator": "copy", "rounds": 20, **bad}]
    runner = Recorder()
    policy = parse_policy({"audit": audits}, source="privacy.toml")
    with pytest.raises(InvalidParameterError) as info:
        run_check(
            policy,
            out_dir=tmp_path / "out",
            runner=runner,
            make_config=AuditConfig.from_mapping,
            reports=False,
        )
    message = str(info.value)
    assert message.startswith("privacy.toml, audit 'bad': ")
    assert words in message and "\n" not in message
    assert runner.calls == []
    assert not (tmp_path / "out").exists()


def test_a_valid_policy_reaches_the_runner(tmp_path: Path) -> None:
    runner = check([GOOD, {**GOOD, "name": "auto", "target": "auto"}], tmp_path)
    assert [c[1].name for c in runner.calls] == ["good", "auto"]
    assert all(c[2] == {} for c in runner.calls)


def test_policy_valid_keys_come_from_the_audit_config() -> None:
    keys = set(POLICY_AUDIT_KEYS)
    assert "name" in keys and "alpha" not in keys
    assert keys == {f for f in AuditConfig.__dataclass_fields__} - {"alpha"} | {"name"}
    with pytest.raises(InvalidParameterError) as info:
        parse_policy({"audit": [{"generator": "copy", "rund": 5}]})
    listed = str(info.value).split("valid keys: ")[1]
    assert "name" in listed.split(", ") and "alpha" not in listed.split(", ")
    with pytest.raises(InvalidParameterError, match="alpha` is set once"):
        parse_policy({"audit": [{"generator": "copy", "alpha": 0.1}]})
    with pytest.raises(InvalidParameterError, match=r"\[defaults\]: unknown key"):
        parse_policy({"defaults": {"epsilonn": 1}, "audit": [{"generator": "copy"}]})


def test_unwritable_outputs_are_refused_before_any_run(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    cases = [
        ([("--junit", tmp_path, False)], "`--junit` must be a file path, not a dir"),
        ([("--junit", a_file / "junit.xml", False)], "is a file"),
        ([("--summary", a_file / "s.md", True)], "is a file"),
    ]
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        cases.append(([("--junit", locked / "j.xml", False)], "not writable"))
    for files, words in cases:
        runner = Recorder()
        policy = parse_policy({"audit": [GOOD]})
        with pytest.raises(InvalidParameterError, match=words):
            run_check(
                policy,
                out_dir=tmp_path / "out",
                runner=runner,
                make_config=AuditConfig.from_mapping,
                files=files,
            )
        assert runner.calls == []


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("x", encoding="utf-8")
    policy = parse_policy({"audit": [GOOD]})
    with pytest.raises(InvalidParameterError, match="`--out` must be a directory"):
        run_check(
            policy, out_dir=out, runner=Recorder(), make_config=AuditConfig.from_mapping
        )


def _leave_audit(directory: Path, config: AuditConfig | None) -> None:
    directory.mkdir(parents=True)
    with ResultStore(directory) as store:
        if config is not None:
            store.set_meta("identity", config.identity())


def test_a_second_check_into_the_same_out_needs_force_or_resume(
    tmp_path: Path,
) -> None:
    config = AuditConfig.from_mapping(
        {k: v for k, v in GOOD.items() if k != "name"}
        | {"alpha": 0.05}
        | dict(CHECK_DEFAULTS)  # the audit a check runs: sequential looks
    )
    _leave_audit(tmp_path / "out" / "good", config)
    with pytest.raises(InvalidParameterError) as info:
        check([GOOD], tmp_path)
    assert "--force" in str(info.value) and "--resume" in str(info.value)
    forced = check([GOOD], tmp_path, force=True)
    assert forced.calls[0][2] == {"force": True}
    resumed = check([GOOD], tmp_path, resume=True)
    assert resumed.calls[0][2] == {"resume": True}
    # A different audit in the directory is not resumed with this policy's settings.
    with pytest.raises(InvalidParameterError, match="holds a different audit"):
        check([{**GOOD, "rounds": 30}], tmp_path, resume=True)
    with pytest.raises(InvalidParameterError, match="exclude each other"):
        check([GOOD], tmp_path, resume=True, force=True)


def test_command_exits_2_with_one_line_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "privacy.toml"
    policy.write_text(
        '[[audit]]\nname = "ok"\ngenerator = "copy"\nrounds = 20\n'
        '[[audit]]\nname = "typo"\ngenerator = "pategna"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code = main(["check", "--policy", str(policy), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "audit 'typo'" in lines[0] and "pategna" in lines[0]
    assert "Traceback" not in err and not out.exists()
    junit_dir = tmp_path / "junit-dir"
    junit_dir.mkdir()
    policy.write_text(
        '[[audit]]\nname = "ok"\ngenerator = "copy"\nrounds = 20\n', encoding="utf-8"
    )
    code = main(
        ["check", "--policy", str(policy), "--out", str(out), "--junit", str(junit_dir)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "`--junit` must be a file path" in err
    assert not out.exists()
