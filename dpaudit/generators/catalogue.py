"""Declaring a defect once: a bug flag is a documented config field.

A generator's config declares each defect as a boolean field made by
:func:`bug_field`; the field's metadata (kind, what the code does, the privacy
consequence, the reviewed implementations that have it) *is* the catalogue entry.
:func:`declared_bugs` reads it back, so the listing (``dpaudit list bugs``), the
flag validation and the docs all derive from the config class and nothing else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

BugKind = Literal["privacy", "other", "further"]
BUG_METADATA_KEY = "dpaudit_bug"


@dataclass(frozen=True, kw_only=True, slots=True)
class BugDoc:
    """What a defect flag means.

    Attributes:
        kind: ``privacy`` (a privacy violation counted in the study's Table 1),
            ``other`` (another bug in Table 1) or ``further`` (found in the same code,
            not in Table 1).
        description: what the code does.
        consequence: the privacy (or utility) consequence.
        implementations: the reviewed implementations that have it.
        unbounded_reason: when set, a correct accountant finds no finite epsilon for a
            model trained with this flag (the target reaches the release without
            privacy noise); the text says why (shown as "unbounded (reason)").
    """

    kind: BugKind
    description: str
    consequence: str
    implementations: tuple[str, ...]
    unbounded_reason: str | None = None


def bug_field(
    *,
    kind: BugKind,
    implementations: str | tuple[str, ...],
    description: str,
    consequence: str,
    unbounded_reason: str | None = None,
) -> Any:
    """A ``bool`` config field (default ``False``: the correct behaviour) that
    documents one defect.

    Args:
        kind: see :class:`BugDoc`.
        implementations: the implementations that have it (a space-separated string
            or a tuple).
        description: what the code does.
        consequence: the privacy (or utility) consequence.
        unbounded_reason: see :class:`BugDoc`.
    """
    impls = (
        tuple(implementations.split())
        if isinstance(implementations, str)
        else tuple(implementations)
    )
    doc = BugDoc(
        kind=kind,
        description=description,
        consequence=consequence,
        implementations=impls,
        unbounded_reason=unbounded_reason,
    )
    return dataclasses.field(default=False, metadata={BUG_METADATA_KEY: doc})


def declared_bugs(config_cls: type[Any]) -> dict[str, BugDoc]:
    """The defect flags a config dataclass declares, in field order.

    >>> @dataclass
    ... class C:
    ...     lr: float = 1e-3
    ...     leak: bool = bug_field(kind="privacy", implementations="x",
    ...                            description="d", consequence="c")
    >>> list(declared_bugs(C))
    ['leak']
    """
    return {
        f.name: f.metadata[BUG_METADATA_KEY]
        for f in dataclasses.fields(config_cls)
        if BUG_METADATA_KEY in f.metadata
    }
