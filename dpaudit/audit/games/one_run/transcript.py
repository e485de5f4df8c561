"""The one-run game's white-box release: each canary scored from the noisy answers
of its own cells in the measurements a plug-in or adapter states
(``privacy_transcript``, docs/plugins.md, "The measurement transcript").

A fit's transcript is a list of noisy counts: answer ``i`` counts the training
records whose values on its record's columns fall in its cells, plus noise of the
stated kind and scale. The training table is the public base plus the included
canaries, so an answer's exact count is ``base_i + sum_j b_j [canary j in answer
i]``: the base's count (public) plus one for each included canary it counts. An
answer that counts exactly one canary ``j`` is *its own*: its exact count is
``base_i + b_j``, which depends on no other canary's bit, so

    score_j = sum over j's own answers of log p(y_i | base_i + 1) - log p(y_i | base_i)

(Gaussian: ``((y - c0)^2 - (y - c1)^2) / (2 sigma^2)``; Laplace: ``(|y - c0| - |y -
c1|) / b``) is a function of the release and public information alone: the
exact log-likelihood ratio of canary ``j``'s bit given its own answers. Answers that
count several canaries are left out: their exact count depends on the other
canaries' secret bits, so they are not evidence about one canary that a guess may
use (docs/soundness.md, "The one-run game on a measurement transcript"). The
category canaries of ``worst-case`` each carry a value no other record has, so a
mechanism that measures the ``canary`` column gives each canary a cell of its own;
on ``worst-case-unique`` a canary holds a value of its own in every column, so every
marginal (one-way or k-way) has a cell of its own per canary (its own value in each
of the marginal's columns) and every answer that counts it is its own: the score
sums them all, the whole per-record sensitivity of a marginal mechanism.

A record stated without noise, or with a scale of 0 (noise ``exact``), states exact
answers: an own answer then equals ``base_i + b_j`` and scores ``+inf`` (nearer
``base_i + 1``) or ``-inf`` (nearer ``base_i``). Such a release satisfies no
``(epsilon, delta)`` with ``delta < 1`` for the canary it counts; the result says so
(:func:`exact_privacy`), beside the bound's verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.attacks.measurements import exact_epsilon
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.result.measurements import MeasurementSummary
from dpaudit.audit.result.model import Claim
from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators.base import Generator
from dpaudit.generators.foreign.transcript import EXACT, Measurement
from dpaudit.rng import Rngs
from dpaudit.worst_case.canaries import CanaryDesign

__all__ = [
    "SCORE_NAME",
    "CanaryAnswers",
    "check_generator",
    "exact_privacy",
    "fit_and_read",
    "own_answers",
    "score_transcript",
    "transcript_budget",
    "transcript_note",
]

#: The score's name in the result.
SCORE_NAME = "own-cell-llr"
#: Ratios (1 / scale) equal to this many digits are one Laplace mechanism in the
#: composition (as the two-world attack rounds them).
_DIGITS = 12


def check_generator(name: str, reads_transcript: bool, transcript_kind: str) -> None:
    """Refuses, before any fit, a generator that cannot hand over a measurement
    transcript (one line, exit 2).

    ``reads_transcript``: the generator hands over a stated transcript (its
    traits: :func:`~dpaudit.audit.games.resolved.generator_traits`);
    ``transcript_kind``: what the registry says ``--release transcript`` is for it
    (``measurements`` for plug-ins and adapters; ``replay`` for dpaudit's own
    PATE-GAN and G-PATE, whose votes the two-world game replays).
    """
    if transcript_kind != "measurements" or not reads_transcript:
        raise InvalidParameterError(
            f"`--release transcript` with `--game one-run` audits the measurements a "
            f"plug-in or adapter states (privacy_transcript); {name!r} states none: "
            "use --release table, or --game two-world for the noisy votes of "
            "dpaudit's pategan and gpate."
        )


def transcript_budget() -> int | None:
    """The memory one fit's transcript may take while it is read (``None``: no limit
    can be read): the memory available now less the interpreter's base. The game
    holds one transcript at a time; a larger one (a design of many canaries with a
    mechanism that measures k-way marginals: ``(m + 1)^k`` cells each on
    ``worst-case-unique``) is refused in one line before any cell is checked
    (:func:`~dpaudit.generators.foreign.transcript.check_transcript`)."""
    from dpaudit.audit.games.memory import BASE_BYTES, system_limit

    limit = system_limit()
    return None if limit is None else max(0, limit.bytes - BASE_BYTES)


def fit_and_read(
    make_generator: Callable[[], Generator],
    table: Any,
    rngs: Rngs,
    *,
    design: CanaryDesign,
    name: str,
) -> tuple[Generator, tuple[Measurement, ...]]:
    """One fit on ``table`` (from the fit's own streams; nothing is sampled: the
    transcript is the release) and its stated transcript, noise absent or 0 read
    as exact answers, refused when larger than :func:`transcript_budget`.

    Raises:
        PluginError: the fitted model states no transcript, or a record breaks the
            contract.
    """
    fit_rng = Streams.fit_and_sample(rngs)[0]
    model: Any = make_generator().fit(table, domain=design.domain, rng=fit_rng)
    records = model.read_transcript(exact=True, max_bytes=transcript_budget())
    forget = getattr(model, "forget", None)
    if callable(forget):
        forget()
    if records is None:
        raise PluginError(
            f"generator {name!r} states no `privacy_transcript` after fit: "
            "`--release transcript` audits the measurements a plug-in states "
            '(docs/plugins.md, "The measurement transcript"); state them, or use '
            "--release table."
        )
    return model, tuple(records)


@dataclass(frozen=True, slots=True)
class CanaryAnswers:
    """Which answers of one transcript count which canaries.

    Attributes:
        noise, scale: per answer (flattened over the records, in order): the
            stated noise kind and scale.
        noisy: per answer, the released value.
        base: per answer, the public base's exact count.
        owner: per answer, the one canary it counts (index into the design's
            canaries), ``-1`` when it counts none, ``-2`` when it counts several.
        touches: per canary, the indices of every answer that counts it (its own
            and shared ones): what the canary changes.
    """

    noise: tuple[str, ...]
    scale: NDArray[np.float64]
    noisy: NDArray[np.float64]
    base: NDArray[np.float64]
    owner: NDArray[np.int64]
    touches: tuple[tuple[int, ...], ...]

    @property
    def own(self) -> int:
        """Answers that count exactly one canary."""
        return int(np.sum(self.owner >= 0))


def own_answers(records: Sequence[Measurement], design: CanaryDesign) -> CanaryAnswers:
    """Each answer's base count and the canaries it counts (public: the base and the
    canaries are the design's; the bits are not read).

    >>> from dpaudit.worst_case.canaries import canary_design
    >>> d = canary_design("worst-case", canaries=2)
    >>> r = Measurement(columns=("canary",), cells=(("base",), ("c0",), ("c1",)),
    ...     noisy=(4.0, 1.0, 0.0), noise="gaussian", scale=1.0)
    >>> a = own_answers([r], d)
    >>> a.base.tolist(), a.owner.tolist(), a.touches
    ([4.0, 0.0, 0.0], [-1, 0, 1], ((1,), (2,)))
    """
    noise: list[str] = []
    scale: list[float] = []
    noisy: list[float] = []
    base: list[float] = []
    owner: list[int] = []
    touches: list[list[int]] = [[] for _ in range(len(design.canaries))]
    for record in records:
        columns = list(record.columns)
        base_counts = Counter(
            zip(*(design.base[c].tolist() for c in columns), strict=True)
        )
        canary_cells = list(
            zip(*(design.canaries[c].tolist() for c in columns), strict=True)
        )
        index: dict[tuple[Any, ...], list[int]] = {}
        for k, cell in enumerate(record.cells):
            index.setdefault(cell, []).append(k)
        # Canaries by the cells they fall in (a cell stated twice counts a record
        # at each index, as the exact count of each index does).
        by_cell: dict[int, list[int]] = {}
        for j, cell in enumerate(canary_cells):
            for k in index.get(cell, ()):
                by_cell.setdefault(k, []).append(j)
        first = len(noisy)
        for i, members in enumerate(record.answer_cells()):
            counted = [j for k in members for j in by_cell.get(k, ())]
            noise.append(record.noise)
            scale.append(record.scale)
            noisy.append(record.noisy[i])
            base.append(
                float(sum(base_counts.get(record.cells[k], 0) for k in members))
            )
            # One canary counted once: its own answer (exact count base + its bit).
            # Counted twice (a cell stated twice in one set, which no adapter
            # does), the answer moves by 2 with its bit: left out of the score as
            # shared; its privacy below counts a change of 1 (an understatement).
            owner.append(counted[0] if len(counted) == 1 else (-2 if counted else -1))
            for j in dict.fromkeys(counted):
                touches[j].append(first + i)
    return CanaryAnswers(
        noise=tuple(noise),
        scale=np.asarray(scale, dtype=np.float64),
        noisy=np.asarray(noisy, dtype=np.float64),
        base=np.asarray(base, dtype=np.float64),
        owner=np.asarray(owner, dtype=np.int64),
        touches=tuple(tuple(t) for t in touches),
    )


def _llr(noise: str, scale: float, y: float, c0: float, c1: float) -> float:
    """``log p(y | c1) - log p(y | c0)`` under the stated noise (``exact``: the
    limit as the scale goes to 0: ``+inf`` nearer ``c1``, ``-inf`` nearer ``c0``)."""
    if noise == "gaussian":
        return ((y - c0) ** 2 - (y - c1) ** 2) / (2.0 * scale * scale)
    if noise == "laplace":
        return (abs(y - c0) - abs(y - c1)) / scale
    assert noise == EXACT
    gap = abs(y - c0) - abs(y - c1)
    return math.copysign(math.inf, gap) if gap != 0 else 0.0


def score_transcript(answers: CanaryAnswers, canaries: int) -> NDArray[np.float64]:
    """One score per canary: the sum of the exact log-likelihood ratios of its own
    answers (0 for a canary without one: no evidence either way).

    >>> from dpaudit.worst_case.canaries import canary_design
    >>> d = canary_design("worst-case", canaries=2)
    >>> r = Measurement(columns=("canary",), cells=(("base",), ("c0",), ("c1",)),
    ...     noisy=(4.0, 1.0, 0.0), noise="gaussian", scale=1.0)
    >>> score_transcript(own_answers([r], d), 2).tolist()
    [0.5, -0.5]
    """
    scores = np.zeros(canaries, dtype=np.float64)
    for i in np.flatnonzero(answers.owner >= 0):
        c0 = float(answers.base[i])
        scores[answers.owner[i]] += _llr(
            answers.noise[i],
            float(answers.scale[i]),
            float(answers.noisy[i]),
            c0,
            c0 + 1.0,
        )
    return scores


@dataclass(frozen=True, slots=True)
class _Privacy:
    """One canary's exact privacy under the stated measurements."""

    mu2: float
    laplace: tuple[tuple[float, int], ...]
    exact: int


def _canary_privacy(answers: CanaryAnswers, chosen: Sequence[int]) -> _Privacy:
    mu2, exact = 0.0, 0
    laplace: Counter[float] = Counter()
    for i in chosen:
        kind, s = answers.noise[i], float(answers.scale[i])
        if kind == "gaussian":
            mu2 += 1.0 / (s * s)
        elif kind == "laplace":
            laplace[round(1.0 / s, _DIGITS)] += 1
        else:
            exact += 1
    return _Privacy(
        mu2=round(mu2, _DIGITS), laplace=tuple(sorted(laplace.items())), exact=exact
    )


def exact_privacy(
    fits: Sequence[CanaryAnswers],
    *,
    claim: Claim,
    delta: float,
) -> MeasurementSummary:
    """The ``measurements`` section of a one-run transcript audit: per canary, the
    exact privacy of every stated answer it changes (its own and those it shares:
    adding or removing it changes each by one, whatever the other bits), the largest
    over the canaries of all fits; beside it what the claim allows.

    A canary that changes an exact answer (noise ``exact``) is released with no
    noise: its privacy is infinite (``eps_exact`` and ``spent`` are ``inf``,
    written as null), and a claim with ``delta < 1`` allows no such release.
    """
    from dpaudit.audit.games.measurements import LEAVES_OUT, spend_in_claim_terms

    worst = _Privacy(mu2=0.0, laplace=(), exact=0)
    worst_eps = 0.0
    own_mu2 = 0.0
    records = gaussian = laplace = changed = own = exact_changed = 0
    seen: dict[_Privacy, float] = {}
    for answers in fits:
        records = max(records, len(answers.noise))
        gaussian = max(gaussian, answers.noise.count("gaussian"))
        laplace = max(laplace, answers.noise.count("laplace"))
        counted = answers.owner != -1
        changed = max(changed, int(np.sum(counted)))
        own = max(own, answers.own)
        exact_changed = max(
            exact_changed,
            sum(1 for i in np.flatnonzero(counted) if answers.noise[i] == EXACT),
        )
        own2 = np.zeros(len(answers.touches), dtype=np.float64)
        kinds = [
            (answers.noise[i], float(answers.scale[i]))
            for i in range(len(answers.noise))
        ]
        memo: dict[tuple[tuple[str, float], ...], _Privacy] = {}
        for touched in answers.touches:
            key = tuple(kinds[i] for i in touched)
            if key not in memo:
                memo[key] = _canary_privacy(answers, touched)
            p = memo[key]
            if p not in seen:
                seen[p] = (
                    math.inf
                    if p.exact
                    else exact_epsilon(math.sqrt(p.mu2), p.laplace, float(delta))
                )
            if seen[p] > worst_eps or (seen[p] == worst_eps and p.mu2 > worst.mu2):
                worst, worst_eps = p, seen[p]
        for i in np.flatnonzero(answers.owner >= 0):
            if answers.noise[i] == "gaussian":
                own2[answers.owner[i]] += 1.0 / float(answers.scale[i]) ** 2
        own_mu2 = max(own_mu2, float(own2.max(initial=0.0)))
    mu = math.sqrt(worst.mu2) if gaussian else None
    if worst.exact:
        mu = math.inf
    only_gaussian = gaussian > 0 and laplace == 0 and exact_changed == 0
    rho = mu * mu / 2.0 if only_gaussian and mu is not None else None
    term, claimed, spent = spend_in_claim_terms(claim, mu=mu, rho=rho, eps=worst_eps)
    if worst.exact and term != "epsilon":
        term, claimed, spent = "epsilon", claim.epsilon, math.inf
    exact_note = (
        f"; {exact_changed} answer(s) stated without noise (exact counts) that "
        "canaries change: as stated, such a release satisfies no (epsilon, delta) "
        "with delta < 1"
        if exact_changed
        else ""
    )
    return MeasurementSummary(
        records=records,
        gaussian_answers=gaussian,
        laplace_answers=laplace,
        answers_changed=changed,
        varies=len({round(v, 9) for v in seen.values()}) > 1,
        mu_exact=mu,
        rho_exact=rho,
        eps_exact=worst_eps,
        eps_delta=float(delta),
        mu_ceiling=None,
        mu_to_ceiling=None,
        term=term,
        claimed=claimed,
        spent=spent,
        spends_more_than_claimed=None
        if claimed is None or spent is None
        else spent > claimed * (1.0 + 1e-3),
        covers=(
            f"the stated measurements per canary: {gaussian} Gaussian and {laplace} "
            f"Laplace noisy count(s) per fit (the most in any fit), {changed} of them "
            f"counting canaries, {own} a single canary's own (the score's evidence"
            + (f"; own-cell mu {math.sqrt(own_mu2):.4g} at most" if gaussian else "")
            + "); the exact privacy is the largest over the canaries of every answer "
            f"each changes{exact_note}"
        ),
        leaves_out=LEAVES_OUT
        + "; and, in the score, every answer that counts several canaries (its "
        "exact count depends on the other canaries' secret bits)",
    )


def transcript_note(
    answers: Sequence[CanaryAnswers], measurements: MeasurementSummary | None
) -> str:
    """What the verdict reason adds under ``--release transcript`` (``""``: nothing):
    that no canary had an answer of its own, and that the transcript states exact
    answers a canary changes."""
    note = ""
    if not any(a.own for a in answers):
        note += (
            " No stated answer counts a single canary (each counts none or several), "
            "so no canary had evidence of its own and the scores are all 0: the "
            "one-run game cannot see these measurements; --game two-world tests "
            "them whole."
        )
    if measurements is not None and (
        measurements.eps_exact is None or math.isinf(measurements.eps_exact)
    ):
        note += (
            " The transcript states exact answers (noise zero or missing) that "
            "canaries change: as stated, the release satisfies no (epsilon, delta) "
            "with delta < 1, so the claim allows no such release."
        )
    return note
