"""Every command block of README.md, docs/plugins.md and docs/ci.md, and every
command of examples/, runs as written.

What a block is:

* a fenced block of shell (```` ```bash ````, or unmarked and not listed in
  :data:`NOT_COMMANDS`) is split into commands (``\\`` continuations joined,
  ``# comments`` dropped); each command is one entry, keyed by its page and its
  text;
* examples/privacy.toml's commands are the ``#   dpaudit ...`` lines of its header;
  examples/github-actions.yml's are the lines of its ``run:`` steps;
* every other fenced block (a file's content, a program's output, a synopsis, an
  excerpt) is listed in :data:`NOT_COMMANDS` with what it is and what checks it.

Every command is in exactly one of three tables, and :func:`test_every_block_is_listed`
fails on a command (or block) in no table and on a table entry the pages no longer
hold, so a new block cannot be skipped silently:

* :data:`RUN`: run as written;
* :data:`SHORTENED`: run with flags appended (argparse keeps a flag's last value, so
  an appended ``--rounds 50`` replaces the page's ``--rounds 1000``), each with why;
* :data:`SKIPPED`: not run (a library environment, the network, hours), each with why.

:func:`test_page_commands_run` runs a page's commands in order, in one fresh folder
(a reader following the page), with ``dpaudit`` on ``PATH`` (and ``.venv/bin/dpaudit``,
what README's skipped install would make) running this repository's code, and no
``PYTHONPATH`` beyond it (a command that needs one sets it, as the page must then
say). Each must exit as :data:`EXPECT` says (0 unless listed), with no traceback;
where the page states an outcome (a verdict, the exit code of a CI gate), the test
checks it. The files a command reads that a reader brings (their own CSV,
policy or plug-in) are :data:`READER_FILES`; the one file of the repository that is
replaced is :data:`SHORTENED_FILES` (examples/privacy.toml, with fewer rounds).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpaudit.ci import load_policy

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/plugins.md", "docs/ci.md")
PRIVACY = "examples/privacy.toml"
RECIPE = "examples/github-actions.yml"
SHELL = ("bash", "sh", "")

# ------------------------------------------------------------------ the pages


@dataclass(frozen=True)
class Block:
    """A fenced block: its page, info string and lines."""

    page: str
    lang: str
    lines: tuple[str, ...]

    @property
    def first(self) -> str:
        return self.lines[0].strip() if self.lines else ""


_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def fenced_blocks(page: str) -> list[Block]:
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        start = _FENCE.match(lines[i])
        if start is None:
            i += 1
            continue
        indent, lang, body = start.group(1), start.group(2), []
        i += 1
        while not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i].removeprefix(indent))
            i += 1
        found.append(Block(page, lang, tuple(body)))
        i += 1
    return found


def split_commands(lines: list[str] | tuple[str, ...]) -> list[str]:
    """Shell lines as commands: continuations joined, comments and blanks dropped,
    spaces collapsed."""
    commands, current = [], ""
    for raw in lines:
        line = re.sub(r"(^|\s)#(\s.*)?$", "", raw).rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if current.strip():
            commands.append(" ".join(current.split()))
        current = ""
    return commands


def privacy_commands() -> list[str]:
    text = (ROOT / PRIVACY).read_text(encoding="utf-8")
    return [
        m.strip() for m in re.findall(r"^#\s{2,}(dpaudit\s.*)$", text, re.MULTILINE)
    ]


def recipe_commands() -> list[str]:
    doc = yaml.safe_load((ROOT / RECIPE).read_text(encoding="utf-8"))
    commands: list[str] = []
    for step in doc["jobs"]["dpaudit-check"]["steps"]:
        if "run" in step:
            commands += split_commands(step["run"].splitlines())
    return commands


def found_commands() -> list[tuple[str, str]]:
    """Every ``(page, command)``: the pages', then examples/', each in page order."""
    out: list[tuple[str, str]] = []
    for page in PAGES:
        for block in fenced_blocks(page):
            if block.lang in SHELL and (page, block.first) not in NOT_COMMANDS:
                out += [(page, c) for c in split_commands(block.lines)]
    out += [(PRIVACY, c) for c in privacy_commands()]
    out += [(RECIPE, c) for c in recipe_commands()]
    return out


# ------------------------------------------------------------------ the tables

#: Fenced blocks that are not commands: ``(page, first line) -> what it is, and what
#: checks it`` (:func:`test_blocks_that_are_not_commands`).
NOT_COMMANDS: dict[tuple[str, str], str] = {
    ("docs/plugins.md", '[project.entry-points."dpaudit.generators"]'): (
        "a pyproject.toml excerpt: parsed, its group is the one dpaudit reads"
    ),
    ("docs/plugins.md", "class MyGenerator:"): "the protocol's signatures: compiled",
    ("docs/plugins.md", "import math"): (
        "an excerpt (`...` stands for the mechanism): compiled"
    ),
    (
        "docs/plugins.md",
        '"""An epsilon-DP synthetic-data generator for binary and categorical tables."""',
    ): (
        "the complete example's module: saved as noisy_histogram.py (and as "
        "mypkg/synth.py), as the page says, and audited by the page's commands"
    ),
    (
        "docs/plugins.md",
        '{"columns": ["a", "b"],                  # the measured columns, as the table '
        "names them",
    ): "a measurement record's shape, annotated: compiled",
    (
        "docs/plugins.md",
        '{"columns": ["age"], "cells": [[20], [21], [22], [23]],',
    ): (
        "a record with sets: compiled, and accepted by dpaudit's own record checks "
        "(an integer column age)"
    ),
    (
        "docs/ci.md",
        "dpaudit check --policy privacy.toml [--junit junit.xml] [--summary PATH] "
        "[--out DIR]",
    ): "the command's synopsis: each option it names is one of `dpaudit check --help`",
    (
        "docs/ci.md",
        "[1/2] weak: INCONCLUSIVE (max attainable 0.96 <= claimed 10: "
        "could not refute the claim; eps_emp 0.96; needs 260951 rounds per world) — "
        "report: dpaudit-check/weak/report.html",
    ): ("output of a check: tests/test_cli.py runs that policy and compares the lines"),
    (
        "docs/ci.md",
        "alpha = 0.05        # family-wise false-alarm level (default 0.05)",
    ): ("a policy: loaded by dpaudit.ci.load_policy"),
    ("docs/ci.md", "env:"): (
        "an excerpt of examples/github-actions.yml: its env and steps are the file's"
    ),
    (
        "docs/ci.md",
        "from dpaudit.ci import load_policy, run_check, write_junit, write_summary",
    ): (
        "a program: run by python in the session's library/ folder, with the reader's "
        "privacy.toml; it exits with the check's code, 1"
    ),
}

_INSTALL = (
    "installs from the network (pip, PyPI and PyTorch's index); the suite runs in "
    "the environment it builds, and tests/ci/test_recipe.py runs the same install "
    "offline"
)
_LIBRARY_ENV = "needs a library environment (dpaudit env; minutes to build, network)"
_RECIPE = (
    "a step of the GitHub Actions recipe: tests/ci/test_recipe.py runs every run: "
    "step in order in a copy of the repository (the two network installs replaced)"
)

#: Commands not run: ``(page, command) -> why``.
SKIPPED: dict[tuple[str, str], str] = {
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e . "
        "&& .venv/bin/dpaudit audit",
    ): _INSTALL,
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e "
        "'.[dev,dask]' && .venv/bin/python -m pytest -q -n 2",
    ): _INSTALL + "; it runs this suite",
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 --index-url "
        "https://download.pytorch.org/whl/cpu && .venv/bin/pip install -c "
        "constraints.txt -e . && .venv/bin/dpaudit audit",
    ): _INSTALL,
    ("README.md", "dpaudit study --out study/"): (
        "hours: the full audit study (tests/ci/test_study.py runs a quick one)"
    ),
    ("README.md", "dpaudit study --quick --only reference,original"): (
        "minutes: its real-data settings select targets first; "
        "tests/ci/test_study.py::test_quick_study_end_to_end runs the quick study of "
        "both subjects on the worst case at 20 rounds"
    ),
    ("README.md", "dpaudit env smartnoise"): _LIBRARY_ENV,
    (
        "README.md",
        "dpaudit audit --generator smartnoise-pategan --option preprocessing=library "
        "--dataset worst-case --dataset-rows 2000 --python "
        "~/.cache/dpaudit/envs/smartnoise/bin/python --out audits/smartnoise-pategan",
    ): _LIBRARY_ENV + "; 1,334 s measured",
    (
        "docs/plugins.md",
        "python3.10 -m venv /opt/synthcity && /opt/synthcity/bin/pip install synthcity",
    ): _LIBRARY_ENV,
    (
        "docs/plugins.md",
        "dpaudit audit --generator mypkg.synth:SynthcityPateGan --python "
        "/opt/synthcity/bin/python --out audits/synthcitypategan",
    ): _LIBRARY_ENV + " (the block above builds it)",
    (
        "docs/plugins.md",
        "dpaudit audit --game one-run --release transcript --generator "
        "dpaudit.generators.toy_plugins:NoisyMarginals --dataset worst-case-unique "
        "--option noise_scale=0.25 --out toy-quarter-1run",
    ): (
        "tests/audit/test_onerun_unique.py runs this audit end to end (VIOLATION) and "
        "benchmarks/onerun_transcript.py --guide records it"
    ),
    (
        "docs/plugins.md",
        "dpaudit audit --game one-run --release transcript --generator "
        "dpaudit.generators.toy_plugins:NoisyMarginals --dataset worst-case-unique "
        "--out toy-honest-1run",
    ): (
        "tests/audit/test_onerun_unique.py runs this audit's game in process (not a "
        "VIOLATION) and benchmarks/onerun_transcript.py --guide records it"
    ),
    (RECIPE, "python -m venv .venv"): _RECIPE,
    (RECIPE, '.venv/bin/pip install "$TORCH" --index-url "$TORCH_INDEX_URL"'): _RECIPE,
    (RECIPE, ".venv/bin/pip install -c constraints.txt -e ."): _RECIPE,
    (
        RECIPE,
        'test -f "$POLICY" || { echo "policy file $POLICY not found: set POLICY in '
        "the workflow's env to your policy file\" >&2; exit 2; }",
    ): _RECIPE,
    (RECIPE, ".venv/bin/python --version"): _RECIPE,
    (
        RECIPE,
        ".venv/bin/python -c \"import torch; print('torch', torch.__version__)\"",
    ): _RECIPE,
    (RECIPE, ".venv/bin/dpaudit --version"): _RECIPE,
    (
        RECIPE,
        '.venv/bin/dpaudit check --policy "$POLICY" --junit junit.xml --summary '
        '"$GITHUB_STEP_SUMMARY" --out dpaudit-check',
    ): _RECIPE,
}

_ROUNDS = "1,000 rounds per world take minutes on 2 cores"

#: Commands run with flags appended: ``(page, command) -> (flags, why)``.
SHORTENED: dict[tuple[str, str], tuple[str, str]] = {
    (
        "README.md",
        ".venv/bin/dpaudit audit --variant original --out dpaudit-original",
    ): (
        "--rounds 50",
        _ROUNDS + "; 50 (20 test rounds, attainable maximum 1.31) still show the "
        "VIOLATION",
    ),
    (
        "README.md",
        "dpaudit fit --generator pategan --dataset cervical_cancer --epsilon 1 "
        "--delta 1e-5 --seed 0 --out synth.csv --claim-out claim.json",
    ): (
        "--option max_iterations=20",
        "1,000 iterations on the real table take minutes",
    ),
    (
        "README.md",
        "dpaudit fit --generator pategan --variant synthcity --bug data_bounds "
        "--out synth.csv",
    ): (
        "--option max_iterations=20",
        "1,000 iterations on the real table take minutes",
    ),
    (
        "README.md",
        "dpaudit trace --generator pategan --variant updated --dataset cervical_cancer "
        "--iterations 1000 --out trace/",
    ): ("--iterations 20", "1,000 recorded iterations take minutes"),
    ("README.md", "dpaudit audit"): (
        "--rounds 50",
        _ROUNDS + "; 50 still decide (attainable maximum 1.31 > the claim 1)",
    ),
    (
        "README.md",
        "dpaudit audit --variant borealis --rounds 1000 --out audits/borealis",
    ): (
        "--rounds 20",
        _ROUNDS,
    ),
    (
        "README.md",
        "dpaudit audit --generator dpaudit.generators.zoo:ExactGaussian --option "
        "true_epsilon=4 --out audits/gaussian",
    ): ("--rounds 20", _ROUNDS + " (a plug-in fit per round and world)"),
    (
        "README.md",
        "dpaudit audit --variant original --sequential --out audits/sequential",
    ): (
        "--rounds 100",
        "its first look alone trains 100 rounds per world; 100 in all still stop at "
        "a VIOLATION",
    ),
    (
        "README.md",
        "dpaudit audit --dataset worst-case --release transcript --out audits/transcript",
    ): ("--rounds 20", _ROUNDS),
    (
        "README.md",
        "dpaudit audit --dataset worst-case --dataset-rows 1250 --bug shared_sampling "
        "--release transcript --teachers canary --epsilon 4 --sequential --out "
        "audits/canary",
    ): ("--rounds 20", _ROUNDS + " on 1,250 rows"),
    (
        "README.md",
        "dpaudit utility --generator pategan --variant borealis --dataset "
        "cervical_cancer --epsilon 1 --seed 0 --out utility/",
    ): (
        "--models 1 --samples 1 --classifier LogisticRegression --option "
        "max_iterations=20",
        "12 classifiers on 25 synthetic tables of 5 fits take many minutes",
    ),
    (
        "docs/plugins.md",
        "dpaudit audit --generator mypkg.synth:NoisyHistogram --dataset worst-case "
        "--out audits/noisyhistogram",
    ): ("--rounds 20", _ROUNDS + " (a plug-in fit per round and world)"),
    (
        "docs/plugins.md",
        "PYTHONPATH=. dpaudit audit --generator noisy_histogram:NoisyHistogram "
        "--dataset worst-case --epsilon 1 --out noisy-histogram",
    ): ("--rounds 200", 'the page\'s own shorter audit ("With 200 rounds per world")'),
    (
        PRIVACY,
        "dpaudit check --policy examples/privacy.toml --junit junit.xml --summary "
        '"$GITHUB_STEP_SUMMARY"',
    ): ("", "runs the shortened policy of SHORTENED_FILES"),
    (
        "docs/plugins.md",
        "PYTHONPATH=examples dpaudit audit --generator "
        "laplace_marginals:LaplaceMarginals --epsilon 1 --out laplace-marginals",
    ): ("--rounds 100", _ROUNDS + " (a plug-in fit per round and world)"),
}

#: Commands run as written.
RUN: set[tuple[str, str]] = {
    ("README.md", "dpaudit list generators"),
    ("README.md", "dpaudit check-generator dpaudit.generators.zoo:ExactGaussian"),
    (
        "docs/plugins.md",
        "PYTHONPATH=. dpaudit check-generator noisy_histogram:NoisyHistogram",
    ),
    (
        "README.md",
        "dpaudit audit --generator dpaudit.generators.toy_plugins:CopyData --game "
        "one-run --out audits/one-run",
    ),
    ("README.md", "dpaudit audit --resume audits/borealis"),
    ("README.md", "dpaudit domain infer my.csv > my.domain.json"),
    ("README.md", "dpaudit report dpaudit-audit"),
    ("README.md", "dpaudit report dpaudit-audit --format md --out -"),
    ("README.md", "dpaudit report audits/ --out comparison.html"),
    (
        "README.md",
        "dpaudit check --policy privacy.toml --junit junit.xml --summary "
        '"$GITHUB_STEP_SUMMARY"',
    ),
    (
        "docs/plugins.md",
        "dpaudit audit --generator dpaudit.generators.toy_plugins:NoisyMarginals "
        "--dataset worst-case --release transcript --option noise_scale=0.25 --out "
        "toy-quarter",
    ),
    (
        "docs/plugins.md",
        "dpaudit audit --generator dpaudit.generators.toy_plugins:NoisyMarginals "
        "--dataset worst-case --release transcript --out toy-honest",
    ),
    ("docs/ci.md", "dpaudit report dpaudit-check/pategan-reference"),
    ("docs/ci.md", "dpaudit report dpaudit-check --format md --out -"),
    ("docs/ci.md", "dpaudit report dpaudit-check/pategan-reference --format json"),
    ("docs/ci.md", "dpaudit report dpaudit-check --format junit --out junit.xml"),
}


@dataclass(frozen=True)
class Expect:
    """What a command must do: its exit code, and the verdicts its ``result.json``
    (in ``result``) may hold where the page states one."""

    exit: int = 0
    result: str | None = None
    verdicts: frozenset[str] = frozenset()


_PRIVATE = frozenset({"CONSISTENT", "INCONCLUSIVE"})

#: Outcomes the pages state; every other command must exit 0.
EXPECT: dict[tuple[str, str], Expect] = {
    (
        "README.md",
        ".venv/bin/dpaudit audit --variant original --out dpaudit-original",
    ): (Expect(result="dpaudit-original", verdicts=frozenset({"VIOLATION"}))),
    ("README.md", "dpaudit audit"): Expect(
        result="dpaudit-audit", verdicts=frozenset({"CONSISTENT"})
    ),
    (
        "README.md",
        "dpaudit audit --variant original --sequential --out audits/sequential",
    ): Expect(result="audits/sequential", verdicts=frozenset({"VIOLATION"})),
    # "Exit code ... 1: a VIOLATION": the reader's policy audits a copying generator.
    (
        "README.md",
        "dpaudit check --policy privacy.toml --junit junit.xml --summary "
        '"$GITHUB_STEP_SUMMARY"',
    ): Expect(exit=1),
    # "should be CONSISTENT (or INCONCLUSIVE ...)" (a fixed seed: one outcome).
    (
        "docs/plugins.md",
        "dpaudit audit --generator mypkg.synth:NoisyHistogram --dataset worst-case "
        "--out audits/noisyhistogram",
    ): Expect(result="audits/noisyhistogram", verdicts=_PRIVATE),
    (
        "docs/plugins.md",
        "PYTHONPATH=. dpaudit audit --generator noisy_histogram:NoisyHistogram "
        "--dataset worst-case --epsilon 1 --out noisy-histogram",
    ): Expect(result="noisy-histogram", verdicts=_PRIVATE),
    # "The first adds a quarter of the noise it states: VIOLATION"; "The second adds
    # what it states: CONSISTENT".
    (
        "docs/plugins.md",
        "dpaudit audit --generator dpaudit.generators.toy_plugins:NoisyMarginals "
        "--dataset worst-case --release transcript --option noise_scale=0.25 --out "
        "toy-quarter",
    ): Expect(result="toy-quarter", verdicts=frozenset({"VIOLATION"})),
    (
        "docs/plugins.md",
        "dpaudit audit --generator dpaudit.generators.toy_plugins:NoisyMarginals "
        "--dataset worst-case --release transcript --out toy-honest",
    ): Expect(result="toy-honest", verdicts=frozenset({"CONSISTENT"})),
    # "The generator is correct, so the audit should be CONSISTENT".
    (
        "docs/plugins.md",
        "PYTHONPATH=examples dpaudit audit --generator "
        "laplace_marginals:LaplaceMarginals --epsilon 1 --out laplace-marginals",
    ): Expect(result="laplace-marginals", verdicts=frozenset({"CONSISTENT"})),
    # The example policy's two reference generators keep their claims: exit 0.
    (
        PRIVACY,
        "dpaudit check --policy examples/privacy.toml --junit junit.xml --summary "
        '"$GITHUB_STEP_SUMMARY"',
    ): Expect(exit=0),
}

#: The one file of the repository a session replaces: ``path -> (text, why)``.
SHORTENED_FILES: dict[str, tuple[str, str]] = {
    PRIVACY: (
        (ROOT / PRIVACY)
        .read_text(encoding="utf-8")
        .replace("[defaults]\n", "[defaults]\nrounds = 60\n", 1),
        "the quick preset's 500 rounds per world of two generators take minutes; 60 "
        "(24 test rounds, attainable maximum about 1.5 with the check's looks) still "
        "decide against the claim of 1",
    ),
}

_COPY_POLICY = """[defaults]
dataset = "worst-case"
generator = "copy"
attack = "querybased"
epsilon = 0.1
rounds = 20

[[audit]]
name = "copy-leaks"
"""


def _noisy_histogram() -> str:
    (block,) = [
        b
        for b in fenced_blocks("docs/plugins.md")
        if b.lang == "python" and "class NoisyHistogram" in "\n".join(b.lines)
    ]
    return "\n".join(block.lines) + "\n"


#: Files a reader brings (their own data, policy, plug-in): ``path -> why``; their
#: contents are :func:`reader_files`'.
READER_FILES: dict[str, str] = {
    "my.csv": "README's `dpaudit domain infer my.csv`: the reader's table",
    "privacy.toml": (
        "README's `dpaudit check --policy privacy.toml` and docs/ci.md's library use: "
        "the reader's policy, one 20-round audit of a generator that copies its data "
        "(the gate's exit 1 in seconds)"
    ),
    "noisy_histogram.py": "docs/plugins.md: 'Save it as noisy_histogram.py'",
    "mypkg/__init__.py": "docs/plugins.md's `mypkg.synth:NoisyHistogram`: a package",
    "mypkg/synth.py": "... holding the page's complete example",
}


def reader_files() -> dict[str, str]:
    example = _noisy_histogram()
    return {
        "my.csv": "age,smoker\n31,0\n45,1\n52,0\n28,1\n",
        "privacy.toml": _COPY_POLICY,
        "noisy_histogram.py": example,
        "mypkg/__init__.py": "",
        "mypkg/synth.py": example,
    }


#: The sessions: each runs its pages' commands in order in one folder.
SESSIONS: dict[str, tuple[str, ...]] = {
    "README.md": ("README.md",),
    "docs/plugins.md": ("docs/plugins.md",),
    # docs/ci.md's report commands read the example policy's check.
    "examples+docs/ci.md": (PRIVACY, "docs/ci.md", RECIPE),
}

# ------------------------------------------------------------------ the tests


def test_every_block_is_listed() -> None:
    """Each command is in exactly one table, each table entry is on its page, and
    every fenced block that is not shell is a listed non-command."""
    found = found_commands()
    assert len(found) == len(set(found)), "a command appears twice on one page"
    tables = {"RUN": set(RUN), "SHORTENED": set(SHORTENED), "SKIPPED": set(SKIPPED)}
    for name, entries in tables.items():
        stale = sorted(entries - set(found))
        assert not stale, f"{name} lists commands no page holds: {stale}"
    for (a, x), (b, y) in [
        ((a, tables[a]), (b, tables[b])) for a in tables for b in tables if a < b
    ]:
        assert not x & y, f"in both {a} and {b}: {sorted(x & y)}"
    listed = set().union(*tables.values())
    unlisted = [c for c in found if c not in listed]
    assert not unlisted, (
        "commands in no table (add each to RUN, SHORTENED or SKIPPED with why): "
        f"{unlisted}"
    )
    assert set(EXPECT) <= set(RUN) | set(SHORTENED)
    blocks = [b for page in PAGES for b in fenced_blocks(page)]
    others = {(b.page, b.first) for b in blocks if b.lang not in SHELL}
    assert others <= set(NOT_COMMANDS), sorted(others - set(NOT_COMMANDS))
    assert set(NOT_COMMANDS) <= {(b.page, b.first) for b in blocks}
    assert {s for pages in SESSIONS.values() for s in pages} == {
        *PAGES,
        PRIVACY,
        RECIPE,
    }


def _block(page: str, first: str) -> Block:
    (block,) = [b for b in fenced_blocks(page) if b.first == first]
    return block


def test_blocks_that_are_not_commands() -> None:
    """What :data:`NOT_COMMANDS` says checks each block, in seconds."""
    from dpaudit.generators.entry_points import ENTRY_POINT_GROUP

    code = {
        first: "\n".join(_block(page, first).lines)
        for page, first in NOT_COMMANDS
        if _block(page, first).lang == "python"
    }
    for first, text in code.items():
        compile(text, first, "exec")
    # The record with sets passes the checks a plug-in's transcript gets.
    from dpaudit.data import Domain
    from dpaudit.generators.foreign.transcript import check_transcript

    record = eval(code['{"columns": ["age"], "cells": [[20], [21], [22], [23]],'])
    domain = Domain.from_json(
        {"columns": [{"name": "age", "kind": "integer", "lower": 0, "upper": 120}]}
    )
    (checked,) = check_transcript([record], "doc", domain=domain) or ()
    assert len(checked.noisy) == 2
    entry = tomllib.loads(
        "\n".join(
            _block(
                "docs/plugins.md", '[project.entry-points."dpaudit.generators"]'
            ).lines
        )
    )
    assert list(entry["project"]["entry-points"]) == [ENTRY_POINT_GROUP]
    # The synopsis names options `dpaudit check` has.
    synopsis = "\n".join(
        _block(
            "docs/ci.md",
            next(f for p, f in NOT_COMMANDS if f.startswith("dpaudit check")),
        ).lines
    )
    help_text = subprocess.run(
        [sys.executable, "-m", "dpaudit", "check", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env=_env(ROOT),
    ).stdout
    for option in re.findall(r"--[a-z][a-z-]*", synopsis):
        assert option in help_text, option
    # The output block is the one tests/test_cli.py compares, line for line.
    assert '"```\\n[1/2] weak:"' in (ROOT / "tests" / "test_cli.py").read_text()
    # The policy loads (its plug-in is not imported to load it).
    policy = next(f for p, f in NOT_COMMANDS if f.startswith("alpha = 0.05"))
    text = "\n".join(_block("docs/ci.md", policy).lines)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "privacy.toml").write_text(text, encoding="utf-8")
        loaded = load_policy(Path(folder) / "privacy.toml")
    assert [a.name for a in loaded.audits] == ["pategan-reference", "my-generator"]
    # The workflow excerpt: its env and steps are the recipe's.
    excerpt = yaml.safe_load("\n".join(_block("docs/ci.md", "env:").lines))
    recipe = yaml.safe_load((ROOT / RECIPE).read_text(encoding="utf-8"))
    assert excerpt["env"] == recipe["env"]
    steps = {
        s.get("name") or s["uses"]: s for s in recipe["jobs"]["dpaudit-check"]["steps"]
    }
    for step in excerpt["steps"]:
        name = step.get("name") or step["uses"]
        same = steps.get(name) or next(
            s for s in steps.values() if s.get("uses") == name
        )
        for key, value in step.items():
            if key == "with":
                for option, given in value.items():
                    assert str(same["with"][option]).strip() == str(given).strip()
            else:
                assert same[key] == value, (name, key)


def _env(cwd: Path) -> dict[str, str]:
    """The reader's environment: ``dpaudit`` (and ``.venv/bin/dpaudit``) run this
    repository; no CI variables, no ``PYTHONPATH``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith(("GITHUB_", "PYTEST_", "DPAUDIT_"))
    }
    env["PATH"] = os.pathsep.join([str(cwd / ".bin"), env.get("PATH", "")])
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    return env


def _wrapper() -> str:
    """``dpaudit`` as the install would put it on PATH, running this repository's
    code (appended to a ``PYTHONPATH`` the command sets)."""
    return (
        "#!/bin/sh\n"
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{ROOT}" exec '
        f'{shlex.quote(sys.executable)} -m dpaudit "$@"\n'
    )


def _prepare(folder: Path) -> None:
    # The examples' Python modules, as a reader's clone has them (docs/plugins.md
    # audits examples/laplace_marginals.py with PYTHONPATH=examples).
    for module in sorted((ROOT / "examples").glob("*.py")):
        (folder / "examples").mkdir(exist_ok=True)
        (folder / "examples" / module.name).write_text(
            module.read_text(encoding="utf-8"), encoding="utf-8"
        )
    # The findings' small tables, as a reader's clone has them (docs/findings.md).
    for data in sorted((ROOT / "docs" / "findings" / "data").glob("*")):
        (folder / "docs" / "findings" / "data").mkdir(parents=True, exist_ok=True)
        (folder / "docs" / "findings" / "data" / data.name).write_bytes(
            data.read_bytes()
        )
    for path, text in reader_files().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    for path, (text, _) in SHORTENED_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    for where in (".bin", ".venv/bin"):
        script = folder / where / "dpaudit"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(_wrapper(), encoding="utf-8")
        script.chmod(0o755)


def _run(
    command: str, cwd: Path, *, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=_env(cwd),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the commands' timing, which
    a busy machine does not inflate as it does their wall time)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _check(page: str, command: str, cwd: Path) -> None:
    flags = SHORTENED[(page, command)][0] if (page, command) in SHORTENED else ""
    started, cpu = time.monotonic(), _children_cpu()
    ran = _run(f"{command} {flags}".strip(), cwd)
    wall, cpu = time.monotonic() - started, _children_cpu() - cpu
    print(f"{wall:6.1f} s ({cpu:5.1f} s CPU)  {page}: {command} {flags}")
    expect = EXPECT.get((page, command), Expect())
    told = f"{page}: {command} {flags}\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
    assert ran.returncode == expect.exit, told
    assert "Traceback" not in ran.stdout + ran.stderr, told
    if expect.verdicts:
        assert expect.result is not None
        result = json.loads((cwd / expect.result / "result.json").read_text())
        assert result["verdict"] in expect.verdicts, told


def _library_use(cwd: Path) -> None:
    """docs/ci.md's library use, run by python in ``library/`` with the reader's
    policy: it raises ``SystemExit`` with the check's exit code, 1."""
    first = next(f for p, f in NOT_COMMANDS if f.startswith("from dpaudit.ci import"))
    folder = cwd / "library"
    folder.mkdir()
    (folder / "privacy.toml").write_text(reader_files()["privacy.toml"])
    (folder / "use.py").write_text("\n".join(_block("docs/ci.md", first).lines) + "\n")
    env = _env(folder)
    env["PYTHONPATH"] = str(ROOT)
    ran = subprocess.run(
        [sys.executable, "use.py"], cwd=folder, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 1, ran.stderr[-3000:]
    assert (folder / "junit.xml").is_file() and (folder / "dpaudit-check").is_dir()


@pytest.mark.slow
@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_page_commands_run(session: str, tmp_path: Path) -> None:
    """The session's commands in page order, in one folder (RUN and SHORTENED; the
    SKIPPED are not run). Measured, the commands' CPU seconds (and the session's wall
    seconds on a 2-core machine shared at load 10): README.md 75 (282),
    docs/plugins.md 9 (41), the examples and docs/ci.md 21 (108); most of it is
    each command's start (about 3 s CPU: torch and scikit-learn imports)."""
    _prepare(tmp_path)
    found = found_commands()
    for page in SESSIONS[session]:
        for command in [c for p, c in found if p == page]:
            if (page, command) not in SKIPPED:
                _check(page, command, tmp_path)
    if "docs/ci.md" in SESSIONS[session]:
        _library_use(tmp_path)


def test_an_empty_summary_path_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """README's and examples/privacy.toml's `--summary "$GITHUB_STEP_SUMMARY"`, run
    outside CI (the variable unset), asks for no summary; before, the empty path was
    the working directory, refused as "not a file path"."""
    from dpaudit.ci.summary import summary_path
    from dpaudit.cli import build_parser

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    parse = build_parser().parse_args
    empty = parse(["check", "--policy", "p.toml", "--summary", ""])
    assert empty.summary is None and summary_path(empty.summary) is None
    given = parse(["check", "--policy", "p.toml", "--summary", "s.md"])
    assert given.summary == Path("s.md")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "ci.md")
    assert summary_path(empty.summary) == Path("ci.md")
