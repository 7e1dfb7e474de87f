"""The scaling row's precision ladder: QMC points doubled while the scramblings disagree on
which branches exist, up to the settings' budget, the row saying where it stopped."""

import pytest

from attnphase.params import ModelParams
from attnphase.scaling import ScanSettings
from attnphase.scaling import point as sp


class FakeBranch:
    """A branch followed on a grid, on it where `flags` says."""

    def __init__(self, flags):
        self.grid = list(range(len(flags)))
        self.flags = flags

    def on(self, g):
        return self.flags[g]


def fake_roots(semantic, positional):
    return {"semantic": FakeBranch(semantic), "positional": FakeBranch(positional)}


def test_disagreements_name_the_branch_and_the_alphas():
    alphas = [0.1, 0.2, 0.4]
    agree = [fake_roots([0, 1, 1], [1, 1, 0]) for _ in range(3)]
    assert sp.disagreements(alphas, agree) == []
    split = agree[:2] + [fake_roots([0, 0, 1], [1, 1, 0])]
    assert sp.disagreements(alphas, split) == ["semantic at alpha 0.2"]


@pytest.mark.parametrize(
    "agree_from, budget, used",
    [
        (1024, 4096, 1024),
        (2048, 4096, 2048),
        (8192, 4096, 4096),
    ],
)
def test_the_ladder_doubles_until_the_replicas_agree_or_the_budget(
    monkeypatch, agree_from, budget, used
):
    """A fake scan whose scramblings disagree below `agree_from` points: the ladder stops at
    the first agreement, or at the budget with the disagreement kept for the row."""
    scanned = []

    class Scan:
        def __init__(self, points):
            self.replicas, self.eps_lin = [points] * 4, 0.0

    def scan_replicas(p, alphas, method, **kw):
        scanned.append(method.points)
        return Scan(method.points)

    monkeypatch.setattr(sp, "scan_replicas", scan_replicas)
    calls = iter(range(100))

    def roots(alphas, points, eps_lin):  # replicas differ where the scan is split
        k = next(calls)
        split = points < agree_from and k % 2
        return fake_roots([0, 0 if split else 1, 1], [1, 1, 0])

    monkeypatch.setattr(sp, "replica_roots", roots)
    p = ModelParams(A=((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6)))
    s = ScanSettings(points=1024, max_points=budget)
    method, _, per, split = sp._agreed_scan(p, [0.1, 0.2, 0.4], s, "positional", False)
    assert method.points == used and scanned == [1024 * 2**k for k in range(len(scanned))]
    assert scanned[-1] == used
    assert bool(split) == (agree_from > budget)  # kept for the row where the budget ran out


def test_the_budget_is_checked_with_the_settings():
    assert ScanSettings().max_points == 2048 and ScanSettings(points=4096).max_points == 4096
    with pytest.raises(ValueError, match="max_points"):
        ScanSettings(points=2048, max_points=1024)
    with pytest.raises(ValueError, match="power of two"):
        ScanSettings(max_points=3000)
