"""What a library's accountant computed, recorded while it trains (docs/adapters.md).

Both recorders wrap a library function or class for the duration of one fit (a
``with`` block) and pass every result through unchanged; afterwards they state the
library's final epsilon and the RDP curve behind it as a claim's profile
(docs/plugins.md, "The claim's profile"). Standard library, numpy and what the
library brought only.
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.adapters._common import rdp_curve


class MomentsLedger:
    """Records every call of smartnoise's PATE moments accountant (``moments_acc``)
    while a PATE synthesizer trains, so the claim carries the library's own final
    epsilon: ``min over l of (sum of moments - log delta) / l``, the value its stop
    rule compares with the budget. Each call's result passes through unchanged."""

    def __init__(self, module: Any) -> None:
        self.module, self.original = module, module.moments_acc
        self.calls, self.queries, self.total = 0, 0, None

    def __call__(
        self,
        num_teachers: Any,
        votes: Any,
        lap_scale: Any,
        l_list: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        moments = self.original(num_teachers, votes, lap_scale, l_list, *args, **kwargs)
        self.calls += 1
        self.queries += int(votes.numel())
        self.total = moments.clone() if self.total is None else self.total + moments
        self.l_list, self.num_teachers, self.lap_scale = l_list, num_teachers, lap_scale
        return moments

    def __enter__(self) -> MomentsLedger:
        self.module.moments_acc = self
        return self

    def __exit__(self, *exc: Any) -> None:
        self.module.moments_acc = self.original

    def epsilon(self, delta: float) -> float | None:
        if self.total is None:
            return None
        return float(min((self.total - math.log(delta)) / self.l_list).item())

    def profile(self) -> dict[str, Any]:
        """The accumulated moments as the RDP curve they state: ``alpha(l) / l`` at
        order ``l + 1`` (as the library computed them: its ``moments_acc`` clamps the
        term without its log, the ``accountant_missing_log`` defect of
        docs/bugs.md)."""
        if self.total is None:
            return {}
        ls = self.l_list.double().cpu().numpy()
        curve, left_out = rdp_curve(ls + 1.0, self.total.double().cpu().numpy() / ls)
        out: dict[str, Any] = {"rdp": curve}
        if left_out:
            out["rdp_orders_left_out"] = left_out
        return out


class OpacusLedger:
    """Records every Opacus ``PrivacyEngine`` the library creates during a fit, and
    the step count at each of its reads (``get_privacy_spent``), so the claim can
    state the RDP curve behind the epsilon the library read last.

    Opacus's RDP at its orders (``alphas``) for the steps counted at that read is
    the per-step RDP of the subsampled Gaussian times those steps: what
    ``get_privacy_spent`` converts. Steps trained after that read (smartnoise's
    DPCTGAN reads at the start of each epoch) are in neither its epsilon nor this
    curve; ``engines[-1].steps`` counts them all.
    """

    def __init__(self) -> None:
        self.engines: list[Any] = []

    def __enter__(self) -> OpacusLedger:
        opacus: Any = __import__("opacus")
        self.module, self.original = opacus, opacus.PrivacyEngine
        engines = self.engines

        class Recording(self.original):  # type: ignore[misc, name-defined]
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                engines.append(self)
                self.reads_: list[int] = []

            def get_privacy_spent(self, *args: Any, **kw: Any) -> Any:
                self.reads_.append(int(self.steps))
                return super().get_privacy_spent(*args, **kw)

        opacus.PrivacyEngine = Recording
        return self

    def __exit__(self, *exc: Any) -> None:
        self.module.PrivacyEngine = self.original

    def profile(self) -> dict[str, Any]:
        """``rdp`` at the steps of the last read and ``opacus_steps_at_claim``; empty
        when no engine was read."""
        if not self.engines or not self.engines[-1].reads_:
            return {}
        engine = self.engines[-1]
        steps = engine.reads_[-1]
        per_step = engine.get_renyi_divergence().double().cpu().numpy()
        curve, left_out = rdp_curve(engine.alphas, per_step * steps)
        out: dict[str, Any] = {"rdp": curve, "opacus_steps_at_claim": steps}
        if left_out:
            out["rdp_orders_left_out"] = left_out
        return out
