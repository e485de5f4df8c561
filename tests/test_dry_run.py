"""``dpaudit audit --dry-run`` and ``dpaudit check --dry-run``: the run's checks and
its plan, nothing fitted and nothing written; bad settings refused before torch is
imported (docs/design.md, "Start-up cost")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.errors import InvalidParameterError

ROOT = Path(__file__).resolve().parents[1]
EG = [
    "--generator",
    "dpaudit.generators.zoo:ExactGaussian",
    "--dataset",
    "worst-case",
    "--rounds",
    "20",
]


def _dpaudit(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DPAUDIT_CACHE_DIR": "off"}
    return subprocess.run(
        [sys.executable, "-m", "dpaudit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.slow
def test_audit_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    proc = _dpaudit(["audit", *EG, "--out", "eg", "--dry-run"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _tree(tmp_path) == []  # no output folder, no cache, nothing
    text = proc.stdout
    assert "nothing fitted, nothing written" in text
    for row in ("fits", "rounds per world", "attainable maximum", "memory plan"):
        assert row in text
    assert "40: 20 rounds per world in 2 worlds" in text
    assert "train 8 + 8, validation 4 + 4, test 8 + 8" in text
    # The planned maximum is the one the audit's result states (0.96: README's
    # ExactGaussian audit at 20 rounds, tests/reports/test_truthful_text.py).
    assert "eps_emp 0.96 at most" in text
    assert "about 21 rounds per world would be needed" in text


@pytest.mark.slow
def test_dry_run_refuses_what_the_run_refuses_in_the_same_line(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the folder goes")
    for extra in (["--out", "taken"], ["--rounds", "3", "--out", "x"]):
        real = _dpaudit(["audit", *EG, *extra], tmp_path)
        dry = _dpaudit(["audit", *EG, *extra, "--dry-run"], tmp_path)
        assert real.returncode == dry.returncode == 2, (real.stderr, dry.stderr)
        assert real.stderr == dry.stderr
        assert len(dry.stderr.strip().splitlines()) == 1
    assert _tree(tmp_path) == ["taken"]


@pytest.mark.slow
def test_check_dry_run_plans_every_audit_and_writes_nothing(tmp_path: Path) -> None:
    policy = ROOT / "examples" / "privacy.toml"
    proc = _dpaudit(["check", "--policy", str(policy), "--dry-run"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _tree(tmp_path) == []
    assert proc.stdout.count("attainable maximum") >= 2
    # docs/ci.md and examples/privacy.toml quote this planned maximum.
    assert "eps_emp 3.78 at most" in proc.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--rounds", "0", "--dry-run"],
        ["audit", "--alpha", "2"],
        ["audit", "--canaries", "5"],
        ["audit", "--generator", "pategn"],
        ["audit", "--dataset", "worstcase"],
    ],
)
def test_bad_settings_are_refused_before_torch_is_imported(argv: list[str]) -> None:
    """The settings are checked before any generator or attack module is imported:
    each refusal is one line, exit 2, in a fresh interpreter without torch."""
    code = (
        "import sys\n"
        "from dpaudit.cli import main\n"
        f"rc = main({argv!r})\n"
        "print(rc, 'torch' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout.splitlines()[-1] == "2 False", proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["audit", "--generator", "pategn"], "did you mean 'pategan'?"),
        (["audit", "--dataset", "worstcase"], "did you mean 'worst-case'?"),
    ],
)
def test_a_misspelt_name_gets_a_suggestion(
    argv: list[str], suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit.cli import main

    assert main(argv) == 2
    assert suggestion in capsys.readouterr().err


def test_the_plan_says_what_each_game_writes(tmp_path: Path) -> None:
    """The "writes" row follows the resolved audit: the one-run game writes
    result.json only, the two-world game its store too (and trace/ for a generator
    that records a training trace); one model is "1 model"."""
    from dpaudit.audit import AuditConfig
    from dpaudit.audit.dryrun import dry_run

    def plan(out: str, force: bool = False, **settings: object) -> dict[str, str]:
        config = AuditConfig(dataset="worst-case", device="cpu", **settings)  # type: ignore[arg-type]
        return dict(dry_run(config, out_dir=tmp_path / out, force=force))

    one = plan("one", game="one-run", generator="randomized-response", canaries=30)
    assert one["writes"].endswith(
        "one (a new folder: result.json only, once the result exists)"
    )
    assert " for 1 model at once, " in one["memory plan"]
    two = plan("two", generator="randomized-response", rounds=20)
    assert two["writes"].endswith("two (a new folder: result.json and audit.sqlite)")
    traced = plan("traced", rounds=20)  # PATE-GAN records its training trace
    assert traced["writes"].endswith(
        "(a new folder: result.json, audit.sqlite and trace/)"
    )
    assert not any(tmp_path.iterdir())
    # An earlier one-run result replaced with --force; a two-world store refused
    # even with --force, as the run refuses it.
    (tmp_path / "held").mkdir()
    (tmp_path / "held" / "result.json").write_text("{}")
    held = plan("held", force=True, game="one-run", generator="randomized-response")
    assert held["writes"].endswith(
        "(replacing its result.json once the new result exists)"
    )
    (tmp_path / "held" / "audit.sqlite").write_text("")
    with pytest.raises(InvalidParameterError, match="holds a two-world audit"):
        plan("held", force=True, game="one-run", generator="randomized-response")


def test_the_one_run_plan_states_its_guess_counts(tmp_path: Path) -> None:
    """The one-run dry run prints the count rule's guesses: planned from the
    configuration (the same counts the run plans) or, with --guesses, as given."""
    from dpaudit.audit import AuditConfig
    from dpaudit.audit.dryrun import dry_run
    from dpaudit.audit.games.one_run.counts import plan_counts

    def rows(**settings: object) -> dict[str, str]:
        config = AuditConfig(
            dataset="worst-case",
            device="cpu",
            game="one-run",
            generator="randomized-response",
            canaries=300,
            **settings,  # type: ignore[arg-type]
        )
        return dict(dry_run(config, out_dir=tmp_path / "x"))

    k = plan_counts(
        canaries=300, epsilon=1.0, delta=1e-5, alpha=0.025, bound="fdp"
    ).guesses_in
    planned = rows()["guesses"]
    assert planned.startswith(f"count rule: {k} 'in' + {k} 'out', planned from")
    assert "0.268-GDP Gaussian at epsilon 1" in planned
    given = rows(guesses=7, guesses_out=3)["guesses"]
    assert given.startswith("count rule: 7 'in' + 3 'out', as given")
    assert "threshold rule only" in rows(guess_rule="threshold")["guesses"]
