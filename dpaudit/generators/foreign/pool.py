"""The parent's side of foreign workers: spawning, reuse, limits, stopping.

One worker process per thread that fits (a joblib worker thread, the main thread),
reused for every fit that thread makes and handed to another thread when its own
ends, so a fast plug-in pays one process start per thread, not per fit. Each request
waits for its reply with a deadline (``fit_timeout``) while polling the worker's
resident memory (``max_memory``, read from ``/proc/PID/statm``); a worker over either
limit, or one whose pipe closes (``os._exit``, a crash), is killed with its process
group and the failure named in one :class:`~dpaudit.errors.PluginError`.

No worker outlives its parent: workers run in their own session (Ctrl-C at a terminal
reaches only the parent, which kills them: :func:`stop_all`), are started from one
long-lived thread so that ``PR_SET_PDEATHSIG`` (set by the worker) fires only when
the process dies, and are closed at exit.

Why poll RSS rather than ``RLIMIT_AS``: the address-space limit counts virtual
memory, which NumPy, torch and glibc reserve far beyond what they use (torch alone maps
gigabytes at import), so a limit low enough to matter breaks healthy libraries with
``MemoryError`` in odd places; resident memory is what exhausts a machine. Polling every
50 ms lets a fast allocation overshoot by what it allocates in that time.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import hashlib
import itertools
import json
import os
import platform
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators.foreign import wire
from dpaudit.generators.foreign.options import WorkerOptions

POLL_SECONDS = 0.05
START_TIMEOUT = 120.0
WORKER_SCRIPT = Path(__file__).with_name("worker.py")
PACKAGE_DIR = Path(__file__).resolve().parents[2]  # the `dpaudit` package
DATA_CACHE = 8
"""Tables a worker keeps (an audit sends two: D and D with the target)."""

WorkerKey = tuple[str, str, str, str]


class WorkerGone(Exception):
    """The worker process ended while a request was being answered."""


# -------------------------------------------------------------------- spawning


class _Spawner:
    """Starts every worker from one long-lived thread: ``PR_SET_PDEATHSIG`` fires when
    the *thread* that created a process ends, so workers created by short-lived
    joblib threads would die with them."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[list[str], dict[str, Any], Future[Any]]] = (
            queue.Queue()
        )
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            args, kwargs, future = self.requests.get()
            try:
                future.set_result(subprocess.Popen(args, **kwargs))
            except BaseException as err:
                future.set_exception(err)

    def popen(self, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._loop, daemon=True, name="dpaudit-foreign-spawner"
                )
                self.thread.start()
        future: Future[Any] = Future()
        self.requests.put((args, kwargs, future))
        process: subprocess.Popen[bytes] = future.result()
        return process


_SPAWNER = _Spawner()
_PATH_DIR: list[str] = []
_PATH_LOCK = threading.Lock()


def _worker_path() -> str:
    """A folder holding only a link to the ``dpaudit`` package: the worker imports
    ``dpaudit`` (and ``dpaudit.adapters``) from it, and nothing else of this
    environment (its site-packages would defeat ``--python``)."""
    with _PATH_LOCK:
        if not _PATH_DIR:
            folder = tempfile.mkdtemp(prefix="dpaudit-worker-path-")
            os.symlink(PACKAGE_DIR, os.path.join(folder, "dpaudit"))
            _PATH_DIR.append(folder)
            atexit.register(_remove_path_dir, folder)
        return _PATH_DIR[0]


def _remove_path_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(folder, "dpaudit"))
        os.rmdir(folder)


_CHECKED: dict[str, str | None] = {}


def check_python(python: str) -> None:
    """Refuses an interpreter that does not exist or cannot import NumPy and pandas
    (checked once per path and process).

    Raises:
        InvalidParameterError: one line naming the path and the fix.
    """
    if python not in _CHECKED:
        problem = None
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            problem = "is not an executable file"
        else:
            try:
                done = subprocess.run(
                    [python, "-c", "import numpy, pandas"],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
            except (OSError, subprocess.TimeoutExpired) as err:
                problem = f"cannot be run ({type(err).__name__}: {err})"
            else:
                if done.returncode != 0:
                    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
                    last = (
                        lines[-1].strip() if lines else f"exit code {done.returncode}"
                    )
                    problem = f"cannot import numpy and pandas ({last})"
        _CHECKED[python] = problem
    problem = _CHECKED[python]
    if problem is not None:
        raise InvalidParameterError(
            f"`--python` {python!r} {problem}; name an interpreter with numpy and "
            "pandas installed (and the generator's library)."
        )


_USER_PATHS: dict[tuple[str, ...], str] = {}
#: The Python version of each interpreter a worker of this process started under
#: (from its first message).
_VERSIONS: dict[str, str] = {}


def python_section(python: str | None) -> str | dict[str, str]:
    """The result's ``python``: the version of the Python that ran the audit, or,
    when a foreign generator's worker ran under another interpreter (``--python``
    ``python``), ``{"audit": version, "worker": version}``. The worker's version is
    the one its first message stated (a resumed audit that started no worker
    states the audit's alone).

    >>> python_section(None) == platform.python_version()
    True
    """
    audit = platform.python_version()
    worker = None if python is None else _VERSIONS.get(python)
    return audit if worker is None else {"audit": audit, "worker": worker}


def user_paths() -> str:
    """The folders of this process's ``sys.path`` that are not an installation's
    (not under ``sys.prefix``, ``sys.base_prefix`` or a site-packages folder), as
    JSON: a plug-in importable here (a folder on ``PYTHONPATH``, the working
    directory, one a script inserted) is importable in the worker, and nothing of
    this environment's installed packages reaches another interpreter."""
    current = tuple(sys.path)
    found = _USER_PATHS.get(current)
    if found is None:
        import site

        installed = {
            os.path.realpath(p)
            for p in (
                sys.prefix,
                sys.base_prefix,
                sys.exec_prefix,
                *site.getsitepackages(),
                site.getusersitepackages(),
            )
            if p
        }
        folders = []
        for entry in current:
            path = os.path.realpath(entry or os.getcwd())
            if not os.path.isdir(path) or path in folders:
                continue
            if any(path == i or path.startswith(i + os.sep) for i in installed):
                continue
            folders.append(path)
        found = _USER_PATHS[current] = json.dumps(folders)
    return found


def worker_key(options: WorkerOptions) -> WorkerKey:
    """Workers are shared by the settings their process depends on."""
    return (
        options.python or sys.executable,
        os.environ.get("PYTHONPATH", ""),
        os.getcwd(),
        user_paths(),
    )


# ---------------------------------------------------------------------- workers


class Worker:
    """One worker process and its pipes; requests are serialised by a lock."""

    def __init__(self, key: WorkerKey) -> None:
        python, pythonpath, cwd, paths = key
        if python != sys.executable:
            check_python(python)
        self.key = key
        self.lock = threading.Lock()
        self.drops: list[int] = []
        self.data_ids: set[str] = set()
        self.models = itertools.count()
        self.stopped = False
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept open for the worker
            prefix="dpaudit-worker-", suffix=".log", delete=False
        )
        self.log_path = Path(log.name)
        env = {
            **os.environ,
            "DPAUDIT_WORKER_PATH": _worker_path(),
            "DPAUDIT_WORKER_PARENT": str(os.getpid()),
            "DPAUDIT_WORKER_SYSPATH": paths,
        }
        env.setdefault("OMP_NUM_THREADS", "1")  # one core per worker, like --jobs
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        try:
            self.process = _SPAWNER.popen(
                [python, str(WORKER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as err:
            log.close()
            raise InvalidParameterError(
                f"`--python` {python!r} cannot start the foreign worker ({err})."
            ) from err
        finally:
            log.close()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.buffer = wire.MessageBuffer()
        _ALL.add(self)
        try:
            ready, _ = self._wait(
                deadline=time.monotonic() + START_TIMEOUT, memory=None
            )
            if isinstance(ready.get("python"), str):
                _VERSIONS[python] = ready["python"]
        except WorkerGone as err:
            raise InvalidParameterError(
                f"the foreign worker did not start under {python!r} "
                f"({self._exit_text()}{self._last_output()})."
            ) from err

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    @property
    def alive(self) -> bool:
        return not self.stopped and self.process.poll() is None

    def rss_mib(self) -> float:
        """The worker's resident memory (0 where it cannot be read)."""
        try:
            pages = int(Path(f"/proc/{self.pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            return 0.0
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20

    def kill(self) -> None:
        """Kills the worker and every process of its session (plug-ins may start
        their own), then reaps it."""
        self.stopped = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()
        _ALL.discard(self)
        with contextlib.suppress(OSError):
            self.log_path.unlink()

    def close(self) -> None:
        """Ends an idle worker (its stdin closed, then killed if it lingers)."""
        with contextlib.suppress(Exception):
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=2)
        self.kill()

    def _exit_text(self) -> str:
        code = self.process.poll()
        if code is None:
            return "it stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker process was killed by {name}"
        return f"the worker process exited with code {code}"

    def _last_output(self) -> str:
        try:
            lines = [
                ln.strip()
                for ln in self.log_path.read_text(errors="replace").splitlines()
                if ln.strip()
            ]
        except OSError:
            return ""
        return f"; its last output: {lines[-1][:200]!r}" if lines else ""

    def _wait(
        self, *, deadline: float | None, memory: float | None
    ) -> tuple[dict[str, Any], list[bytes]]:
        """The next reply; raises :class:`WorkerGone` on a closed pipe,
        ``TimeoutError`` past ``deadline`` and ``MemoryError`` above ``memory`` MiB."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            found = self.buffer.message()
            if found is not None:
                return found
            if self.stopped:
                raise WorkerGone("stopped")
            wait = POLL_SECONDS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                wait = min(wait, left)
            ready, _, _ = select.select([fd], [], [], wait)
            if ready:
                try:
                    chunk = os.read(fd, 1 << 20)
                except OSError:
                    chunk = b""
                if not chunk:
                    with contextlib.suppress(Exception):
                        self.process.wait(timeout=5)
                    raise WorkerGone("pipe closed")
                self.buffer.feed(chunk)
            elif memory is not None and self.rss_mib() > memory:
                raise MemoryError

    def request(
        self,
        header: dict[str, Any],
        blobs: list[bytes] | tuple[bytes, ...] = (),
        *,
        what: str,
        name: str,
        options: WorkerOptions,
    ) -> tuple[dict[str, Any], list[bytes]]:
        """Sends one request and returns the reply.

        Raises:
            PluginError: the worker exceeded a limit, died, or was stopped (it is
                killed; the message names the plug-in, the call and what happened).
        """
        label = what if " " in what else f"its `{what}`"
        with self.lock:
            _refuse_while_stopping(name)
            if not self.alive:
                raise PluginError(
                    f"generator {name!r}: its worker process is gone "
                    f"({self._exit_text()}); the model it held is lost."
                )
            drops, self.drops = self.drops, []
            message = wire.pack({**header, "drop": drops}, blobs)
            timeout = options.fit_timeout
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                assert self.process.stdin is not None
                try:
                    self.process.stdin.write(message)
                    self.process.stdin.flush()
                except (BrokenPipeError, OSError) as err:
                    raise WorkerGone("pipe closed") from err
                return self._wait(deadline=deadline, memory=options.memory_limit_mib())
            except TimeoutError:
                self.kill()
                raise PluginError(
                    f"generator {name!r}: {label} did not finish within "
                    f"--fit-timeout {timeout:g} s; its worker was stopped. Raise "
                    "--fit-timeout (key fit_timeout) if it needs longer, or fix the "
                    "plug-in."
                ) from None
            except MemoryError:
                used = self.rss_mib()
                self.kill()
                raise PluginError(
                    f"generator {name!r}: {label} used more than --max-memory "
                    f"{options.memory_limit_mib()} MiB ({used:.0f} MiB resident); its "
                    "worker was stopped. Raise --max-memory (key max_memory) if it "
                    "needs more, or fix the plug-in."
                ) from None
            except WorkerGone:
                stopped = self.stopped
                text = self._exit_text()
                last = self._last_output()
                self.kill()
                if stopped:
                    raise PluginError(
                        f"generator {name!r}: its worker was stopped during {label}."
                    ) from None
                raise PluginError(
                    f"generator {name!r}: {label} ended its worker process "
                    f"({text}: os._exit, a crash or a kill){last}. Fix the plug-in."
                ) from None
            except BaseException:
                # Interrupted (Ctrl-C, SIGTERM turned into an exception) with a
                # reply pending: the pipe's state is unknown, so the worker goes.
                self.kill()
                raise


_ALL: set[Worker] = set()
_IDLE: dict[WorkerKey, collections.deque[Worker]] = {}
_IDLE_LOCK = threading.Lock()
_LOCAL = threading.local()
MAX_IDLE = max(2, 2 * (os.cpu_count() or 1))


class _Lease:
    """A thread's hold on a worker; when the thread ends its thread-local storage,
    and with it this lease, is freed and the worker goes back to the idle pool."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        weakref.finalize(self, _check_in, worker).atexit = False


def _idle(key: WorkerKey) -> collections.deque[Worker]:
    with _IDLE_LOCK:
        return _IDLE.setdefault(key, collections.deque())


def _check_in(worker: Worker) -> None:
    if not worker.alive:
        return
    idle = _IDLE.get(worker.key)
    if idle is None or len(idle) >= MAX_IDLE:
        worker.close()
        return
    idle.append(worker)  # deque.append is atomic: safe from a finaliser


def worker_for_thread(options: WorkerOptions) -> Worker:
    """This thread's worker for ``options`` (taken from the idle pool or started)."""
    _refuse_while_stopping("plug-in")
    key = worker_key(options)
    leases: dict[WorkerKey, _Lease] | None = getattr(_LOCAL, "leases", None)
    if leases is None:
        leases = _LOCAL.leases = {}
    lease = leases.get(key)
    if lease is not None and lease.worker.alive:
        return lease.worker
    idle = _idle(key)
    worker = None
    while worker is None:
        try:
            candidate = idle.pop()
        except IndexError:
            break
        if candidate.alive:
            worker = candidate
    if worker is None:
        worker = Worker(key)
    leases[key] = _Lease(worker)
    return worker


_STOPPING = threading.Event()


def stop_all() -> None:
    """Kills every worker of this process (an interrupted or failed run): requests
    waiting on them fail at once with "its worker was stopped"."""
    for worker in list(_ALL):
        worker.kill()
    with _IDLE_LOCK:
        for idle in _IDLE.values():
            idle.clear()


@contextlib.contextmanager
def stopping() -> Iterator[None]:
    """Kills every worker (:func:`stop_all`) and starts no new one within: a thread
    that was about to fit when the run stopped fails at once instead of starting a
    worker that nobody would stop (the caller waits for its threads inside)."""
    _STOPPING.set()
    try:
        stop_all()
        yield
    finally:
        stop_all()
        _STOPPING.clear()


def _refuse_while_stopping(name: str) -> None:
    if _STOPPING.is_set():
        raise PluginError(
            f"generator {name!r}: the run is stopping; no new worker is started."
        )


def live_worker_pids() -> list[int]:
    """The pids of this process's live workers (for tests and benchmarks)."""
    return sorted(w.pid for w in list(_ALL) if w.alive)


def frame_id(header: dict[str, Any], blobs: list[bytes]) -> str:
    """A content hash of an encoded table (a worker caches tables by it)."""
    digest = hashlib.blake2b(
        json.dumps(header, sort_keys=True, default=str).encode(), digest_size=16
    )
    for blob in blobs:
        digest.update(blob)
    return digest.hexdigest()


atexit.register(stop_all)
