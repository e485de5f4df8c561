"""The foreign worker: a long-lived child process that imports a plug-in and fits and
samples it on request (docs/design.md, "Foreign generators").

Run as a script (``python worker.py``), possibly under another interpreter: it
imports only the standard library, NumPy, pandas, the plug-in's own module, and the
three stdlib/NumPy/pandas-only modules :mod:`wire`, :mod:`contract` and
:mod:`columnar` of the same package (found through ``dpaudit`` on the path the
parent prepares). Requests and replies cross the pipes as JSON headers and raw array
bytes (:mod:`wire`), never pickle.

Every failure of the plug-in, ``SystemExit`` and any other ``BaseException`` included,
is caught and reported as a reply; what cannot be caught (``os._exit``, a crash, a hang,
unbounded memory) the parent sees as a closed pipe, a timeout or a memory reading and
reports itself. The worker dies with its parent (``PR_SET_PDEATHSIG`` on Linux, and a
thread watching the parent's pid elsewhere).
"""

from __future__ import annotations

import os
import sys

# The script's own folder is not a place to import plug-ins from: the working
# directory is (as for ``python -m dpaudit``), then PYTHONPATH, then ``dpaudit``.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(
    os.path.abspath(__file__)
):
    sys.path[0] = os.getcwd()
# The parent's own folders (not its installation's): plug-ins importable there are
# importable here.
for _folder in reversed(
    __import__("json").loads(os.environ.get("DPAUDIT_WORKER_SYSPATH") or "[]")
):
    if _folder not in sys.path:
        sys.path.insert(1, _folder)
_ROOT = os.environ.get("DPAUDIT_WORKER_PATH")
if _ROOT and _ROOT not in sys.path:
    sys.path.append(_ROOT)

import importlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpaudit.generators.foreign import columnar, wire  # noqa: E402
from dpaudit.generators.foreign.contract import (  # noqa: E402
    contract_problem,
    init_keywords,
    python_number,
    supports_public_seed,
)

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """The kernel kills this process when its parent dies (Linux); elsewhere, and as
    a second line, a thread polls the parent's pid."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="dpaudit-parent-watch", daemon=True).start()


def _describe_exit(code: Any) -> str:
    return f"called sys.exit({code!r})"


def _failure(what: str, err: BaseException) -> dict[str, Any]:
    """The reply for a plug-in call that raised (``SystemExit`` included)."""
    if isinstance(err, SystemExit):
        did = f"its `{what}` {_describe_exit(err.code)}"
    else:
        did = f"its `{what}` raised {type(err).__name__}: {' '.join(str(err).split())}"
    return {
        "error": did,
        "traceback": "".join(traceback.format_exception(err)),
        # What the parent needs to tell bad input to one of dpaudit's adapters from
        # a failure of the adapter or its library (generator.py).
        "error_kinds": [cls.__name__ for cls in type(err).__mro__],
        "error_message": " ".join(str(err).split()),
        "error_step": what,
    }


def seed_globals(seed: int) -> None:
    """Seeds the global generators a library may draw from (``random``,
    ``numpy.random`` and torch's, where the plug-in imported torch) from the call's
    privacy ``seed``, so a plug-in drawing from global state is reproducible."""
    state = np.random.SeedSequence([int(seed), 0x676C6F62]).generate_state(4)
    random.seed(int.from_bytes(state.tobytes(), "little"))
    np.random.seed(state)  # noqa: NPY002 - the plug-in's global state, on purpose
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed((int(state[0]) << 31) ^ int(state[1]))


def input_change(
    original: pd.DataFrame, given: pd.DataFrame, domain_before: str, domain: Any
) -> str | None:
    """What a plug-in's ``fit`` changed in its arguments: ``given`` (the copy of
    ``original`` it got) and ``domain`` (``domain_before`` as JSON), in words; None
    when both are as they were."""
    if not isinstance(given, pd.DataFrame):
        return "its table is no longer a DataFrame"
    if list(given.columns) != list(original.columns):
        return f"the table's columns, {list(original.columns)} -> {list(given.columns)}"
    if len(given) != len(original) or not given.index.equals(original.index):
        return f"the table's rows ({len(original)} -> {len(given)}) or its index"
    for name in original.columns:
        if given[name].dtype != original[name].dtype:
            return (
                f"the dtype of column {name!r}, {original[name].dtype} -> "
                f"{given[name].dtype}"
            )
        if not given[name].equals(original[name]):
            return f"values of column {name!r}"
    try:
        after = json.dumps(domain, sort_keys=True)
    except (TypeError, ValueError):
        after = ""
    if after != domain_before:
        return "the `domain` dict"
    return None


class Worker:
    """The worker's state: imported classes, cached tables, fitted models."""

    def __init__(self) -> None:
        self.classes: dict[str, Any] = {}
        self.data: dict[str, pd.DataFrame] = {}
        self.models: dict[int, Any] = {}

    # ------------------------------------------------------------------ import
    def load(
        self, plugin: str, name: str, *, entry_point: bool = False
    ) -> tuple[Any, dict[str, Any] | None]:
        if plugin in self.classes:
            return self.classes[plugin], None
        cls, failed = self._load(plugin, name)
        if failed is not None and entry_point and "contract" not in failed["message"]:
            cause = failed["message"].split(": ", 1)[-1]
            failed["message"] = (
                f"generator {name!r}: its entry point {plugin!r} cannot be loaded "
                f"({cause.rstrip('.')}). Reinstall the package that provides it, or fix "
                "its entry point."
            )
        return cls, failed

    def _load(self, plugin: str, name: str) -> tuple[Any, dict[str, Any] | None]:
        module_name, _, attr = plugin.partition(":")
        if not module_name or not attr:
            return None, {
                "message": f"generator {name!r}: a plug-in is named "
                "package.module:Class."
            }
        try:
            module = importlib.import_module(module_name)
        except (ImportError, ValueError) as err:
            return None, {
                "message": f"generator {name!r}: cannot import module "
                f"{module_name!r} ({err}). Install it or add it "
                "to PYTHONPATH."
            }
        except BaseException as err:
            reply = _failure("module", err)
            did = reply["error"].replace("its `module` ", "", 1)
            return None, {
                "message": f"generator {name!r}: importing its module "
                f"{module_name!r} {did}",
                **reply,
            }
        obj: Any = module
        try:
            for part in attr.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            return None, {
                "message": f"generator {name!r}: module {module_name!r} has "
                f"no {attr!r}."
            }
        problem = contract_problem(obj, name)
        if problem is not None:
            return None, {"message": problem}
        self.classes[plugin] = obj
        return obj, None

    def describe(self, header: dict[str, Any]) -> dict[str, Any]:
        cls, failed = self.load(
            header["plugin"],
            header["name"],
            entry_point=bool(header.get("entry_point")),
        )
        if failed is not None:
            return failed
        # The keywords its __init__ takes: the parent refuses an option the class
        # does not take before anything trains (None: it takes **kwargs).
        return {
            "public_seed": supports_public_seed(cls),
            "keywords": init_keywords(cls),
            # Canary teachers (--teachers canary): the class takes `canary`.
            "canary_teachers": getattr(cls, "canary_teachers", False) is True,
        }

    # ------------------------------------------------------------- fit, sample
    def fit(self, header: dict[str, Any], blobs: list[bytes]) -> dict[str, Any]:
        cls, failed = self.load(header["plugin"], header["name"])
        if failed is not None:
            return failed
        if "frame" in header:
            if header.get("reset_data"):
                self.data.clear()
            self.data[header["data"]] = wire.decode_frame(header["frame"], blobs)
        data = self.data[header["data"]]
        seeds = {k: int(v) for k, v in header["seeds"].items()}
        seed_globals(seeds["seed"])
        try:
            inner = cls(**header["kwargs"])
        except BaseException as err:
            return _failure("__init__", err)
        given, domain = data.copy(), header["domain"]
        before = json.dumps(domain, sort_keys=True) if header.get("check_input") else ""
        try:
            fitted = inner.fit(given, domain=domain, **seeds)
        except BaseException as err:
            return _failure("fit", err)
        if fitted is not None:
            inner = fitted
        changed = None
        if header.get("check_input"):
            # `dpaudit check-generator`: did fit change the table or the domain it got?
            changed = input_change(data, given, before, domain)
        self.models[int(header["model"])] = inner
        claim = getattr(inner, "privacy_claim", None)
        if not isinstance(claim, dict):
            return {"claim_type": type(claim).__name__}
        claim = {key: python_number(value) for key, value in claim.items()}
        for key, value in claim.items():
            try:
                json.dumps(value, allow_nan=True)
                ok = isinstance(key, str)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                return {
                    "claim_error": repr(key),
                    "claim_value_type": type(value).__name__,
                }
        # The worker's Python, for every report's versions line (the adapters name
        # their library's installed version in the claim's `library` key).
        return {
            "claim": {str(k): v for k, v in claim.items()},
            "python": sys.version.split()[0],
            **({} if changed is None else {"input_changed": changed}),
        }

    def sample(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
        model = self.models.get(int(header["model"]))
        if model is None:
            return {"message": "the worker holds no such model (it was dropped)"}, []
        seeds = {k: int(v) for k, v in header["seeds"].items()}
        seed_globals(seeds["seed"])
        try:
            out = model.sample(int(header["n"]), **seeds)
        except BaseException as err:
            return _failure("sample", err), []
        if not isinstance(out, pd.DataFrame):
            return {"release_type": type(out).__name__}, []
        spec, blobs = wire.encode_frame(out)
        return {"frame": spec}, blobs

    def transcript(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
        """The fitted model's ``privacy_transcript``: its well-shaped records' cells
        and answers as arrays (raw bytes), the rest plain JSON (``columnar.py``;
        ``None``: it states none); the parent checks it (``transcript.py``)."""
        model = self.models.get(int(header["model"]))
        if model is None:
            return {"message": "the worker holds no such model (it was dropped)"}, []
        try:
            raw, arrays = columnar.split(getattr(model, "privacy_transcript", None))
            json.dumps(raw, allow_nan=False)
        except (TypeError, ValueError) as err:
            return {"transcript_error": " ".join(str(err).split())}, []
        except BaseException as err:
            return _failure("privacy_transcript", err), []
        return {"transcript": raw}, [np.ascontiguousarray(a).tobytes() for a in arrays]

    def handle(
        self, header: dict[str, Any], blobs: list[bytes]
    ) -> tuple[dict[str, Any], list[bytes]]:
        for model in header.get("drop", ()):
            self.models.pop(int(model), None)
        op = header.get("op")
        if op == "describe":
            return self.describe(header), []
        if op == "fit":
            return self.fit(header, blobs), []
        if op == "sample":
            return self.sample(header)
        if op == "transcript":
            return self.transcript(header)
        if op == "ping":
            return {
                "pid": os.getpid(),
                "python": sys.version.split()[0],
                "modules": sorted(sys.modules),
            }, []
        return {"message": f"unknown request {op!r}"}, []


def main() -> None:
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    # The plug-in's own printing goes to the worker's log (stderr), never into the
    # protocol; it reads nothing from stdin.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    # Ctrl-C is the parent's to handle (it stops this worker).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash writes no core
    except (ImportError, ValueError, OSError):
        pass
    _die_with_parent(int(os.environ.get("DPAUDIT_WORKER_PARENT", os.getppid())))
    worker = Worker()
    wire.write_message(
        proto_out,
        {"ready": True, "pid": os.getpid(), "python": sys.version.split()[0]},
    )
    while True:
        try:
            header, blobs = wire.read_message(proto_in)
        except EOFError:
            os._exit(0)
        reply, out = worker.handle(header, blobs)
        wire.write_message(proto_out, reply, out)


if __name__ == "__main__":
    main()
