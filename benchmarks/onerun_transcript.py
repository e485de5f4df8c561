"""The white-box one-run game (``--game one-run --release transcript``): simulated
power and false alarms of the own-cell score, and real audits of the libraries.

Simulated rows (always): one-run audits of ``--canaries`` canaries whose own-cell
scores are exact Gaussian log-likelihood ratios at a per-canary ``mu`` (the score is
an increasing affine function of the own answer, so Gaussian scores of mean ``mu``
for included and 0 for excluded canaries are the score's exact distribution up to
that map), decided by the game's own rules (:func:`dpaudit.audit.games.apply_rules`,
the count rule at ``--guesses`` "in" and "out", alpha 0.05, delta 1e-5) against a
claim of epsilon 1:

- ``NoisyMarginals, a quarter of its noise``: the white-box guide's plug-in
  (docs/plugins.md) on ``worst-case``: four one-way marginals at the analytic
  Gaussian's ``mu = 0.268`` for (1, 1e-5), so ``sigma = 2 / 0.268``; a canary's own
  count (its value of the ``canary`` column) adds a quarter of it: ``mu = 4 x 0.268
  / 2 = 0.536``. Every VIOLATION is a detection.
- ``NoisyMarginals, its full noise``: ``mu = 0.268 / 2 = 0.134``: the claim holds, so
  every VIOLATION is a false alarm.

These two rows keep their first settings (Steinke's bound, as the game used it
then). The rows ``... on worst-case-unique`` are the same plug-in on the design whose
canaries hold a value of their own in every column (``--dataset worst-case-unique``):
all four counts a canary changes are its own, so the own-cell score is ``2 / sigma``
-GDP: ``mu = 4 x 0.268 = 1.072`` with a quarter of the noise, and exactly the claimed
``0.268`` with the full noise (a mechanism on the claim's boundary: every VIOLATION a
false alarm, at most alpha by the bound's theorem). They run with the game's own
rules at its defaults: ``--unique-canaries`` (1,000) canaries, ``--unique-guesses``
"in" and "out" (default: the counts the game plans from that configuration,
:func:`dpaudit.audit.games.plan_counts`), the bound ``auto`` resolves to, and
the claim's whole curve (epsilon 1 at delta 1e-5 and its ``gdp_mu`` 0.268): a
VIOLATION is a refuted curve, and eps_emp is clipped to the claim otherwise, as
the game's result is. The rows ``... on worst-case`` run the first two rows' scores
(one own count) under the same rules, for comparison.

Library rows (``--libraries``): for each adapter with a transcript whose
environment exists (``~/.cache/dpaudit/envs/NAME``, or ``$DPAUDIT_ENV_HOME``), the
white-box one-run audit at each ``--epsilons`` (``dpaudit audit --game one-run
--release transcript``, with ``measure_only=true`` where the adapter can stop after
its measurements; ``--fits`` fits of ``--library-canaries`` canaries), run as its
own command (at most ``--timeout`` seconds; ``--skip-done`` reuses a finished row
from ``--work-dir``); each row records the
verdict, eps_emp, the exact privacy of the stated measurements per canary (mu and
epsilon of every answer a canary changes), the claim, what the measurements spend
against it ("tight", "loose by X": the claim over the spend, or "violated"), the
command and its wall time. ``--smoke`` replaces the libraries by the NoisyMarginals
plug-in (no environment needed) and shrinks everything.

    PYTHONPATH=. python benchmarks/onerun_transcript.py --out onerun_transcript.json
    PYTHONPATH=. python benchmarks/onerun_transcript.py \
        --out docs/records/onerun_transcript_simulated.json
    PYTHONPATH=. python benchmarks/onerun_transcript.py --libraries --audits 0 \\
        --out docs/records/onerun_libraries.json
    PYTHONPATH=. python benchmarks/onerun_transcript.py --guide \
        --out docs/records/onerun_transcript_guide.json
    PYTHONPATH=. python benchmarks/onerun_transcript.py --smoke

``--guide`` runs only the white-box guide's audits of ``NoisyMarginals`` (docs/onerun.md
states their figures): a quarter and all of its noise on ``worst-case-unique`` at the
default 1,000 canaries and guesses (planned by the game), and a quarter on
``worst-case`` at 30,000 (``--guesses 300``) and 1,000.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
import numpy as np

from dpaudit.audit.games import (
    apply_rules,
    best_outcome,
    count_alpha,
    plan_counts,
    resolve_bound,
)
from dpaudit.generators.zoo import analytic_gaussian_mu

ALPHA = 0.05
DELTA = 1e-5
CLAIM = 1.0
#: (row, per-canary mu of the own count).
_MU = analytic_gaussian_mu(CLAIM, DELTA)
SIMULATED = (
    ("NoisyMarginals, a quarter of its noise", 4.0 * _MU / 2.0),
    ("NoisyMarginals, its full noise", _MU / 2.0),
)
#: (row, per-canary mu of the own counts) on ``worst-case-unique``: four own counts
#: of noise ``2 / _MU`` (times the noise scale) each.
UNIQUE = (
    ("NoisyMarginals on worst-case-unique, a quarter of its noise", 4.0 * _MU),
    ("NoisyMarginals on worst-case-unique, its full noise", _MU),
    ("NoisyMarginals on worst-case, a quarter of its noise", 4.0 * _MU / 2.0),
    ("NoisyMarginals on worst-case, its full noise", _MU / 2.0),
)
#: (adapter, environment, options) of every adapter that records a transcript;
#: ``measure_only=true`` where the adapter can stop after its measurements.
_MEASURE_ONLY = ("measure_only=true",)
ADAPTERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("smartnoise-mst", "smartnoise", _MEASURE_ONLY),
    ("smartnoise-aim", "smartnoise", ()),
    ("smartnoise-mwem", "smartnoise", ()),
    ("dpmm-mst", "dpmm", _MEASURE_ONLY),
    ("dpmm-aim", "dpmm", ()),
    ("dpmm-privbayes", "dpmm", _MEASURE_ONLY),
    ("opendp-mst", "opendp", ()),
    ("opendp-aim", "opendp", ()),
    ("synthcity-privbayes", "synthcity", ()),
)
SMOKE_PLUGIN = "dpaudit.generators.toy_plugins:NoisyMarginals"


def simulate(
    mu: float, *, canaries: int, guesses: int, audits: int, seed: int
) -> dict[str, Any]:
    gen = np.random.default_rng([seed, int(mu * 1e6)])
    bounds = []
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        scores = gen.normal(mu * bits, 1.0)
        outcomes = apply_rules(
            scores,
            bits,
            rule="both",
            guesses_in=guesses,
            guesses_out=guesses,
            threshold=None,  # the own-cell score has no threshold fixed in advance
            tie_break=gen.random(canaries),
            delta=DELTA,
            alpha=ALPHA,
        )
        bounds.append(best_outcome(outcomes).eps_emp)
    values = np.asarray(bounds)
    return {
        "audits": audits,
        "violations": int(np.sum(values > CLAIM)),
        "rate": float(np.mean(values > CLAIM)) if audits else None,
        "mean_eps_emp": float(values.mean()) if audits else None,
        "min_eps_emp": float(values.min()) if audits else None,
    }


def simulate_game(
    mu: float, *, canaries: int, guesses: int, audits: int, seed: int
) -> dict[str, Any]:
    """``audits`` one-run audits of own-cell scores ``N(mu * bit, 1)`` decided as the
    game decides them at its defaults (the rule ``both``, which is the count rule at
    the full alpha for this score; the bound ``auto`` resolves to; the claim's curve,
    epsilon 1 at delta 1e-5 and its ``gdp_mu``, where that bound tests curves)."""
    bound = resolve_bound("auto", canaries)
    profile = bound != "steinke"
    gen = np.random.default_rng([seed, int(mu * 1e6), canaries])
    bounds, mus, violations = [], [], 0
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        scores = gen.normal(mu * bits, 1.0)
        outcomes = apply_rules(
            scores,
            bits,
            rule="both",
            guesses_in=guesses,
            guesses_out=guesses,
            threshold=None,
            tie_break=gen.random(canaries),
            delta=DELTA,
            alpha=ALPHA,
            bound=bound,
            claim_epsilon=CLAIM,
            claim_mu=_MU,
        )
        eps = best_outcome(outcomes).eps_emp
        found = [o.mu_emp for o in outcomes if o.mu_emp is not None]
        mu_emp = max(found) if found else None
        refuted = any(o.refutes for o in outcomes) if profile else eps > CLAIM
        if profile and not refuted:
            eps = min(eps, CLAIM)
            mu_emp = None if mu_emp is None else min(mu_emp, _MU)
        violations += bool(refuted)
        bounds.append(eps)
        if mu_emp is not None:
            mus.append(mu_emp)
    values = np.asarray(bounds)
    return {
        "bound": bound,
        "audits": audits,
        "violations": violations,
        "rate": violations / audits if audits else None,
        "mean_eps_emp": float(values.mean()) if audits else None,
        "min_eps_emp": float(values.min()) if audits else None,
        "mean_mu_emp": float(np.mean(mus)) if mus else None,
    }


def _own_mu(covers: str) -> float | None:
    """The largest mu of one canary's own answers, as ``covers`` states it."""
    found = re.search(r"own-cell mu ([0-9.e+-]+) at most", covers)
    return None if found is None else float(found.group(1))


def _spend(m: dict[str, Any]) -> str:
    """ "tight", "loose by X" (the claim over what the measurements spend) or the
    spend above the claim, in the claim's term."""
    claimed, spent = m.get("claimed"), m.get("spent")
    if claimed is None or spent is None:
        return "exact answers" if m.get("eps_exact") is None else "-"
    if spent > claimed * (1 + 1e-3):
        return f"measurements spend {spent / claimed:.2f}x the claim"
    if spent >= claimed * (1 - 1e-3):
        return "tight"
    return f"loose by {claimed / spent:.2f}x"


def audit_row(
    generator: str,
    python: str | None,
    *,
    epsilon: float,
    canaries: int,
    guesses: int | None,
    fits: int,
    options: tuple[str, ...],
    work: Path,
    timeout: float,
    skip_done: bool = False,
    dataset: str = "worst-case",
    tag: str = "",
) -> dict[str, Any]:
    out = work / f"{generator.replace(':', '_')}-eps{epsilon:g}-f{fits}-c{canaries}"
    out = out.with_name(out.name + tag)
    done_row = out / "row.json"
    if skip_done and done_row.exists():
        return dict(json.loads(done_row.read_text()))
    flags = [
        "--game",
        "one-run",
        "--release",
        "transcript",
        "--generator",
        generator,
        "--dataset",
        dataset,
        "--epsilon",
        f"{epsilon:g}",
        "--canaries",
        str(canaries),
        *([] if guesses is None else ["--guesses", str(guesses)]),
        "--fits",
        str(fits),
    ]
    for option in options:
        flags += ["--option", option]
    shown = flags + ([] if python is None else ["--python", python])
    command = "dpaudit audit " + shlex.join(shown).replace(str(Path.home()), "~")
    command += " --out OUT"
    argv = [sys.executable, "-m", "dpaudit", "audit", *shown]
    argv += ["--out", str(out), "--force", "--quiet"]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        done = None
    wall = time.perf_counter() - started
    row: dict[str, Any] = {
        "generator": generator,
        "epsilon": epsilon,
        "fits": fits,
        "canaries": canaries,
        "command": command,
        "wall_seconds": wall,
    }
    if done is None:
        row["verdict"] = "timed out"
        row["error"] = f"no result within {timeout:g} s"
        return row
    if done.returncode != 0:
        row["verdict"] = "refused"
        row["error"] = (done.stderr.strip().splitlines() or ["?"])[-1]
        return row
    doc = json.loads((out / "result.json").read_text())
    m = doc.get("measurements") or {}
    claim = doc.get("claim") or {}
    one = doc.get("one_run") or {}
    row.update(
        verdict=doc["verdict"],
        eps_emp=doc["eps_emp"],
        mu_emp=one.get("mu_emp") if doc.get("mu_emp") is None else doc["mu_emp"],
        # The bound that decided, and every sound bound's figures from this fit.
        bound=one.get("bound", "steinke"),
        bounds={b["bound"]: b for b in one.get("bounds", [])},
        eps_max_attainable=doc["eps_max_attainable"],
        eps_claimed=doc["eps_claimed"],
        claim_rho=claim.get("zcdp_rho"),
        claim_mu=claim.get("gdp_mu"),
        mu_exact=m.get("mu_exact"),
        eps_exact=m.get("eps_exact"),
        term=m.get("term"),
        claimed=m.get("claimed"),
        spent=m.get("spent"),
        covers=m.get("covers"),
        own_mu=_own_mu(m.get("covers") or ""),
        auc=doc.get("auc"),
        accountant="violated" if doc["verdict"] == "VIOLATION" else _spend(m),
    )
    one_run = doc.get("one_run") or {}
    row.update(
        dataset=dataset,
        bound=one_run.get("bound"),
        one_run_mu_emp=one_run.get("mu_emp"),
        correct=one_run.get("correct"),
        guesses=one_run.get("guesses"),
        audit_seconds=(doc.get("timing") or {}).get("total_seconds"),
    )
    done_row.write_text(json.dumps(row, indent=1) + "\n")
    return row


#: The white-box guide's commands (docs/onerun.md, "White-box: the measurement
#: transcript"): (dataset, noise_scale, canaries, guesses per side; ``None``: the
#: game's planned default, as the guide's commands leave it).
GUIDE: tuple[tuple[str, float, int, int | None], ...] = (
    ("worst-case-unique", 0.25, 1000, None),
    ("worst-case-unique", 1.0, 1000, None),
    ("worst-case", 0.25, 30_000, 300),
    ("worst-case", 0.25, 1000, None),
)


def guide_rows(work: Path, *, timeout: float, skip_done: bool) -> list[dict[str, Any]]:
    """The white-box guide's one-run audits of ``NoisyMarginals`` (:data:`GUIDE`),
    each its own ``dpaudit audit`` command at the default seed and epsilon 1."""
    rows = []
    for dataset, scale, canaries, guesses in GUIDE:
        options = () if scale == 1.0 else (f"noise_scale={scale:g}",)
        row = audit_row(
            SMOKE_PLUGIN,
            None,
            epsilon=CLAIM,
            canaries=canaries,
            guesses=guesses,
            fits=1,
            options=options,
            work=work,
            timeout=timeout,
            skip_done=skip_done,
            dataset=dataset,
            tag=f"-{dataset}-s{scale:g}",
        )
        row["noise_scale"] = scale
        rows.append(row)
    return rows


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def markdown_row(row: dict[str, Any]) -> str:
    """One library row in docs/libraries.md's format ("White-box one-run audits")."""
    if row.get("verdict") in ("refused", "timed out"):
        return (
            f"| `{row['generator']}` | {row['epsilon']:g} | {row['verdict']}: "
            f"{row.get('error', '')} | - | - | - | - | - | - | {row['fits']} x "
            f"{row['canaries']:,} | {row['wall_seconds']:.0f} | `{row['command']}` |"
        )
    if row.get("claim_rho") is not None:
        claim = f"epsilon {row['eps_claimed']:.3g} (rho {row['claim_rho']:.3g})"
    elif row.get("claim_mu") is not None:
        claim = f"epsilon {row['eps_claimed']:.3g} (mu {row['claim_mu']:.3g})"
    else:
        claim = f"epsilon {row['eps_claimed']:.3g}"
    exact = (
        "infinite (exact answers)"
        if row.get("eps_exact") is None
        else f"{_num(row.get('mu_exact'))} / {_num(row.get('eps_exact'))}"
    )
    own = row.get("own_mu", _own_mu(row.get("covers") or ""))
    if row.get("mu_exact") is None:
        own = None  # no Gaussian answer: no mu (Laplace answers: see eps)
    exact += f" ({_num(own)})"
    # Rows measured before one_run.bounds: Steinke's bound decided, no other figure.
    steinke = (row.get("bounds") or {}).get("steinke")
    beside = (
        "-"
        if steinke is None
        else f"{_num(steinke['eps_emp'])} / {_num(steinke['eps_max_attainable'])}"
    )
    return (
        f"| `{row['generator']}` | {row['epsilon']:g} | {row['verdict']} "
        f"({row.get('bound', 'steinke')}) | "
        f"{_num(row['eps_emp'])} / {_num(row['eps_max_attainable'])} | {beside} | "
        f"{_num(row.get('mu_emp'))} | {exact} | {claim} | {row['accountant']} | "
        f"{row['fits']} x {row['canaries']:,} | {row['wall_seconds']:.0f} | "
        f"`{row['command']}` |"
    )


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--audits", type=int, default=1000, help="simulated audits per row"
    )
    parser.add_argument(
        "--canaries", type=int, default=30_000, help="simulated canaries"
    )
    parser.add_argument(
        "--guesses", type=int, default=300, help="simulated guesses per side"
    )
    parser.add_argument(
        "--unique-canaries",
        type=int,
        default=1000,
        help="simulated canaries of the worst-case-unique rows",
    )
    parser.add_argument(
        "--unique-guesses",
        type=int,
        default=None,
        help="simulated guesses per side of the worst-case-unique rows (default: "
        "the game's planned counts for that many canaries at epsilon 1)",
    )
    parser.add_argument(
        "--libraries", action="store_true", help="also audit the libraries"
    )
    parser.add_argument(
        "--guide",
        action="store_true",
        help="only the white-box guide's NoisyMarginals audits (GUIDE), no "
        "simulated rows",
    )
    parser.add_argument("--only", nargs="*", default=None, help="adapters to audit")
    parser.add_argument("--epsilons", type=float, nargs="*", default=[1.0, 4.0])
    parser.add_argument("--library-canaries", type=int, default=1000)
    parser.add_argument(
        "--library-dataset",
        default="worst-case",
        help="the library audits' dataset (worst-case-unique: canaries unique in "
        "every column)",
    )
    parser.add_argument("--library-guesses", type=int, default=100)
    parser.add_argument(
        "--fits", type=int, default=1, help="fits per library audit (<= 4)"
    )
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument(
        "--skip-done",
        action="store_true",
        help="reuse a finished audit's row from --work-dir (a killed run continues)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        default=None,
        metavar="RECORD",
        help="print RECORD's library rows in docs/libraries.md's format and stop",
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per library audit"
    )
    args = harness.parse(
        parser,
        argv,
        smoke={
            "audits": 3,
            "canaries": 2000,
            "guesses": 50,
            "library_canaries": 200,
            "library_guesses": 20,
            "epsilons": [1.0],
        },
    )
    if args.markdown is not None:
        record = json.loads(Path(args.markdown).read_text())
        for row in record["rows"]:
            if row["row"].startswith("audit"):
                print(markdown_row(row))
        return list(record["rows"])
    table = harness.Rows(__file__, args)
    if args.guide:
        work = Path(args.work_dir or tempfile.mkdtemp(prefix="onerun_guide_"))
        for row in guide_rows(work, timeout=args.timeout, skip_done=args.skip_done):
            table.add(
                f"guide: NoisyMarginals on {row['dataset']}, noise_scale "
                f"{row['noise_scale']:g}, {row['canaries']:,} canaries",
                **row,
            )
        table.finish(
            title="The white-box guide's one-run audits (NoisyMarginals, claim 1)",
            columns=(
                "row",
                "verdict",
                "eps_emp",
                "one_run_mu_emp",
                "correct",
                "guesses",
                "wall_seconds",
            ),
            formats={"eps_emp": ".3f", "one_run_mu_emp": ".3f", "wall_seconds": ".0f"},
        )
        return table.rows
    unique_guesses = args.unique_guesses
    if unique_guesses is None:  # the game's plan: rule both, no threshold, auto
        share = count_alpha(alpha=ALPHA, rule="both", threshold=False)
        assert share is not None
        unique_guesses = plan_counts(
            canaries=args.unique_canaries,
            epsilon=CLAIM,
            delta=DELTA,
            alpha=share,
            bound=resolve_bound("auto", args.unique_canaries),
        ).guesses_in
    designs = (
        (SIMULATED, simulate, args.canaries, args.guesses),
        (UNIQUE, simulate_game, args.unique_canaries, unique_guesses),
    )
    for rows, simulator, canaries, guesses in designs:
        for name, mu in rows:
            started = time.perf_counter()
            figures = simulator(
                mu,
                canaries=canaries,
                guesses=guesses,
                audits=args.audits,
                seed=args.seed,
            )
            table.add(
                f"simulated: {name}",
                mu=mu,
                canaries=canaries,
                guesses=guesses,
                **figures,
                seconds=time.perf_counter() - started,
            )
    if args.libraries or args.smoke:
        if not 1 <= args.fits <= 4:
            sys.exit("--fits must be 1 to 4")
        work = Path(args.work_dir or tempfile.mkdtemp(prefix="onerun_transcript_"))
        cells: list[tuple[str, str | None, tuple[str, ...]]] = []
        if args.smoke:
            cells.append((SMOKE_PLUGIN, None, ()))
        else:
            for adapter, env, options in ADAPTERS:
                if args.only and adapter not in args.only:
                    continue
                python = harness.env_python(env)
                if python.exists():
                    cells.append((adapter, str(python), options))
                else:
                    print(f"{adapter}: no environment at {python}; skipped")
        for generator, python, options in cells:
            for epsilon in args.epsilons:
                row = audit_row(
                    generator,
                    python,
                    epsilon=epsilon,
                    canaries=args.library_canaries,
                    guesses=args.library_guesses,
                    fits=args.fits,
                    options=options,
                    work=work,
                    timeout=args.timeout,
                    skip_done=args.skip_done,
                    dataset=args.library_dataset,
                    tag=""
                    if args.library_dataset == "worst-case"
                    else f"-{args.library_dataset}",
                )
                table.add(f"audit: {generator} at epsilon {epsilon:g}", **row)
                table.save()
                print(
                    f"{generator} eps {epsilon:g}: {row.get('verdict')} eps_emp "
                    f"{row.get('eps_emp')} ({row['wall_seconds']:.0f} s)",
                    flush=True,
                )
    table.finish(
        title="The white-box one-run game: simulated own-cell scores (claim 1) and "
        "library audits",
        columns=(
            "row",
            "audits",
            "violations",
            "mean_eps_emp",
            "min_eps_emp",
            "mean_mu_emp",
            "verdict",
            "eps_emp",
            "mu_exact",
            "eps_exact",
            "accountant",
            "wall_seconds",
        ),
        formats={
            "mean_eps_emp": ".3f",
            "min_eps_emp": ".3f",
            "mean_mu_emp": ".3f",
            "eps_emp": ".3f",
            "mu_exact": ".3f",
            "eps_exact": ".3f",
            "wall_seconds": ".0f",
        },
    )
    return table.rows


if __name__ == "__main__":
    main()
