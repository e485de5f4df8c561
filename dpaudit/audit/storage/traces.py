"""A training trace: writing it (the audit study's Figures 2 to 4) as CSV and JSON.

Files: ``records_seen.csv`` (model, teacher, records_seen), ``losses.csv``
(iteration, teacher, loss_own, loss_other), ``epsilon.csv`` (iteration, epsilon,
epsilon_data_independent, moment1) and ``trace.json`` (the claim with its trace).
The folder is written to a temporary sibling and renamed, so nothing half-written is
left behind; it gets the permissions of a folder made by ``mkdir`` (0777 less the
umask), like its files, so other users can read a shared audit. Reading it back:
:class:`Trace` (the tables and ``trace.json``) and :class:`TrainingFacts` (what the
traced claim states about training, as typed values).

Ownership: :func:`trace_digest` identifies a written folder (its file names and
bytes); an audit records the digest of the trace it wrote in its store before the
folder appears (``record``), so a ``trace/`` that the audit did not write is never
taken for its own (dpaudit/audit/storage/outdir.py). An existing folder is replaced only when
it holds trace files alone: dpaudit never deletes a folder it could not have written.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidParameterError

TRACE_FILES = ("records_seen.csv", "losses.csv", "epsilon.csv", "trace.json")
"""The files of a trace folder: all that :func:`write_trace` writes."""


def trace_digest(folder: Path) -> str:
    """SHA-256 over the entries of ``folder`` (names, and the bytes of files, in name
    order; a sub-folder or any other entry counts by its name and kind), so any
    file added, removed or changed gives another digest."""
    digest = hashlib.sha256()
    for entry in sorted(Path(folder).iterdir(), key=lambda p: p.name):
        digest.update(entry.name.encode("utf-8", "surrogateescape") + b"\0")
        if entry.is_file() and not entry.is_symlink():
            digest.update(b"f" + entry.read_bytes() + b"\0")
        else:
            digest.update(b"o\0")
    return digest.hexdigest()


def only_trace_files(folder: Path) -> bool:
    """Whether ``folder`` is a folder holding nothing but trace files (of
    :data:`TRACE_FILES`, regular files), ``trace.json`` among them: a folder that
    :func:`write_trace` could have written."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return False
    entries = list(folder.iterdir())
    return (folder / "trace.json").is_file() and all(
        p.name in TRACE_FILES and p.is_file() and not p.is_symlink() for p in entries
    )


def _fresh_sibling(out: Path) -> Path:
    """A new empty hidden folder beside ``out``, made with the umask's permissions
    (``tempfile.mkdtemp`` would make it 0700, unreadable by anyone else)."""
    while True:
        tmp = out.parent / f".{out.name}.{secrets.token_hex(6)}"
        try:
            tmp.mkdir(mode=0o777)
        except FileExistsError:
            continue
        return tmp


def write_trace(
    out: Path,
    claim: Mapping[str, Any],
    *,
    num_teachers: int,
    model: int = 0,
    record: Callable[[str], None] | None = None,
) -> None:
    """Writes the trace of one fitted model's claim (``PrivacyClaim.to_json()``).

    ``record`` is called with the folder's :func:`trace_digest` once it is complete
    and before it appears at ``out``. An existing ``out`` is replaced only when it
    holds trace files alone (:func:`only_trace_files`).

    Raises:
        InvalidParameterError: ``out`` is a file, or a folder holding anything but a
            trace (nothing is written).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a folder.")
    if out.exists() and any(out.iterdir()) and not only_trace_files(out):
        raise InvalidParameterError(
            f"`--out` {str(out)!r} holds files that are not a trace; dpaudit replaces "
            "only a trace folder it wrote: choose another --out."
        )
    trace = claim.get("trace", {})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _fresh_sibling(out)
    try:
        with open(tmp / "records_seen.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["model", "teacher", "records_seen"])
            for teacher, seen in enumerate(trace.get("records_seen", [])):
                w.writerow([model, teacher, seen])
        with open(tmp / "losses.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["iteration", "teacher", "loss_own", "loss_other"])
            for row in trace.get("teacher_losses", []):
                for teacher in range(num_teachers):
                    w.writerow(
                        [
                            row["iteration"],
                            teacher,
                            row["own"][teacher],
                            row["other"][teacher],
                        ]
                    )
        with open(tmp / "epsilon.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["iteration", "epsilon", "epsilon_data_independent", "moment1"])
            eps = trace.get("epsilon", [])
            di = trace.get("epsilon_data_independent", [None] * len(eps))
            m1 = trace.get("moment1", [None] * len(eps))
            for i, values in enumerate(zip(eps, di, m1)):
                w.writerow([i, *values])
        (tmp / "trace.json").write_text(json.dumps(dict(claim), indent=2) + "\n")
        if record is not None:
            record(trace_digest(tmp))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingFacts:
    """What a claim states about how training ran, as typed values (what a report
    may show depends on them, never on a generator's flag names).

    Attributes:
        teachers: the teachers training had (``0``: none, a single discriminator on
            all the data); ``None``: not stated (a generator without teachers' votes,
            or a claim written before this was recorded).
        accounted: whether an accountant computed epsilon from the queries training
            made (``False``: the claim is the nominal epsilon, or no query was
            made); ``None``: not stated.
        non_private_events: the non-private events training had (each the name of
            the defect that caused it: its catalogue entry says why).
        accountant: the name of the accountant the claim comes from, if stated.
    """

    teachers: int | None = None
    accounted: bool | None = None
    non_private_events: tuple[str, ...] = ()
    accountant: str | None = None

    @classmethod
    def from_claim(cls, claim: Mapping[str, Any] | None) -> TrainingFacts:
        """The facts a generator's claim (``trace.json``, a stored claim) states in
        its trace: ``teachers``, ``accounted`` and ``non_private_events``; a ledger
        of no queries is not accounted."""
        inner = (claim or {}).get("trace")
        trace: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
        teachers = trace.get("teachers")
        accounted = trace.get("accounted")
        ledger = trace.get("ledger")
        if isinstance(ledger, Mapping) and ledger.get("queries") == 0:
            accounted = False
        events = trace.get("non_private_events") or ()
        name = (claim or {}).get("accountant")
        return cls(
            accountant=None if name is None else str(name),
            teachers=teachers if isinstance(teachers, int) else None,
            accounted=accounted if isinstance(accounted, bool) else None,
            non_private_events=tuple(str(e) for e in events),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Trace:
    """Training traces of one model, read from an audit directory's ``trace/``.

    Each table is a tuple of rows (column -> number or string), or ``None`` when its
    file is absent. Not part of ``result.json``.

    Attributes:
        records_seen: rows ``model, teacher, records_seen``.
        losses: rows ``iteration, teacher, loss_own, loss_other``.
        epsilon: rows ``iteration, epsilon, epsilon_data_independent``.
        details: the content of ``trace.json``, if any.
    """

    records_seen: tuple[Mapping[str, Any], ...] | None = None
    losses: tuple[Mapping[str, Any], ...] | None = None
    epsilon: tuple[Mapping[str, Any], ...] | None = None
    details: Mapping[str, Any] | None = None

    @property
    def empty(self) -> bool:
        """Whether no trace file was found."""
        return all(
            x is None
            for x in (self.records_seen, self.losses, self.epsilon, self.details)
        )

    @property
    def facts(self) -> TrainingFacts:
        """What the traced model's claim (``trace.json``) states about its training."""
        return TrainingFacts.from_claim(self.details)
