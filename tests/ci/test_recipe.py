"""The GitHub Actions recipe (examples/github-actions.yml) as a user copies it: its
structure, its pins, and its shell commands run here (all but the network installs)
against the installed package, in a scratch "repository" holding a policy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

import dpaudit  # noqa: E402
from dpaudit.audit.config import AuditConfig  # noqa: E402
from dpaudit.ci import load_policy  # noqa: E402
from dpaudit.ci.preflight import preflight_audit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "github-actions.yml"
POLICY = ROOT / "examples" / "privacy.toml"


def recipe() -> dict[str, Any]:
    doc = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def steps() -> dict[str, dict[str, Any]]:
    job = recipe()["jobs"]["dpaudit-check"]
    return {step.get("name") or step["uses"]: step for step in job["steps"]}


def commands(step: dict[str, Any]) -> list[str]:
    """The step's shell lines, comments dropped."""
    return [
        line.strip()
        for line in step["run"].splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def test_recipe_structure() -> None:
    doc = recipe()
    # PyYAML reads the bare key `on` as True (YAML 1.1).
    triggers = doc.get("on", doc.get(True))
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    assert doc["permissions"] == {"contents": "read"}
    job = doc["jobs"]["dpaudit-check"]
    assert job["runs-on"] == "ubuntu-latest" and job["timeout-minutes"] > 0
    names = list(steps())
    assert names == [
        "Check out",
        "Set up Python",
        "Install torch (CPU build) and dpaudit",
        "Show versions",
        "Privacy check",
        "Upload audit reports",
    ]
    setup = steps()["Set up Python"]["with"]
    assert setup["python-version"] == "3.11"
    # `cache: pip` needs a file to key on; the recipe keys on itself.
    assert setup["cache"] == "pip"
    assert setup["cache-dependency-path"] == ".github/workflows/privacy.yml"
    assert "copy this file to .github/workflows/privacy.yml" in RECIPE.read_text()
    upload = steps()["Upload audit reports"]
    assert upload["if"] == "always()"
    assert set(upload["with"]["path"].split()) == {"dpaudit-check/", "junit.xml"}


def test_install_takes_torch_from_the_cpu_index_and_dpaudit_pinned() -> None:
    env = recipe()["env"]
    assert env["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    # The pins agree with the package: torch as in constraints.txt, this dpaudit.
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(rf"^{re.escape(env['TORCH'])}$", constraints, re.MULTILINE)
    assert env["DPAUDIT"] == f"dpaudit=={dpaudit.__version__}"
    lines = commands(steps()["Install torch (CPU build) and dpaudit"])
    assert lines == [
        "python -m pip install --upgrade pip",
        'python -m pip install "$TORCH" --index-url "$TORCH_INDEX_URL"',
        'python -m pip install "$DPAUDIT"',
    ]
    # Nothing installs the user's repository in place of dpaudit.
    assert not any(re.search(r"pip install .*(\s|^)\.(\s|$)", line) for line in lines)


def test_publish_step_names_its_permission() -> None:
    text = RECIPE.read_text(encoding="utf-8")
    publish = text[text.index("# - name: Publish test results") :]
    assert "EnricoMi/publish-unit-test-result-action" in publish
    assert "# checks: write" in text and "needs `checks: write`" in text


def test_example_policy_is_valid() -> None:
    policy = load_policy(POLICY)
    assert [a.name for a in policy.audits] == ["pategan-reference", "gpate-reference"]
    assert recipe()["env"]["POLICY"] == "privacy.toml"
    # Everything `dpaudit check` verifies before training holds for the example.
    for audit in policy.audits:
        preflight_audit(AuditConfig.from_mapping(dict(audit.settings)))


FAST_POLICY = """
[defaults]
dataset = "worst-case"
generator = "copy"
epsilon = 0.1
rounds = 20
jobs = 1
backend = "threading"

[[audit]]
name = "copy-leaks"
"""


def run_step(step: dict[str, Any], cwd: Path, summary: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update({k: str(v) for k, v in recipe()["env"].items()})
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_recipe_commands_run(tmp_path: Path) -> None:
    """Runs the recipe's own shell (GitHub runs ``bash -e``) in a scratch repository:
    a copying generator must fail the job with exit code 1 and leave the JUnit file,
    the summary and the audit directory the upload step collects."""
    if shutil.which("dpaudit", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the dpaudit console script is not installed in this environment")
    repo = tmp_path / "repo"
    repo.mkdir()
    summary = tmp_path / "summary.md"
    # Without a policy the versions step stops the job with one clear line.
    missing = run_step(steps()["Show versions"], repo, summary)
    assert missing.returncode == 2 and "policy file privacy.toml not found" in missing.stderr
    (repo / "privacy.toml").write_text(FAST_POLICY, encoding="utf-8")
    shown = run_step(steps()["Show versions"], repo, summary)
    assert shown.returncode == 0, shown.stderr
    assert f"dpaudit {dpaudit.__version__}" in shown.stdout
    result = run_step(steps()["Privacy check"], repo, summary)
    assert result.returncode == 1, result.stderr
    assert "copy-leaks: VIOLATION" in result.stdout
    assert (repo / "junit.xml").is_file()
    assert (repo / "dpaudit-check" / "copy-leaks" / "report.html").is_file()
    assert "dpaudit check" in summary.read_text(encoding="utf-8")
    # Run again into the same --out, as a re-run job on a cached workspace would.
    again = run_step(steps()["Privacy check"], repo, summary)
    assert again.returncode == 2 and "--force" in again.stderr
