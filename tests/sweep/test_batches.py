"""Batches of points in the one runner (`run_points(..., batch=, many=)`): points claimed
together go to a worker as one task, each stored with its own outcome; a failing point in a
batch fails alone; a resumed run batches only what is missing; theory points of a batch
(`evaluate_many`) equal those computed one by one, to the bit on the CPU."""

import pytest

from attnphase._core.interrupt import Interrupted
from attnphase.sweep import ResultStore, run_points
from attnphase.sweep.points import evaluate, evaluate_many, run_task
from attnphase.sweep.run import run_sweep
from attnphase.sweep.spec import SweepSpec, canonical_point
from tests.sweep_points import batch_sizes, counted, counted_many, markers

ALPHAS = [0.5 * k for k in range(1, 11)]


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    done, batches = tmp_path / "markers", tmp_path / "batches"
    done.mkdir()
    batches.mkdir()
    monkeypatch.setenv("SWEEP_MARKERS", str(done))
    monkeypatch.setenv("SWEEP_BATCHES", str(batches))
    return done, batches


def points(alphas):
    return [(f"p{a}", "theory", {"alpha": a}) for a in alphas]


def test_points_go_in_batches_and_are_stored_once_each(tmp_path, dirs):
    done, batches = dirs
    store = tmp_path / "s.sqlite"
    run = run_points(points(ALPHAS), counted, store=store, batch=4, many=counted_many)
    assert (run.computed, run.stored, run.failed) == (10, 0, 0)
    assert batch_sizes(batches) == [2, 4, 4]
    assert markers(done) == {a: 1 for a in ALPHAS}
    alone = run_points(points(ALPHAS), counted, store=None)
    assert {k: v[1]["value"] for k, v in run.outcomes.items()} == {
        k: v[1]["value"] for k, v in alone.outcomes.items()
    }
    with ResultStore(store) as db:
        assert len(db.frame()) == 10


def test_a_failing_point_fails_alone(tmp_path, dirs, monkeypatch):
    """The batch raises; its points are computed again one by one, so only the failing one
    carries the error."""
    monkeypatch.setenv("SWEEP_FAIL", "1.5")
    run = run_points(points(ALPHAS[:4]), counted, store=tmp_path / "s.sqlite", batch=4,
                     many=counted_many)  # fmt: skip
    assert (run.computed, run.failed) == (3, 1)
    status, _, error = run.outcomes["p1.5"]
    assert status == "error" and "injected failure at alpha=1.5" in error


def test_a_resumed_run_batches_only_the_missing_points(tmp_path, dirs):
    done, batches = dirs
    store = tmp_path / "s.sqlite"
    run_points(points(ALPHAS[::2]), counted, store=store)  # 5 of the 10 stored first
    run = run_points(points(ALPHAS), counted, store=store, batch=3, many=counted_many)
    assert (run.computed, run.stored) == (5, 5)
    assert sum(batch_sizes(batches)) == 5 and max(batch_sizes(batches)) <= 3
    assert markers(done) == {a: 1 for a in ALPHAS}


def test_batches_run_on_worker_processes(tmp_path, dirs):
    done, batches = dirs
    spec = SweepSpec("theory", {"alpha": ALPHAS})
    kw = dict(backend="process", workers=2, progress=False)
    df = run_sweep(spec, tmp_path / "s.sqlite", evaluate_point=counted, **kw, batch=4,
                   evaluate_batch=counted_many)  # fmt: skip
    assert sorted(df["alpha"]) == ALPHAS and (df["value"] == 2 * df["alpha"]).all()
    assert sum(batch_sizes(batches)) == 10 and max(batch_sizes(batches)) <= 4


@pytest.mark.parametrize("batch", [0, -1, 1.5, True])
def test_a_batch_size_must_be_a_positive_integer(batch):
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        run_points(points([1.0]), counted, store=None, batch=batch)


def test_theory_points_of_a_batch_equal_those_solved_alone():
    """Three QMC points of different alpha, branch and omega, and one Gauss-Hermite point
    (solved after them), each equal to `evaluate` alone to the bit (the numba prox solves every
    problem alone)."""
    qmc = {"method": "qmc", "points": 128, "randomisations": 2}
    batch = [
        canonical_point("theory", {**qmc, "alpha": 1.5}),
        canonical_point("theory", {**qmc, "alpha": 1.0, "branch": "positional"}),
        canonical_point("theory", {"alpha": 2.0, "order": "16,8"}),
        canonical_point("theory", {**qmc, "alpha": 2.0, "omega": 0.5}),
    ]
    together = evaluate_many("theory", batch)
    for params, got in zip(batch, together, strict=True):
        alone = evaluate("theory", params)
        assert got.keys() == alone.keys()
        for key, value in alone.items():
            assert got[key] == value or (value != value and got[key] != got[key]), key


def test_a_theory_points_device_is_part_of_its_id_only_away_from_the_cpu():
    """Stores written before the device was a parameter still resume; a point on another
    device is another point (its numbers differ from the CPU's by rounding)."""
    from attnphase.sweep import run_id

    qmc = {"alpha": 1.0, "method": "qmc"}
    assert run_id("theory", {**qmc, "device": "cpu"}) == run_id("theory", qmc)
    with pytest.raises(ValueError, match="device: applies to another method"):
        canonical_point("theory", {"alpha": 1.0, "device": "cuda"})


def test_a_theory_points_precision_is_hashed_where_given_and_climbs_the_ladder():
    """Stores written before precision was a parameter still resume; a point with one is a
    point of its own, checked like the library's, and its result names the integration that
    answered (QMC x 2 at alpha 1.5 from 64 points: the largest relative error, the test
    error's, measured 0.025, 0.031 and 0.019 at 64, 128 and 256 points, so a precision of 2%
    stops at 256; a point that ignored it would stay at 64)."""
    from attnphase.sweep import run_id

    qmc = {"alpha": 1.5, "method": "qmc", "points": 64, "randomisations": 2}
    assert run_id("theory", {**qmc, "precision": None}) == run_id("theory", qmc)
    assert run_id("theory", {**qmc, "precision": 0.02}) != run_id("theory", qmc)
    with pytest.raises(ValueError, match="precision must be a number in"):
        canonical_point("theory", {**qmc, "precision": 1.5})
    with pytest.raises(ValueError, match="precision must be at least the solver's tolerance"):
        canonical_point("theory", {**qmc, "precision": 1e-300})
    plain = evaluate("theory", canonical_point("theory", qmc))
    assert "points_used" not in plain
    got = evaluate("theory", canonical_point("theory", {**qmc, "precision": 0.02}))
    assert got["points_used"] == 256 and got["randomisations_used"] == 2
    assert got["test_error_err"] <= 0.02 * got["test_error"] and got["converged"]
    (batched,) = evaluate_many("theory", [canonical_point("theory", {**qmc, "precision": 0.02})])
    assert batched.keys() == got.keys()  # a batch leaves a point with a precision to its ladder
    assert all(batched[k] == v or (v != v and batched[k] != batched[k]) for k, v in got.items())


def test_an_interrupt_inside_a_point_stops_the_run(tmp_path):
    """A point whose own nested run was stopped by Ctrl-C (`Interrupted`: the continuation's
    line segments compute their points through a run of their own) is no failed point: the
    outer run stops and says what it kept, instead of recording the interrupt as the point's
    error and computing the rest (measured before: ~50 s of ignored Ctrl-C, then a traceback)."""
    done = []

    def point(kind, params):
        if params["i"] == 1:
            raise Interrupted("0 of 1 points stored")
        done.append(params["i"])
        return {"i": params["i"]}

    points = [(f"p{i}", "demo", {"i": i}) for i in range(4)]
    with pytest.raises(Interrupted, match="1 of 4"):
        run_points(points, point, store=tmp_path / "s.sqlite")
    assert done == [0]
    with pytest.raises(Interrupted):
        run_task(point, lambda kind, batch: [point(kind, b) for b in batch], "demo", [{"i": 1}])
