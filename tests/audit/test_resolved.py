"""The audit resolved once (dpaudit.audit.games.resolved): the generator registry is
consulted once per audit; the memory plan and the setup read the same resolution
(a table of configurations where they must agree); the one-run game's memory plan
enforces ``--max-memory``; no capability ``getattr`` on generator objects and no
generator-name branch outside the resolver and the registry."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit import AuditConfig
from dpaudit.audit.games.execution import cpu_cores, plan_for_setup
from dpaudit.audit.games.memory import plan_memory, plan_one_run
from dpaudit.audit.games.setup import assemble_setup, load_audit_data
from dpaudit.generators import registry

PLUGIN = "dpaudit.generators.toy_plugins:CopyData"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of the registry's lookup (``get_spec``), wherever it was imported."""
    original = registry.get_spec
    calls: list[str] = []

    def counted(name: str) -> registry.GeneratorSpec:
        calls.append(name)
        return original(name)

    monkeypatch.setattr(registry, "get_spec", counted)
    for module in list(sys.modules.values()):
        if (module.__name__ or "").startswith("dpaudit") and (
            getattr(module, "get_spec", None) is original
        ):
            monkeypatch.setattr(module, "get_spec", counted)
    return calls


@pytest.mark.parametrize(
    "settings",
    [
        # two-world, its rounds in worker threads (about 10 s on a loaded machine)
        pytest.param({"rounds": 5, "jobs": 2, "batch_size": 1}, marks=pytest.mark.slow),
        {"game": "one-run", "canaries": 20, "guesses": 2},
    ],
    ids=["two-world", "one-run"],
)
def test_the_registry_is_consulted_once_per_audit(
    lookups: list[str], tmp_path: Path, settings: dict[str, Any]
) -> None:
    from dpaudit.audit import run_audit

    config = AuditConfig(
        generator="randomized-response", dataset="worst-case", **settings
    )
    lookups.clear()
    result = run_audit(config, out_dir=tmp_path / "out")
    assert result.verdict is not None
    assert lookups == ["randomized-response"]


@pytest.mark.parametrize("dry", [False, True], ids=["run", "dry-run"])
def test_the_command_line_looks_the_generator_up_once(
    lookups: list[str], tmp_path: Path, dry: bool
) -> None:
    """``dpaudit audit``'s early name check (before torch) is the audit's lookup:
    the audit takes the entry it found instead of looking again."""
    from dpaudit.cli import main

    argv = ["audit", "--generator", "randomized-response", "--dataset", "worst-case"]
    argv += ["--game", "one-run", "--canaries", "20", "--guesses", "2", "--quiet"]
    argv += ["--out", str(tmp_path / "out"), *(["--dry-run"] if dry else [])]
    lookups.clear()
    assert main(argv) == 0
    assert lookups == ["randomized-response"]
    assert (tmp_path / "out" / "result.json").exists() is not dry


def _two_world(**settings: Any) -> AuditConfig:
    return AuditConfig(jobs=2, device="cpu", **settings)


# Both releases, built-in and plug-in generators, the rows' every source (a worst
# case's own target, a row of the table, a record, --synthetic-rows).
TWO_WORLD = {
    "pategan-continuous": _two_world(rounds=300),
    "rr-worst-case-row": _two_world(
        generator="randomized-response", dataset="worst-case", target=1, rounds=50
    ),
    "copy-real-record": _two_world(
        generator="copy",
        dataset="cervical_cancer",
        target=3,
        synthetic_rows=40,
        attack="all",
        rounds=20,
    ),
    "pategan-transcript": _two_world(
        dataset="worst-case", release="transcript", teachers="canary", rounds=20
    ),
    "plugin-table": _two_world(generator=PLUGIN, dataset="worst-case", rounds=20),
    "plugin-transcript": _two_world(
        generator=PLUGIN, dataset="worst-case", release="transcript", rounds=20
    ),
}


@pytest.mark.parametrize("config", TWO_WORLD.values(), ids=TWO_WORLD.keys())
def test_the_memory_plan_and_the_setup_agree(config: AuditConfig) -> None:
    """Each planned for itself, from the configuration: the rows a model trains on,
    the rows released, the attacks, the encoded width and the models trained at
    once are the setup's (its neighbouring pair, its release, its execution plan)."""
    plan = plan_memory(config)
    setup = assemble_setup(config, dataset=load_audit_data(config))
    assert plan.rows == len(setup.with_target) == len(setup.without) + 1
    assert plan.synthetic_rows == setup.synthetic_rows
    assert (
        plan.attacks
        == setup.attacks
        == setup.release.attack_names(
            config,
            worst_case=setup.resolved.worst_case,
            continuous=setup.resolved.continuous,
        )
    )
    assert plan.encoded_width == setup.domain.encoded_dim
    execution = plan_for_setup(setup)
    workers = cpu_cores() if execution.jobs == -1 else execution.jobs
    assert plan.models_at_once == min(
        setup.plan.n_rounds, workers * execution.batch_size
    )
    options = {k: v for k, v in setup.generator_options.items() if k != "canary"}
    assert options == dict(setup.resolved.generator_options)


@pytest.mark.parametrize(
    "config",
    [
        AuditConfig(game="one-run", canaries=50),
        AuditConfig(
            game="one-run",
            generator="randomized-response",
            dataset="worst-case",
            canaries=30,
            synthetic_rows=7,
        ),
        AuditConfig(
            game="one-run",
            generator=PLUGIN,
            dataset="worst-case",
            release="transcript",
            canaries=30,
            dataset_rows=9,
        ),
    ],
    ids=["pategan", "rr-rows", "plugin-transcript"],
)
def test_the_one_run_plan_and_its_preparation_agree(config: AuditConfig) -> None:
    from dpaudit.audit.games.one_run.game import GAME

    prepared = GAME.prepare(config)
    plan = prepared.memory or plan_one_run(config, resolved=prepared.resolved)
    design = prepared.design
    assert plan.rows == len(design.base) + len(design.canaries)
    assert plan.synthetic_rows == prepared.rows
    assert plan.encoded_width == design.domain.encoded_dim
    assert prepared.options == dict(prepared.resolved.generator_options)


def test_a_foreign_one_run_plan_counts_frames_not_encodings() -> None:
    """30,000 canaries own 30,000 categories (an encoded width of about 30,000):
    a plug-in's worker takes the design as a frame and a transcript release samples
    nothing, so the plan counts no dense encoding (an estimate of about 10 GiB
    refused the docs' 30,000-canary audit, which runs in well under 1 GiB)."""
    from dpaudit.audit.games.one_run.game import GAME

    config = AuditConfig(
        game="one-run",
        generator=PLUGIN,
        dataset="worst-case",
        release="transcript",
        canaries=30_000,
    )
    prepared = GAME.prepare(config)
    plan = plan_one_run(config, resolved=prepared.resolved)
    assert plan.encoded_width > 30_000
    assert plan.models == 0
    assert plan.table < 64 * 2**20


def _audit(tmp_path: Path, *flags: str) -> tuple[int, str, Path]:
    from dpaudit.cli import main

    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            ["audit", "--quiet", "--game", "one-run", "--out", str(out), *flags]
        )
    return code, err.getvalue(), out


RR = ("--generator", "randomized-response", "--dataset", "worst-case")


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (("--fits", "1000"), "`--canaries` = 1000 over `--fits` = 1000"),
        (("--synthetic-rows", "10000000"), "`--synthetic-rows` = 10000000"),
    ],
)
def test_one_run_max_memory_refuses_before_the_fit(
    tmp_path: Path, flags: tuple[str, ...], names: str
) -> None:
    code, err, out = _audit(tmp_path, *RR, "--max-memory", "600", *flags)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert names in err and "600 MiB is allowed (--max-memory)" in err
    assert not out.exists()


def test_one_run_max_memory_that_fits_runs(tmp_path: Path) -> None:
    code, err, out = _audit(
        tmp_path, *RR, "--canaries", "20", "--guesses", "2", "--max-memory", "4096"
    )
    assert code == 0, err
    assert json.loads((out / "result.json").read_text())["config"]["max_memory"] == 4096


CAPABILITIES = (
    "supports_public_randomness",
    "supports_canary_teachers",
    "read_transcript",
    "transcript_support",
    "fit_many",
    "record_trace",
)


def test_no_capability_getattr_or_generator_name_branch_outside_the_resolver() -> None:
    """The capabilities of a generator object are read in games/traits.py only,
    and no audit module branches on a generator's name (the registry entries
    declare what differs)."""
    asked = re.compile(
        r"(getattr|hasattr)\([^)]*[\"'](" + "|".join(CAPABILITIES) + r")[\"']"
    )
    named = re.compile(
        r"generator\s*(==|!=|in|not in)\s*[\"'(A-Z]|(PATE_GAN|G_PATE)\b|"
        r"[\"'](pategan|gpate|copy|randomized-response)[\"']\s*(==|!=)"
    )
    found = []
    for path in sorted((ROOT / "dpaudit" / "audit").rglob("*.py")):
        if path.name == "traits.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if asked.search(line) or named.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
