"""The two-world game's split of each world's rounds (train, validation, test), chosen
from whether the audit's attacks learn anything (no heavy imports: the configuration
resolves it).

An attack that fits (a classifier) needs training rounds; a threshold attack
(``distance``) and the transcript's exact likelihood ratio learn nothing
(:data:`dpaudit.attacks.names.FITS`). Without ``split`` the game takes
:data:`DEFAULT_SPLIT` when any attack fits and :data:`NO_FIT_SPLIT` when none does:
training rounds that train nothing would only shrink the test. A user's split with
training rounds for attacks that do not fit is run as given and explained in the result
(:func:`unused_training_warning`): refusing it would make the audits stored under the
old default unresumable and their figures unreproducible.
"""

from __future__ import annotations

from dpaudit.attacks.names import (
    ALL,
    ATTACK_NAMES,
    DEFAULT,
    LIKELIHOOD_RATIO,
    any_fits,
)
from dpaudit.attacks.names import DEFAULT_REAL as DEFAULT_REAL
from dpaudit.attacks.names import DEFAULT_WORST_CASE as DEFAULT_WORST_CASE
from dpaudit.attacks.names import (
    DEFAULT_WORST_CASE_CONTINUOUS as DEFAULT_WORST_CASE_CONTINUOUS,
)
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import InvalidParameterError

Fractions = tuple[float, float, float]

#: The study's split (400 / 200 / 400 of 1,000 rounds per world) for attacks that fit.
DEFAULT_SPLIT: Fractions = (0.4, 0.2, 0.4)
#: The split of an audit none of whose attacks fits: no training rounds, the
#: validation share of :data:`DEFAULT_SPLIT` kept, its training share moved to the test.
#: Chosen from the power of the threshold selection (docs/soundness.md, "No round
#: trains an attack that trains nothing"): on Gaussian scores N(0, 1) against N(mu, 1)
#: at 1,000 rounds per world (60 games each, ``judge_scores`` at alpha 0.05) the
#: validation share 0.2 gave the largest mean eps_emp at mu 1 and 2 (1.25, 2.84; 0.1:
#: 1.19, 2.63; 1/3: 1.19, 2.89; 0.5: 1.10, 2.73) and mu_emp above 1/3's.
NO_FIT_SPLIT: Fractions = (0.0, 0.2, 0.8)


def replayed(generator: str) -> bool:
    """Whether the likelihood ratio replays ``generator``'s transcript: its registry
    entry declares ``transcript = "replay"`` (dpaudit's own; a plug-in's or
    adapter's transcript is its measurements:
    dpaudit.audit.games.releases.TRANSCRIPT_KINDS). Read from the built-in table,
    without looking a plug-in up."""
    from dpaudit.generators.registry import builtin_generators

    spec = builtin_generators().get(generator)
    return spec is not None and spec.transcript == "replay"


def audit_attack_names(
    *, attack: str, release: str, dataset: str, generator: str = "pategan"
) -> tuple[str, ...]:
    """The attacks an audit runs, from its configuration's names alone (the
    transcript release has one white-box attack, which trains nothing: the likelihood
    ratio of a replayed generator, the measurement ratio of the others; ``all`` and
    ``default`` expand as :func:`dpaudit.attacks.registry.expand_attacks` does).

    >>> audit_attack_names(attack="default", release="transcript", dataset="worst-case")
    ('likelihood-ratio',)
    >>> audit_attack_names(attack="default", release="table",
    ...                    dataset="worst-case-continuous")
    ('moments', 'distance', 'fingerprint')
    """
    if release == "transcript":
        return (LIKELIHOOD_RATIO if replayed(generator) else "measurement-ratio",)
    if attack == ALL:
        return ATTACK_NAMES
    if attack == DEFAULT:
        if dataset == WORST_CASE_NAMES[1]:
            return DEFAULT_WORST_CASE_CONTINUOUS
        return DEFAULT_WORST_CASE if dataset in WORST_CASE_NAMES else DEFAULT_REAL
    return (attack,)


def default_split(attacks: tuple[str, ...]) -> Fractions:
    """The split of an audit that names none: :data:`NO_FIT_SPLIT` when none of
    ``attacks`` fits, else :data:`DEFAULT_SPLIT`.

    >>> default_split(("likelihood-ratio",)), default_split(("distance", "moments"))
    ((0.0, 0.2, 0.8), (0.4, 0.2, 0.4))
    """
    return DEFAULT_SPLIT if any_fits(attacks) else NO_FIT_SPLIT


def check_split(split: Fractions, attacks: tuple[str, ...]) -> None:
    """Refuses a split without training rounds for attacks that fit.

    Raises:
        InvalidParameterError: ``split[0]`` is 0 and an attack of ``attacks`` fits.
    """
    if split[0] == 0 and any_fits(attacks):
        raise InvalidParameterError(
            f"`split` {','.join(f'{x:g}' for x in split)} gives no training rounds, "
            f"but the attack(s) {', '.join(attacks)} learn from them: give a train "
            "fraction > 0 (default 0.4,0.2,0.4) or attacks that do not fit "
            "(distance; the transcript's likelihood ratio)."
        )


def unused_training_warning(split: Fractions, attacks: tuple[str, ...]) -> str | None:
    """Why a split's training rounds are wasted (``None`` when they are not).

    >>> unused_training_warning((0.4, 0.2, 0.4), ("moments",)) is None
    True
    >>> print(unused_training_warning((0.4, 0.2, 0.4), ("likelihood-ratio",)))
    the split 0.4,0.2,0.4 gives 40% of each world's rounds to attack training, but \
likelihood-ratio learns nothing from them: they were run and not used. Without \
--split the audit tests them instead (0,0.2,0.8).
    """
    if split[0] == 0 or any_fits(attacks):
        return None
    given = ",".join(f"{x:g}" for x in split)
    instead = ",".join(f"{x:g}" for x in NO_FIT_SPLIT)
    return (
        f"the split {given} gives {split[0]:.0%} of each world's rounds to attack "
        f"training, but {', '.join(attacks)} {'learn' if len(attacks) > 1 else 'learns'}"
        " nothing from them: they were run "
        f"and not used. Without --split the audit tests them instead ({instead})."
    )
