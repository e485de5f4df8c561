"""The results store: one SQLite file per audit directory.

Tables: ``meta`` (the audit's configuration and plan, JSON), ``rounds`` (bit, split,
the round's claim as JSON), ``features`` (one attack's feature vector of a round, as
NPZ bytes, loaded with ``allow_pickle=False``), ``digests`` (a SHA-256 of each
round's stored row and vectors), and ``curves`` and ``claim_curves`` (each distinct
RDP curve of the claims once, and which round's claim holds which:
:mod:`dpaudit.audit.storage.curves`). Every finished batch is committed in one
transaction, so a killed audit resumes where it stopped and loses nothing. Nothing is
pickled.

dpaudit writes only into a store it created: a new store is stamped with SQLite's
``application_id`` (:data:`APPLICATION_ID`), and an existing file is opened for writing
only when it carries that stamp (or is a store of an older dpaudit: no stamp, and
dpaudit's tables only). Another application's database, an empty file or a file that
is no database is refused before anything is written into it. The digests are checked
before a stored round is resumed from or analysed: a store changed after dpaudit wrote
it (an edited feature vector, a removed or added round) is refused, not analysed.

:class:`StoreLock` is the advisory lock (``audit.lock`` beside ``audit.sqlite``) that one
run holds for its whole duration, so two runs never write into one directory.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.storage.curves import (
    CURVES_SCHEMA,
    curve_digest,
    digested_text,
    join_claim,
    resolve,
    split_claim,
)
from dpaudit.audit.storage.lock import StoreLock as StoreLock
from dpaudit.errors import InvalidParameterError, RunFailedError, StoreError

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rounds (
    round INTEGER PRIMARY KEY, bit INTEGER NOT NULL, split INTEGER NOT NULL,
    claim TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS features (
    round INTEGER NOT NULL, attack TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (round, attack));
CREATE TABLE IF NOT EXISTS digests (round INTEGER PRIMARY KEY, digest TEXT NOT NULL);
"""
    + CURVES_SCHEMA
)

APPLICATION_ID = 0x64704175
"""SQLite ``PRAGMA application_id`` of a dpaudit store (the bytes ``dpAu``)."""
TABLES = frozenset({"meta", "rounds", "features", "digests", "curves", "claim_curves"})
"""The tables a dpaudit store may hold."""


SQLITE_PATH_BYTES = 512
"""The longest file path SQLite's Unix VFS opens (``MAX_PATHNAME`` of
``os_unix.c``): the store's journal, ``audit.sqlite-journal``, must fit in it."""


def check_store_path(directory: Path, given: str) -> None:
    """Refuses, before anything is written, an audit directory whose store SQLite
    could not open: its journal's absolute path is longer than
    :data:`SQLITE_PATH_BYTES` (``given``: the folder as the user wrote it).

    Raises:
        InvalidParameterError: naming ``--out``, the length and the limit.
    """
    journal = Path(os.path.abspath(directory)) / f"{ResultStore.FILENAME}-journal"
    size = len(os.fsencode(journal))
    if size > SQLITE_PATH_BYTES:
        room = SQLITE_PATH_BYTES - (size - len(os.fsencode(os.path.abspath(directory))))
        raise InvalidParameterError(
            f"`--out` {given!r} is too long for the audit's SQLite store: its path "
            f"({journal.name} in it) is {size} bytes and SQLite opens paths of at most "
            f"{SQLITE_PATH_BYTES}; choose a folder whose absolute path is at most "
            f"{room} bytes."
        )


def store_failure(err: BaseException, path: Path) -> Exception | None:
    """The one-line error for an SQLite error ``err`` on the store at ``path`` that
    is not dpaudit's bug, or ``None`` for any other error.

    * a read-only store (``attempt to write a readonly database``): the path cannot
      be written, bad input (:class:`InvalidParameterError`, exit 2);
    * ``unable to open database file``: the same (a path too long, a folder that
      cannot be entered);
    * ``database or disk is full`` and ``disk I/O error``: the environment
      (:class:`RunFailedError`, exit 3); the rounds committed before stay stored.

    >>> type(store_failure(sqlite3.OperationalError("database or disk is full"),
    ...                    Path("a/audit.sqlite"))).__name__
    'RunFailedError'
    >>> store_failure(ValueError("x"), Path("a")) is None
    True
    """
    if not isinstance(err, sqlite3.Error):
        return None
    name = str(getattr(err, "sqlite_errorname", ""))
    text = " ".join(str(err).split())
    where = repr(str(path))
    again = "then run the same command again (it continues from the rounds stored)"
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return InvalidParameterError(
            f"{where} cannot be written ({text}): make it and its folder writable "
            "(chmod u+w), or choose another --out."
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open database" in text:
        return InvalidParameterError(
            f"SQLite cannot open {where} ({text}): the folder must be writable and "
            f"the path at most {SQLITE_PATH_BYTES} bytes; choose another --out."
        )
    if name == "SQLITE_FULL" or "database or disk is full" in text:
        return RunFailedError(
            f"writing {where} failed: the disk is full, or a file-size limit "
            f"(ulimit -f) was reached ({text}); free space or raise the limit, {again}."
        )
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        return RunFailedError(
            f"reading or writing {where} failed ({text}): check the disk, its free "
            f"space and any file-size limit (ulimit -f), {again}."
        )
    return None


def round_digest(
    bit: int, split: int, claim_json: str, vectors: Iterable[tuple[str, bytes]]
) -> str:
    """SHA-256 of one stored round: its bit, split, claim JSON and every attack's
    vector bytes (in attack-name order)."""
    digest = hashlib.sha256(f"{int(bit)}|{int(split)}|{claim_json}".encode())
    for attack, blob in sorted(vectors):
        digest.update(b"\0" + attack.encode() + b"\0")
        digest.update(blob)
    return digest.hexdigest()


def _check_foreign(path: Path) -> None:
    """Refuses (:class:`StoreError`) an existing ``path`` that dpaudit did not
    create, reading it only."""
    where = f"{str(path)!r}"
    fix = "choose another --out (dpaudit writes only into a store it created)"
    if path.stat().st_size == 0:
        raise StoreError(f"{where} is an empty file, not a dpaudit store; {fix}.")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            (app,) = conn.execute("PRAGMA application_id").fetchone()
            tables = {
                t
                for (t,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        raise StoreError(
            f"{where} is not a dpaudit store ({err}); if it is a damaged "
            "store of this audit, start over with --force; otherwise "
            f"{fix}."
        ) from err
    if app == APPLICATION_ID:
        return
    if app == 0 and tables and tables <= TABLES and {"meta", "rounds"} <= tables:
        return  # a store of an older dpaudit, before the stamp
    owner = f"application id {app:#x}" if app else "no application id"
    raise StoreError(
        f"{where} is another application's SQLite database ({owner}, "
        f"tables {sorted(tables)}), not a dpaudit store; {fix}."
    )


def _to_bytes(array: NDArray[Any]) -> bytes:
    """The NPY bytes of ``array`` as float64 (what ``np.save`` writes): the header
    of its shape, made once per shape, then the data in C order."""
    values = np.asarray(array, dtype=np.float64)
    if not values.flags.c_contiguous:
        buf = io.BytesIO()
        np.save(buf, values, allow_pickle=False)
        return buf.getvalue()
    return _npy_header(values.shape) + values.tobytes()


@functools.lru_cache(maxsize=256)
def _npy_header(shape: tuple[int, ...]) -> bytes:
    """What ``np.save`` writes before the data of a C-ordered float64 array of
    ``shape``."""
    zeros = np.zeros(shape, dtype=np.float64)
    buf = io.BytesIO()
    np.save(buf, zeros, allow_pickle=False)
    full = buf.getvalue()
    return full[: len(full) - zeros.nbytes]


def _from_bytes(blob: bytes) -> NDArray[np.float64]:
    array: NDArray[np.float64] = np.load(io.BytesIO(blob), allow_pickle=False)
    return array


_NPY_MAGIC = b"\x93NUMPY"


def _header_length(blob: bytes) -> int | None:
    """The length of an NPY blob's header (magic, version, length field and the
    header dict), from its length field; ``None`` for anything but versions 1 and 2."""
    if blob[:6] != _NPY_MAGIC or len(blob) < 12:
        return None
    if blob[6] == 1:
        return 10 + int.from_bytes(blob[8:10], "little")
    if blob[6] == 2:
        return 12 + int.from_bytes(blob[8:12], "little")
    return None


def _plain_length(blob: bytes) -> int | None:
    """The length of a plain vector (1-d, little-endian float64, C order: what
    :func:`_to_bytes` writes) that the NPY ``blob`` holds, else ``None``. The header
    is parsed by NumPy's own reader (:mod:`numpy.lib.format`)."""
    fp = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            return None
    except ValueError:
        return None
    if dtype != np.dtype("<f8") or len(shape) != 1 or fortran:
        return None
    return int(shape[0])


def decode_vectors(blobs: Iterable[bytes]) -> list[NDArray[np.float64]]:
    """The vectors that NPY ``blobs`` (one :func:`_to_bytes` each) hold, in order.

    The feature vectors of one attack share one header: it is parsed once (by
    NumPy's reader) and a plain vector (1-d ``<f8``) is then read with
    :func:`numpy.frombuffer` after it; a blob whose size does not match its header,
    and any other format, goes through :func:`numpy.load` (``allow_pickle=False``),
    so every store written so far reads as before. The vectors are read-only views
    of the blobs.
    """
    plain: dict[bytes, int | None] = {}
    out: list[NDArray[np.float64]] = []
    for blob in blobs:
        size = _header_length(blob)
        if size is not None:
            header = blob[:size]
            if header not in plain:
                plain[header] = _plain_length(blob)
            length = plain[header]
            if length is not None and len(blob) == size + 8 * length:
                out.append(np.frombuffer(blob, dtype="<f8", offset=size))
                continue
        out.append(_from_bytes(blob))
    return out


class ResultStore:
    """An audit's SQLite store (``audit.sqlite`` in the audit directory)."""

    FILENAME = "audit.sqlite"

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / self.FILENAME
        existed = self.path.exists()
        if existed:
            _check_foreign(self.path)
        try:
            self.conn = sqlite3.connect(self.path)
        except sqlite3.Error as err:
            failure = store_failure(err, self.path)
            if failure is None:
                raise
            raise failure from err
        # Each attack's stored vectors by round, read once (cleared by commits).
        self._features: dict[str, dict[int, NDArray[np.float64]]] = {}
        self._verified = False
        try:
            if not existed:
                self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.conn.executescript(SCHEMA)
            self._adopt_older_store()
        except sqlite3.DatabaseError as err:
            self.conn.close()
            failure = store_failure(err, self.path)
            if failure is not None:
                raise failure from err
            raise StoreError(
                f"{str(self.path)!r} is not a dpaudit store ({err}); choose "
                "another --out, or start over with --force."
            ) from err

    def close(self) -> None:
        self.conn.close()

    def _adopt_older_store(self) -> None:
        """A store of an older dpaudit (rounds, no digests) gets the digests of the
        rounds it holds, as they are, so that later changes are caught."""
        (digests,) = self.conn.execute("SELECT COUNT(*) FROM digests").fetchone()
        if digests:
            return
        rounds = list(self._stored_rounds())
        if not rounds:
            return
        intact = self._intact_curves()
        vectors: dict[int, list[tuple[str, bytes]]] = {}
        for r, attack, blob in self.conn.execute(
            "SELECT round, attack, vector FROM features"
        ):
            vectors.setdefault(int(r), []).append((str(attack), bytes(blob)))
        with self.conn:
            self.conn.executemany(
                "INSERT INTO digests VALUES (?, ?)",
                [
                    (r, round_digest(bit, split, text, vectors.get(r, [])))
                    for r, bit, split, c, refs in rounds
                    if (text := self._digested(c, refs, intact)) is not None
                ],
            )

    def _stored_rounds(self) -> Iterable[tuple[int, int, int, str, str | None]]:
        """Each stored round's number, bit, split, ``rounds.claim`` and its curves'
        references (``claim_curves.curves``, ``None`` without a row), in round order,
        read as they are used (the claims of an older store are kilobytes each)."""
        for r, bit, split, claim, refs in self.conn.execute(
            "SELECT r.round, r.bit, r.split, r.claim, c.curves FROM rounds AS r "
            "LEFT JOIN claim_curves AS c ON c.round = r.round ORDER BY r.round"
        ):
            yield int(r), bit, split, claim, refs

    def _intact_curves(self) -> dict[int, str]:
        """Each stored curve's number -> its SHA-256, for the curves whose JSON
        still has it."""
        return {
            int(n): digest
            for n, digest, text in self.conn.execute(
                "SELECT id, digest, curve FROM curves"
            )
            if curve_digest(text) == digest
        }

    @staticmethod
    def _digested(
        claim: str, refs: str | None, intact: Mapping[int, str]
    ) -> str | None:
        """What a round's digest covers (``rounds.claim`` and, with its curves kept
        apart, their SHA-256), or ``None`` when a curve it names is missing or was
        changed."""
        if refs is None:
            return claim
        digests = resolve(refs, intact)
        return None if digests is None else digested_text(claim, digests)

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> Any:
        row = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (key, json.dumps(value, sort_keys=True)),
            )

    # ---------------------------------------------------------------- rounds
    def count_rounds(self) -> int:
        """How many rounds are stored."""
        (n,) = self.conn.execute("SELECT COUNT(*) FROM rounds").fetchone()
        return int(n)

    def done_rounds(self) -> set[int]:
        """The stored rounds (checked against their digests first: :meth:`verify`)."""
        self.verify()
        return {r for (r,) in self.conn.execute("SELECT round FROM rounds")}

    def verify(self) -> None:
        """Checks every stored round against its digest, once per store object.

        Every stored round must have a digest (a store of an older dpaudit got them
        when it was opened), and it must match; every curve a round's claim names
        (``claim_curves``) must be stored, its JSON still hashing to its SHA-256.

        Raises:
            StoreError: the store was changed after dpaudit wrote it.
        """
        if self._verified:
            return
        digests = dict(self.conn.execute("SELECT round, digest FROM digests"))
        vectors: dict[int, list[tuple[str, bytes]]] = {}
        for r, attack, blob in self.conn.execute(
            "SELECT round, attack, vector FROM features"
        ):
            vectors.setdefault(int(r), []).append((str(attack), bytes(blob)))
        # The rounds are checked as they are read: their claims (kilobytes each, with
        # RDP curves) are not all held at once.
        stored: set[int] = set()
        changed: set[int] = set()
        intact = self._intact_curves()
        for r, bit, split, claim, refs in self._stored_rounds():
            stored.add(r)
            text = self._digested(claim, refs, intact)
            if text is None or (
                r in digests
                and digests[r] != round_digest(bit, split, text, vectors.get(r, []))
            ):
                changed.add(r)
        changed |= set(digests) ^ stored
        changed |= {r for r in vectors if r not in digests}
        orphans = self.conn.execute(
            "SELECT round FROM claim_curves WHERE round NOT IN (SELECT round FROM rounds)"
        )
        changed |= {int(r) for (r,) in orphans}
        if changed:
            raise StoreError(
                f"{str(self.path)!r} was changed after dpaudit wrote it: the stored "
                f"rounds do not match their checksums ({len(changed)} round(s); first: "
                f"{min(changed)}). It is not analysed; rerun the audit with --force, "
                "or into another --out."
            )
        self._verified = True
        # The checking read has every vector: keep them (decoded) for the analysis, so
        # the file is read once in all.
        by_attack: dict[str, list[tuple[int, bytes]]] = {}
        for r, pairs in vectors.items():
            for attack, blob in pairs:
                by_attack.setdefault(attack, []).append((r, blob))
        for attack, rows in by_attack.items():
            decoded = decode_vectors(blob for _, blob in rows)
            self._features[attack] = {r: v for (r, _), v in zip(rows, decoded)}

    def commit_batch(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Writes one batch (rounds with their claims and features) atomically.

        Each row: ``round``, ``bit``, ``split``, ``claim`` (JSON-able), ``features``
        (attack name -> vector).
        """
        self._features.clear()
        known: dict[tuple[bytes, bytes], tuple[int, str]] = {}
        # One statement per table for the whole batch (keyed so that a round given
        # twice keeps its last row, as row-by-row replacement would).
        rounds: dict[int, tuple[int, int, int, str]] = {}
        refs: dict[int, str | None] = {}
        features: dict[tuple[int, str], tuple[int, str, bytes]] = {}
        digests: dict[int, tuple[int, str]] = {}
        with self.conn:
            for row in rows:
                r, bit, split = int(row["round"]), int(row["bit"]), int(row["split"])
                claim = split_claim(row["claim"], known, self._store_curve)
                rounds[r] = (r, bit, split, claim.rest)
                refs[r] = claim.refs
                blobs = [(str(a), _to_bytes(v)) for a, v in row["features"].items()]
                features.update(((r, a), (r, a, b)) for a, b in blobs)
                digests[r] = (r, round_digest(bit, split, claim.text, blobs))
            run = self.conn.executemany
            run("INSERT OR REPLACE INTO rounds VALUES (?, ?, ?, ?)", rounds.values())
            run(
                "DELETE FROM claim_curves WHERE round = ?",
                [(r,) for r, ref in refs.items() if ref is None],
            )
            run(
                "INSERT OR REPLACE INTO claim_curves VALUES (?, ?)",
                [(r, ref) for r, ref in refs.items() if ref is not None],
            )
            run("INSERT OR REPLACE INTO features VALUES (?, ?, ?)", features.values())
            run("INSERT OR REPLACE INTO digests VALUES (?, ?)", digests.values())

    def _store_curve(self, digest: str, text: str) -> int:
        """The number of the curve whose JSON is ``text`` (SHA-256 ``digest``),
        stored now unless it is stored already."""
        self.conn.execute(
            "INSERT OR IGNORE INTO curves (digest, curve) VALUES (?, ?)", (digest, text)
        )
        (number,) = self.conn.execute(
            "SELECT id FROM curves WHERE digest = ?", (digest,)
        ).fetchone()
        return int(number)

    def claims(self) -> dict[int, dict[str, Any]]:
        """Every stored round's claim (checked first: :meth:`verify`).

        Rounds whose stored claims are the same share one parsed dict (read it, do not
        change it): a claim with RDP curves is kilobytes, and an audit's rounds mostly
        claim the same (the first 64 distinct claims are remembered); each stored
        curve is parsed once, and the claims that hold it share it. A claim reads as
        the dict its whole JSON (``sort_keys``) parses to, whichever layout stored it.
        """
        self.verify()
        curves = {
            int(n): json.loads(text)
            for n, text in self.conn.execute("SELECT id, curve FROM curves")
        }
        parsed: dict[tuple[str, str | None], dict[str, Any]] = {}
        out: dict[int, dict[str, Any]] = {}
        for r, _, _, c, refs in self._stored_rounds():
            claim = parsed.get((c, refs))
            if claim is None:
                claim = json.loads(c)
                if refs is not None:
                    claim = join_claim(claim, json.loads(refs), curves)
                if len(parsed) < 64:
                    parsed[c, refs] = claim
            out[r] = claim
        return out

    def _vectors(self, attack: str) -> dict[int, NDArray[np.float64]]:
        """Every stored vector of ``attack`` by round: one query per attack, kept
        until the next :meth:`commit_batch`."""
        if not self._verified:
            self.verify()
        found = self._features.get(attack)
        if found is None:
            rows = self.conn.execute(
                "SELECT round, vector FROM features WHERE attack = ?", (attack,)
            ).fetchall()
            vectors = decode_vectors(blob for _, blob in rows)
            found = {int(r): v for (r, _), v in zip(rows, vectors)}
            self._features[attack] = found
        return found

    def prefetch(self, attacks: Iterable[str]) -> None:
        """Reads the features of ``attacks`` now, in this thread: later
        :meth:`features` calls for them run no query (so other threads may make
        them; the connection itself belongs to the thread that opened it)."""
        for attack in attacks:
            self._vectors(attack)

    def features(self, attack: str, rounds: NDArray[np.int64]) -> NDArray[np.float64]:
        """The feature matrix ``[len(rounds), F]`` of ``attack``, in ``rounds`` order
        (a new array; the attack's vectors are read from the file once)."""
        found = self._vectors(attack)
        missing = [int(r) for r in rounds if int(r) not in found]
        if missing:
            raise StoreError(
                f"the store has no {attack!r} features for {len(missing)} round(s) "
                f"(first: {missing[0]}); resume the audit to finish them."
            )
        return np.stack([found[int(r)] for r in rounds])
