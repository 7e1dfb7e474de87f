"""The attention map of each variant (`theory.attention`): its answers by value."""

import numpy as np
import pytest

from attnphase import Mixture, ModelParams, Tied, Untied
from attnphase.theory.attention import MixtureMap, TiedMap, UntiedMap, attention_map
from attnphase.theory.attention import valid_branches as branches_of
from attnphase.theory.qmc.engine import start_overlaps


def test_each_variant_has_its_map():
    assert attention_map(Tied()) == TiedMap()
    assert attention_map(Untied()) == UntiedMap()
    assert attention_map(Mixture(3, 0.2, 1.0)) == MixtureMap(Mixture(3, 0.2, 1.0))


def test_widths_ridges_and_mean_rows():
    assert (TiedMap().field_width(2), UntiedMap().field_width(1)) == (2, 2)
    assert (TiedMap().ridge(0.01), UntiedMap().ridge(0.01)) == (0.01, 0.005)
    assert (TiedMap().mean_rows, MixtureMap(Mixture(3, 0.0, 1.0)).mean_rows) == (0, 2)


def test_the_branches_a_variant_has():
    assert branches_of(Tied(), 1) == ("semantic", "positional", "trivial")
    assert branches_of(Tied(), 2) == ("semantic", "positional", "trivial", "mixed")
    assert branches_of(Untied(), 1) == ("semantic", "positional", "trivial")
    assert branches_of(Mixture(2, 0.5, 1.0), 1)[-1] == "clustered"


def test_untied_and_mixture_starts_build_on_the_tied_start():
    tied = start_overlaps("semantic", ModelParams())
    untied = start_overlaps("semantic", ModelParams(variant=Untied()))
    np.testing.assert_array_equal(untied.q, np.kron([[1.0, 0.9], [0.9, 1.0]], tied.q))
    np.testing.assert_array_equal(untied.theta, np.hstack([tied.theta, tied.theta]))
    clustered = start_overlaps("clustered", ModelParams(variant=Mixture(3, 0.0, 1.0)))
    np.testing.assert_array_equal(clustered.M, [[0.0], [0.2], [0.0]])  # K = 1, then 2 means
    np.testing.assert_array_equal(clustered.theta, tied.theta)  # the semantic start


def test_what_a_map_cannot_solve_is_named():
    with pytest.raises(ValueError, match="untied theory has student rank 1"):
        UntiedMap().check(ModelParams(rank=2, variant=Untied()))
    with pytest.raises(ValueError, match="clusters"):
        attention_map(Mixture(8, 0.0, 1.0)).check(ModelParams(A=np.eye(8)))
