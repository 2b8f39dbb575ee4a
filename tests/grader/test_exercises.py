"""Every exercise proves itself: the solution is ACCEPTED, the starter is not, each mutant gets its verdict."""
from __future__ import annotations

import pytest

from grader.contract import Kind
from grader.host.pipeline import grade
from grader.host.spec import load_exercise
from tests.grader.factories import STATIC_GRAPH, grading_sandbox

SPEC = load_exercise(STATIC_GRAPH)


@pytest.fixture
def local(requires):
    return grading_sandbox("local", requires)


def test_the_starter_does_not_pass(local):
    verdict = grade(SPEC, SPEC.starter, local)
    assert verdict.verdict not in (Kind.ACCEPTED, Kind.INTERNAL_ERROR), verdict.to_dict()


@pytest.mark.parametrize("mutant", SPEC.mutants, ids=lambda m: m.name)
def test_each_mutant_gets_its_declared_verdict(mutant, local):
    verdict = grade(SPEC, mutant.code, local)
    assert verdict.verdict == mutant.expected, [(c.name, c.kind, c.message[:120]) for c in verdict.checks]
