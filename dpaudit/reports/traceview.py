"""What a report may say about a generator and its training trace.

Reports show only what applies to the audited generator: a variant without teachers
(PATE-GAN's ``original`` trains one discriminator on all the data) has no records
seen per teacher nor teacher losses, and a generator without a privacy accountant
(its claim is the nominal epsilon) has no epsilon curve to plot. Both are read from
the claim's typed facts, never from a generator's flag names. A plug-in is never
called a "reference" implementation: only a built-in generator with reviewed
variants has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.audit.result import TrainingFacts
from dpaudit.generators.registry import builtin_generators
from dpaudit.reports.model import AuditResult

__all__ = ["TRACE_SOURCE", "TraceView", "trace_view", "variant_text"]

#: Why a report has no training trace (every absent part of a report says why).
NO_TRACE = (
    "No training trace was recorded for this audit: dpaudit records one (the first "
    "with-target round's records seen, teacher losses and epsilon over iterations) for "
    "its own PATE-GAN and G-PATE in the two-world game; a plug-in's or an adapter's "
    "training runs in its own process and states only its claim, and the one-run game "
    "keeps no trace."
)

#: The caption of every training trace: where its model comes from.
TRACE_SOURCE = (
    "These traces come from the audit's first round of the with-target world (the "
    "generator fitted on D ∪ {target} from that round's own seed stream, with the "
    "audit's generator options and its trace switch on): that round's release is "
    "one of the audit's rounds like any other, and the traces themselves take no "
    "part in the verdict."
)


@dataclass(frozen=True, kw_only=True, slots=True)
class TraceView:
    """Which trace figures apply, and why the others are not shown.

    Attributes:
        teachers: records seen per teacher and teacher losses apply.
        accountant: an epsilon curve over iterations applies.
        notes: one sentence per figure left out, saying why.
    """

    teachers: bool
    accountant: bool
    notes: tuple[str, ...]


def trace_view(result: AuditResult) -> TraceView:
    """Which training-trace figures apply to ``result``'s generator.

    The traced model's claim (``trace.json``) states, as typed values
    (:class:`~dpaudit.audit.result.model.TrainingFacts`), how many teachers training had and
    whether an accountant computed its epsilon; a claim that does not say (an older
    audit, a plug-in) shows every figure its trace has.
    """
    trace = result.trace
    facts = trace.facts if trace is not None else TrainingFacts()
    accountant_name = facts.accountant or result.claim.accountant or ""
    teachers = facts.teachers != 0
    accountant = facts.accounted is not False
    notes = []
    if not teachers:
        notes.append(
            "No records-seen or teacher-loss figures: this generator trains a single "
            "discriminator on all the data (no teacher partitions), so there are no "
            "teachers to show."
        )
    if not accountant:
        name = f" ({accountant_name})" if accountant_name else ""
        notes.append(
            f"No epsilon curve: this generator keeps no privacy accountant{name}; its "
            "claim is the nominal epsilon it was given, not computed from training, "
            "so a curve over iterations would be flat and mean nothing."
        )
    return TraceView(teachers=teachers, accountant=accountant, notes=tuple(notes))


def variant_text(result: AuditResult) -> str:
    """The variant cell: the variant's name; for a built-in generator with reviewed
    variants and none chosen, its reference implementation; for a plug-in, that it
    has no variants (never "reference")."""
    if result.variant:
        return result.variant
    spec = builtin_generators().get(result.generator)
    if spec is None:
        return "— (plug-in)"
    if spec.configurable:
        return "— (reference implementation)"
    return "—"
