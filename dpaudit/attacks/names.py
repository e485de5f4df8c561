"""The attack names (stable: scripts and CI policies depend on them). No heavy
imports: configuration checks and the command line's parser read them;
:mod:`dpaudit.attacks.registry` builds the attacks."""

from __future__ import annotations

ATTACK_NAMES = (
    "querybased",
    "groundhog",
    "groundhog-naive",
    "groundhog-histogram",
    "groundhog-correlation",
    "distance",
    "moments",
    "fingerprint",
    "nearest",
)
ALL = "all"
DEFAULT = "default"
#: Names that expand to several attacks (the verdict takes the maximum over them, each
#: at the Bonferroni level alpha / number of attacks).
SET_NAMES = (DEFAULT, ALL)

#: ``default`` on the worst case. Measured by ``benchmarks/attack_power.py`` (1,000
#: rounds per world, fixed public randomness): ``querybased`` misses ``updated`` (AUC
#: 0.5: it releases its model space and the target moves column c's mean by about
#: 4e-4, no value across the 0.5 decode threshold of the counted cells), which
#: ``moments`` (eps_emp 4.21) and ``fingerprint`` (4.21) detect; no other attack
#: detected a variant these three miss. ``querybased`` stays for the ``independent``
#: game, where the study's 4.68 on ``original`` comes from it and a fingerprint never
#: repeats.
DEFAULT_WORST_CASE = ("querybased", "moments", "fingerprint")
#: ``default`` on the continuous worst case (``worst-case-continuous``). Measured (400
#: rounds per world, ``--attack all``, both randomness modes): ``moments`` detected every
#: leak of a variant that any of the nine attacks did (turing, original, updated, the
#: copy plug-in: each at the attainable maximum); ``querybased``, which rounds the
#: release to binary, missed turing and updated (AUC 0.5). Under independent
#: randomness the exact randomized-response plug-in's one target row among 100 fresh
#: uniform rows is diluted in the moments (AUC 0.47) and seen by ``distance`` (AUC
#: 0.69). ``fingerprint`` stays as the exact test of a release that the fixed game makes
#: deterministic, whatever features the shift avoids.
DEFAULT_WORST_CASE_CONTINUOUS = ("moments", "distance", "fingerprint")
#: ``default`` on real tables: the same set (a deterministic release repeats whatever
#: the table; moments of the raw columns keep sub-threshold shifts).
DEFAULT_REAL = ("querybased", "moments", "fingerprint")

#: The white-box attacks of ``--release transcript`` (a release kind chooses them;
#: ``--attack`` does not name them): name -> ``"module:Class"``.
TRANSCRIPT_ATTACKS = {
    "likelihood-ratio": "dpaudit.attacks.likelihood_ratio:LikelihoodRatioAttack",
    "measurement-ratio": "dpaudit.attacks.measurements:MeasurementAttack",
}

__all__ = [
    "ALL",
    "ATTACK_NAMES",
    "DEFAULT",
    "DEFAULT_REAL",
    "DEFAULT_WORST_CASE",
    "DEFAULT_WORST_CASE_CONTINUOUS",
    "SET_NAMES",
    "TRANSCRIPT_ATTACKS",
]
