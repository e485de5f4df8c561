"""The one place that knows the generators: name -> :class:`GeneratorSpec`.

A static table in the style of Opacus' ``accountants/registry.py``: each built-in
generator is a frozen spec holding its factory as a lazy ``"module:attr"`` path (nothing
heavy is imported to list or validate names), its capabilities and the defaults an
audit gives it, as data. Installed plug-ins (entry points of group
``dpaudit.generators``), the adapters of real libraries
(``dpaudit.adapters.FOREIGN_ADAPTERS``) and ad-hoc ``module:Class`` names get a plug-in
spec: they run in foreign worker processes (:mod:`dpaudit.generators.foreign`), and
this process never imports their module.

The commands, the audit and the utility benchmark ask this module and name no
generator: :func:`generator_factory`, :func:`registered_generators`, :func:`get_spec`
and :func:`audit_options`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dpaudit.generators.entry_points import plugin_entry_points
from dpaudit.generators.flags import flags_of, variants
from dpaudit.generators.in_process import IN_PROCESS, in_process_class
from dpaudit.generators.names import DEVICES, G_PATE, PATE_GAN
from dpaudit.validation import check_choice, check_scalar, require

if TYPE_CHECKING:
    from dpaudit.generators.base import GeneratorFactory
    from dpaudit.generators.foreign.options import WorkerOptions

DEFAULT_GENERATOR = PATE_GAN
"""The generator of a command or audit that names none."""
WORST_CASE_ITERATIONS = 100
"""The study's iteration cap of an audit on the worst-case dataset."""
REAL_DATA_ITERATIONS = 1000
"""The study's iteration cap of an audit on real data."""


def _load(path: str) -> Any:
    """The attribute a ``"module:attr"`` path names (imported on first use)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditDefaults:
    """What an audit gives a generator unless the user says otherwise (data, not code).

    Attributes:
        options: option defaults (PATE-GAN's ``lam = 1e-3``, the study's setting).
        iteration_option: the option capping training iterations, or None.
        worst_case_iterations, real_data_iterations: that cap on the worst case and
            on real data.
        teachers_option: the option set from ``|D|``, or None.
        teachers_from_rows: ``"module:attr"`` of ``f(n_rows, options) -> int`` (the
            options so far: variant, flags, the user's). ``k`` is fixed
            from ``|D|`` for both worlds: a ``k`` that changed with the target's
            presence would itself leak membership.
        small_table: ``"module:attr"`` of ``f(options, n_rows, *, epsilon, delta) ->
            options``: the calibration of a generator whose published settings assume
            a larger table (given options win).
        reference_options: option defaults of an audit of the generator itself (no
            variant): a variant keeps the settings of the code it reproduces.
    """

    options: Mapping[str, Any] = field(default_factory=dict)
    iteration_option: str | None = "max_iterations"
    worst_case_iterations: int = WORST_CASE_ITERATIONS
    real_data_iterations: int = REAL_DATA_ITERATIONS
    teachers_option: str | None = None
    teachers_from_rows: str | None = None
    small_table: str | None = None
    reference_options: Mapping[str, Any] = field(default_factory=dict)


NO_AUDIT_DEFAULTS = AuditDefaults(iteration_option=None)


@dataclass(frozen=True, kw_only=True, slots=True)
class GeneratorSpec:
    """One generator: its factory, capabilities and audit defaults.

    Attributes:
        name: the registry name (``--generator NAME``).
        description: one line for ``dpaudit list generators``.
        label: the generator's display name (in messages).
        factory: ``"module:attr"`` of the generator class (or of a factory taking
            ``epsilon=, delta=, **options``).
        config_builder: ``"module:attr"`` of ``f(*, epsilon, delta, variant, bugs,
            **options) -> config`` when ``factory`` is constructed from a config; a
            generator with a config builder takes ``variant`` and ``bugs``.
        config_class: ``"module:Class"`` of that config (with a config builder): its
            ``bug_field`` declarations are the generator's bug flags, and importing
            it registers the generator's variants. The one table from generator to
            config class.
        devices: the ``device`` option's values; () when it has none.
        trace_switch: the option that makes training record its trace (None: the
            generator records none; ``dpaudit trace`` refuses it).
        trace_iterations: the options ``dpaudit trace`` sets to ``--iterations``.
        audit: :class:`AuditDefaults`.
        plugin: a plug-in, run in a foreign worker
            (:class:`~dpaudit.generators.foreign.generator.ForeignGenerator`);
            ``factory`` is then the ``module:Class`` the worker imports.
        entry_point: a plug-in named by an installed entry point.
        transcript: what the generator releases under ``--release transcript``:
            ``replay`` (dpaudit's own: every noisy answer, replayed in both worlds;
            refused by a generator that records none) or ``measurements`` (plug-ins
            and adapters: the ``privacy_transcript`` they state, docs/plugins.md).
        model_memory: ``"module:attr"`` of ``f(generator, *, rows, width,
            released) -> bytes``, one model's memory in training
            (:mod:`dpaudit.generators.model_memory`; :meth:`model_bytes`). The one
            figure both of the audit's plans use (memory, CUDA batch size). A
            plug-in's default counts its release only: it trains in its worker.
        in_process: a plug-in class registered by :func:`~dpaudit.generators.in_process.in_process_plugin` (the
            Python API's ``in_process=True``): constructed and fitted in this
            process through :class:`~dpaudit.generators.plugins.PluginAdapter`,
            never in a worker.
        transcript_words: under ``--release transcript`` with ``replay``: what a
            round's transcript holds, and what a canary teacher votes, in words
            (the result's description of the release).
        exact_canary_privacy: the exact privacy of its canary transcript is
            computed (``--release transcript --teachers canary --public-seed
            auto`` ranks the public candidates by it).
    """

    name: str
    description: str
    label: str
    factory: str
    config_builder: str | None = None
    config_class: str | None = None
    devices: tuple[str, ...] = ()
    trace_switch: str | None = None
    trace_iterations: tuple[str, ...] = ()
    audit: AuditDefaults = NO_AUDIT_DEFAULTS
    plugin: bool = False
    entry_point: bool = False
    transcript: str = "replay"
    model_memory: str = "dpaudit.generators.model_memory:release_bytes"
    in_process: bool = False
    transcript_words: tuple[str, str] = (
        "every noisy vote",
        "each voting 'real' exactly when it trained on the target "
        "(docs/soundness.md, 'Canary teachers')",
    )
    exact_canary_privacy: bool = False

    # ------------------------------------------------------------ capabilities
    def load_class(self) -> type:
        """The generator class (the plug-in's own class for a plug-in, imported in
        this process: the audit never calls this for a plug-in)."""
        if self.in_process:
            return in_process_class(self.name)
        if self.plugin:
            from dpaudit.generators import plugins  # lazily: torch, pandas

            return plugins.load_plugin_class(self.factory)
        cls: type = _load(self.factory)
        return cls

    def load_config_class(self) -> type | None:
        """The config class (importing it registers the generator's variants), or
        None for a generator without one."""
        if self.config_class is None:
            return None
        cls: type = _load(self.config_class)
        return cls

    @property
    def batched(self) -> bool:
        """Whether the generator trains several models at once (``fit_many``)."""
        return (
            not self.plugin
            and not self.in_process
            and callable(getattr(self.load_class(), "fit_many", None))
        )

    @property
    def supports_public_randomness(self) -> bool:
        """Whether the generator's privacy proof holds for every fixed public stream
        (the class attribute of a built-in; ``public_seed`` in a plug-in's signatures)."""
        if self.in_process:
            from dpaudit.generators.plugins import supports_public_seed

            return bool(supports_public_seed(self.load_class()))
        if self.plugin:
            return bool(
                getattr(
                    self.make_factory()(epsilon=1.0, delta=0.0),
                    "supports_public_randomness",
                    False,
                )
            )
        return bool(getattr(self.load_class(), "supports_public_randomness", False))

    @property
    def configurable(self) -> bool:
        """Whether the generator takes ``variant`` and ``bugs``."""
        return self.config_builder is not None

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants (reviewed implementations) of this generator."""
        if self.load_config_class() is None:
            return ()
        return tuple(n for n, v in variants().items() if v.generator == self.name)

    @property
    def bug_flags(self) -> tuple[str, ...]:
        """The bug flags of this generator's config."""
        cls = self.load_config_class()
        if cls is None:
            return ()
        return tuple(b.name for b in flags_of(self.name, cls))

    @property
    def records_trace(self) -> bool:
        """Whether ``dpaudit trace`` can record this generator's training."""
        return self.trace_switch is not None

    def model_bytes(
        self, generator: object, *, rows: int, width: int, released: int
    ) -> int:
        """One model's memory in training, in bytes (the function ``model_memory``
        names): ``generator`` built from this spec (None for a plug-in: never
        built in this process), ``rows`` training rows of encoded ``width``,
        ``released`` rows released."""
        estimate: Callable[..., int] = _load(self.model_memory)
        return int(estimate(generator, rows=rows, width=width, released=released))

    # ------------------------------------------------------------------ build
    def make_factory(self, *, worker: WorkerOptions | None = None) -> GeneratorFactory:
        """``factory(epsilon=, delta=, **options) -> Generator``; a plug-in's runs in
        foreign workers with the settings ``worker`` (one registered in this process
        by :func:`~dpaudit.generators.in_process.in_process_plugin` runs here)."""
        if self.in_process:
            from dpaudit.generators.plugins import PluginAdapter

            cls, label = self.load_class(), self.name

            def here(**kwargs: Any) -> PluginAdapter:
                return PluginAdapter(cls, label, **kwargs)

            return here
        if self.plugin:
            from dpaudit.generators.foreign.generator import ForeignGenerator

            plugin, name, point = self.factory, self.name, self.entry_point

            def foreign(**kwargs: Any) -> ForeignGenerator:
                return ForeignGenerator(
                    plugin, name, worker=worker, entry_point=point, **kwargs
                )

            return foreign
        cls = _load(self.factory)
        if self.config_builder is None:
            built: GeneratorFactory = cls
            return built
        builder = _load(self.config_builder)

        def factory(*, epsilon: float, delta: float, **options: Any) -> Any:
            return cls(builder(epsilon=epsilon, delta=delta, **options))

        return factory

    # ---------------------------------------------------------------- options
    def with_choices(
        self,
        options: Mapping[str, Any],
        *,
        device: str | None = None,
        variant: str | None = None,
        bugs: Iterable[str] = (),
        device_wins: bool = False,
    ) -> dict[str, Any]:
        """``options`` with the device, the variant and the bug flags chosen.

        The device goes only to a generator with a ``device`` option (the user's
        ``device`` option wins unless ``device_wins``).

        Raises:
            InvalidParameterError: a variant or bug flags for a generator without them.
        """
        out = dict(options)
        bugs = [bugs] if isinstance(bugs, str) else list(bugs)
        if device is not None and self.devices:
            check_choice(device, "device", self.devices)
            if device_wins:
                out["device"] = device
            else:
                out.setdefault("device", device)
        if variant or bugs:
            takes = ", ".join(s.name for s in _BUILTINS.values() if s.configurable)
            require(
                self.configurable,
                "variant/bugs",
                f"unset for {self.name!r} (they apply to {takes})",
                {"variant": variant, "bugs": bugs},
            )
        if variant:
            out["variant"] = variant
        if bugs:
            out["bugs"] = bugs
        return out

    def calibrated(
        self, options: Mapping[str, Any], *, n_rows: int, epsilon: float, delta: float
    ) -> dict[str, Any]:
        """``options`` completed by the generator's small-table calibration, if any."""
        if self.audit.small_table is None:
            return dict(options)
        calibrate: Callable[..., dict[str, Any]] = _load(self.audit.small_table)
        return calibrate(options, n_rows, epsilon=epsilon, delta=delta)


# ---------------------------------------------------------------- the table

# One model's memory (GeneratorSpec.model_memory): a teacher ensemble's networks, or
# the data and the release of a generator without networks.
_TEACHERS = "dpaudit.generators.model_memory:teacher_model_bytes"
_TABLE = "dpaudit.generators.model_memory:table_model_bytes"

_BUILTINS: Mapping[str, GeneratorSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            GeneratorSpec(
                name=PATE_GAN,
                label="PATE-GAN",
                description="PATE-GAN (Jordon et al. 2019), batched; variants via --variant",
                factory="dpaudit.generators.pate_gan:PateGan",
                config_builder="dpaudit.generators.pate_gan:config_from_options",
                config_class="dpaudit.generators.pate_gan.config:PateGanConfig",
                devices=DEVICES,
                trace_switch="record_trace",
                trace_iterations=("max_iterations", "fixed_iterations"),
                audit=AuditDefaults(
                    # The study's audit settings: lambda = 0.001 for every variant.
                    options={"lam": 1e-3},
                    # The reference's hidden layers at least 8 wide: "d,d/2,d" on the worst
                    # case's 3 columns has a one-unit layer, dead from initialisation, and
                    # the release is then one constant table (docs/soundness.md).
                    reference_options={"min_width": 8},
                    teachers_option="num_teachers",
                    teachers_from_rows="dpaudit.generators.pate_gan:audit_num_teachers",
                ),
                model_memory=_TEACHERS,
                exact_canary_privacy=True,
            ),
            GeneratorSpec(
                name=G_PATE,
                label="G-PATE",
                description="G-PATE (Long et al. 2021): teacher-gradient aggregation with "
                "Confident-GNMax and an RDP accountant",
                factory="dpaudit.generators.g_pate:GPate",
                config_builder="dpaudit.generators.g_pate:config_from_options",
                config_class="dpaudit.generators.g_pate.config:GPateConfig",
                devices=DEVICES,
                trace_switch="record_trace",
                trace_iterations=("max_iterations",),
                # The published settings are for 2,100 teachers on 284k rows: on a smaller
                # table k is fixed from |D| (both worlds) and the noise calibrated so that
                # the planned iterations run.
                audit=AuditDefaults(
                    small_table="dpaudit.generators.g_pate:with_small_table_defaults"
                ),
                model_memory=_TEACHERS,
                transcript_words=(
                    "every Confident-GNMax answer (answered or not, and its noisy bin)",
                    "each voting the last bin exactly when the target is in its "
                    "partition (docs/soundness.md, 'The transcript release of G-PATE "
                    "(canary teachers)')",
                ),
            ),
            GeneratorSpec(
                name="randomized-response",
                label="randomized response",
                description="toy: target membership by randomized response (exact epsilon)",
                factory="dpaudit.generators.toy:RandomizedResponseGenerator",
                model_memory=_TABLE,
            ),
            GeneratorSpec(
                name="copy",
                label="copy",
                description="toy: releases its training data (no privacy)",
                factory="dpaudit.generators.toy:CopyGenerator",
                model_memory=_TABLE,
            ),
        )
    }
)


def builtin_generators() -> Mapping[str, GeneratorSpec]:
    """The built-in specs (read-only)."""
    return _BUILTINS


def registered_generators() -> dict[str, str]:
    """Names and one-line descriptions: the built-ins, then the installed plug-ins
    (entry points of group ``dpaudit.generators``; a built-in's name is never
    shadowed)."""
    out = {name: spec.description for name, spec in _BUILTINS.items()}
    for name, path in foreign_adapters().items():
        out.setdefault(name, _adapter_description(path))
    for name, value in plugin_entry_points().items():
        out.setdefault(name, f"plug-in {value} (entry point)")
    return out


def foreign_adapters() -> dict[str, str]:
    """The adapters of real libraries: name -> ``module:Class``
    (``dpaudit.adapters.FOREIGN_ADAPTERS``; nothing of the libraries is imported)."""
    from dpaudit.adapters import FOREIGN_ADAPTERS

    return dict(FOREIGN_ADAPTERS)


def _adapter_description(path: str) -> str:
    from dpaudit.adapters import LIBRARIES

    # dpaudit.adapters.LIBRARY.adapter:Class, or a stand-in registered elsewhere
    parts = path.partition(":")[0].split(".")
    library = (
        parts[2] if len(parts) > 2 and parts[:2] == ["dpaudit", "adapters"] else ""
    )
    if library not in LIBRARIES:
        return f"adapter {path} (runs in a foreign worker; needs its library there)"
    # An extra of dpaudit may share its environment; the others have their own.
    how = f"dpaudit env {library}, then --python ~/.cache/dpaudit/envs/{library}/bin/python"
    extra = LIBRARIES[library].extra
    if extra:
        how = f"pip install 'dpaudit[{extra}]', or {how}"
    return (
        f"adapter {path} (runs in a foreign worker; needs its library installed "
        f"there, e.g. {how})"
    )


def get_spec(name: str) -> GeneratorSpec:
    """The spec of a built-in, an installed plug-in or a plug-in ``module:Class``.

    Raises:
        InvalidParameterError: ``name`` is not a string.
        PluginError: ``name`` is none of those.
    """
    require(
        isinstance(name, str) and bool(name),
        "generator",
        "a generator name (`dpaudit list generators`) or a plug-in module:Class",
        name,
    )
    if name in _BUILTINS:
        return _BUILTINS[name]
    if name in IN_PROCESS:
        return GeneratorSpec(
            name=name,
            description=f"plug-in {name} (in this process)",
            label=name,
            factory=name,
            in_process=True,
            transcript="measurements",
            # Its model lives in this process: the data it keeps and the release.
            model_memory=_TABLE,
        )
    adapters = foreign_adapters()
    if name in adapters:
        return GeneratorSpec(
            name=name,
            description=_adapter_description(adapters[name]),
            label=name,
            factory=adapters[name],
            plugin=True,
            transcript="measurements",
        )
    if ":" not in name:
        points = plugin_entry_points()
        if name not in points:
            from dpaudit.errors import PluginError, did_you_mean
            from dpaudit.generators.entry_points import ENTRY_POINT_GROUP

            known = [*builtin_generators(), *points]
            raise PluginError(
                f"unknown generator {name!r}: not a built-in (`dpaudit list generators`), "
                f"not `module:Class`, and no entry point in group {ENTRY_POINT_GROUP!r}"
                f"{did_you_mean(name, known)}."
            )
        # The entry point's target is imported by the worker, never here.
        return GeneratorSpec(
            name=name,
            description=f"plug-in {points[name]} (entry point)",
            label=name,
            factory=points[name],
            plugin=True,
            entry_point=True,
            transcript="measurements",
        )
    return GeneratorSpec(
        name=name,
        description=f"plug-in {name}",
        label=name,
        factory=name,
        plugin=True,
        transcript="measurements",
    )


def generator_factory(
    name: str, *, worker: WorkerOptions | None = None
) -> GeneratorFactory:
    """``factory(epsilon=, delta=, **options) -> Generator`` of ``name`` (a built-in,
    an installed plug-in, an adapter or a plug-in ``module:Class``; the last three
    run in foreign workers with the settings ``worker``)."""
    return get_spec(name).make_factory(worker=worker)


def audit_options(
    name: str | GeneratorSpec,
    options: Mapping[str, Any],
    *,
    n_rows: int,
    worst_case: bool,
    epsilon: float,
    delta: float,
    device: str | None,
    variant: str | None,
    bugs: Iterable[str],
) -> dict[str, Any]:
    """The generator options an audit uses; the user's ``options`` win.

    In order: the device (a generator with a ``device`` option), the variant and bug
    flags (refused for a generator without them), the teachers from ``|D|``, the
    option defaults (and, for the generator itself rather than a variant, its
    reference defaults), the iteration cap (100 on the worst case, 1,000 on real
    data), then the small-table calibration.

    Args:
        name: the generator (or its spec, already looked up).
        options: the user's generator options.
        n_rows: ``|D|``, the rows without the target (equal in both worlds).
        worst_case: whether the dataset is a worst case (``worst-case`` or
            ``worst-case-continuous``).
        epsilon, delta: the budget (for the calibration).
        device: ``auto``, ``cpu`` or ``cuda`` (None: the generator's default).
        variant, bugs: the chosen variant and extra bug flags.

    Raises:
        InvalidParameterError: bad ``n_rows``, or a variant or bug flags for a
            generator without them.
    """
    check_scalar(n_rows, "n_rows", kind=int, min_val=1)
    spec = name if isinstance(name, GeneratorSpec) else get_spec(name)
    out = spec.with_choices(options, device=device, variant=variant, bugs=bugs)
    defaults = spec.audit
    if defaults.teachers_option is not None and defaults.teachers_from_rows is not None:
        teachers: Callable[[int, Mapping[str, Any]], int] = _load(
            defaults.teachers_from_rows
        )
        if out.get(defaults.teachers_option) is None:
            out[defaults.teachers_option] = teachers(n_rows, out)
    for key, value in defaults.options.items():
        out.setdefault(key, value)
    if variant is None:
        for key, value in defaults.reference_options.items():
            out.setdefault(key, value)
    if defaults.iteration_option is not None:
        out.setdefault(
            defaults.iteration_option,
            defaults.worst_case_iterations
            if worst_case
            else defaults.real_data_iterations,
        )
    return spec.calibrated(out, n_rows=n_rows, epsilon=epsilon, delta=delta)


def trace_options(name: str, *, iterations: int) -> dict[str, Any]:
    """The options of a training trace of ``iterations`` iterations.

    Raises:
        InvalidParameterError: the generator records no training trace.
    """
    spec = get_spec(name)
    tracing = {s.name: s.label for s in _BUILTINS.values() if s.records_trace}
    require(
        spec.records_trace,
        "--generator",
        "one that records training traces: "
        + ", ".join(f"{n} ({label})" for n, label in tracing.items()),
        name,
    )
    check_scalar(iterations, "iterations", kind=int, min_val=1)
    assert spec.trace_switch is not None
    return {spec.trace_switch: True, **dict.fromkeys(spec.trace_iterations, iterations)}
