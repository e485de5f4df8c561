"""The names of the claimed regions a verdict refuted, summarised for people.

``regions_violated`` (``result.json``) keeps one name per region: ``lines`` (the
(epsilon, delta) pair, named only where the pair's own test refutes it), ``gdp``,
``rdp@<order>`` per refuted stated order, ``zcdp@<order>`` and :data:`WHOLE_CLAIM`.
A stated RDP curve has tens of orders; every report names them as one span
(``RDP at 31 orders, 1.03 to 32.6``), never one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["WHOLE_CLAIM", "order_text", "orders_span", "regions_summary"]

#: ``regions_violated`` when the claim's calibrated test refutes the claimed region
#: as a whole and neither the pair's own test nor one stated profile region on its
#: own is what the test point lies outside of.
WHOLE_CLAIM = "claim"


def order_text(order: float) -> str:
    """An RDP order to three significant figures, whole numbers from 100 on.

    >>> order_text(1.03162), order_text(32.6228), order_text(1001.0), order_text(2.0)
    ('1.03', '32.6', '1001', '2')
    """
    return f"{order:.0f}" if abs(order) >= 100 else f"{order:.3g}"


def orders_span(orders: Sequence[float]) -> str:
    """``46 orders, 1.03 to 1001``; ``order 2`` for one; ``no orders`` for none.

    >>> orders_span([1.03162, 2.0, 1001.0]), orders_span([8.0])
    ('3 orders, 1.03 to 1001', 'order 8')
    """
    if not orders:
        return "no orders"
    if len(orders) == 1:
        return f"order {order_text(orders[0])}"
    low, high = min(orders), max(orders)
    return f"{len(orders)} orders, {order_text(low)} to {order_text(high)}"


def regions_summary(regions: Iterable[str], *, words: bool = False) -> str:
    """The violated regions in one short phrase, the RDP orders as one span.

    ``words``: for a sentence (``the (epsilon, delta) lines, the GDP curve``); else
    the names as ``result.json`` spells them (``lines, gdp, rdp at 2 orders, 2 to
    8``). ``none`` when there are none.

    >>> regions_summary(["lines", "gdp", "rdp@2", "rdp@8"])
    'lines, gdp, rdp at 2 orders, 2 to 8'
    >>> regions_summary(["gdp", "rdp@1.03162", "zcdp@3.2"], words=True)
    'the GDP curve, RDP at order 1.03, zCDP (at order 3.2)'
    """
    regions = list(regions)
    orders: list[float] = []
    parts: list[str] = []
    for region in regions:
        kind, _, order = region.partition("@")
        if kind == "rdp":
            try:
                orders.append(float(order))
            except ValueError:
                parts.append(region)
            continue
        if not words:
            parts.append(region)
        elif kind == "lines":
            parts.append("the (epsilon, delta) lines")
        elif kind == "gdp":
            parts.append("the GDP curve")
        elif kind == "zcdp":
            parts.append(f"zCDP (at order {order})")
        elif kind == WHOLE_CLAIM:
            parts.append("the claimed region as a whole")
        else:
            parts.append(region)
    if orders:
        span = f"{'RDP' if words else 'rdp'} at {orders_span(orders)}"
        at = next(i for i, r in enumerate(regions) if r.startswith("rdp@"))
        parts.insert(min(at, len(parts)), span)
    return ", ".join(parts) if parts else "none"
