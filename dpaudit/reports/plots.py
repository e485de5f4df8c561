"""Figures of a report, as inline SVG text.

Figures are built with :class:`matplotlib.figure.Figure` directly, never through
``pyplot``: no GUI backend is touched, no global state changes, and the report can be
rendered on a headless CI machine. SVG text is drawn as paths (no fonts needed to view
it) and carries no date, so the same result gives the same report.

The plots draw numbers already in the result (ROC points, scores, traces); they
estimate nothing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

from dpaudit.audit.result import LOW_FPRS
from dpaudit.reports.escape import printable
from dpaudit.reports.model import AttackResult, AuditResult, Trace
from dpaudit.reports.numbers import fmt_eps, fmt_number, fmt_percent
from dpaudit.reports.wording import (
    attainable,
    overall_confidence,
    per_attack_confidence,
)

__all__ = [
    "comparison_chart",
    "epsilon_bars",
    "epsilon_chart",
    "epsilon_trace_chart",
    "losses_chart",
    "records_seen_chart",
    "roc_chart",
    "score_histogram",
]

VERDICT_COLOURS: Mapping[str, str] = {
    "VIOLATION": "#c62828",
    "CONSISTENT": "#2e7d32",
    "INCONCLUSIVE": "#b45f06",  # amber: not evidence of privacy
}
_MEMBER = "#d95f02"
_NON_MEMBER = "#1b9e77"
_RC: Any = {  # matplotlib types rc keys as Literal; these are valid keys
    "svg.fonttype": "path",
    "svg.hashsalt": "dpaudit",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def _label(text: object, limit: int = 40) -> str:
    """User text made safe for matplotlib: control characters and lone surrogates
    as escapes (:func:`~dpaudit.reports.escape.printable`; matplotlib cannot draw
    a surrogate), no mathtext, bounded length."""
    s = printable(text)
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("$", r"\$")


#: The tallest bar :func:`epsilon_chart` draws (a larger value is drawn at this
#: height and labelled with its value).
_TALLEST = 1e100


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    with mpl.rc_context(_RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def _figure(width: float = 6.4, height: float = 3.6) -> Figure:
    with mpl.rc_context(_RC):
        return Figure(figsize=(width, height), layout="constrained")


def epsilon_bars(result: AuditResult) -> list[tuple[str, float, str, str]]:
    """The bars of :func:`epsilon_chart`: ``(name, value, value label, colour)``.

    The names state the level as every report does (overall, and per attack when
    several attacks ran) and the value labels are written as the reports write them.
    """
    bars: list[tuple[str, float, str, str]] = []
    if result.eps_emp is not None and math.isfinite(result.eps_emp):
        conf = f"{fmt_percent(overall_confidence(result))} overall"
        if result.estimator.several:
            conf += f",\n{fmt_percent(per_attack_confidence(result))} per attack"
        bars.append(
            (
                f"eps_emp\n(lower bound,\n{conf})",
                result.eps_emp,
                fmt_eps(result.eps_emp),
                VERDICT_COLOURS.get(result.verdict, "#757575"),
            )
        )
    bars.append(
        ("claimed", result.eps_claimed, fmt_number(result.eps_claimed), "#37474f")
    )
    if result.eps_reference is not None and math.isfinite(result.eps_reference):
        bars.append(
            (
                "reference\naccountant",
                result.eps_reference,
                fmt_number(result.eps_reference),
                "#78909c",
            )
        )
    top = attainable(result)
    if top is not None and math.isfinite(top):
        bars.append(("max attainable\n(this test size)", top, fmt_eps(top), "#cfd8dc"))
    return bars


def epsilon_chart(result: AuditResult) -> str:
    """Bars: eps_emp (a lower bound), the claim, the reference and the attainable max."""
    bars = epsilon_bars(result)
    with mpl.rc_context(_RC):
        fig = _figure(6.4, 3.0)
        ax = fig.add_subplot()
        names = [b[0] for b in bars]
        # heights capped (the labels keep the true values): matplotlib's axis
        # arithmetic overflows near a claim of 1e308
        values = [min(b[1], _TALLEST) for b in bars]
        rects = ax.bar(
            range(len(bars)),
            values,
            color=[b[3] for b in bars],
            edgecolor="#263238",
            linewidth=0.6,
        )
        ax.set_xticks(range(len(bars)), names)
        ax.bar_label(rects, labels=[b[2] for b in bars], padding=2)
        ax.axhline(
            min(result.eps_claimed, _TALLEST),
            color="#37474f",
            linestyle="--",
            linewidth=1,
        )
        ax.set_ylabel("epsilon")
        top = max(values) if values else 1.0
        if math.isfinite(top) and top > 0:
            ax.set_ylim(0, top * 1.18)
        return _svg(fig)


def comparison_chart(rows: Sequence[tuple[str, AttackResult, AuditResult]]) -> str:
    """eps_emp per audit and attack, with each claim and attainable maximum marked.

    Args:
        rows: ``(label, attack, audit)`` per bar.
    """
    with mpl.rc_context(_RC):
        fig = _figure(min(12.0, max(5.0, 0.75 * len(rows) + 2.5)), 3.6)
        ax = fig.add_subplot()
        x = list(range(len(rows)))
        values = [a.eps_emp if a.eps_emp is not None else 0.0 for _, a, _ in rows]
        colours = [
            VERDICT_COLOURS.get(r.verdict, "#757575")
            if a.name == r.attack
            else "#90a4ae"
            for _, a, r in rows
        ]
        ax.bar(
            x,
            values,
            width=0.6,
            color=colours,
            edgecolor="#263238",
            linewidth=0.6,
            label="eps_emp (lower bound)",
        )
        ax.hlines(
            [min(r.eps_claimed, _TALLEST) for _, _, r in rows],
            [i - 0.4 for i in x],
            [i + 0.4 for i in x],
            colors="#000000",
            linewidths=2,
            label="claimed",
            zorder=3,
        )
        tops = [
            (i, a.eps_max_attainable)
            for i, (_, a, _) in zip(x, rows)
            if a.eps_max_attainable is not None and math.isfinite(a.eps_max_attainable)
        ]
        if tops:
            ax.hlines(
                [t for _, t in tops],
                [i - 0.4 for i, _ in tops],
                [i + 0.4 for i, _ in tops],
                colors="#607d8b",
                linewidths=1.5,
                linestyles="dashed",
                label="max attainable",
                zorder=3,
            )
        highest = max(
            [
                *values,
                *(min(r.eps_claimed, _TALLEST) for _, _, r in rows),
                *(t for _, t in tops),
            ],
            default=1.0,
        )
        ax.set_ylim(
            0, (highest if math.isfinite(highest) and highest > 0 else 1.0) * 1.1
        )
        ax.set_xlim(-0.7, len(rows) - 0.3)
        ax.set_xticks(
            x, [_label(name, 32) for name, _, _ in rows], rotation=25, ha="right"
        )
        ax.set_ylabel("epsilon")
        ax.legend(
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncol=3,
            frameon=False,
            fontsize=8,
        )
        return _svg(fig)


def roc_chart(result: AuditResult, *, log: bool = False) -> str | None:
    """ROC curve of every attack on the test rounds; ``None`` when none has one.

    ``log``: log-log axes, the low-FPR view membership inference is read on (TPR at
    FPR 0.1% and 1% marked). The test rounds cannot show an FPR between 0 and
    ``1 / test_non_members``: that band is shaded, and points at FPR 0 are drawn at
    its left edge.
    """
    attacks = [a for a in result.attacks.values() if a.roc_fpr and a.roc_tpr]
    if not attacks:
        return None
    n0 = result.estimator.test_non_members
    resolution = (
        1.0 / n0
        if n0
        else min((f for a in attacks for f in a.roc_fpr if f > 0), default=1e-3)
    )
    floor = min(resolution, min(LOW_FPRS)) / 2
    with mpl.rc_context(_RC):
        fig = _figure(4.6, 4.2)
        ax = fig.add_subplot()
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            grid = [floor * (1.0 / floor) ** (i / 50) for i in range(51)]
            ax.plot(
                grid, grid, color="#9e9e9e", linestyle=":", linewidth=1, label="chance"
            )
            ax.axvspan(
                floor,
                resolution,
                color="#eceff1",
                zorder=0,
                label=f"FPR < 1/{n0 or '?'}: not resolvable",
            )
            for mark in LOW_FPRS:
                ax.axvline(mark, color="#b0bec5", linestyle="--", linewidth=0.8)
        else:
            ax.plot(
                [0, 1],
                [0, 1],
                color="#9e9e9e",
                linestyle=":",
                linewidth=1,
                label="chance",
            )
        for attack in attacks:
            auc = "" if attack.auc is None else f" (AUC {attack.auc:.3f})"
            fpr, tpr = attack.roc_fpr, attack.roc_tpr
            if log:
                points = [(max(f, floor), t) for f, t in zip(fpr, tpr) if t > 0]
                fpr, tpr = tuple(p[0] for p in points), tuple(p[1] for p in points)
            ax.plot(
                fpr,
                tpr,
                linewidth=1.6,
                label=_label(attack.name) + auc,
                drawstyle="steps-post" if log else "default",
            )
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("true-positive rate")
        if log:
            ax.set_xlim(floor, 1.0)
            ax.set_ylim(floor, 1.05)
            ax.legend(loc="lower right", frameon=False, fontsize=7)
        else:
            ax.set_xlim(-0.01, 1.01)
            ax.set_ylim(-0.01, 1.01)
            ax.set_aspect("equal")
            ax.legend(loc="lower right", frameon=False, fontsize=8)
        return _svg(fig)


def score_histogram(attack: AttackResult) -> str | None:
    """Scores of the test rounds in the two worlds; ``None`` without scores."""
    member, non_member = attack.scores_member, attack.scores_non_member
    if not member and not non_member:
        return None
    values = [v for v in (*member, *non_member) if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high <= low:
        low, high = low - 0.5, high + 0.5
    with mpl.rc_context(_RC):
        fig = _figure(5.2, 2.8)
        ax = fig.add_subplot()
        bins = 30
        ax.hist(
            non_member,
            bins=bins,
            range=(low, high),
            alpha=0.6,
            color=_NON_MEMBER,
            label=f"without target ({len(non_member)})",
        )
        ax.hist(
            member,
            bins=bins,
            range=(low, high),
            alpha=0.6,
            color=_MEMBER,
            label=f"with target ({len(member)})",
        )
        if attack.threshold is not None and math.isfinite(attack.threshold):
            side = (
                ""
                if attack.direction is None
                else (" (member if ≥)" if attack.direction >= 0 else " (member if ≤)")
            )
            ax.axvline(
                attack.threshold,
                color="#000000",
                linestyle="--",
                linewidth=1,
                label=f"threshold{side}",
            )
        ax.set_xlabel(f"{_label(attack.name)} score")
        ax.set_ylabel("test rounds")
        ax.legend(frameon=False, fontsize=8)
        return _svg(fig)


def _column(rows: Sequence[Mapping[str, Any]], name: str) -> list[Any]:
    return [row[name] for row in rows]


def records_seen_chart(trace: Trace) -> str | None:
    """Records each teacher saw during training, per model (the study's Figure 2)."""
    rows = trace.records_seen
    if not rows:
        return None
    models: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        models.setdefault(str(row["model"]), []).append(row)
    with mpl.rc_context(_RC):
        fig = _figure(6.4, 3.0)
        ax = fig.add_subplot()
        shown = list(models.items())[:8]
        width = 0.8 / len(shown)
        for i, (model, items) in enumerate(shown):
            items = sorted(items, key=lambda r: r["teacher"])
            teachers = _column(items, "teacher")
            ax.bar(
                [t - 0.4 + width * (i + 0.5) for t in teachers],
                _column(items, "records_seen"),
                width=width,
                label=_label(model, 20),
            )
        ax.set_xlabel("teacher")
        ax.set_ylabel("records seen")
        ax.set_xticks(sorted({r["teacher"] for _, items in shown for r in items}))
        if len(shown) > 1:
            ax.legend(
                title="model",
                frameon=False,
                fontsize=8,
                loc="upper left",
                bbox_to_anchor=(1.0, 1.0),
            )
        if len(models) > len(shown):
            ax.set_title(f"first {len(shown)} of {len(models)} models", fontsize=9)
        return _svg(fig)


def losses_chart(trace: Trace) -> str | None:
    """Teacher losses on their own partition versus the others (the study's Figure 3)."""
    rows = trace.losses
    if not rows:
        return None
    teachers: dict[Any, list[Mapping[str, Any]]] = {}
    for row in rows:
        teachers.setdefault(row["teacher"], []).append(row)
    with mpl.rc_context(_RC):
        fig = _figure(6.4, 3.2)
        ax = fig.add_subplot()
        cycle = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (teacher, items) in enumerate(sorted(teachers.items())[:10]):
            items = sorted(items, key=lambda r: r["iteration"])
            colour = cycle[i % len(cycle)]
            iterations = _column(items, "iteration")
            ax.plot(
                iterations,
                _column(items, "loss_own"),
                color=colour,
                linewidth=1.2,
                label=f"teacher {_label(teacher, 10)}: own",
            )
            ax.plot(
                iterations,
                _column(items, "loss_other"),
                color=colour,
                linewidth=1.2,
                linestyle="--",
                label=f"teacher {_label(teacher, 10)}: other",
            )
        ax.set_xlabel("iteration")
        ax.set_ylabel("loss")
        ax.legend(frameon=False, fontsize=7, ncol=2)
        return _svg(fig)


def epsilon_trace_chart(trace: Trace, *, claimed: float) -> str | None:
    """The accountant's epsilon over iterations (the study's Figure 4)."""
    rows = trace.epsilon
    if not rows:
        return None
    items = sorted(rows, key=lambda r: r["iteration"])
    iterations = _column(items, "iteration")
    with mpl.rc_context(_RC):
        fig = _figure(6.4, 3.0)
        ax = fig.add_subplot()
        ax.plot(
            iterations,
            _column(items, "epsilon"),
            color="#1565c0",
            linewidth=1.5,
            label="epsilon (accountant, data-dependent)",
        )
        ax.plot(
            iterations,
            _column(items, "epsilon_data_independent"),
            color="#6a1b9a",
            linewidth=1.2,
            linestyle="--",
            label="epsilon (data-independent)",
        )
        ax.axhline(
            claimed,
            color="#37474f",
            linestyle=":",
            linewidth=1,
            label="claimed epsilon",
        )
        positive = [
            v
            for r in items
            for v in (r["epsilon"], r["epsilon_data_independent"])
            if isinstance(v, int | float) and v > 0
        ]
        if positive and max(positive) / min(positive) > 1e3:
            ax.set_yscale("log")
        ax.set_xlabel("iteration")
        ax.set_ylabel("epsilon")
        ax.legend(frameon=False, fontsize=8)
        return _svg(fig)
