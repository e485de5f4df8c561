"""The store's feature reads: the fast NPY decoder and one read per attack.

No timings here (benchmarks/end_to_end.py prints them): these tests check that the
fast path gives exactly what ``numpy.load`` gives, falls back for every other stored
format, and that the analysis reads each attack's features from the file once.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from dpaudit.audit.storage.store import (
    ResultStore,
    _from_bytes,
    _to_bytes,
    decode_vectors,
)
from dpaudit.errors import StoreError


def npy(array: np.ndarray, *, version: tuple[int, int] | None = None) -> bytes:
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def test_fast_decoder_equals_numpy_load_on_what_the_store_writes() -> None:
    gen = np.random.default_rng(0)
    vectors = [gen.normal(size=n) for n in (12, 12, 1, 0, 300, 12)]
    vectors.append(np.array([np.nan, np.inf, -0.0, 5e-324]))
    blobs = [_to_bytes(v) for v in vectors]
    decoded = decode_vectors(blobs)
    assert len(decoded) == len(vectors)
    for got, blob in zip(decoded, blobs):
        want = _from_bytes(blob)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6, dtype=np.float32),  # another dtype
        np.arange(6, dtype=">f8"),  # big-endian
        np.arange(6, dtype=np.float64).reshape(2, 3),  # 2-d
        np.asfortranarray(np.arange(6.0).reshape(3, 2)),
        np.arange(4, dtype=np.int64),
        np.float64(3.5),  # 0-d
    ],
)
def test_other_stored_formats_go_through_numpy_load(array: np.ndarray) -> None:
    blob = npy(array)
    (got,) = decode_vectors([blob])
    want = np.load(io.BytesIO(blob), allow_pickle=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_version_2_headers_and_mixed_blobs_decode() -> None:
    plain = np.linspace(0, 1, 7)
    blobs = [
        npy(plain, version=(2, 0)),
        npy(plain),
        npy(plain.astype(np.float32)),
        npy(plain, version=(2, 0)),
    ]
    for got, blob in zip(decode_vectors(blobs), blobs):
        want = np.load(io.BytesIO(blob), allow_pickle=False)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_a_truncated_blob_is_not_read_past_its_end() -> None:
    good = _to_bytes(np.arange(5.0))
    short = good[:-8]  # the same header, one value missing: numpy.load refuses it
    assert decode_vectors([good])[0].shape == (5,)
    with pytest.raises(ValueError):
        decode_vectors([good, short])


def _store(tmp_path: Path, rounds: int = 6) -> ResultStore:
    store = ResultStore(tmp_path)
    store.commit_batch(
        {
            "round": r,
            "bit": r % 2,
            "split": 0,
            "claim": {"epsilon": 1.0},
            "features": {"a": np.full(3, float(r)), "b": np.arange(float(r), r + 2.0)},
        }
        for r in range(rounds)
    )
    return store


def test_each_attack_is_read_from_the_file_once(tmp_path: Path) -> None:
    queries: list[str] = []
    with _store(tmp_path) as store:
        store.conn.set_trace_callback(queries.append)
        for rounds in ([0, 2, 4], [1, 3], [5, 0]):
            got = store.features("a", np.array(rounds))
            np.testing.assert_array_equal(
                got, np.repeat(np.array(rounds, float)[:, None], 3, axis=1)
            )
        assert store.features("b", np.array([3])).tolist() == [[3.0, 4.0]]
        reads = [q for q in queries if "FROM features" in q]
        # One read in all, not one per call: the digest check reads every vector
        # once and keeps them for every attack.
        assert len(reads) == 1
        # The matrix is a new array: writing into it changes no later read.
        store.features("a", np.array([0]))[0, 0] = 99.0
        assert store.features("a", np.array([0]))[0, 0] == 0.0


def test_a_commit_makes_the_next_read_see_the_new_rounds(tmp_path: Path) -> None:
    with _store(tmp_path, rounds=2) as store:
        with pytest.raises(StoreError, match="no 'a' features for 1 round"):
            store.features("a", np.array([0, 2]))
        store.commit_batch(
            [
                {
                    "round": 2,
                    "bit": 0,
                    "split": 0,
                    "claim": {},
                    "features": {"a": np.full(3, 7.0)},
                }
            ]
        )
        assert store.features("a", np.array([2, 0]))[:, 0].tolist() == [7.0, 0.0]


def test_encoding_writes_what_numpy_save_writes() -> None:
    """The store's encoder (one header per shape, then the data) writes the bytes
    ``np.save`` writes for float64, byte for byte: stored digests do not change."""
    gen = np.random.default_rng(0)
    arrays = [
        np.arange(5),
        gen.normal(size=21),
        gen.normal(size=(3, 4)),
        np.asfortranarray(gen.normal(size=(3, 4))),
        gen.normal(size=(4, 6))[:, ::2],
        np.zeros(0),
        np.float64(3.0),
        np.array([np.nan, np.inf, -0.0]),
        [1, 2, 3],
    ]
    for array in arrays:
        assert _to_bytes(array) == npy(np.asarray(array, dtype=np.float64))
