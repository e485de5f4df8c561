"""Every measured figure a page quotes comes from a record file the measuring
benchmark writes (benchmarks/records/NAME.json: the command, the date, dpaudit's
version and the figures; ``python benchmarks/NAME.py --record``), and the page says
what the record says.

:data:`QUOTES` lists each quote: the page, the sentence with ``{}`` where the
figures go, the record and the figures' keys (each written as the page writes it).
A page that still says an old figure, or a record re-measured without the page
following it, fails here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import read_record, write_record  # noqa: E402


def _looks(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _eps(value: float) -> str:
    return f"{value:.2f}"


#: ``(page, sentence with {} per figure, record, (key, format) per figure)``.
QUOTES: tuple[tuple[str, str, str, tuple[tuple[str, object], ...]], ...] = (
    (
        "docs/ci.md",
        "| 500 (`quick`) | 50, 100, 250, 500 | {} | {} |",
        "check_power",
        (("500/default/0.05/looks", _looks), ("500/default/0.05/once", _eps)),
    ),
    (
        "docs/ci.md",
        "| 1,000 | 100, 200, 500, 1,000 | {} | {} |",
        "check_power",
        (("1000/default/0.05/looks", _looks), ("1000/default/0.05/once", _eps)),
    ),
    (
        "docs/ci.md",
        "of the audit's alpha: {} instead of {} for `quick` and the default set",
        "check_power",
        (
            ("500/default/0.05/looks", lambda v: _eps(v[-1])),
            ("500/default/0.05/once", _eps),
        ),
    ),
    (
        "docs/ci.md",
        "G-PATE's with one attack, querybased, whose plan shows {} ({} analysed once), "
        "and PATE-GAN's on the continuous worst case with the default set, {} ({} "
        "analysed once).",
        "check_power",
        (
            ("500/querybased/0.025/looks", lambda v: _eps(v[-1])),
            ("500/querybased/0.025/once", _eps),
            ("500/default/0.025/looks", lambda v: _eps(v[-1])),
            ("500/default/0.025/once", _eps),
        ),
    ),
    (
        "docs/ci.md",
        "maximum is {} (the sequential looks' last, the default set)",
        "check_power",
        (("500/default/0.05/looks", lambda v: _eps(v[-1])),),
    ),
    (
        "docs/plugins.md",
        "its attack trains nothing; mu_emp {} against the claimed and exact mu {}, "
        "refutation ratio {}). The second adds what it states: {} (mu_emp {}),",
        "plugin_transcript",
        (
            ("quarter/mu_emp", "{:.3f}".format),
            ("quarter/mu_claimed", "{:.3f}".format),
            ("quarter/ratio", "{:.2f}".format),
            ("honest/verdict", str),
            ("honest/mu_emp", "{:.3f}".format),
        ),
    ),
    (
        "docs/plugins.md",
        "the ceiling of the best possible test at this size, a mu_emp of {} (these "
        "figures are recorded in benchmarks/records/plugin_transcript.json",
        "plugin_transcript",
        (("honest/mu_ceiling", "{:.3f}".format),),
    ),
    (
        "examples/privacy.toml",
        "the largest eps_emp it can show is {} for the G-PATE audit here (one attack, "
        "alpha 0.025, spent over the preset's sequential looks; {} analysed once) and "
        "{} for PATE-GAN's three attacks ({} analysed once), as `dpaudit check "
        "--dry-run` prints.",
        "check_power",
        (
            ("500/querybased/0.025/looks", lambda v: _eps(v[-1])),
            ("500/querybased/0.025/once", _eps),
            ("500/default/0.025/looks", lambda v: _eps(v[-1])),
            ("500/default/0.025/once", _eps),
        ),
    ),
    *(
        (
            "docs/soundness.md",
            f"| {claim} | {rounds} | {{}} | {{}} | {{}} | {{}} | {{}} |",
            "continuous_level",
            tuple(
                (f"{key}/{figure}", fmt)
                for figure, fmt in (
                    ("size_grid", "{:.3f}".format),
                    ("size_continuous", "{:.3f}".format),
                    ("oracle_grid", "{:.1%}".format),
                    ("oracle_continuous", "{:.1%}".format),
                    ("oracle_randomized", "{:.1%}".format),
                )
            ),
        )
        for claim, rounds, key in (
            ("(1, 10⁻⁵), the lines alone (4x)", "400", "4x-lines"),
            ("(2.5, 10⁻⁵), its GDP and RDP (1.6x)", "160", "1.6x-profile-160"),
            ("(2.5, 10⁻⁵), its GDP and RDP (1.6x)", "400", "1.6x-profile-400"),
            ("(2.5, 10⁻⁵), its GDP and RDP (1.6x)", "1,000", "1.6x-profile-1000"),
        )
    ),
    (
        "docs/soundness.md",
        "stays out of reach (oracle {} on the grid, {} with a continuous level)",
        "continuous_level",
        (
            ("1.6x-lines/oracle_grid", "{:.1e}".format),
            ("1.6x-lines/oracle_continuous", "{:.1e}".format),
        ),
    ),
    (
        "docs/soundness.md",
        "is refuted with probability {}, {}, {}, {} on the grid, {}, {}, {}, {} with a "
        "continuous level and {}, {}, {}, {} with the coin.",
        "continuous_level",
        tuple(
            (f"rr-{eps}/oracle_{way}", "{:.2%}".format)
            for way in ("grid", "continuous", "randomized")
            for eps in ("0.5", "1", "2", "4")
        ),
    ),
    (
        "docs/soundness.md",
        "in steps of 20 ({} sizes), a continuous level adds {} points on average to the "
        "4x case and {} to the 1.6x case, at most {} (at {} rounds) and {} (at {} "
        "rounds), and 2 points or more at {} and {} of the 46 sizes; the coin adds {} "
        "and {} on average, at most {} and {}.",
        "continuous_level",
        (
            ("sweep/4x-lines/sizes", str),
            ("sweep/4x-lines/continuous_mean", "{:+.2f}".format),
            ("sweep/1.6x-profile-400/continuous_mean", "{:+.2f}".format),
            ("sweep/4x-lines/continuous_max", "{:+.2f}".format),
            ("sweep/4x-lines/continuous_max_rounds", str),
            ("sweep/1.6x-profile-400/continuous_max", "{:+.2f}".format),
            ("sweep/1.6x-profile-400/continuous_max_rounds", str),
            ("sweep/4x-lines/continuous_sizes_over_2", str),
            ("sweep/1.6x-profile-400/continuous_sizes_over_2", str),
            ("sweep/4x-lines/randomized_mean", "{:+.2f}".format),
            ("sweep/1.6x-profile-400/randomized_mean", "{:+.2f}".format),
            ("sweep/4x-lines/randomized_max", "{:+.2f}".format),
            ("sweep/1.6x-profile-400/randomized_max", "{:+.2f}".format),
        ),
    ),
    (
        "docs/soundness.md",
        "with probability q = {}, makes every canary's score a Gaussian shift of mu' = {} "
        "clipped to a band of half-width {} around mu'/2; tails, no canary leaks.",
        "onerun_interference",
        (("q", "{:.3f}".format), ("shift", "{:g}".format), ("half", "{:g}".format)),
    ),
    (
        "docs/soundness.md",
        "(q is 95% of the largest q that keeps it: {}; above the pair's largest "
        "privacy loss, {}, its profile is 0)",
        "onerun_interference",
        (("q_max", "{:.3f}".format), ("largest_loss", "{:.2f}".format)),
    ),
    (
        "docs/soundness.md",
        "independent ({} false alarms of {} audits at α = 0.05, 1,000 canaries), and "
        "raises {} of {} ({}) on this one: when the coin is heads all canaries leak at "
        "once. The f-DP bound (the {} + {} guesses the game plans for this claim) raises "
        "{} and {} false alarms.",
        "onerun_interference",
        (
            ("ideal Gaussian/independent/false_alarms", str),
            ("ideal Gaussian/independent/audits", "{:,}".format),
            ("rare leak/independent/false_alarms", str),
            ("rare leak/independent/audits", "{:,}".format),
            ("rare leak/independent/rate", "{:.1%}".format),
            ("fdp_per_side", str),
            ("fdp_per_side", str),
            ("ideal Gaussian/fdp/false_alarms", str),
            ("rare leak/fdp/false_alarms", str),
        ),
    ),
    (
        "docs/onerun.md",
        "on which a test treating the canaries as independent trials raises {} false "
        "alarms at alpha 0.05, and the f-DP bound {}",
        "onerun_interference",
        (
            ("rare leak/independent/rate", "{:.1%}".format),
            ("rare leak/fdp/false_alarms", lambda v: "none" if v == 0 else f"{v}"),
        ),
    ),
    (
        "docs/soundness.md",
        "At 1,000 canaries a 1.5x overclaim (μ = 1.5) was detected {} times with the ρ "
        "curve against {} with the lines, a 2x overclaim {} times against {}; at 10,000 "
        "canaries {} against {} and {} against {}. At the claim (μ = 1) neither raised "
        "a false alarm ({} and {} at 1,000 canaries, {} and {} at 10,000). The same "
        "claim stating μ = 1 instead of ρ detects the 1.5x overclaim {} and {} times.",
        "onerun_profile",
        tuple(
            (f"{n}/{release}/{test}/violations", "{:,}".format)
            for n, release, test in (
                (1000, "1.5x", "rho curve"),
                (1000, "1.5x", "lines"),
                (1000, "2x", "rho curve"),
                (1000, "2x", "lines"),
                (10000, "1.5x", "rho curve"),
                (10000, "1.5x", "lines"),
                (10000, "2x", "rho curve"),
                (10000, "2x", "lines"),
                (1000, "true", "rho curve"),
                (1000, "true", "lines"),
                (10000, "true", "rho curve"),
                (10000, "true", "lines"),
                (1000, "1.5x", "mu curve"),
                (10000, "1.5x", "mu curve"),
            )
        ),
    ),
)


def _flat(page: str) -> str:
    """The page's text with comment markers and line breaks folded into spaces."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if page.endswith(".toml"):
        text = re.sub(r"^#\s?", "", text, flags=re.MULTILINE)
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("page", "sentence", "record", "keys"), QUOTES, ids=[q[1][:40] for q in QUOTES]
)
def test_the_page_says_what_the_record_says(
    page: str, sentence: str, record: str, keys: tuple[tuple[str, object], ...]
) -> None:
    figures = read_record(record)["figures"]
    values = [fmt(figures[key]) for key, fmt in keys]  # type: ignore[operator]
    expected = " ".join(sentence.format(*values).split())
    assert expected in _flat(page), f"{page} should say: {expected!r}"


def test_every_record_names_its_command_date_and_version() -> None:
    folder = ROOT / "benchmarks" / "records"
    records = sorted(folder.glob("*.json"))
    assert records
    for path in records:
        record = read_record(path.stem)
        assert record["command"].startswith("python "), path.name
        for script in re.findall(r"benchmarks/\w+\.py", record["command"]):
            assert (ROOT / script).is_file(), (path.name, script)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record["date"])
        assert record["version"] and record["figures"]
    cited = {q[2] for q in QUOTES}
    assert cited <= {p.stem for p in records}


def test_a_stale_page_fails(tmp_path: Path) -> None:
    """The comparison catches a figure the record no longer has: a record with
    another value makes the page's sentence one it does not hold."""
    figures = dict(read_record("check_power")["figures"])
    figures["500/default/0.05/once"] = 3.99
    write_record("check_power", figures, argv=[], folder=tmp_path)
    moved = read_record("check_power", folder=tmp_path)["figures"]
    page, sentence, _, keys = QUOTES[0]
    values = [fmt(moved[key]) for key, fmt in keys]  # type: ignore[operator]
    assert " ".join(sentence.format(*values).split()) not in _flat(page)


def test_readme_cites_the_suite_record_not_a_figure() -> None:
    """README's suite figures (how long, how many passed) come from the record of the
    last full run, benchmarks/records/suite.json, which the page cites; the page
    itself quotes no count or duration that could go stale."""
    text = _flat("README.md")
    assert "benchmarks/records/suite.json" in text
    at = text.index("Install and run the tests")
    said = text[at : at + 400]
    assert not re.search(r"\d[\d,]* passed|\d+ min \d+ s", said), said
    suite = ROOT / "benchmarks" / "records" / "suite.json"
    if suite.is_file():  # written from the CI run's log
        record = read_record("suite")
        assert record["command"].startswith("python ") and record["figures"]
