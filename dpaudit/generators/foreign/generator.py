"""A foreign generator: the generator protocol over a worker process.

:class:`ForeignGenerator` is what the registry builds for every plug-in
(``module:Class``, an entry point, an adapter of ``dpaudit.adapters``). Its ``fit``
and ``sample`` run in this thread's worker (:mod:`~dpaudit.generators.foreign.pool`),
the fitted model stays there, and only the claim (JSON) and the release (a table) come
back; both are checked here exactly as the in-process
:class:`~dpaudit.generators.plugins.PluginAdapter` checks them.

Seeds: as for the in-process adapter, ``seed`` from the privacy stream and, for a
plug-in that accepts it, ``public_seed`` from the public one. Before every ``fit``
and ``sample`` the worker seeds the global generators (``random``, ``numpy.random``,
torch's) from the call's ``seed`` (the privacy stream), so a library that draws from
global state is reproducible; global draws are treated as privacy randomness and are
never held fixed by ``public_seed`` (docs/plugins.md).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError, PluginError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.foreign import columnar, wire
from dpaudit.generators.foreign.options import WorkerOptions
from dpaudit.generators.foreign.pool import (
    DATA_CACHE,
    Worker,
    frame_id,
    worker_for_thread,
    worker_key,
)
from dpaudit.generators.foreign.transcript import (
    TRANSCRIPT_ATTRIBUTE,
    Measurement,
    check_transcript,
)
from dpaudit.generators.plugins import check_claim, check_release, plugin_seeds
from dpaudit.rng import Rngs

_DESCRIPTIONS: dict[tuple[Any, str, str, bool], dict[str, Any]] = {}
_DESCRIBE_LOCK = threading.Lock()
FIX = "Fix the plug-in (rerun with --debug for its traceback; see docs/plugins.md)."


class AdapterError(RuntimeError):
    """One of dpaudit's own adapters (``dpaudit.adapters``) or the library it wraps
    failed: dpaudit's fault to report (exit 3), never the user's plug-in to fix."""


def is_adapter(plugin: str) -> bool:
    """Whether ``plugin`` (``module:Class``) is one of dpaudit's own adapters
    (``dpaudit.adapters.FOREIGN_ADAPTERS``)."""
    from dpaudit.adapters import FOREIGN_ADAPTERS

    return plugin in FOREIGN_ADAPTERS.values()


def adapter_failure(name: str, plugin: str, what: str) -> AdapterError:
    """The error of a failure inside dpaudit's adapter ``plugin``: the CLI prints it
    as an unexpected failure (exit 3) with "rerun with --debug ... and report it"."""
    return AdapterError(
        f"generator {name!r}: dpaudit's adapter {plugin} failed: {what.rstrip('.')} "
        "(a fault of the adapter or of the library it wraps, not of your input or "
        "plug-in; the report should name the library's version, docs/adapters.md)"
    )


LIBRARY_INPUT = {
    "fit": (
        "Give it a larger table (--dataset-rows N on --dataset worst-case, or "
        "another --dataset) or other --option values"
    ),
    "sample": "Ask for another number of rows (--synthetic-rows; `dpaudit fit --rows`)",
}


def _adapter_error(
    reply: dict[str, Any], name: str, plugin: str, given: str = ""
) -> Exception:
    """The error of a failed reply from one of dpaudit's adapters: bad input (an
    adapter's own check, a library that is not installed, a ValueError the library
    raised on the table or the row count it was ``given``: a table too small for it)
    is the user's to fix (exit 2); anything else is dpaudit's (exit 3)."""
    kinds = reply.get("error_kinds") or []
    message = str(reply.get("error_message") or reply.get("error", "")).rstrip(".")
    if "AdapterInputError" in kinds:
        return InvalidParameterError(f"generator {name!r}: {message}.")
    step = reply.get("error_step")
    if "ValueError" in kinds and step in LIBRARY_INPUT:
        return InvalidParameterError(
            f"generator {name!r}: the library refused {given or 'its input'} "
            f"(its `{step}` raised {kinds[0]}: {message}). {LIBRARY_INPUT[step]}; "
            "if these look right, rerun with --debug and report it (docs/adapters.md)."
        )
    if "ImportError" in kinds:
        if "--python" not in message:
            message += (
                "; install the library and its dependencies in the interpreter that "
                "runs the worker, or pass --python PATH_TO_THAT_PYTHON (docs/adapters.md)"
            )
        return InvalidParameterError(f"generator {name!r}: {message}.")
    return adapter_failure(name, plugin, str(reply.get("error") or message))


def _limits_for_adapter(err: PluginError, name: str, plugin: str) -> Exception:
    """A worker failure (:mod:`pool`'s limits, a crash) of one of dpaudit's adapters,
    reworded: a limit the user set stays the user's to raise (exit 2), without the
    advice to fix a plug-in they did not write; a crash is dpaudit's (exit 3)."""
    text = str(err)
    for advice in (", or fix the plug-in.", " or fix the plug-in."):
        if text.endswith(advice):
            return PluginError(text[: -len(advice)] + ".")
    if text.endswith("Fix the plug-in."):
        return adapter_failure(name, plugin, text[: -len("Fix the plug-in.")])
    return err


def _raise(
    reply: dict[str, Any], name: str, plugin: str | None = None, given: str = ""
) -> None:
    """Raises the plug-in's failure a reply reports, if any (for one of dpaudit's
    adapters, :func:`_adapter_error`'s; ``given``: what the call was given, in
    words)."""
    adapter = plugin is not None and is_adapter(plugin)
    if "message" in reply:
        text = str(reply["message"])
        err: Exception = (
            adapter_failure(name, str(plugin), text) if adapter else PluginError(text)
        )
    elif "error" in reply:
        if adapter:
            err = _adapter_error(reply, name, str(plugin), given)
        else:
            err = PluginError(
                f"generator {name!r}: {str(reply['error']).rstrip('.')}. {FIX}"
            )
    else:
        return
    if reply.get("traceback"):
        err.add_note(
            "The plug-in's traceback (in its worker process):\n"
            + str(reply["traceback"])
        )
    raise err


def describe(
    plugin: str, name: str, options: WorkerOptions, *, entry_point: bool = False
) -> dict[str, Any]:
    """What the worker found importing ``plugin``: ``{"public_seed": bool}``
    (cached per worker settings and plug-in).

    Raises:
        PluginError: the module cannot be imported (or exits, crashes, hangs at
            import), or the class breaks the contract.
    """
    # Keyed by the name and how it was given too: a failure's message names them.
    key = (worker_key(options), plugin, name, entry_point)
    with _DESCRIBE_LOCK:
        found = _DESCRIPTIONS.get(key)
    if found is None:
        worker = worker_for_thread(options)
        try:
            found, _ = worker.request(
                {
                    "op": "describe",
                    "plugin": plugin,
                    "name": name,
                    "entry_point": entry_point,
                },
                what="importing its module",
                name=name,
                options=options,
            )
        except PluginError as err:
            if not is_adapter(plugin):
                raise
            raise _limits_for_adapter(err, name, plugin) from None
        with _DESCRIBE_LOCK:
            _DESCRIPTIONS[key] = found
    _raise(found, name, plugin)
    return found


def check_keywords(
    name: str, kwargs: dict[str, Any], keywords: list[str] | None
) -> None:
    """Refuses the options a plug-in's ``__init__`` does not take (``keywords``: the
    names it takes, read by the worker; ``None``: it takes ``**kwargs``), in the
    parent, before any fit: the call would raise ``TypeError`` in every round.

    Raises:
        InvalidParameterError: naming the options, what ``__init__`` takes, and the
            fix.
    """
    if keywords is None:
        return
    budget = ("epsilon", "delta")  # the contract's, checked where it is read
    unknown = [key for key in kwargs if key not in keywords and key not in budget]
    if not unknown:
        return
    options = [key for key in keywords if key not in budget]
    takes = ", ".join(f"`{key}`" for key in options) if options else "no option"
    flags = " ".join(f"--option {key}=..." for key in unknown)
    raise InvalidParameterError(
        f"generator {name!r} takes no option {', '.join(map(repr, unknown))}: its "
        f"`__init__` accepts {takes} beside `epsilon` and `delta`. Remove {flags} "
        "(or the key from `generator_options`), or add the keyword to the plug-in's "
        "`__init__`."
    )


class ForeignGenerator:
    """A plug-in fitted and sampled in a worker process.

    Constructing one has the worker import the plug-in and check its class (cached).

    Args:
        plugin: ``module:Class`` the worker imports.
        name: the generator's name in messages (``--generator``).
        worker: the worker settings (interpreter, time and memory limits).
        entry_point: ``plugin`` is an installed entry point's target (messages say so).
        **kwargs: the plug-in's constructor arguments (``epsilon``, ``delta`` and
            its options); JSON-able.
    """

    check_input = False
    """When true, the worker also says what ``fit`` changed in its arguments
    (:attr:`input_changed_`; ``dpaudit check-generator``)."""

    def __init__(
        self,
        plugin: str,
        name: str,
        *,
        worker: WorkerOptions | None = None,
        entry_point: bool = False,
        **kwargs: Any,
    ) -> None:
        for key, value in kwargs.items():
            try:
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError) as err:
                raise InvalidParameterError(
                    f"`--option {key}` of generator {name!r} must be a JSON value "
                    f"(number, string, boolean, list or table). Got {value!r}."
                ) from err
        self.plugin, self.name, self.kwargs = plugin, name, kwargs
        self.options = worker or WorkerOptions()
        # The worker imports the plug-in and checks the contract now (once per
        # process and plug-in): a broken plug-in is refused before anything trains,
        # and so is an option its `__init__` does not take.
        found = describe(plugin, name, self.options, entry_point=entry_point)
        check_keywords(name, kwargs, found.get("keywords"))

    @property
    def supports_public_randomness(self) -> bool:
        """True exactly when the plug-in's ``fit`` and ``sample`` accept
        ``public_seed`` (read by the worker; the class is never imported here)."""
        return bool(describe(self.plugin, self.name, self.options)["public_seed"])

    @property
    def supports_canary_teachers(self) -> bool:
        """Whether the plug-in class declares ``canary_teachers`` (its ``__init__``
        takes the target record as ``canary``; docs/adapters.md)."""
        found = describe(self.plugin, self.name, self.options)
        return bool(found.get("canary_teachers"))

    def _request(
        self, worker: Worker, header: dict[str, Any], blobs: list[bytes], what: str
    ) -> tuple[dict[str, Any], list[bytes]]:
        try:
            return worker.request(
                {**header, "plugin": self.plugin, "name": self.name},
                blobs,
                what=what,
                name=self.name,
                options=self.options,
            )
        except PluginError as err:
            if not is_adapter(self.plugin):
                raise
            raise _limits_for_adapter(err, self.name, self.plugin) from None

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Constructs and fits the plug-in in this thread's worker; reads and checks
        its ``privacy_claim``.

        Raises:
            PluginError: the plug-in failed (raised, exited, crashed, hung or
                exceeded the memory limit), or its claim is missing or invalid.
        """
        public = self.supports_public_randomness
        worker = worker_for_thread(self.options)
        spec, blobs = wire.encode_frame(data)
        data_id = frame_id(spec, blobs)
        model = next(worker.models)
        header: dict[str, Any] = {
            "op": "fit",
            "kwargs": self.kwargs,
            "domain": domain.to_json(),
            "seeds": plugin_seeds(public, rng, public_rng),
            "model": model,
            "data": data_id,
        }
        if self.check_input:
            header["check_input"] = True
        if data_id in worker.data_ids:
            blobs = []
        else:
            if len(worker.data_ids) >= DATA_CACHE:
                header["reset_data"] = True
                worker.data_ids.clear()
            header["frame"] = spec
        reply, _ = self._request(worker, header, blobs, "fit")
        worker.data_ids.add(data_id)
        self.worker_, self.model_ = worker, model
        given = f"a training table of {len(data)} rows and {data.shape[1]} columns"
        _raise(reply, self.name, self.plugin, given)
        # What fit changed in its table or domain (asked for by `check_input`).
        self.input_changed_: str | None = reply.get("input_changed")
        with self._adapter_contract():
            self._check_fit_reply(reply)
        self.columns_ = list(data.columns)
        self.domain_ = domain
        # The worker's Python is the result's (`python_section`), not the claim's.
        claim = dict(reply["claim"])
        with self._adapter_contract():
            self.claim_ = check_claim(claim, self.name)
        return self

    @contextlib.contextmanager
    def _adapter_contract(self) -> Iterator[None]:
        """Within: a broken contract of one of dpaudit's own adapters (its claim, its
        release) is dpaudit's failure (:class:`AdapterError`), not a plug-in's."""
        try:
            yield
        except PluginError as err:
            if not is_adapter(self.plugin):
                raise
            raise adapter_failure(self.name, self.plugin, str(err)) from err

    def _check_fit_reply(self, reply: dict[str, Any]) -> None:
        if "claim_type" in reply:
            raise PluginError(
                f"generator {self.name!r} breaks the plug-in contract: after fit, "
                "`privacy_claim` must be a dict with 'epsilon', 'delta' and "
                f"'accountant'. Got {reply['claim_type']}."
            )
        if "claim_error" in reply:
            raise PluginError(
                f"generator {self.name!r} breaks the plug-in contract: "
                f"`privacy_claim[{reply['claim_error']}]` must be a JSON value under a "
                "string key (number, string, boolean, null, list or dict of them). Got a "
                f"{reply['claim_value_type']}."
            )

    def sample(
        self,
        n: int,
        *,
        rng: Rngs,
        public_rng: Rngs | None = None,
        checked: bool = True,
    ) -> pd.DataFrame:
        """``n`` rows from the fitted plug-in, checked
        (:func:`~dpaudit.generators.plugins.check_release`; ``checked=False``: as
        the plug-in returned them, for ``dpaudit check-generator``'s own checks).

        Raises:
            NotFittedError: before ``fit``.
            PluginError: the plug-in failed, or its release is not a table of the
                training columns inside the public domain.
        """
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        if not hasattr(self, "worker_"):
            raise NotFittedError("the model was forgotten (`forget`); fit again.")
        header = {
            "op": "sample",
            "model": self.model_,
            "n": int(n),
            "seeds": plugin_seeds(self.supports_public_randomness, rng, public_rng),
        }
        reply, blobs = self._request(self.worker_, header, [], "sample")
        _raise(reply, self.name, self.plugin, f"a request for {int(n)} rows")
        with self._adapter_contract():
            if "release_type" in reply:
                raise PluginError(
                    f"generator {self.name!r} breaks the plug-in contract: `sample` "
                    f"must return a DataFrame with columns {self.columns_}. Got "
                    f"{reply['release_type']}."
                )
            out = wire.decode_frame(reply["frame"], blobs)
            if not checked:
                return out
            return check_release(
                out, self.name, columns=self.columns_, domain=self.domain_
            )

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_

    def read_transcript(
        self, *, max_bytes: int | None = None, exact: bool = False
    ) -> tuple[Measurement, ...] | None:
        """The fitted plug-in's ``privacy_transcript``, read from the worker and
        checked (:func:`~dpaudit.generators.foreign.transcript.check_transcript`,
        which refuses one over ``max_bytes``; with ``exact``: noise absent or 0 read
        as exact answers); ``None`` when it states none. Call it before
        :meth:`forget`.

        Raises:
            NotFittedError: before ``fit``, or after ``forget``.
            PluginError: the plug-in failed, or a record breaks the contract.
        """
        if not hasattr(self, "worker_"):
            raise NotFittedError("call `fit` first (and read before `forget`).")
        header = {"op": "transcript", "model": self.model_}
        reply, blobs = self._request(self.worker_, header, [], "privacy_transcript")
        _raise(reply, self.name, self.plugin)
        with self._adapter_contract():
            if "transcript_error" in reply:
                raise PluginError(
                    f"generator {self.name!r} breaks the plug-in contract: "
                    f"`{TRANSCRIPT_ATTRIBUTE}` must be JSON (lists, dicts, strings, "
                    f"finite numbers): {reply['transcript_error']}."
                )
            try:
                raw = columnar.join(reply.get("transcript"), blobs)
            except (KeyError, TypeError, ValueError, IndexError) as err:
                raise PluginError(
                    f"generator {self.name!r}: its worker's transcript reply is "
                    f"malformed ({err}); the worker and dpaudit must be the same "
                    "version (reinstall dpaudit)."
                ) from None
            return check_transcript(
                raw,
                self.name,
                domain=self.domain_,
                max_bytes=max_bytes,
                exact=exact,
            )

    def forget(self) -> None:
        """Lets the worker free the fitted model (the claim stays here); ``sample``
        is no longer possible."""
        worker = self.__dict__.pop("worker_", None)
        if worker is not None:
            worker.drops.append(self.model_)

    def __del__(self) -> None:
        # The worker frees the model with its next request.
        worker = getattr(self, "worker_", None)
        if worker is not None:
            worker.drops.append(self.model_)
