"""The GitHub Actions recipe (examples/github-actions.yml) as GitHub runs it: its
structure, its pins, and, end to end, its shell steps run with bash in a copy of this
repository, one after another, with the variables a hosted runner sets.

Offline, the two network installs of the install step are replaced, and only they
(:data:`OFFLINE`): the CPU torch install by the packages of the environment running
these tests (torch 2.13 CPU and every dependency, made visible to the recipe's own
``.venv`` by a ``.pth`` file), and ``pip install -c constraints.txt -e .`` by the same
command with ``--no-index --no-deps --no-build-isolation --ignore-installed`` (pip
installs dpaudit from the copy into the ``.venv``, as editable, and fetches nothing;
the build uses the test environment's setuptools, see :data:`OFFLINE`).
Everything else (``python -m venv .venv``, the versions step, ``dpaudit check``) runs
as written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

import dpaudit  # noqa: E402
from dpaudit.audit.config.model import AuditConfig  # noqa: E402
from dpaudit.ci import load_policy  # noqa: E402
from dpaudit.ci.preflight import preflight_audit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "github-actions.yml"
POLICY = ROOT / "examples" / "privacy.toml"
INSTALL = "Install CPU torch, then dpaudit from the checkout, into one venv"
TORCH_LINE = '.venv/bin/pip install "$TORCH" --index-url "$TORCH_INDEX_URL"'
DPAUDIT_LINE = ".venv/bin/pip install -c constraints.txt -e ."


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
        INSTALL,
        "Show versions",
        "Privacy check",
        "Upload audit reports",
    ]
    setup = steps()["Set up Python"]["with"]
    assert setup["python-version"] == "3.11"
    # `cache: pip` needs a file to key on; the recipe keys on itself.
    assert setup["cache"] == "pip"
    assert setup["cache-dependency-path"].split() == [
        "pyproject.toml",
        "constraints.txt",
    ]
    assert "copy this file to .github/workflows/privacy.yml" in RECIPE.read_text()
    upload = steps()["Upload audit reports"]
    assert upload["if"] == "always()"
    assert set(upload["with"]["path"].split()) == {"dpaudit-check/", "junit.xml"}


def test_install_torch_cpu_first_then_dpaudit_from_the_checkout_in_one_venv() -> None:
    """Issue 25 item 5: no `dpaudit==...` from PyPI (dpaudit is not published, and
    anyone could register the name); CPU torch into the .venv first, then dpaudit
    from the checkout into the same .venv with the constraints; every later step
    uses that .venv."""
    env = recipe()["env"]
    assert env["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    assert "DPAUDIT" not in env
    assert "dpaudit==" not in RECIPE.read_text(encoding="utf-8")
    # The pin agrees with constraints.txt.
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(rf"^{re.escape(env['TORCH'])}$", constraints, re.MULTILINE)
    assert commands(steps()[INSTALL]) == [
        "python -m venv .venv",
        TORCH_LINE,
        DPAUDIT_LINE,
    ]
    for name in ("Show versions", "Privacy check"):
        for line in commands(steps()[name]):
            if re.match(r"(python|dpaudit|pip)\b", line):
                pytest.fail(f"{name!r} runs {line!r} outside the .venv")
    assert commands(steps()["Privacy check"])[0].startswith(".venv/bin/dpaudit check")


def test_constraints_comment_says_what_the_pin_does() -> None:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert "does NOT choose the CPU build" in text
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    assert "-c constraints.txt -e ." in text


def test_publish_step_names_its_permission() -> None:
    text = RECIPE.read_text(encoding="utf-8")
    publish = text[text.index("# - name: Publish test results") :]
    assert "EnricoMi/publish-unit-test-result-action" in publish
    assert "# checks: write" in text and "needs `checks: write`" in text


def test_example_policy_is_valid() -> None:
    policy = load_policy(POLICY)
    assert [a.name for a in policy.audits] == ["pategan-reference", "gpate-reference"]
    assert recipe()["env"]["POLICY"] == "examples/privacy.toml"
    # Everything `dpaudit check` verifies before training holds for the example.
    for audit in policy.audits:
        preflight_audit(AuditConfig.from_mapping(dict(audit.settings)))


FAST_POLICY = """
[defaults]
dataset = "worst-case"
generator = "copy"
attack = "querybased"
epsilon = 0.1
rounds = 20
jobs = 1
backend = "threading"
device = "cpu"

[[audit]]
name = "copy-leaks"
"""


def _offline_torch() -> str:
    """Stands in for the CPU torch install: the test environment's site-packages
    (CPU torch 2.13 and dpaudit's dependencies) on the .venv's path, checked."""
    site = sysconfig.get_paths()["purelib"]
    return (
        'venv_site="$(.venv/bin/python -c '
        '\'import sysconfig; print(sysconfig.get_paths()["purelib"])\')"\n'
        f'echo {site!s} > "$venv_site/zz-test-environment.pth"\n'
        ".venv/bin/python -c 'import torch; assert torch.version.cuda is None, "
        "torch.version.cuda'"
    )


#: The recipe's network installs and what this test runs instead (nothing else is
#: changed). Without build isolation pip builds with the .venv's setuptools: the one
#: Python 3.11's venv bundles (65) is removed so that the test environment's (>= 68,
#: as pyproject.toml requires; a hosted runner fetches it into pip's isolated build
#: environment) does the build.
OFFLINE = {
    TORCH_LINE: _offline_torch(),
    DPAUDIT_LINE: ".venv/bin/pip uninstall -q -y setuptools\n"
    ".venv/bin/pip install --no-index --no-deps --no-build-isolation "
    "--ignore-installed -c constraints.txt -e .",
}


def offline(script: str) -> str:
    """``script`` with each line of :data:`OFFLINE` replaced (exactly those lines)."""
    lines = []
    for line in script.splitlines():
        lines.append(OFFLINE.get(line.strip(), line))
    return "\n".join(lines) + "\n"


def copy_repository(dest: Path) -> None:
    """The repository as `actions/checkout` gives it: its files (tracked and new, not
    ignored), without .git, .venv or build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_step(
    step: dict[str, Any], repo: Path, runner: Path, **env_over: str
) -> subprocess.CompletedProcess[str]:
    """Runs a `run:` step as GitHub does (``bash -e`` in the workspace) with the
    workflow's env and the runner's variables; PATH holds the Python that
    `actions/setup-python` would (this one's interpreter), and no PYTHONPATH."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update({k: str(v) for k, v in recipe()["env"].items()})
    env.update(
        GITHUB_ACTIONS="true",
        CI="true",
        GITHUB_WORKSPACE=str(repo),
        GITHUB_STEP_SUMMARY=str(runner / "step_summary.md"),
        GITHUB_ENV=str(runner / "env"),
        GITHUB_PATH=str(runner / "path"),
        GITHUB_OUTPUT=str(runner / "output"),
        RUNNER_TEMP=str(runner / "tmp"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    env.update(env_over)
    return subprocess.run(
        ["bash", "-e", "-c", offline(step["run"])],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_recipe_runs_end_to_end_from_a_checkout(tmp_path: Path) -> None:
    """Every `run:` step of the recipe, in order, in a copy of this repository, as a
    hosted runner runs them (the network installs replaced as the module docstring
    says): the .venv gets dpaudit from the copy, and a policy whose generator copies
    its data fails the job with exit code 1, leaving the JUnit file, the step summary
    and the audit directory the upload step collects. About a minute on 2 cores."""
    repo = tmp_path / "repo"
    runner = tmp_path / "runner"
    (runner / "tmp").mkdir(parents=True)
    copy_repository(repo)
    assert (repo / "constraints.txt").is_file() and not (repo / ".venv").exists()
    install = run_step(steps()[INSTALL], repo, runner)
    assert install.returncode == 0, install.stdout + install.stderr
    where = subprocess.run(
        [
            str(repo / ".venv/bin/python"),
            "-c",
            "import dpaudit; print(dpaudit.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=runner,  # not the copy: the import must come from the .venv's install
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(repo.resolve()), where
    # Without the policy it names, the versions step stops the job with one line.
    missing = run_step(steps()["Show versions"], repo, runner, POLICY="nope.toml")
    assert missing.returncode == 2
    assert "policy file nope.toml not found" in missing.stderr
    shown = run_step(steps()["Show versions"], repo, runner)
    assert shown.returncode == 0, shown.stderr
    assert f"dpaudit {dpaudit.__version__}" in shown.stdout
    assert "torch 2.13.0" in shown.stdout
    (repo / "fast-privacy.toml").write_text(FAST_POLICY, encoding="utf-8")
    result = run_step(
        steps()["Privacy check"], repo, runner, POLICY="fast-privacy.toml"
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "copy-leaks: VIOLATION" in result.stdout
    assert "dpaudit check FAILED: 1 VIOLATION (copy-leaks" in result.stderr
    assert (repo / "junit.xml").is_file()
    assert (repo / "dpaudit-check" / "copy-leaks" / "report.html").is_file()
    summary = (runner / "step_summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## dpaudit check FAILED: 1 VIOLATION (copy-leaks")
    # Run again into the same --out, as a re-run job on a kept workspace would.
    again = run_step(steps()["Privacy check"], repo, runner, POLICY="fast-privacy.toml")
    assert again.returncode == 2 and "--force" in again.stderr
