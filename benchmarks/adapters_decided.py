"""Every adapter decided: audits each adapter of ``dpaudit.adapters.FOREIGN_ADAPTERS``
x {library, public} preprocessing x {worst-case, worst-case-continuous} until its
verdict is decided, prints the table and writes JSON.

A cell starts at ``--rounds`` rounds per world and is audited again, larger, while
the verdict is not decided:

- INCONCLUSIVE (the attainable maximum does not exceed the claim): again at the
  result's ``power.rounds_needed``, unless the release was constant (then no number
  of rounds helps: decided);
- CONSISTENT with one-sided errors (no false positive, or no false negative): again
  at the rounds that would refute the claim if the attack kept its error rates
  (``dpaudit.reports.claimview.decide_rounds``, docs/adapters.md "Deciding a
  CONSISTENT");
- VIOLATION, a constant release, or a CONSISTENT with two-sided errors: decided.

No cell grows past ``--max-rounds`` (it is then reported as undecided, with why).
A cell the adapter refuses (synthcity's public preprocessing but DPGAN's and
PATE-GAN's; pac-synth takes no continuous column) is reported with the adapter's one
line. Each audit's own
``dpaudit audit`` command is recorded.

    python benchmarks/adapters_decided.py --python ~/.cache/dpaudit/envs/smartnoise/bin/python \\
        --only smartnoise-mwem --work-dir adapters_decided_out --out decided.json
    python benchmarks/adapters_decided.py --smoke      # seconds: one toy plug-in
    python benchmarks/adapters_decided.py --python ~/.cache/dpaudit/envs/smartnoise/bin/python \\
        --route cheapest --only smartnoise-mst --datasets worst-case-continuous
    python benchmarks/adapters_decided.py --smoke --route cheapest   # two toy plug-ins

``--route cheapest`` decides a cell by the cheapest sound route instead:

1. the one-run game (``--game one-run --canaries C --guesses G``, one fit; docs/onerun.md)
   at level ``--one-run-alpha``: a VIOLATION there is a proof and decides the cell. A
   one-run CONSISTENT decides nothing: it says that these canaries, guessed from
   this score, did not show the leak, not that the two-world game would not (a leak
   carried by the extremes of the data, such as a range read from the records, is
   set by the most extreme canaries and no single canary is seen through it);
2. else the two-world game with ``--sequential`` planned at ``--max-rounds`` rounds
   per world (looks at 10, 20, 50 and 100%, stopping at the first look that proves
   a VIOLATION) at level ``--alpha - --one-run-alpha``. Its CONSISTENT is decided when
   the headline attack erred both ways, else the result's rounds to decide are
   reported (one-sided errors); an INCONCLUSIVE reports the rounds it needs.

The two stages' levels add up to ``--alpha`` (0.05): by the union bound the cell's
route reports a false VIOLATION with probability at most ``--alpha``, whichever
stage decides it. Each row records the route, the verdict, eps_emp and mu_emp beside
the most the audit could show (the attainable maximum; mu_ceiling when the claim
names a mu), the counts, the fits, the wall time and why the cell is (un)decided.

Every finished audit is appended to ``--work-dir``/cells.jsonl (``--skip-done`` reuses
an audit whose ``result.json`` is already in ``--work-dir``: a killed run continues);
the table goes to stdout, ``--work-dir``/table.json and the harness's ``--out FILE``
(with ``--route cheapest`` also ``--work-dir``/table.md, rows in docs/adapters.md's
format). ``--one-run-only`` runs every cell's cheap stage first; ``--no-run`` runs
nothing and tabulates what ``--work-dir`` holds; ``--cell-option KEY=VALUE`` adds an ``--option`` to every cell (named in it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import _audit_cells as cells  # noqa: E402
import harness  # noqa: E402

from dpaudit.adapters import FOREIGN_ADAPTERS  # noqa: E402
from dpaudit.reports.claimview import decide_rounds  # noqa: E402
from dpaudit.reports.model import load_result  # noqa: E402

DATASETS = ("worst-case", "worst-case-continuous")
MODES = ("library", "public")
SMOKE_GENERATORS = ("dpaudit.generators.toy_plugins:CopyData",)
"""Smoke mode: a plug-in with no privacy, one attack, 10 rounds per world (too few:
INCONCLUSIVE), then the rounds needed (a VIOLATION): the escalation, in seconds."""
SMOKE_CHEAPEST = {
    "dpaudit.generators.toy_plugins:CopyData": [],
    "dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse": ["leak=true"],
}
"""Smoke mode of ``--route cheapest``: CopyData releases its canaries (a one-run
VIOLATION decides the cell); the leaking randomized response releases only the
target's membership, which no canary carries (a one-run CONSISTENT, which decides
nothing), and the two-world game's looks then prove the VIOLATION."""


REFUSED_MODES: dict[str, tuple[str, ...]] = {
    # The adapters refuse these (their one line says why); not run.
    "synthcity-privbayes": ("public",),
    "synthcity-aim": ("public",),
}


def cell_options(generator: str, mode: str, dataset: str) -> list[str] | str:
    """The ``--option`` values of a cell, or the reason it cannot run."""
    if ":" in generator:  # a toy plug-in (smoke mode): no preprocessing option
        return list(SMOKE_CHEAPEST.get(generator, []))
    if mode in REFUSED_MODES.get(generator, ()):
        return (
            f"{generator} refuses preprocessing={mode}: synthcity 0.2.12 fits its "
            "encoders on the records, with no public route"
        )
    if generator == "smartnoise-pacsynth" and dataset == "worst-case-continuous":
        return "pac-synth takes only categorical columns (the library refuses others)"
    options = [f"preprocessing={mode}"]
    if (
        generator.startswith("smartnoise")
        and mode == "library"
        and dataset == "worst-case-continuous"
    ):
        # smartnoise refuses continuous columns without a budget for their bounds.
        options.append("preprocessor_eps=0.1")
    return options


def audit_command(
    generator: str,
    options: list[str],
    dataset: str,
    rounds: int,
    args: argparse.Namespace,
    out: Path,
) -> list[str]:
    """The two-world ``dpaudit audit`` command of a cell at ``rounds`` per world."""
    return cells.audit_command(
        *("--generator", generator, "--dataset", dataset, "--rounds", str(rounds)),
        *("--seed", str(args.seed), "--jobs", "1", "--batch-size", "10"),
        out=out,
        options=options,
        tail=["--attack", "querybased"] if args.smoke else sized(args),
    )


def sized(args: argparse.Namespace) -> list[str]:
    """The library run's flags: ``--rows`` and ``--synthetic-rows``, ``--python``."""
    return cells.library_flags(
        rows=args.rows, synthetic_rows=args.synthetic_rows, python=args.python
    )


def one_run_command(
    generator: str,
    options: list[str],
    dataset: str,
    args: argparse.Namespace,
    out: Path,
) -> list[str]:
    """The ``dpaudit audit --game one-run`` command of a cell's first stage."""
    return cells.audit_command(
        *("--game", "one-run", "--generator", generator, "--dataset", dataset),
        *("--canaries", str(args.canaries), "--guesses", str(args.guesses)),
        *("--alpha", f"{args.one_run_alpha:g}", "--seed", str(args.seed)),
        out=out,
        options=options,
        tail=[] if args.smoke else sized(args),
    )


def next_rounds(out: Path, rounds: int, cap: int) -> tuple[int | None, str]:
    """The rounds of the next audit of a cell (None: decided) and why."""
    result = load_result(out)
    verdict = str(result.verdict)
    power = result.power
    if verdict == "VIOLATION":
        return None, "VIOLATION"
    if power is not None and power.constant_release:
        return None, "constant release: no number of rounds separates the worlds"
    if verdict == "INCONCLUSIVE":
        need = power.rounds_needed if power is not None else None
        if need is None:
            return None, "INCONCLUSIVE: no feasible number of rounds"
        return (need if need <= cap else None), f"INCONCLUSIVE: needs {need} rounds"
    need = decide_rounds(result)
    if need is None:
        return None, "CONSISTENT with two-sided errors (or none)"
    need = max(need, rounds + 1)
    if need > cap:
        return None, f"undecided: one-sided errors would need {need} > --max-rounds"
    return need, f"CONSISTENT with one-sided errors: again at {need}"


def row_of(out: Path) -> dict[str, Any]:
    result = load_result(out)
    c = result.counts
    return {
        "verdict": str(result.verdict),
        "eps_emp": result.eps_emp,
        "eps_max_attainable": result.eps_max_attainable,
        "auc": result.auc,
        "eps_claimed": result.eps_claimed,
        "fp": c.fp,
        "tp": c.tp,
        "n0": c.fp + c.tn,
        "n1": c.tp + c.fn,
        "rounds": result.rounds.per_world,
        "library": (result.claim.extra.get("library") or {}).get("values", [None])[0],
        "seconds": result.timing.total_seconds,
    }


def route_row(out: Path, game: str) -> dict[str, Any]:
    """What a cheapest-route row records of one audit: the verdict beside the most
    the audit could show, the counts, the fits."""
    result = load_result(out)
    c, power = result.counts, result.power
    row: dict[str, Any] = {
        "game": game,
        "verdict": str(result.verdict),
        "eps_emp": result.eps_emp,
        "eps_max_attainable": result.eps_max_attainable,
        "mu_emp": result.mu_emp,
        "mu_max_attainable": power.mu_max_attainable if power else None,
        "mu_ceiling": power.mu_ceiling if power else None,
        "auc": result.auc,
        "eps_claimed": result.eps_claimed,
        "tp": c.tp,
        "fp": c.fp,
        "tn": c.tn,
        "fn": c.fn,
        "library": (result.claim.extra.get("library") or {}).get("values", [None])[0],
        "seconds": result.timing.total_seconds,
        "constant_release": bool(power and power.constant_release),
        "rounds_needed": power.rounds_needed if power else None,
    }
    if result.one_run is not None:
        one = result.one_run
        row.update(
            fits=one.fits,
            canaries=one.canaries,
            guesses=one.guesses,
            correct=one.correct,
            eps_max_attainable=one.eps_max_attainable,
        )
    else:
        row.update(fits=result.rounds.total, rounds=result.rounds.per_world)
        if result.sequential is not None:
            seq = result.sequential
            row.update(
                planned_rounds=seq.planned_per_world,
                look=seq.decided,
                looks=len(seq.looks),
                stopped_early=seq.stopped_early,
            )
        row["rounds_to_decide"] = decide_rounds(result)
    return row


def why_two_world(row: dict[str, Any]) -> tuple[bool, str]:
    """Whether a two-world stage decides its cell, and why (or why not)."""
    rounds = row.get("rounds")
    if row["verdict"] == "VIOLATION":
        look = row.get("look")
        at = f" at look {look} of {row.get('looks')}" if look else ""
        return True, f"two-world VIOLATION{at} ({rounds} rounds per world): decided"
    if row["constant_release"]:
        return True, "constant release: no number of rounds separates the worlds"
    if row["verdict"] == "INCONCLUSIVE":
        need = row.get("rounds_needed")
        return False, (
            f"INCONCLUSIVE at {rounds} rounds per world: the attainable maximum "
            + (
                f"passes the claim at {need} rounds per world"
                if need
                else "passes the claim at no feasible size"
            )
        )
    if row["fp"] > 0 and row["fn"] > 0:
        return True, (
            f"CONSISTENT with two-sided errors at {rounds} rounds per world: decided"
        )
    need = row.get("rounds_to_decide")
    if need is None:
        return False, (
            f"CONSISTENT with one-sided errors at {rounds} rounds per world; "
            "no feasible size at these error rates"
        )
    return False, (
        f"CONSISTENT with one-sided errors at {rounds} rounds per world: "
        f"{need} rounds per world would decide it"
    )


def logged_wall(log: Path, command: str) -> float | None:
    """The wall time ``log`` recorded for the last run of ``command`` (None: none)."""
    wall = None
    if log.exists():
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("command") == command and entry.get("wall_s") is not None:
                wall = entry["wall_s"]
    return wall


def run_audit(
    cmd: list[str], out: Path, name: str, args: argparse.Namespace, log: Path
) -> dict[str, Any]:
    """Runs one audit (or reuses it with ``--skip-done``); its log entry."""
    entry: dict[str, Any] = {
        "cell": name,
        "command": " ".join(cmd[2:]),
    }
    if (args.skip_done or args.no_run) and (out / "result.json").exists():
        entry.update(rc=0, wall_s=logged_wall(log, entry["command"]), reused=True)
        return entry
    if args.no_run:
        entry.update(rc=None, wall_s=None, error="no audit in --work-dir (--no-run)")
        return entry
    done, seconds = cells.run_command(cmd)
    entry.update(rc=done.returncode, wall_s=round(seconds, 1))
    if done.returncode != 0 or not (out / "result.json").exists():
        entry["error"] = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return entry


def run_cell_cheapest(
    generator: str,
    mode: str,
    dataset: str,
    args: argparse.Namespace,
    log: Path,
) -> dict[str, Any]:
    """Decides one cell by the cheapest sound route; returns its table row."""
    name = " ".join([generator, mode, dataset, *args.cell_option])
    options = cell_options(generator, mode, dataset)
    if isinstance(options, str):
        return {"cell": name, "verdict": "not run", "why": options, "audits": []}
    options = [*options, *args.cell_option]
    folder = Path(args.work_dir) / name.replace(" ", "_").replace(":", "_")
    audits: list[dict[str, Any]] = []
    wall = 0.0
    stages = [("one-run", folder / "one-run")]
    if not args.one_run_only:
        stages.append(("two-world", folder / f"two-world-{args.max_rounds}"))
    notes: list[str] = []
    decided, why = False, ""
    for game, out in stages:
        if game == "one-run":
            cmd = one_run_command(generator, options, dataset, args, out)
        else:
            two = audit_command(generator, options, dataset, args.max_rounds, args, out)
            level = f"{args.alpha - args.one_run_alpha:g}"
            cmd = [*two, "--sequential", "--alpha", level]
        entry = run_audit(cmd, out, name, args, log)
        if "error" in entry:
            audits.append(entry)
            failed = "not run" if entry["rc"] is None else "failed"
            why = f"{game} {failed}: {entry['error']}"
            break
        entry.update(route_row(out, game))
        # A reused audit counts with its own recorded time (no worker start-up).
        wall += entry["wall_s"] if entry["wall_s"] is not None else entry["seconds"]
        audits.append(entry)
        with log.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
        if game == "one-run":
            if entry["verdict"] == "VIOLATION":
                decided, why = (
                    True,
                    (
                        f"one-run VIOLATION ({entry['correct']} of {entry['guesses']} "
                        f"guesses right, {entry['fits']} fit): decided"
                    ),
                )
                break
            notes.append(
                f"one-run {entry['verdict']} {fmt(entry['eps_emp'], '.2f')} "
                f"({entry['correct']} of {entry['guesses']} right; decides nothing)"
            )
            continue
        decided, why = why_two_world(entry)
    last = audits[-1] if audits else {}
    return {
        "cell": name,
        **{k: v for k, v in last.items() if k not in ("cell", "command")},
        "route": " then ".join(a.get("game", "?") for a in audits),
        "decided": decided,
        "why": "; ".join([*notes, why]) if why else "; ".join(notes),
        "fits_total": sum(a.get("fits", 0) for a in audits),
        "wall_s_total": round(wall, 1),
        "audits": audits,
    }


def markdown_row(row: dict[str, Any]) -> str:
    """A cheapest-route row as a line of docs/adapters.md's table."""
    if row.get("verdict") == "not run":
        return f"| `{row['cell']}` | not run: {row['why']} |" + " |" * 7
    by_game = {a.get("game"): a for a in row["audits"]}
    one, two = by_game.get("one-run"), by_game.get("two-world")
    name, mode, _, *extra = row["cell"].split(" ")
    label = f"`{name}`" + "".join(f" `{e}`" for e in extra)
    cells = [label, mode]
    if one and "correct" in one:
        cells.append(
            f"{one['verdict']} {fmt(one['eps_emp'], '.2f')} / "
            f"{fmt(one['eps_max_attainable'], '.3f')}, {one['correct']} of "
            f"{one['guesses']}, AUC {fmt(one['auc'], '.2f')}"
        )
    else:
        cells.append("-")
    if two and "verdict" in two:
        cells += [
            f"{two['verdict']} at look {two.get('look')} of {two.get('looks')} "
            f"({two['rounds']} of {two.get('planned_rounds')})",
            f"{fmt(two['eps_emp'])} / {fmt(two['eps_max_attainable'])}",
            f"{fmt(two['mu_emp'])} / {fmt(two['mu_max_attainable'])}",
            f"{fmt(two['auc'], '.2f')}",
            f"{two['fp']}/{two['fp'] + two['tn']} / {two['tp']}/{two['tp'] + two['fn']}",
        ]
    else:
        cells += ["not run", "", "", "", ""]
    cells += [str(row.get("fits_total", "")), fmt(row.get("wall_s_total"), ".0f")]
    return "| " + " | ".join([*cells, row["why"]]) + " |"


def run_cell(
    generator: str,
    mode: str,
    dataset: str,
    args: argparse.Namespace,
    log: Path,
) -> dict[str, Any]:
    """Audits one cell until it is decided; returns its table row."""
    name = f"{generator} {mode} {dataset}"
    options = cell_options(generator, mode, dataset)
    if isinstance(options, str):
        return {"cell": name, "verdict": "not run", "why": options, "audits": []}
    rounds, audits, why = args.rounds, [], ""
    wall = 0.0
    while rounds is not None:
        out = (
            Path(args.work_dir) / name.replace(" ", "_").replace(":", "_") / str(rounds)
        )
        cmd = audit_command(generator, options, dataset, rounds, args, out)
        done, seconds = cells.run_command(cmd)
        wall += seconds
        entry: dict[str, Any] = {
            "cell": name,
            "rounds": rounds,
            "rc": done.returncode,
            "wall_s": round(seconds, 1),
            "command": " ".join(cmd[2:]).replace("dpaudit audit", "dpaudit audit", 1),
        }
        if done.returncode != 0 or not (out / "result.json").exists():
            entry["error"] = done.stderr.strip().splitlines()[-1:] or ["no output"]
            audits.append(entry)
            why = f"failed: {entry['error'][0]}"
            break
        entry.update(row_of(out))
        audits.append(entry)
        with log.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
        rounds, why = next_rounds(out, rounds, args.max_rounds)
    last = audits[-1] if audits else {}
    return {
        "cell": name,
        **{k: v for k, v in last.items() if k not in ("cell", "command")},
        "why": why,
        "wall_s_total": round(wall, 1),
        "audits": audits,
    }


def fmt(value: Any, spec: str = ".3f") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--python",
        help="the interpreter that has the library (required but with --smoke; "
        "`dpaudit env` makes one: ~/.cache/dpaudit/envs/NAME/bin/python)",
    )
    parser.add_argument("--only", default="", help="comma-separated adapter names")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--rounds", type=int, default=50, help="first rounds/world")
    parser.add_argument("--max-rounds", type=int, default=400)
    parser.add_argument("--rows", type=int, default=2000, help="worst-case size N")
    parser.add_argument("--synthetic-rows", type=int, default=2000)
    parser.add_argument(
        "--work-dir",
        default="adapters_decided_out",
        metavar="DIR",
        help="the audits, cells.jsonl, table.json (and table.md)",
    )
    parser.add_argument(
        "--route",
        choices=("escalate", "cheapest"),
        default="escalate",
        help="escalate: two-world audits, larger until decided; cheapest: the "
        "one-run game, then one sequential two-world audit (module docstring)",
    )
    parser.add_argument("--canaries", type=int, default=200, help="one-run stage")
    parser.add_argument("--guesses", type=int, default=20, help="one-run stage")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="the cell's level (cheapest route)"
    )
    parser.add_argument(
        "--one-run-alpha",
        type=float,
        default=0.01,
        help="the one-run stage's share of --alpha; the two-world stage gets the rest",
    )
    parser.add_argument(
        "--skip-done", action="store_true", help="reuse audits already in --work-dir"
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="cheapest route: run nothing, tabulate the audits already in --work-dir",
    )
    parser.add_argument(
        "--cell-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="cheapest route: an --option added to every cell (named in the cell), "
        "e.g. bins=2",
    )
    parser.add_argument(
        "--one-run-only",
        action="store_true",
        help="cheapest route: the one-run stage only (every cell's cheap stage "
        "first; a later run with --skip-done adds the two-world stages)",
    )
    args = harness.parse(parser, argv)
    if not 0 < args.one_run_alpha < args.alpha < 1:
        parser.error("need 0 < --one-run-alpha < --alpha < 1")
    if args.smoke and args.route == "cheapest":
        generators = list(SMOKE_CHEAPEST)
        modes, datasets = ["library"], ["worst-case"]
        args.max_rounds = 100
    elif args.smoke:
        generators = list(SMOKE_GENERATORS)
        modes, datasets = ["library"], ["worst-case"]
        args.rounds, args.max_rounds = 10, 40
    else:
        if not args.python:
            parser.error("--python is required (the library's interpreter)")
        generators = [g.strip() for g in args.only.split(",") if g.strip()] or list(
            FOREIGN_ADAPTERS
        )
        modes = [m for m in args.modes.split(",") if m]
        datasets = [d for d in args.datasets.split(",") if d]
    base = Path(args.work_dir)
    base.mkdir(parents=True, exist_ok=True)
    log = base / "cells.jsonl"
    rows = harness.Rows(__file__, args)
    table = []
    cell = run_cell_cheapest if args.route == "cheapest" else run_cell
    for generator in generators:
        for mode in modes:
            for dataset in datasets:
                row = cell(generator, mode, dataset, args, log)
                if "tn" in row:
                    row.setdefault("n0", row["fp"] + row["tn"])
                    row.setdefault("n1", row["tp"] + row["fn"])
                table.append(row)
                rows.add(row["cell"], **{**row, "seconds": row.get("wall_s_total")})
                print(f"{row['cell']}: {row.get('verdict', '-')}, {row['why']}")
                rows.save()
    (base / "table.json").write_text(json.dumps(table, indent=2) + "\n")
    if args.route == "cheapest":
        lines = [markdown_row(row) for row in table]
        (base / "table.md").write_text("\n".join(lines) + "\n")
    rows.finish(columns=COLUMNS, formats=FORMATS)
    return 0


#: The printed table (every figure, and each audit of a cell, is in --out's rows).
COLUMNS = (
    "row",
    "verdict",
    "eps_emp",
    "eps_max_attainable",
    "auc",
    "fp",
    "n0",
    "tp",
    "n1",
    "eps_claimed",
    "rounds",
    "seconds",
    "why",
)
FORMATS = {
    "eps_emp": ".3f",
    "eps_max_attainable": ".3f",
    "auc": ".2f",
    "eps_claimed": ".3f",
    "seconds": ".0f",
}


if __name__ == "__main__":
    sys.exit(main())
