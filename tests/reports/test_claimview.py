"""Every report says the claim's own terms and how to reproduce the audit: a pure
claim reads epsilon-DP, a claim above the budget asked is stated, a CONSISTENT with
one-sided errors says the rounds that would decide it, and the reproduction command
and versions are printed (terminal, Markdown, HTML)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpaudit.reports import load_results, render
from dpaudit.reports.terminal import render_terminal


def _doc(consistent_doc: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    doc = consistent_doc(
        eps_claimed=1.098,
        counts={"tp": 16, "fp": 0, "tn": 20, "fn": 4},
    )
    doc["claim"] = {
        "epsilon": 1.098,
        "delta": 0.0,
        "accountant": "pure epsilon-DP composition (MWEM)",
        "extra": {
            "library": {"values": ["smartnoise-synth 1.0.8"], "distinct": 1},
            "worker_python": {"values": ["3.11.7"], "distinct": 1},
        },
    }
    doc["config"]["generator"] = "smartnoise-mwem"
    doc["config"]["variant"] = None
    doc["config"]["generator_options"] = {"preprocessing": "public"}
    doc["config"]["rounds"] = 50
    return doc


def test_every_report_states_claim_budget_rounds_and_reproduction(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict[str, Any]]
) -> None:
    results = load_results(make_audit("a", _doc(consistent_doc)))
    texts = {fmt: render(results, fmt) for fmt in ("md", "html")}
    texts["terminal"] = render_terminal(results[0])
    for fmt, text in texts.items():
        text = text.replace("\\_", "_").replace("&#39;", "'")
        assert "1.098-DP (pure epsilon-DP)" in text, fmt
        assert "(1.098, 1e-05)-DP" not in text, fmt
        assert "pure epsilon-DP composition (MWEM)" in text, fmt
        assert "above the budget asked" in text, fmt
        assert "rounds to decide" in text, fmt
        assert "dpaudit audit --generator smartnoise-mwem" in text, fmt
        assert "--option preprocessing=public" in text, fmt
        assert "Python 3.11.7, smartnoise-synth 1.0.8" in text, fmt
    md = render(results, "md")
    assert "&gt;" not in md and "&lt;" not in md


def test_a_consistent_paragraph_names_every_attack_and_the_release_row(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict[str, Any]]
) -> None:
    """Three attacks ran: the CONSISTENT paragraph names the three, not only the
    headline; every two-world report says whether the release was constant."""
    doc = consistent_doc()
    first = doc["attacks"]["querybased"]
    doc["attacks"] = {
        name: dict(first) for name in ("moments", "distance", "fingerprint")
    }
    doc["attack"] = "distance"
    results = load_results(make_audit("three", doc))
    for text in (render_terminal(results[0]), render(results, "md")):
        flat = " ".join(text.replace("\\_", "_").split())
        assert "the 3 attacks (moments, distance, fingerprint)" in flat
        assert "constant release" in flat and "no: the release differs" in flat
    single = load_results(make_audit("one", consistent_doc()))
    flat = " ".join(render_terminal(single[0]).split())
    assert "the querybased attack, on this target record" in flat


def test_a_plugin_report_says_why_it_has_no_trace_and_hides_injected_keys(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict[str, Any]]
) -> None:
    """A report without a training trace says why (HTML, where traces are drawn);
    `worker_python`, which dpaudit adds to a foreign claim, is not listed among the
    generator's own claim keys (the versions row shows it)."""
    from dpaudit.reports.traceview import NO_TRACE

    results = load_results(make_audit("plugin", _doc(consistent_doc)))
    assert results[0].trace is None
    html = render(results, "html").replace("&#39;", "'")
    assert "Training traces" in html and NO_TRACE.split(":")[0] in html
    for text in (render(results, "md"), render_terminal(results[0])):
        assert "library" in text and "smartnoise-synth 1.0.8" in text
        own = [line for line in text.splitlines() if "worker_python" in line]
        assert own == [], own


def test_a_plugin_audit_reproduces_with_its_pythonpath(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict[str, Any]]
) -> None:
    """A plug-in (module:Class) is imported from its folder: the reproduce line
    starts with the PYTHONPATH it needs; a built-in's does not."""
    doc = consistent_doc()
    doc["config"]["generator"] = "noisy_histogram:NoisyHistogram"
    text = " ".join(render_terminal(load_results(make_audit("p", doc))[0]).split())
    assert (
        "PYTHONPATH=. dpaudit audit --generator noisy_histogram:NoisyHistogram" in text
    )
    builtin = " ".join(
        render_terminal(load_results(make_audit("b", consistent_doc()))[0]).split()
    )
    assert "PYTHONPATH" not in builtin
