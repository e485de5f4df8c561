"""The shared harness of the maintained benchmarks (benchmarks/*.py).

Every benchmark builds its command line with :func:`parser`, which adds the flags
all of them take:

- ``--smoke``: the benchmark's smallest sizes, a run of seconds (the test suite runs
  each benchmark so: ``tests/test_benchmark_*.py``); sizes given on the command line
  still win (:func:`parse`);
- ``--out FILE``: also write the run as JSON to FILE (:meth:`Rows.finish`);
- ``--seed``: the seed of the run's randomness (default 0).

It records its figures as rows of a :class:`Rows` (one dict a row, named by ``row``,
timed in ``seconds`` when made with :meth:`Rows.timed`), and ends with
:meth:`Rows.finish`, which prints them as a table and writes the JSON: the
benchmark's name, its arguments, the machine (CPUs, load average before and after)
and the rows. Benchmarks run from the checkout, ``PYTHONPATH=. python
benchmarks/NAME.py [--smoke] [--out FILE]``; this module is found beside them.

Interpreters of other libraries (smartnoise-synth, synthcity) default to the
environments ``dpaudit env`` makes (:func:`env_python`), never to a path of one
machine.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any


def parser(doc: str | None, *, seed: int = 0) -> argparse.ArgumentParser:
    """An argument parser with the harness's flags (``--smoke``, ``--out``,
    ``--seed``); ``doc`` (the benchmark's docstring) is its description."""
    made = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    common = made.add_argument_group("harness (every benchmark)")
    common.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest sizes: a run of seconds (sizes given here still win)",
    )
    common.add_argument(
        "--out", type=Path, default=None, metavar="FILE", help="write the run as JSON"
    )
    common.add_argument(
        "--seed", type=int, default=seed, help=f"seed of the run (default {seed})"
    )
    common.add_argument(
        "--record",
        action="store_true",
        help="also write the figures the docs quote to benchmarks/records/NAME.json "
        "(with the command, the date and dpaudit's version; refused with --smoke)",
    )
    return made


#: Where the records of the figures the docs quote live (tests/test_doc_records.py
#: compares each page with them).
RECORDS = Path(__file__).resolve().parent / "records"


def _without_out(argv: list[str]) -> list[str]:
    """``argv`` less ``--out FILE`` (a copy of the run's JSON, no figure of it): the
    command a record states.

    >>> _without_out(["--audits", "20", "--out", "x.json", "--record"])
    ['--audits', '20', '--record']
    """
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif not arg.startswith("--out="):
            kept.append(arg)
    return kept


def write_record(
    name: str,
    figures: Mapping[str, Any],
    *,
    argv: Sequence[str] | None = None,
    folder: Path = RECORDS,
) -> Path:
    """Writes ``folder/NAME.json``: the figures a doc quotes, with the command that
    measured them (``python benchmarks/NAME.py`` and ``argv``, less ``--out``), the UTC date and
    dpaudit's version. A doc quoting a measured figure cites this file, and a test
    compares the two, so the figure cannot go stale unnoticed."""
    import dpaudit

    given = _without_out(list(sys.argv[1:] if argv is None else argv))
    command = " ".join(["python", f"benchmarks/{name}.py", *given])
    record = {
        "benchmark": name,
        "command": command,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "version": dpaudit.__version__,
        "figures": _jsonable(dict(figures)),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    return path


def read_record(name: str, *, folder: Path = RECORDS) -> dict[str, Any]:
    """The record ``folder/NAME.json`` (:func:`write_record`)."""
    record: dict[str, Any] = json.loads((folder / f"{name}.json").read_text())
    return record


def parse(
    made: argparse.ArgumentParser,
    argv: Sequence[str] | None = None,
    *,
    smoke: Mapping[str, Any] | None = None,
) -> argparse.Namespace:
    """Parses ``argv``; under ``--smoke`` each option named in ``smoke`` (by its
    ``dest``) that was left at its default takes the smoke value instead, and a
    ``--work-dir`` left at its default is a temporary folder, removed at exit."""
    args = made.parse_args(argv)
    if args.smoke:
        for dest, value in (smoke or {}).items():
            if getattr(args, dest) == made.get_default(dest):
                setattr(args, dest, value)
        if hasattr(args, "work_dir") and args.work_dir == made.get_default("work_dir"):
            # A smoke run leaves no folder behind where it was started.
            args.work_dir = tempfile.mkdtemp(prefix="dpaudit-smoke-")
            atexit.register(shutil.rmtree, args.work_dir, ignore_errors=True)
    return args


def env_python(name: str) -> Path:
    """The interpreter of the ``dpaudit env`` environment ``name``:
    ``$DPAUDIT_ENV_HOME/<name>/bin/python``, by default under
    ``~/.cache/dpaudit/envs``."""
    home = os.environ.get("DPAUDIT_ENV_HOME")
    root = Path(home) if home else Path.home() / ".cache" / "dpaudit" / "envs"
    return root / name / "bin" / "python"


def add_python(made: argparse.ArgumentParser, env: str, what: str) -> None:
    """``--python``: an interpreter with ``what``, by default ``env``'s."""
    made.add_argument(
        "--python",
        default=None,
        help=f"an interpreter with {what} (default: the `dpaudit env` environment "
        f"{env!r}, $DPAUDIT_ENV_HOME/{env}/bin/python, "
        f"~/.cache/dpaudit/envs/{env}/bin/python when unset)",
    )


def python_for(args: argparse.Namespace, env: str, *, required: bool) -> str | None:
    """``args.python``, else ``env``'s interpreter if it exists; if neither, exits
    with what to do when ``required``, else returns None."""
    if args.python:
        return str(args.python)
    default = env_python(env)
    if default.exists():
        return str(default)
    if required:
        sys.exit(
            f"no interpreter for {env!r}: pass --python, or create {default} "
            f"(`dpaudit env`; $DPAUDIT_ENV_HOME moves it)"
        )
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # NumPy / torch scalars
        return value.item()
    return value


def _cell(value: Any, spec: str | None) -> str:
    if value is None:
        return "-"
    if spec is not None and not isinstance(value, str):
        return format(value, spec)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(_jsonable(value), separators=(",", ":"))
    return str(value)


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    columns: Sequence[str] | None = None,
    formats: Mapping[str, str] | None = None,
) -> str:
    """``rows`` as a Markdown table: ``columns`` (default every key, in the order
    first seen), each cell through ``formats[column]`` where given (``seconds``:
    two decimals unless said otherwise)."""
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))
    formats = {"seconds": ".2f", **(formats or {})}
    cells = [[_cell(row.get(c), formats.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(columns), rule, *(line(r) for r in cells)])


class Rows:
    """The rows of one benchmark run: add them, time them, then :meth:`finish`."""

    def __init__(self, name: str, args: argparse.Namespace) -> None:
        self.name = Path(name).stem
        self.args = args
        self.rows: list[dict[str, Any]] = []
        self._started = time.perf_counter()
        self._load = os.getloadavg()

    def add(self, row: str, **fields: Any) -> dict[str, Any]:
        """Appends the row ``{"row": row, **fields}`` and returns it."""
        made = {"row": row, **fields}
        self.rows.append(made)
        return made

    @contextlib.contextmanager
    def timed(self, row: str, **fields: Any) -> Iterator[dict[str, Any]]:
        """Appends a row whose ``seconds`` is the wall time of the ``with`` block;
        the block fills in the row's other figures."""
        made = {"row": row, **fields}
        started = time.perf_counter()
        yield made
        made["seconds"] = time.perf_counter() - started
        self.rows.append(made)

    def payload(self, **extra: Any) -> dict[str, Any]:
        """The JSON :meth:`finish` writes."""
        return _jsonable(
            {
                "benchmark": self.name,
                "args": vars(self.args),
                "smoke": bool(self.args.smoke),
                "seed": self.args.seed,
                "machine": {
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                    "load_before": list(self._load),
                    "load_after": list(os.getloadavg()),
                },
                "seconds": time.perf_counter() - self._started,
                **extra,
                "rows": self.rows,
            }
        )

    def finish(
        self,
        *,
        title: str | None = None,
        columns: Sequence[str] | None = None,
        formats: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Prints the rows as a table (under ``title``), writes the JSON to
        ``--out`` if given (``extra`` goes in beside the rows) and returns it."""
        if title:
            print(title)
        if self.rows:
            print(table(self.rows, columns=columns, formats=formats))
        payload = self.save(**extra)
        load = payload["machine"]
        print(
            f"{self.name}: {len(self.rows)} row(s) in {payload['seconds']:.1f} s; "
            f"load average {load['load_before'][0]:.1f} -> {load['load_after'][0]:.1f}"
            f" on {load['cpus']} CPU(s)"
            + ("" if self.args.out is None else f"; wrote {self.args.out}")
        )
        return payload

    def record(self, figures: Mapping[str, Any]) -> Path | None:
        """With ``--record`` (never with ``--smoke``): :func:`write_record` of the
        figures under this benchmark's name; else nothing."""
        if not getattr(self.args, "record", False):
            return None
        if self.args.smoke:
            raise SystemExit("--record: a smoke run's figures are not the docs'")
        path = write_record(self.name, figures)
        print(f"{self.name}: recorded {len(figures)} figure(s) in {path}")
        return path

    def save(self, **extra: Any) -> dict[str, Any]:
        """Writes the JSON of the rows so far to ``--out`` if given (a long run
        saves after each row) and returns it."""
        payload = self.payload(**extra)
        if self.args.out is not None:
            out = Path(self.args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(payload, indent=1) + "\n")
        return payload
