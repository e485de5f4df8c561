"""The measured-privacy table of docs/libraries.md: every adapter of
``dpaudit.adapters.FOREIGN_ADAPTERS`` x {library, public} preprocessing x {worst-case,
worst-case-continuous}, each audited once under its library's own environment (the one
``dpaudit env NAME`` builds), one row per cell.

    PYTHONPATH=. python benchmarks/libraries.py --only opendp-mst,opendp-aim --rounds 30 --work-dir DIR
    PYTHONPATH=. python benchmarks/libraries.py --only synthcity-dpgan --game one-run --work-dir DIR
    PYTHONPATH=. python benchmarks/libraries.py --no-run --work-dir DIR   # the table, from DIR
    PYTHONPATH=. python benchmarks/libraries.py --smoke      # seconds: one toy plug-in

A cell's audit is ``dpaudit audit --generator NAME --option preprocessing=MODE
--dataset DATASET --dataset-rows 2000 --synthetic-rows 2000 --seed 0 --python
PYTHON`` with the two-world game (``--rounds R --jobs 1``, by default ``--attack
distance --split 0.1,0.2,0.7``: an attack that trains nothing, so 70% of the rounds
test) or the one-run game (``--game one-run``: one fit, ``--canaries 200 --guesses
20``, ``--guesses-out`` when given), both at dpaudit's level 0.05. PYTHON is ``dpaudit env``'s interpreter for the adapter's library
(``$DPAUDIT_ENV_HOME/NAME/bin/python``, by default under ``~/.cache/dpaudit/envs``)
unless ``--python`` names one. Options that make a fit affordable are added per
adapter (``AFFORDABLE``) and shown in the row's command. A cell that cannot run (the
adapter refuses the mode, the environment is not built) is a row saying why, with the
adapter's own one line where it ran and refused.

Every audit is appended to ``DIR/cells.jsonl`` (``--skip-done`` reuses an audit whose
``result.json`` is in ``DIR``); the harness's ``--out FILE`` gets the rows as JSON; the
table goes to stdout, ``DIR/table.json`` and ``DIR/table.md``, in
docs/libraries.md's format: verdict, eps_emp and its attainable maximum, mu_emp and
its attainable maximum, the claim, fits, wall seconds, the exact command, the library
version and the date. A one-run row also records every sound bound's eps_emp from
the same fit (``one_run.bounds``: steinke, fdp, order; the configured bound, the
default ``auto``, decides); ``--record`` writes the rows to
benchmarks/records/libraries.json as they finish, and ``--markdown RECORD`` prints a
record's one-run rows in docs/libraries.md's "Black-box one-run audits, every
bound" format.

    PYTHONPATH=. python benchmarks/libraries.py --game one-run --modes library \
        --datasets worst-case --guesses 25 --guesses-out 0 --skip-done --record \
        --work-dir DIR
    PYTHONPATH=. python benchmarks/libraries.py --markdown benchmarks/records/libraries.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _audit_cells as cells  # noqa: E402
import harness  # noqa: E402
from adapters_decided import cell_options as decided_options  # noqa: E402
from adapters_decided import fmt, route_row  # noqa: E402

from dpaudit.adapters import FOREIGN_ADAPTERS  # noqa: E402
from dpaudit.adapters.envs import env_python  # noqa: E402

DATASETS = ("worst-case", "worst-case-continuous")
MODES = ("library", "public")
SMOKE_GENERATOR = "dpaudit.generators.toy_plugins:CopyData"

AFFORDABLE: dict[str, list[str]] = {
    # synthcity's defaults are 2,000 epochs of DP-SGD (DPGAN) and up to 200 outer
    # iterations of ten GAN steps and ten XGBoost teachers (PATE-GAN): cut, the
    # claim being what synthcity's accountant says of the cut run (docs/adapters.md).
    "synthcity-dpgan": ["n_iter=2"],
    "synthcity-pategan": ["n_iter=1", "generator_n_iter=2"],
}


def recipe_of(generator: str) -> str:
    """The ``dpaudit env`` recipe of an adapter (its name's first word)."""
    return generator.split("-", 1)[0]


def cell_options(generator: str, mode: str, dataset: str) -> list[str] | str:
    """The ``--option`` values of a cell (adapters_decided's, with the options that
    make a fit affordable), or why it is not run."""
    options = decided_options(generator, mode, dataset)
    if isinstance(options, str) or ":" in generator:
        return options
    return [*options, *AFFORDABLE.get(generator, [])]


def audit_command(
    generator: str,
    options: list[str],
    dataset: str,
    python: str | None,
    args: argparse.Namespace,
    out: Path,
) -> list[str]:
    if args.game == "one-run":
        game = ["--game", "one-run", "--canaries", str(args.canaries)]
        game += ["--guesses", str(args.guesses)]
        if args.guesses_out is not None:
            game += ["--guesses-out", str(args.guesses_out)]
    else:
        game = ["--rounds", str(args.rounds), "--batch-size", "10", "--jobs", "1"]
        game += ["--attack", args.attack]
        if args.split:
            game += ["--split", args.split]
    rows = None if args.smoke else args.rows
    return cells.audit_command(
        *("--generator", generator, "--dataset", dataset, "--seed", str(args.seed)),
        out=out,
        options=options,
        tail=[
            *game,
            *cells.library_flags(rows=rows, synthetic_rows=args.rows, python=python),
        ],
    )


def shown(cmd: list[str]) -> str:
    """The command as a user types it: ``dpaudit audit ...`` without ``--out``'s
    folder or this machine's interpreter path."""
    words: list[str] = ["dpaudit"]
    skip = False
    for i, word in enumerate(cmd[3:], start=3):
        if skip:
            skip = False
            continue
        if word in ("--out", "--python"):
            value = cmd[i + 1]
            if word == "--out":
                words += ["--out", "OUT"]
            else:
                name = Path(value).parents[1].name
                words += ["--python", f"~/.cache/dpaudit/envs/{name}/bin/python"]
            skip = True
            continue
        if word in ("--force", "--quiet"):
            continue
        words.append(word)
    return " ".join(words)


def result_row(out: Path, game: str) -> dict[str, Any]:
    """:func:`route_row` of the audit in ``out``; a one-run audit's also with the
    bound that decided and every sound bound's eps_emp and attainable maximum from
    the same fit (``one_run.bounds``; empty for a result written before the key)."""
    row = route_row(out, game)
    if game == "one-run":
        one = json.loads((out / "result.json").read_text()).get("one_run") or {}
        row["bound"] = one.get("bound", "steinke")
        row["bounds"] = {
            b["bound"]: {
                "eps_emp": b["eps_emp"],
                "eps_max_attainable": b["eps_max_attainable"],
                "mu_emp": b.get("mu_emp"),
            }
            for b in one.get("bounds", [])
        }
    return row


def run_cell(
    generator: str, mode: str, dataset: str, args: argparse.Namespace, log: Path
) -> dict[str, Any]:
    name = f"{generator}/{mode}/{dataset}/{args.game}"
    row: dict[str, Any] = {
        "cell": name,
        "generator": generator,
        "mode": mode,
        "dataset": dataset,
        "game": args.game,
    }
    options = cell_options(generator, mode, dataset)
    if isinstance(options, str):
        return {**row, "verdict": None, "why": options}
    python = args.python
    if python is None and not args.smoke:
        found = env_python(recipe_of(generator))
        if not found.exists():
            return {
                **row,
                "verdict": None,
                "why": f"not measured: no environment (dpaudit env "
                f"{recipe_of(generator)} builds it)",
            }
        python = str(found)
    out = args.work_dir / name.replace("/", "__")
    cmd = audit_command(generator, options, dataset, python, args, out)
    row["command"] = shown(cmd)
    if (args.skip_done or args.no_run) and (out / "result.json").exists():
        previous = (
            [
                json.loads(line)
                for line in log.read_text().splitlines()
                if json.loads(line).get("cell") == name
            ]
            if log.exists()
            else []
        )
        last = previous[-1] if previous else {}
        return {
            **row,
            **result_row(out, args.game),
            # what ran: its own command, wall time and date
            "command": last.get("command", row["command"]),
            "wall_s": last.get("wall_s"),
            "date": last.get("date"),
        }
    if args.no_run:
        return {**row, "verdict": None, "why": "not run (no audit in --work-dir)"}
    done, seconds = cells.run_command(cmd)
    row["wall_s"] = round(seconds, 1)
    row["date"] = dt.date.today().isoformat()
    if done.returncode != 0 or not (out / "result.json").exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        row.update(verdict=None, why=f"the audit exited {done.returncode}: {last}")
    else:
        row.update(result_row(out, args.game))
    with log.open("a") as sink:
        sink.write(json.dumps(row) + "\n")
    return row


def markdown_row(row: dict[str, Any]) -> str:
    cell = f"`{row['generator']}` | {row['mode']} | {row['dataset']}"
    if row.get("verdict") is None:
        return f"| {cell} | {row.get('why')} |  |  |  |  |  |  |  |  |"
    library = row.get("library") or "-"
    if row.get("game") == "one-run":
        game = f"one-run, {row.get('correct')} of {row.get('guesses')} guesses right"
    else:
        game = (
            f"two-world, {row.get('rounds')} rounds per world; FP {row.get('fp')}/"
            f"{row.get('fp', 0) + row.get('tn', 0)}, TP {row.get('tp')}/"
            f"{row.get('tp', 0) + row.get('fn', 0)}"
        )
    notes = []
    if row.get("constant_release"):
        # dpaudit's "constant release": every round gave every attack the same
        # feature; with one attack that decides this attack only.
        notes.append("the attack's feature was the same in every round")
    elif row["verdict"] == "CONSISTENT" and row.get("game") != "one-run":
        if row.get("fp") and row.get("fn"):
            notes.append("errors both ways: decided")
        else:
            notes.append(
                f"one-sided errors: rounds to decide {row.get('rounds_to_decide')}"
            )
    elif row["verdict"] == "CONSISTENT":
        notes.append("decides nothing alone")
    note = f"; {'; '.join(notes)}" if notes else ""
    return (
        f"| {cell} | {row['verdict']} ({game}{note}) | {fmt(row.get('eps_emp'))} / "
        f"{fmt(row.get('eps_max_attainable'))} | {fmt(row.get('mu_emp'))} / "
        f"{fmt(row.get('mu_max_attainable'))} | {fmt(row.get('eps_claimed'))} | "
        f"{row.get('fits')} | {fmt(row.get('wall_s'), '.0f')} | `{row['command']}` | "
        f"{library} | {row.get('date') or '-'} |"
    )


def bounds_row(row: dict[str, Any]) -> str:
    """A one-run row in docs/libraries.md's "Black-box one-run audits, every bound"
    format: the verdict and the bound that decided it, each sound bound's eps_emp /
    attainable maximum from the same fit, the guesses, the claim, the fits, the
    wall time, the command, the library and the date."""
    cell = f"`{row['generator']}` | {row['mode']} | {row['dataset']}"
    if row.get("verdict") is None:
        return f"| {cell} | {row.get('why')} |  |  |  |  |  |  |  |  |  |  |"
    bounds = row.get("bounds") or {}

    def figure(name: str) -> str:
        b = bounds.get(name)
        if b is None:
            return "-"
        return f"{fmt(b['eps_emp'])} / {fmt(b['eps_max_attainable'])}"

    return (
        f"| {cell} | {row['verdict']} ({row.get('bound', 'steinke')}) | "
        f"{figure('steinke')} | {figure('fdp')} | {figure('order')} | "
        f"{row.get('correct')} of {row.get('guesses')} | "
        f"{fmt(row.get('eps_claimed'))} | {row.get('fits')} | "
        f"{fmt(row.get('wall_s'), '.0f')} | `{row['command']}` | "
        f"{row.get('library') or '-'} | {row.get('date') or '-'} |"
    )


BOUNDS_HEADER = (
    "| adapter | preprocessing | dataset | verdict (bound that decides) | steinke "
    "eps_emp / attainable | fdp | order | right | claim (epsilon) | fits | wall s | "
    "command | library | date |\n| --- | --- | --- | --- | --- | --- | --- | --- | "
    "--- | --- | --- | --- | --- | --- |"
)


HEADER = (
    "| adapter | preprocessing | dataset | verdict (game) | eps_emp / attainable | "
    "mu_emp / attainable | claim (epsilon) | fits | wall s | command | library | "
    "date |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("libraries_out"),
        metavar="DIR",
        help="the audits, cells.jsonl, table.md and table.json (default "
        "libraries_out; a temporary folder with --smoke)",
    )
    parser.add_argument("--only", help="comma-separated adapter names (default all)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--game", choices=("two-world", "one-run"), default="two-world")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--attack", default="distance")
    parser.add_argument("--split", default="0.1,0.2,0.7")
    parser.add_argument("--canaries", type=int, default=200)
    parser.add_argument("--guesses", type=int, default=20)
    parser.add_argument(
        "--guesses-out",
        type=int,
        help="one-run: 'out' guesses (default as many as --guesses); 0 guesses "
        "'in' only, a choice to fix before any run of the library",
    )
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument(
        "--python",
        help="one interpreter for every cell (default: each library's `dpaudit env` "
        "environment)",
    )
    parser.add_argument("--skip-done", action="store_true")
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument(
        "--markdown",
        type=Path,
        default=None,
        metavar="RECORD",
        help="print RECORD's one-run rows in docs/libraries.md's every-bound format "
        "and stop",
    )
    args = harness.parse(
        parser, argv, smoke={"rounds": 5, "attack": "querybased", "split": ""}
    )
    if args.markdown is not None:
        record = json.loads(Path(args.markdown).read_text())
        print(BOUNDS_HEADER)
        for row in record["figures"]["rows"]:
            print(bounds_row(row))
        return 0
    args.work_dir = Path(args.work_dir)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.smoke:
        generators = [SMOKE_GENERATOR]
        modes, datasets = ["library"], ["worst-case"]
    else:
        generators = args.only.split(",") if args.only else sorted(FOREIGN_ADAPTERS)
        unknown = [g for g in generators if g not in FOREIGN_ADAPTERS]
        if unknown:
            parser.error(
                f"--only: {unknown[0]!r} is no adapter (dpaudit list generators)"
            )
        modes, datasets = args.modes.split(","), args.datasets.split(",")
    log = args.work_dir / "cells.jsonl"
    bench = harness.Rows(__file__, args)
    rows = []
    for g in generators:
        for m in modes:
            for d in datasets:
                row = run_cell(g, m, d, args, log)
                rows.append(row)
                bench.add(row["cell"], **row)
                bench.save()
                if args.game == "one-run":
                    bench.record({"rows": rows})  # with --record, as rows finish
    table = "\n".join([HEADER, *(markdown_row(r) for r in rows)])
    (args.work_dir / "table.md").write_text(table + "\n")
    (args.work_dir / "table.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(table)
    bench.finish(
        columns=("row", "verdict", "eps_emp", "eps_max_attainable", "fits", "wall_s"),
        formats={"eps_emp": ".3f", "eps_max_attainable": ".3f", "wall_s": ".0f"},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
