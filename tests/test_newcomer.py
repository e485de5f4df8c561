"""What a newcomer meets first: README's commands work in a new shell as printed,
every audit a page shows writes its own folder, a refusal offers the harmless fix
first, the default output folders are not committed by accident, and a misspelt
name gets a suggestion."""

from __future__ import annotations

import importlib
import itertools
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_doc_commands import fenced_blocks
from tests.test_doc_dry_run import doc_commands, dpaudit_calls

ROOT = Path(__file__).resolve().parents[1]

#: README's main job: the install's own audit and its bare repetition, which write
#: the default folder the README's report commands then read (dpaudit-audit).
MAIN_JOB = {
    "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e . && "
    ".venv/bin/dpaudit audit",
    "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 --index-url "
    "https://download.pytorch.org/whl/cpu && .venv/bin/pip install -c "
    "constraints.txt -e . && .venv/bin/dpaudit audit",
    "dpaudit audit",
}


def test_readme_says_how_to_reach_dpaudit_after_the_install() -> None:
    """The install leaves ``dpaudit`` in .venv/bin, not on PATH: before the first
    command that calls it bare, README says to activate the environment (or to call
    .venv/bin/dpaudit)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    install = text.index(".venv/bin/pip install")
    activate = text.index(". .venv/bin/activate")
    first_bare = min(
        text.index("\n".join(b.lines))
        for b in fenced_blocks("README.md")
        if b.lang in ("bash", "sh", "")
        and any(line.startswith("dpaudit ") for line in b.lines)
    )
    assert install < activate < first_bare
    assert "`.venv/bin/dpaudit`" in text[activate - 400 : activate + 400]


def _opening_commands() -> list[list[str]]:
    """README's two opening commands (the install and main job, the install and
    tests), each as its ``&&`` steps, each step as its words."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Two commands") :]
    section = section[: section.index("\n## ", 3)]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    first_two = [" ".join(b.replace("\\\n", " ").split()) for b in blocks[:2]]
    return [[shlex.split(step) for step in c.split(" && ")] for c in first_two]


def test_readmes_two_commands_work_in_a_new_shell_as_printed() -> None:
    """Every step README's two opening commands rely on, checked without running
    them (a fresh clone's run downloads torch): each step runs from the clone's
    folder with nothing activated (``python3``, then only ``.venv/bin/...`` that the
    steps before made: the venv's pip and python, and ``dpaudit``, which
    pyproject's scripts install); the extras and the constraints file exist, and
    ``-n 2`` has pytest-xdist; the install and the tests are .ci/run's (so CI runs
    what a reader runs); the main job writes the default folder, which git ignores;
    and the activation line README gives afterwards names the same ``.venv``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    scripts, extras = project["scripts"], project["optional-dependencies"]
    main_job, tests = _opening_commands()
    for command in (main_job, tests):
        assert command[0] == ["python3", "-m", "venv", ".venv"], command
        for step in command[1:]:
            tool = step[0].removeprefix(".venv/bin/")
            assert step[0].startswith(".venv/bin/"), step  # nothing relies on PATH
            assert tool in {"pip", "python", *scripts}, step
            if tool == "pip":
                assert step[1:4] == ["install", "-c", "constraints.txt"], step
                assert (ROOT / "constraints.txt").is_file()
                target = step[step.index("-e") + 1]
                wanted = re.fullmatch(r"\.(?:\[([\w,]+)\])?", target)
                assert wanted is not None, target
                assert set((wanted.group(1) or "dev").split(",")) <= set(extras)
    # `dpaudit` is the console script of an importable callable.
    module, _, attr = scripts["dpaudit"].partition(":")
    assert callable(getattr(importlib.import_module(module), attr))
    # The main job: the plain audit, into the default folder git ignores.
    assert main_job[-1] == [".venv/bin/dpaudit", "audit"]
    from dpaudit.audit.config.keys import DEFAULT_OUT

    ignored = (ROOT / ".gitignore").read_text("utf-8").split()
    assert f"{DEFAULT_OUT}/" in ignored or f"/{DEFAULT_OUT}/" in ignored
    # The tests: -n 2 needs pytest-xdist, in the extras the command installs.
    assert tests[-1] == [".venv/bin/python", "-m", "pytest", "-q", "-n", "2"]
    installed = " ".join(extras["dev"] + extras["dask"])
    assert "pytest-xdist" in installed
    # CI (.ci/run) installs and tests as README says (its pip is quiet).
    ci = [
        shlex.split(line)
        for line in (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
        if line.startswith(".venv/bin/")
    ]
    assert [w for w in tests[1] if w != "-q"] in [
        [w for w in line if w != "-q"] for line in ci
    ]
    assert ci[-1] == tests[-1]
    # Afterwards README says how to reach `dpaudit` in a new shell: the same venv
    # (test_readme_says_how_to_reach_dpaudit_after_the_install: where it says so).
    assert "`. .venv/bin/activate`" in (ROOT / "README.md").read_text("utf-8")


def test_every_audit_a_page_shows_has_its_own_out() -> None:
    """An audit without --out writes ./dpaudit-audit, the main job's folder: a second
    one is refused there (and --force would delete it). Every page's audit but the
    main job names its own folder (or continues one with --resume)."""
    missing = []
    for page, command in doc_commands():
        if command in MAIN_JOB:
            continue
        for _, argv in dpaudit_calls(command):
            if argv[:1] == ["audit"] and not {"--out", "--resume"} & set(argv):
                missing.append(f"{page}: {command}")
    assert not missing, "\n".join(missing)


def test_the_overwrite_refusal_offers_another_out_first(tmp_path: Path) -> None:
    """Every refusal of a folder that holds something offers another ``--out``
    before ``--force`` (which deletes it): a result without its store, a different
    audit, the same audit finished, a file that is no dpaudit store (where
    ``--force`` is not offered at all), a one-run audit's folder, and a check's
    folder holding an earlier check's audits."""
    import sqlite3

    from dpaudit.audit import AuditConfig
    from dpaudit.audit.games.one_run.game import _prepare
    from dpaudit.audit.storage.outdir import prepare_directory
    from dpaudit.audit.storage.store import ResultStore
    from dpaudit.ci.preflight import check_outputs
    from dpaudit.errors import InvalidParameterError, StoreError

    def refusal(call: Callable[[], object]) -> str:
        with pytest.raises((InvalidParameterError, StoreError)) as refused:
            call()
        return str(refused.value)

    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "result.json").write_text("{}")
    stored = tmp_path / "stored"
    rr = AuditConfig(generator="randomized-response", rounds=20)
    stored.mkdir()
    with ResultStore(stored) as store:  # an audit's store, as a run starts it
        store.set_meta("config", rr.to_json())
        store.set_meta("identity", rr.identity())
    (stored / "result.json").write_text("{}")  # finished
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / ResultStore.FILENAME) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    refusals = [
        refusal(lambda: prepare_directory(lonely, AuditConfig(), resume=False)),
        refusal(lambda: prepare_directory(stored, AuditConfig(), resume=False)),
        refusal(lambda: prepare_directory(stored, rr, resume=False)),
        refusal(lambda: ResultStore(foreign)),
        refusal(lambda: _prepare(lonely, force=False)),
        refusal(
            lambda: check_outputs(tmp_path, [("stored", rr)], force=False, resume=False)
        ),
    ]
    for line in refusals:
        assert "another --out" in line, line
        force = line.find("--force")
        assert force == -1 or force > line.index("another --out"), line


def test_the_default_output_folders_are_ignored_by_git() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    from dpaudit.audit.config.keys import DEFAULT_OUT
    from dpaudit.cli import build_parser

    parser = build_parser()
    defaults = {
        DEFAULT_OUT,
        str(parser.parse_args(["check", "--policy", "p.toml"]).out),
        str(parser.parse_args(["study"]).out),
    }
    for folder in sorted(defaults):
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", f"{folder}/result.json"],
            cwd=ROOT,
            check=False,
        )
        assert ignored.returncode == 0, f"{folder}/ is not in .gitignore"


def test_what_a_doc_command_writes_in_the_checkout_is_ignored_by_git() -> None:
    """A reader who runs the pages' commands in the checkout does not pile up
    untracked outputs there: every file or folder a command of README.md, docs/ or
    examples/ names for its output (``--out``, ``--claim-out``, ``--junit``, a ``>``
    redirect) is ignored by git (placeholders such as ``OUT`` and ``-``, standard
    output, aside)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = set()
    for _, command in doc_commands():
        redirect = re.search(r">\s*(\S+)\s*$", command)
        if redirect:
            outputs.add(redirect.group(1))
        for _, argv in dpaudit_calls(command):
            for flag, value in itertools.pairwise(argv):
                if flag in ("--out", "--claim-out", "--junit"):
                    outputs.add(value)
    paths = {
        out: out if Path(out).suffix else f"{out.rstrip('/')}/result.json"
        for out in outputs
        if out != "-" and not out.split("/")[0].isupper()
    }
    assert len(paths) > 10, sorted(paths)
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths.values()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    ignored = set(found.stdout.split())
    assert sorted(o for o, p in paths.items() if p not in ignored) == []


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [
        ('[[audit]]\nname = "a"\ngenerater = "pategan"\n', "did you mean 'generator'?"),
        ('[defaults]\nrouns = 5\n[[audit]]\nname = "a"\n', "did you mean 'rounds'?"),
    ],
)
def test_a_misspelt_policy_key_gets_a_suggestion(
    text: str, suggestion: str, tmp_path: Path
) -> None:
    from dpaudit.ci import load_policy
    from dpaudit.errors import InvalidParameterError

    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(InvalidParameterError, match=re.escape(suggestion)):
        load_policy(tmp_path / "p.toml")


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["--variant", "orignal"], "did you mean 'original'?"),
        (["--bug", "data_bound"], "did you mean 'data_bounds'?"),
        (["--option", "max_iteraions=3"], "did you mean 'max_iterations'?"),
        (
            ["--generator", "gpate", "--bug", "data_bound"],
            "did you mean 'data_bounds'?",
        ),
        (
            ["--generator", "gpate", "--option", "max_iteraions=3"],
            "did you mean 'max_iterations'?",
        ),
    ],
)
def test_a_misspelt_variant_flag_or_option_gets_a_suggestion(
    argv: list[str], suggestion: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit.cli import main

    assert main(["audit", "--dry-run", "--out", str(tmp_path / "a"), *argv]) == 2
    err = capsys.readouterr().err
    assert suggestion in err and len(err.strip().splitlines()) == 1, err


def test_a_misspelt_config_key_gets_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit.cli import main

    (tmp_path / "a.toml").write_text("rouns = 5\n")
    argv = ["audit", "--config", str(tmp_path / "a.toml"), "--dry-run"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 2
    assert "did you mean 'rounds'?" in capsys.readouterr().err


def test_a_misspelt_attack_gets_a_suggestion() -> None:
    from dpaudit.attacks.registry import _unknown

    assert "did you mean 'querybased'?" in str(_unknown("querybsed"))


def test_a_misspelt_attack_option_gets_a_suggestion() -> None:
    from dpaudit.audit.config import AuditConfig
    from dpaudit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="did you mean 'n_queries'"):
        AuditConfig(attack_options={"n_querie": 3})


def test_docs_ci_lists_every_policy_key() -> None:
    """docs/ci.md lists the keys an [[audit]] takes: every one, and no other."""
    from dpaudit.ci.policy import POLICY_AUDIT_KEYS

    text = " ".join((ROOT / "docs" / "ci.md").read_text(encoding="utf-8").split())
    start = text.index("as `dpaudit.ci.policy.POLICY_AUDIT_KEYS`):")
    listed = re.findall(
        r"`(\w+)`", text[start : text.index("`[defaults]` takes", start)]
    )
    assert listed == list(POLICY_AUDIT_KEYS)


def test_ctrl_c_is_acknowledged_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    """A Ctrl-C while batches train in threads is said at once, with how long the
    running batches may still take and how to stop now; the run then waits for them
    (a thread inside torch cannot be stopped) and stops."""
    import threading
    import time

    from dpaudit.audit.games.two_world.game import _run_threads

    release = threading.Event()
    committed: list[list[dict[str, object]]] = []

    def work(batch: list[int]) -> list[dict[str, object]]:
        if batch[0] > 0:
            release.wait(5.0)
        return [{"round": r} for r in batch]

    def commit(rows: list[dict[str, object]]) -> None:
        committed.append(rows)
        if len(committed) == 1:
            threading.Timer(0.3, release.set).start()
            raise KeyboardInterrupt  # as the signal arrives in the main thread

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _run_threads(work, [[0], [1], [2]], workers=2, commit=commit)
    err = capsys.readouterr().err
    assert "stopping after the current batch, about " in err
    assert "Ctrl-C again to stop now" in err
    assert time.monotonic() - started < 5.0  # the running batch was waited for


def test_the_html_report_lays_out_what_the_audit_used() -> None:
    """The HTML report wraps long values without breaking words, shows a long array
    (an RDP curve of 46 orders) as a summary, and lists only the settings of the
    game the audit played."""
    import html as html_text

    from dpaudit.audit import AuditResult
    from dpaudit.reports import render
    from tests.reports.conftest import make_result

    doc = make_result()
    orders = [1.0 + 0.5 * k for k in range(46)]
    doc["claim"]["rdp"] = {"orders": orders, "epsilons": [0.01 * k for k in range(46)]}
    page = render([AuditResult.from_json(doc)], "html")
    assert "break-all" not in page
    text = " ".join(html_text.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert "46 values, 1 to 23.5; all in result.json" in text
    assert not re.search(r"\[[^\]]{300,}\]", text)  # no array dumped value by value
    for one_run_key in ("canaries", "guess_rule", "guesses_out"):
        assert f" {one_run_key} " not in text, one_run_key


def test_the_comparison_chart_names_each_audit(tmp_path: Path) -> None:
    """Two audits of one generator are told apart in the comparison chart: each bar
    is labelled by its audit's folder, not by the (identical) generator."""
    import json

    from dpaudit.reports.html import comparison_rows
    from dpaudit.reports.model import load_results
    from tests.reports.conftest import make_result

    for name in ("seed-0", "seed-1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(make_result()))
    labels = [label for label, _, _ in comparison_rows(load_results(tmp_path))]
    assert labels == ["seed-0 · querybased", "seed-1 · querybased"]


@pytest.mark.slow
def test_the_example_policys_pategan_audit_can_fail(tmp_path: Path) -> None:
    """examples/privacy.toml's PATE-GAN audit runs where its release depends on the
    data: on the three-column worst case with querybased the reference PATE-GAN
    released the same table in every round of both worlds (a constant release, an
    audit that can never fail; measured at 20 rounds, max_iterations 50). Here, at 30
    rounds per world of the policy's own settings, the release varies."""
    from dpaudit.audit import AuditConfig, run_audit
    from dpaudit.ci import load_policy

    (audit,) = [
        a
        for a in load_policy(ROOT / "examples" / "privacy.toml").audits
        if a.name == "pategan-reference"
    ]
    settings = {**audit.settings, "rounds": 30, "sequential": False}
    result = run_audit(AuditConfig.from_mapping(settings), out_dir=tmp_path / "a")
    assert result.power is not None and result.power.constant_release is False
