"""Every failure says what happened (issue 34): the environment's failures (a
read-only store, a full disk, a path SQLite cannot open, standard output closed,
the process's memory limits) and the last bad inputs (devices as input files,
``--option epsilon``, a policy's bad ``[defaults]``, a hand-edited verdict, a run
started while another writes the folder) are one line with the documented exit code
(2 bad input, 3 the environment), never "unexpected ... report it", and leave
nothing half-written.

The disk-full and memory-limit cases run dpaudit in a subprocess with the limit set.
A full disk: a small tmpfs mounted in a user namespace (``unshare -rm``; skipped
where user namespaces are not allowed): a real ENOSPC, which SQLite reports as
"database or disk is full" (SQLITE_FULL). A file-size limit (``RLIMIT_FSIZE``;
Python ignores SIGXFSZ, so the write fails instead of killing the process): the
page write at the limit fails with EFBIG, which SQLite reports as "disk I/O error"
(SQLITE_IOERR); that run is then continued by the same command.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.games.memory import GIB, meminfo_available, rlimit_available
from dpaudit.audit.storage.store import SQLITE_PATH_BYTES, ResultStore, StoreLock
from dpaudit.cli import main
from dpaudit.generators.plugins import check_claim

REPO = Path(__file__).resolve().parents[1]
RR = [
    "audit",
    "--generator",
    "randomized-response",
    "--synthetic-rows",
    "10",
    "--jobs",
    "1",
    "--batch-size",
    "10",
    "--quiet",
]


def _env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        **extra,
    }


def _dpaudit(
    *args: str, preexec: Any = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpaudit", *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
        check=False,
    )


def _one_line(err: str) -> str:
    assert err.count("\n") == 1, err
    assert "unexpected" not in err and "report it" not in err, err
    return err


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=96k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def _rr_config(**kw: Any) -> AuditConfig:
    base: dict[str, Any] = dict(
        generator="randomized-response",
        rounds=20,
        batch_size=10,
        jobs=1,
        synthetic_rows=10,
    )
    return AuditConfig(**{**base, **kw})


# ------------------------------------------------------------- the environment


def test_read_only_store_is_one_line_exit_2(tmp_path: Path) -> None:
    """An unfinished store made read-only, then the same command: exit 2 naming
    the store (was: unexpected OperationalError, exit 3). Read-only as root too: the
    store is bind-mounted read-only in a user namespace (chmod alone binds no root)."""
    out = tmp_path / "a"
    run_audit(_rr_config(), out_dir=out)
    (out / "result.json").unlink()  # unfinished: the same command continues it
    argv = [*RR, "--rounds", "20", "--out", str(out)]
    store = out / ResultStore.FILENAME
    if _unshare_works():
        script = (
            f'mount --bind "{store}" "{store}" && '
            f'mount -o remount,bind,ro "{store}" && '
            f'exec "{sys.executable}" -m dpaudit "$@"'
        )
        done = subprocess.run(
            ["unshare", "-rm", "sh", "-c", script, "sh", *argv],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    elif os.geteuid() != 0:
        store.chmod(0o444)
        done = _dpaudit(*argv)
        store.chmod(0o644)
    else:
        pytest.skip("root without user namespaces: no read-only store to make")
    assert done.returncode == 2, done.stderr
    err = _one_line(done.stderr)
    assert "cannot be written (attempt to write a readonly database)" in err
    assert "chmod u+w" in err and str(store) in err
    assert not (out / "result.json").exists()


@pytest.mark.parametrize(
    "how", ["tmpfs", pytest.param("fsize", marks=pytest.mark.slow)]
)
def test_full_disk_is_one_line_exit_3_and_the_same_command_continues(
    tmp_path: Path, how: str
) -> None:
    """A disk that fills during the audit: exit 3, one line saying so and how to go
    on (was: "unexpected OperationalError ... report it"). With the limit lifted the
    same command finishes the audit, with the result of an uninterrupted run."""
    argv = [*RR, "--rounds", "60"]
    if how == "tmpfs":
        if not _unshare_works():
            pytest.skip("user namespaces (unshare -rm) not allowed here")
        mount = tmp_path / "disk"
        mount.mkdir()
        script = (
            f'mount -t tmpfs -o size=96k tmpfs "{mount}" && '
            f'"{sys.executable}" -m dpaudit "$@"; echo "rc=$?"; '
            f'ls "{mount}/a"'
        )
        done = subprocess.run(
            ["unshare", "-rm", "sh", "-c", script, "sh", *argv, "--out", f"{mount}/a"],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert "rc=3" in done.stdout, (done.stdout, done.stderr)
        assert "result.json" not in done.stdout  # nothing half-written
        err = _one_line(done.stderr)
        assert "the disk is full" in err and "(database or disk is full)" in err
        return
    out = tmp_path / "a"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    done = _dpaudit(*argv, "--out", str(out), preexec=limit)
    assert done.returncode == 3, done.stderr
    err = _one_line(done.stderr)
    assert "failed (disk I/O error)" in err and "file-size limit (ulimit -f)" in err
    assert "run the same command again" in err
    assert not (out / "result.json").exists()
    with ResultStore(out) as store:
        assert 0 < store.count_rounds() < 120  # stopped part-way, batches kept
    again = _dpaudit(*argv, "--out", str(out))
    assert again.returncode == 0, again.stderr
    whole = tmp_path / "whole"
    run_audit(_rr_config(rounds=60), out_dir=whole)

    def strip(p: Path) -> dict[str, Any]:
        doc = json.loads((p / "result.json").read_text())
        return {k: v for k, v in doc.items() if k not in ("timing", "config")}

    assert strip(out) == strip(whole)


@pytest.mark.parametrize("size", [SQLITE_PATH_BYTES, 4200])
def test_out_longer_than_sqlite_opens_is_refused_before_anything(
    capsys, tmp_path: Path, size: int
) -> None:
    """An --out whose store path SQLite cannot open, up to beyond PATH_MAX (was:
    unexpected OperationalError "unable to open database file"): exit 2, nothing
    created."""
    parts = ["x" * 200] * (size // 200 + 1)
    out = tmp_path.joinpath(*parts)
    code, err = _cli(capsys, *RR, "--rounds", "20", "--out", str(out))
    assert code == 2
    assert "is too long for the audit's SQLite store" in _one_line(err)
    assert f"at most {SQLITE_PATH_BYTES}" in err
    assert not (tmp_path / parts[0]).exists()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "a"
    run_audit(_rr_config(), out_dir=out)
    return out


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["report", "{dir}", "--out", "-"], "the report (`--out -`)"),
        (
            ["fit", "--generator", "randomized-response", "--out", "-"],
            "the synthetic CSV (`--out -`)",
        ),
    ],
)
def test_closed_standard_output_is_one_line_exit_3(
    finished: Path, argv: list[str], what: str
) -> None:
    """`--out -` with standard output closed (`>&-`; was: unexpected
    AttributeError): exit 3, naming it and --out FILE."""
    args = [a.replace("{dir}", str(finished)) for a in argv]
    done = _dpaudit(*args, preexec=lambda: os.close(1))
    assert done.returncode == 3, done.stderr
    err = _one_line(done.stderr)
    assert f"standard output is closed, so {what} cannot be written" in err
    assert "--out FILE" in err


def test_memory_plan_sees_the_address_space_limit(tmp_path: Path) -> None:
    """Under `ulimit -v` the memory plan refuses what the limit cannot hold, naming
    the limit it used (was: MemAvailable alone, an out-of-memory error deep in the
    run). 100,000 rounds need about 2.3 GiB for the rounds alone: above the 1.5 GiB
    limit, below the memory free here."""
    name, flag = "RLIMIT_AS", "-v"
    free = meminfo_available()
    if free is not None and free < 4 * GIB:
        pytest.skip("less than 4 GiB free: MemAvailable would be the lower limit")
    cap = int(1.5 * GIB)

    def limit() -> None:
        resource.setrlimit(getattr(resource, name), (cap, cap))

    out = tmp_path / "a"
    done = _dpaudit(*RR, "--rounds", "100000", "--out", str(out), preexec=limit)
    assert done.returncode == 2, done.stderr
    err = _one_line(done.stderr)
    assert "`rounds` = 100000 needs about" in err
    assert f"(the {name} limit (ulimit {flag}) of 1.5 GiB" in err, err
    assert not out.exists()


def test_data_limit_is_read_and_named() -> None:
    """`ulimit -d` (RLIMIT_DATA) is read the same way (set here to a finite value
    above any use, and restored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = 2**40 if hard == resource.RLIM_INFINITY else min(hard, 2**40)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        limit = rlimit_available()
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    assert limit is not None
    if "RLIMIT_DATA" in limit.source:  # RLIMIT_AS, when set lower, wins
        assert limit.source.startswith("the RLIMIT_DATA limit (ulimit -d) of ")
        assert 0 < limit.bytes <= cap


# ----------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--config", "/dev/zero"], "`--config` '/dev/zero' is a character device"),
        (
            ["--dataset", "{csv}", "--domain", "/dev/urandom"],
            "domain file '/dev/urandom' is a character device",
        ),
        (["--dataset", "/dev/zero", "--domain", "{domain}"], "is a device, not a file"),
    ],
)
def test_devices_as_input_files_are_refused(
    capsys, tmp_path: Path, argv: list[str], words: str
) -> None:
    """`--config /dev/zero`, `--domain /dev/urandom` (was: MemoryError, exit 3):
    refused unread, exit 2."""
    csv = tmp_path / "t.csv"
    csv.write_text("a\n1\n2\n3\n")
    domain = tmp_path / "d.json"
    domain.write_text(
        json.dumps(
            {"columns": [{"name": "a", "kind": "continuous", "lower": 0, "upper": 5}]}
        )
    )
    args = [a.format(csv=csv, domain=domain) for a in argv]
    code, err = _cli(capsys, "audit", *args, "--out", str(tmp_path / "o"))
    assert code == 2
    assert words in _one_line(err)
    assert not (tmp_path / "o").exists()


def test_a_policy_from_a_device_is_refused(capsys) -> None:
    code, err = _cli(capsys, "check", "--policy", "/dev/zero")
    assert code == 2 and "`--policy` '/dev/zero' is a character device" in err


def test_config_from_a_pipe_is_still_read(capsys, tmp_path: Path) -> None:
    """A pipe (`--config <(...)`) is bounded by the read limit, not refused: its
    TOML is read (here a bad value, refused as such)."""
    read, write = os.pipe()
    os.write(write, b"rounds = 'x'\n")
    os.close(write)
    try:
        code, err = _cli(capsys, "audit", "--config", f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert code == 2 and "`rounds` in" in err, err


def test_budget_as_a_plugin_option_is_one_line(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--option epsilon=5` (was: unexpected TypeError, multiple values for
    'epsilon'): exit 2, naming --epsilon; for a plug-in, a built-in and `fit`."""
    (tmp_path / "budget_plugin.py").write_text(
        "class Gen:\n    def __init__(self, *, epsilon, delta, **options):\n"
        "        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for argv in (
        ["audit", "--generator", "budget_plugin:Gen", "--option", "epsilon=5"],
        ["audit", "--option", "delta=0.1"],
        ["fit", "--generator", "budget_plugin:Gen", "--option", "epsilon=5"],
    ):
        out = tmp_path / "o"
        code, err = _cli(capsys, *argv, "--out", str(out))
        key, value = argv[-1].split("=")
        assert code == 2, err
        assert (
            f"`--option {key}={value}`: {key} is set with --{key}, not as a "
            f"generator option; pass --{key} {value} instead." in _one_line(err)
        )
        assert not out.exists()


def test_bad_policy_default_is_refused_before_any_audit(capsys, tmp_path: Path) -> None:
    """`[defaults] rounds = "many"` (was: ignored where each audit sets its own
    rounds, INCONCLUSIVE exit 4): the policy is refused, exit 2, nothing run."""
    policy = tmp_path / "p.toml"
    policy.write_text(
        '[defaults]\nrounds = "many"\n[[audit]]\ngenerator = "randomized-response"\n'
        "rounds = 20\n"
    )
    out = tmp_path / "o"
    code, err = _cli(capsys, "check", "--policy", str(policy), "--out", str(out))
    assert code == 2
    assert "[defaults]: `rounds` must be an integer >= 5. Got 'many'." in err
    assert not out.exists()


def test_contradictory_result_is_refused_by_report(
    capsys, finished: Path, tmp_path: Path
) -> None:
    """A hand-edited verdict its numbers contradict (eps_emp 99 above the claim,
    CONSISTENT): no report, exit 2, one line naming the file and the rule's verdict;
    the same result unedited renders."""
    edited = tmp_path / "edited"
    shutil.copytree(finished, edited)
    doc = json.loads((edited / "result.json").read_text())
    doc.update(eps_emp=99.0, verdict="CONSISTENT")
    (edited / "result.json").write_text(json.dumps(doc))
    code, err = _cli(capsys, "report", str(edited))
    assert code == 2
    assert "its verdict CONSISTENT contradicts its numbers (eps_emp 99" in _one_line(
        err
    )
    assert "the verdict rule gives VIOLATION" in err
    assert not (edited / "report.html").exists()
    code, err = _cli(capsys, "report", str(finished), "--out", str(tmp_path / "r.md"))
    assert code == 0, err


# ------------------------------------------------------------- two runs, one folder


def test_resume_and_force_while_another_run_writes_are_refused_at_once(
    capsys, finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--resume DIR` and `--force --out DIR` while another run holds DIR: refused
    like a second writer, before the stored audit is read or the memory plan loads
    the table (was: the lock was taken only after both, so a run started while the
    other wrote could find it finished and exit 0 without a word)."""
    out = tmp_path / "a"
    shutil.copytree(finished, out)

    def not_reached(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read before the lock was checked")

    monkeypatch.setattr("dpaudit.audit.games.two_world.game.check_memory", not_reached)
    monkeypatch.setattr("dpaudit.audit.storage.outdir.load_stored", not_reached)
    before = sorted(p.name for p in out.iterdir())
    with StoreLock(out):
        for argv in (
            ["audit", "--resume", str(out)],
            [*RR, "--rounds", "20", "--force", "--out", str(out)],
        ):
            code, err = _cli(capsys, *argv)
            assert code == 2
            assert (
                f"{str(out)!r} is in use by another dpaudit run (pid {os.getpid()})"
                in (_one_line(err))
            )
        assert sorted(p.name for p in out.iterdir()) == sorted(
            [*before, StoreLock.FILENAME]
        )


# ------------------------------------------------------------------ plug-in claims


def test_numpy_numbers_in_a_claim_are_python_numbers() -> None:
    """`numpy.float32(1.0)`, `numpy.int64(1)` are numbers (was: refused as
    breaking the contract); stored as Python's."""
    claim = check_claim(
        {
            "epsilon": np.float32(1.0),
            "delta": np.float64(1e-5),
            "iterations": np.int64(3),
            "final_epsilon": np.float32(0.5),
        },
        "my:Gen",
    )
    assert type(claim.epsilon) is float and claim.epsilon == 1.0
    assert type(claim.iterations) is int and claim.iterations == 3
    assert type(claim.extra["final_epsilon"]) is float
    json.dumps(claim.to_json(), allow_nan=False)
    assert check_claim({"epsilon": np.int64(1)}, "my:Gen").epsilon == 1.0


def test_numpy_claim_crosses_from_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through a plug-in's worker process, into the store."""
    (tmp_path / "numpy_claim.py").write_text(
        "import numpy as np\n\n"
        "class Gen:\n"
        "    def __init__(self, *, epsilon, delta):\n"
        "        self.epsilon = epsilon\n\n"
        "    def fit(self, data, *, domain, seed):\n"
        "        self.data = data\n"
        "        self.privacy_claim = {'epsilon': np.float32(self.epsilon),\n"
        "                              'delta': np.float64(0.0), 'accountant': 'own',\n"
        "                              'iterations': np.int64(3)}\n"
        "        return self\n\n"
        "    def sample(self, n, *, seed):\n"
        "        return self.data.sample(n, replace=True, random_state=seed % 2**32\n"
        "                                ).reset_index(drop=True)\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    out = tmp_path / "a"
    run_audit(
        AuditConfig(generator="numpy_claim:Gen", rounds=5, attack="querybased", jobs=1),
        out_dir=out,
    )
    with ResultStore(out) as store:
        claims = store.claims()
    assert {(c["epsilon"], c["iterations"]) for c in claims.values()} == {(1.0, 3)}
