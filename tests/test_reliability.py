"""Every figure of bench/reliability.py (issue 20) on its target, measured the same way
against real local servers: SSRF refusals, deadlines, canaries, request options, LLM faults,
durability of runs, slot release after a 504, 500s under Schemathesis."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import reliability_net as net
import reliability_runs as runs
import reliability_service as service
from faults import Figure


def on_target(figures: list[Figure]) -> None:
    assert figures
    missed = [f.line() for f in figures if not f.ok]
    assert not missed, "\n".join(missed)


@pytest.mark.parametrize(
    "group",
    [net.ssrf, net.deadlines, service.canaries, service.options, service.slot_release],
    ids=["ssrf", "deadlines", "canaries", "options", "slot-release"],
)
def test_figures(group: Callable[[], list[Figure]]) -> None:
    on_target(group())


@pytest.mark.slow
def test_llm_fault_kinds_are_retried_and_recorded() -> None:
    figures = runs.llm_faults()
    on_target(figures)
    assert len(figures) == len(runs.KINDS)


@pytest.mark.slow
def test_no_item_lost_or_duplicated_after_kills_corruption_and_a_second_writer() -> None:
    figures = runs.durability(points=20)
    on_target(figures)
    assert "20 random points" in figures[0].name  # every kill landed mid-run


@pytest.mark.slow
def test_no_500_under_schemathesis_on_any_endpoint() -> None:
    on_target(service.schemathesis_500s(25))
