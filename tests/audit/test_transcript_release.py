"""``release = "transcript"``: the config key, its refusals, and a tiny audit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.attacks.likelihood_ratio import LIKELIHOOD_RATIO
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.setup import build_setup
from dpaudit.audit.run import run_audit
from dpaudit.errors import InvalidParameterError

TINY = {"max_iterations": 3, "teacher_steps": 1, "student_steps": 1, "batch_size": 8}


def test_the_release_key_round_trips_and_keeps_old_identities() -> None:
    config = AuditConfig(release="transcript", rounds=5)
    back = AuditConfig.from_json(config.to_json())
    assert back == config and back.release == "transcript"
    assert AuditConfig.from_json({}).release == "table"
    plain = AuditConfig(rounds=5)
    old = plain.to_json()
    old.pop("release")
    assert AuditConfig.from_json(old).identity() == plain.identity()
    assert config.identity() != plain.identity()
    with pytest.raises(InvalidParameterError, match="`release` must be"):
        AuditConfig(release="weights")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"randomness": "independent"}, "`--release` needs --randomness fixed_public"),
        ({"attack": "moments"}, "`--release` needs --attack default"),
        ({"target": "auto"}, "`--release` needs a --target other than auto"),
        ({"public_seed": "auto"}, "`--release` needs a --public-seed other than auto"),
    ],
)
def test_configurations_without_a_transcript_game_are_refused(
    settings: dict[str, object], message: str
) -> None:
    config = AuditConfig(release="transcript", **settings)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=message):
        config.check_settings()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"bugs": ("single_discriminator",)}, "single_discriminator has no"),
    ],
)
def test_generators_without_a_transcript_are_refused(
    settings: dict[str, object], message: str
) -> None:
    config = AuditConfig(release="transcript", rounds=5, device="cpu", **settings)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=message):
        build_setup(config)


@pytest.mark.parametrize("teachers", ["trained", "canary"])
def test_gpate_has_a_transcript_game(teachers: str) -> None:
    config = AuditConfig(
        generator="gpate",
        release="transcript",
        teachers=teachers,  # type: ignore[arg-type]
        rounds=5,
        device="cpu",
    )
    assert (build_setup(config).canary is not None) == (teachers == "canary")


def test_the_command_refuses_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpaudit",
            "audit",
            "--generator",
            "randomized-response",
            "--release",
            "transcript",
            "--rounds",
            "5",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "transcript" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_a_tiny_transcript_audit(tmp_path: Path) -> None:
    config = AuditConfig(
        release="transcript",
        rounds=6,
        device="cpu",
        jobs=1,
        generator_options=TINY,
    )
    result = run_audit(config, out_dir=tmp_path / "a")
    assert list(result.attacks) == [LIKELIHOOD_RATIO]
    assert result.config.release == "transcript"
    assert 0.0 <= result.eps_emp <= result.eps_max_attainable
