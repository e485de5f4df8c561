"""The store keeps each distinct RDP curve of the claims once (storage/curves.py), reads
every claim back exactly as a whole claim's JSON reads, and still reads, verifies and
continues a store of an older dpaudit, which kept each claim whole."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage.store import ResultStore, round_digest
from dpaudit.errors import StoreError

ORDERS = [float(a) for a in range(2, 102)]
CURVE = {"orders": ORDERS, "epsilons": [0.01 * a for a in ORDERS]}
ODD = {  # values whose JSON must read back bit for bit
    "orders": [1.5, 2.0, 1e300],
    "epsilons": [-0.0, 5e-324, math.inf],
}


def _claims() -> list[dict[str, Any]]:
    rest = {"epsilon": 0.99, "delta": 1e-5, "trace": {"records_seen": [3, 2]}}
    return [
        {**rest, "rdp": CURVE, "reference_rdp": CURVE},
        {**rest, "rdp": CURVE, "reference_rdp": ODD, "epsilon": 1.5},
        {**rest, "rdp": None, "reference_rdp": CURVE},
        {**rest, "rdp": None},  # no curve: kept whole
        {**rest, "rdp": {"orders": [2, 3], "epsilons": [0.1, 0.2]}},  # ints: whole
        {**rest, "rdp": {"orders": [2.0], "epsilons": [math.nan]}},
    ]


def _rows(claims: list[dict[str, Any]], start: int = 0) -> Iterator[dict[str, Any]]:
    for i in range(40):
        r = start + i
        yield {
            "round": r,
            "bit": r % 2,
            "split": r % 3,
            "claim": claims[i % len(claims)],
            "features": {"a": np.full(3, float(r))},
        }


def _as_read(claim: dict[str, Any]) -> str:
    """What ``claims()`` must give, printed in its own key order (no sort_keys)."""
    return json.dumps(json.loads(json.dumps(claim, sort_keys=True)))


def test_each_distinct_curve_is_stored_once_and_claims_read_as_before(
    tmp_path: Path,
) -> None:
    claims = _claims()
    with ResultStore(tmp_path) as store:
        store.commit_batch(list(_rows(claims))[:20])
        store.commit_batch(list(_rows(claims))[20:])
        got = store.claims()
        (curves,) = store.conn.execute("SELECT COUNT(*) FROM curves").fetchone()
        (split,) = store.conn.execute("SELECT COUNT(*) FROM claim_curves").fetchone()
        refs = {
            text
            for (text,) in store.conn.execute("SELECT curves FROM claim_curves")
            if "reference_rdp" in text and "rdp" in text.replace("reference_rdp", "")
        }
        (biggest,) = store.conn.execute(
            "SELECT MAX(length(claim)) FROM rounds WHERE round IN "
            "(SELECT round FROM claim_curves)"
        ).fetchone()
    # CURVE, ODD and the NaN curve, once each though 2 batches name them.
    assert curves == 3
    assert refs == {'{"rdp": 1, "reference_rdp": 1}', '{"rdp": 1, "reference_rdp": 2}'}
    assert split == sum(1 for i in range(40) if i % len(claims) not in (3, 4))
    assert biggest < 200  # the rest of a claim, without its 100-order curves
    assert sorted(got) == list(range(40))
    for r, claim in got.items():
        assert json.dumps(claim) == _as_read(claims[r % len(claims)]), r


def _to_older_layout(path: Path) -> None:
    """Rewrites the store at ``path`` as an older dpaudit wrote it: every claim whole
    in ``rounds.claim`` (its digest over that text), no curve tables."""
    with ResultStore(path.parent) as store:
        claims = store.claims()
    with sqlite3.connect(path) as conn:
        for r, claim in claims.items():
            text = json.dumps(claim, sort_keys=True)
            (bit, split) = conn.execute(
                "SELECT bit, split FROM rounds WHERE round = ?", (r,)
            ).fetchone()
            blobs = [
                (str(a), bytes(b))
                for a, b in conn.execute(
                    "SELECT attack, vector FROM features WHERE round = ?", (r,)
                )
            ]
            conn.execute("UPDATE rounds SET claim = ? WHERE round = ?", (text, r))
            conn.execute(
                "UPDATE digests SET digest = ? WHERE round = ?",
                (round_digest(bit, split, text, blobs), r),
            )
        conn.execute("DROP TABLE claim_curves")
        conn.execute("DROP TABLE curves")
    conn.close()


def test_a_store_of_the_older_layout_reads_verifies_and_continues(
    tmp_path: Path,
) -> None:
    claims = _claims()
    with ResultStore(tmp_path) as store:
        store.commit_batch(_rows(claims))
    path = tmp_path / ResultStore.FILENAME
    _to_older_layout(path)
    with sqlite3.connect(path) as conn:
        whole = conn.execute("SELECT claim FROM rounds WHERE round = 0").fetchone()[0]
        assert json.loads(whole)["rdp"] == CURVE  # the older layout indeed
    conn.close()
    with ResultStore(tmp_path) as store:
        store.commit_batch(_rows(claims, start=40))  # continued: the new layout
        got = store.claims()
    assert sorted(got) == list(range(80))
    for r, claim in got.items():
        assert json.dumps(claim) == _as_read(claims[r % 40 % len(claims)]), r
    # Both layouts stay checked: a change to an older round is still caught.
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE rounds SET claim = replace(claim, '0.02', '0.03') WHERE round = 0"
        )
    conn.close()
    with ResultStore(tmp_path) as store, pytest.raises(StoreError, match="changed"):
        store.claims()


@pytest.mark.parametrize(
    "change",
    [
        "edited curve",
        "removed curve",
        "swapped curves",
        "removed reference",
        "added reference",
    ],
)
def test_a_changed_curve_is_refused(tmp_path: Path, change: str) -> None:
    with ResultStore(tmp_path) as store:
        store.commit_batch(_rows(_claims()))
    edits = {
        "edited curve": ["UPDATE curves SET curve = replace(curve, '0.02', '0.03')"],
        "removed curve": ["DELETE FROM curves WHERE curve LIKE '%1e+300%'"],
        # Every curve and digest intact, two numbers exchanged: rounds 0 and 1
        # would read each other's reference curve.
        "swapped curves": [
            "UPDATE curves SET id = 99 WHERE id = 1",
            "UPDATE curves SET id = 1 WHERE id = 2",
            "UPDATE curves SET id = 2 WHERE id = 99",
        ],
        "removed reference": ["DELETE FROM claim_curves WHERE round = 1"],
        "added reference": [
            "INSERT INTO claim_curves SELECT 3, curves FROM claim_curves WHERE round = 0"
        ],
    }
    with sqlite3.connect(tmp_path / ResultStore.FILENAME) as conn:
        for edit in edits[change]:
            assert conn.execute(edit).rowcount >= 1
    conn.close()
    with (
        ResultStore(tmp_path) as store,
        pytest.raises(StoreError, match="was changed after dpaudit wrote it"),
    ):
        store.claims()


def test_a_round_rewritten_without_curves_loses_its_reference(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.commit_batch(
            [
                {
                    "round": 0,
                    "bit": 0,
                    "split": 0,
                    "claim": {"rdp": CURVE},
                    "features": {},
                }
            ]
        )
        store.commit_batch(
            [{"round": 0, "bit": 0, "split": 0, "claim": {"rdp": None}, "features": {}}]
        )
        assert store.claims() == {0: {"rdp": None}}
        assert store.conn.execute("SELECT * FROM claim_curves").fetchall() == []


def _fast() -> AuditConfig:
    """The default generator (its claims carry RDP curves), a few short fits."""
    return AuditConfig(
        rounds=6,
        jobs=1,
        batch_size=4,
        device="cpu",
        generator_options={"max_iterations": 3},
    )


@pytest.mark.slow
def test_an_audit_continues_a_store_of_the_older_layout(tmp_path: Path) -> None:
    """A store an older dpaudit wrote (claims whole) is analysed as it is, and one
    it left unfinished is resumed: the result is the uninterrupted audit's, and the
    claims read as they did."""
    config = _fast()
    whole = run_audit(config, out_dir=tmp_path / "whole").to_json()
    out = tmp_path / "older"
    run_audit(config, out_dir=out)
    path = out / ResultStore.FILENAME
    with ResultStore(out) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM curves").fetchone()[0] >= 1
        before = store.claims()
    _to_older_layout(path)

    def same_result(again: dict[str, Any]) -> None:
        assert again["verdict"] == whole["verdict"]
        assert again["eps_emp"] == whole["eps_emp"]
        assert again["attacks"] == whole["attacks"]
        with ResultStore(out) as store:
            assert store.claims() == before

    (out / "result.json").unlink()
    same_result(run_audit(config, out_dir=out, resume=True).to_json())
    with sqlite3.connect(path) as conn:  # analysed as it was: nothing rewritten
        assert conn.execute("SELECT COUNT(*) FROM claim_curves").fetchone() == (0,)
        for table in ("rounds", "features", "digests"):  # as if killed early
            conn.execute(f"DELETE FROM {table} WHERE round >= 4")
    conn.close()
    (out / "result.json").unlink()
    same_result(run_audit(config, out_dir=out, resume=True).to_json())
