"""Every example in the docstrings of the public API (`attnphase.__all__`) runs and prints what
it says (doctest). The examples are the API pages' Examples sections."""

from __future__ import annotations

import doctest
import inspect

import pytest

import attnphase

# examples that run a solve or a simulation (seconds to tens of seconds) count as such; a
# documented object with none is fine, but the front door must keep its examples
EXPECTED = {"ModelParams", "QMC", "Heads", "Rotary", "solve", "learning_curve", "simulate"}
EXPECTED |= {"find_transitions", "solve_batch", "TheoryResult"}


def _examples() -> dict[str, doctest.DocTest]:
    finder = doctest.DocTestFinder(recurse=False)
    tests = {}
    for name in attnphase.__all__:
        obj = getattr(attnphase, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        for test in finder.find(obj, name, globs={}):
            if test.examples:
                tests[name] = test
    return tests


EXAMPLES = _examples()


def test_the_front_door_has_examples():
    assert EXPECTED <= set(EXAMPLES), sorted(EXPECTED - set(EXAMPLES))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_docstring_example_runs(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(EXAMPLES[name])
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
