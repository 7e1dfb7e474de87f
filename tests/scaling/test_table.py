"""The scaling table's bookkeeping (docs/scaling.md §2), with the point computation replaced by
a fake: every (L, omega, family) is one stored point, a rerun computes nothing, a time limit
leaves rows that say so, a failed point says why; the figure draws such a table."""

import math
import sqlite3

import numpy as np
import pandas as pd
import pytest

from attnphase.scaling import ScanSettings
from attnphase.scaling import table as scaling_module
from attnphase.scaling.table import COLUMNS, QUANTITIES, scaling_table
from attnphase.sweep.runner import point_id

CALLS: list[tuple] = []
VARIANTS: list[tuple] = []


def fake_point(kind: str, params: dict) -> dict:
    CALLS.append((params["L"], params["omega"], params["encodings"]))
    VARIANTS.append((params.get("mask", "none"), params.get("heads", 1)))
    if params["omega"] == 0.5 and params["L"] == 3:
        raise RuntimeError("no convergence here")
    row = {}
    for q in QUANTITIES:
        row[q], row[f"{q}_err"], row[f"{q}_status"] = 0.4 * params["L"], 0.01, "found"
    row["spinodal_positional"] = math.nan
    row["spinodal_positional_status"] = "no positional branch"
    return row


@pytest.fixture()
def fake(monkeypatch):
    CALLS.clear()
    VARIANTS.clear()
    monkeypatch.setattr(scaling_module, "evaluate_point", fake_point)


def test_one_point_per_length_omega_family_and_resume(fake, tmp_path):
    store = tmp_path / "s.sqlite"
    with pytest.warns(UserWarning, match="no convergence"):
        df = scaling_table([3, 2], [0.3, 0.5], ["linear", "simplex"], store=store)
    assert len(CALLS) == 8 and list(df.columns[: len(COLUMNS)]) == COLUMNS
    assert df["L"].tolist() == [2, 2, 2, 2, 3, 3, 3, 3]  # shortest first
    failed = df[df["status"].str.startswith("failed")]
    assert len(failed) == 2 and (failed["alpha_c_status"] == failed["status"]).all()
    assert (
        df.loc[df["status"] == "computed", "spinodal_positional_status"] == ("no positional branch")
    ).all()
    CALLS.clear()
    with pytest.warns(UserWarning):  # the failed points are retried, and fail again
        again = scaling_table([2, 3], [0.3, 0.5], ["linear", "simplex"], store=store)
    assert sorted(CALLS) == [(3, 0.5, "linear"), (3, 0.5, "simplex")]
    pd.testing.assert_frame_equal(df.drop(columns="seconds"), again.drop(columns="seconds"))


def test_a_variant_is_its_own_point_and_the_default_keeps_its_id(fake, tmp_path):
    """A causal or two-head row is computed as such, never read back as the tied row of the same
    store; the tied point's parameters are those of earlier stores (no mask, no heads), so that
    they resume; 3 and 3.0 are one setting."""
    store = tmp_path / "s.sqlite"
    scaling_table([2], [0.3], store=store)
    tied = scaling_table([2], [0.3], settings=ScanSettings(alpha_max=16, sigma=1 / 2), store=store)
    assert VARIANTS == [("none", 1)]  # read back
    causal = scaling_table([2], [0.3], mask="causal", store=store)
    heads = scaling_table([2], [0.3], heads=2, store=store)
    assert VARIANTS[1:] == [("causal", 1), ("none", 2)]
    assert (causal["mask"].tolist(), heads["heads"].tolist()) == (["causal"], [2])
    assert (tied["mask"].tolist(), tied["heads"].tolist()) == (["none"], [1])
    scaling_table([2], [0.3], mask="causal", store=store)
    assert len(VARIANTS) == 3  # read back
    expected = {"version": 2, "L": 2, "omega": 0.3, "encodings": "linear", "mixed": True}
    assert point_id("scaling", expected | ScanSettings().as_dict()) in stored_ids(store)


def stored_ids(store) -> set[str]:
    with sqlite3.connect(store) as db:
        return {row[0] for row in db.execute("SELECT run_id FROM results")}


def test_variant_refused_before_any_work(fake):
    for kwargs, name in [
        (dict(mask="diagonal"), "mask"),
        (dict(heads=0), "heads"),
        (dict(mask="causal", heads=2), "heads"),
        (dict(families=["simplex"], heads=2), "encodings"),
    ]:
        with pytest.raises(ValueError, match=f"^{name}"):
            scaling_table([2], [0.3], **kwargs)
    assert CALLS == []


def test_time_limit_marks_lengths_not_started(fake, tmp_path, monkeypatch):
    clock = iter([0.0, 0.0, 100.0, 100.0, 100.0])
    monkeypatch.setattr(scaling_module.time, "monotonic", lambda: next(clock))
    df = scaling_table([2, 4, 5], [0.3], time_limit=50, store=tmp_path / "s.sqlite")
    assert CALLS == [(2, 0.3, "linear")]
    late = df[df["L"] > 2]
    assert late["status"].str.startswith("not computed: the time limit of 50 s").all()
    assert late["alpha_l_status"].str.startswith("not computed").all()
    assert np.isnan(late["alpha_c"]).all()


def test_bad_settings_before_any_work(fake):
    for kwargs, name in [
        (dict(num=2), "num"),
        (dict(points=1000), "points"),
        (dict(alpha_min=3.0, alpha_max=2.0), "alpha_min"),
        (dict(randomisations=1), "randomisations"),
        (dict(sigma=0.0), "sigma"),
    ]:
        with pytest.raises(ValueError, match=name):
            scaling_table([2], [0.3], settings=ScanSettings(**kwargs))
    with pytest.raises(ValueError, match="encodings"):
        scaling_table([2], [0.3], ["circle"])
    assert CALLS == []


def test_figure_draws_missing_quantities(fake, tmp_path):
    from attnphase.figures.scaling import scaling_figure

    with pytest.warns(UserWarning):
        df = scaling_table([2, 3], [0.3, 0.5], ["linear", "simplex"])
    scaling_figure(df, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0 and (tmp_path / "f.pdf").exists()


def test_figure_keeps_variants_apart(fake, tmp_path, monkeypatch):
    """Rows of the tied model and of a variant (one table made of two runs) are separate curves,
    each named in the legend; a table without the variant columns (earlier CSVs) is tied."""
    import matplotlib.pyplot as plt

    from attnphase.figures import scaling as figure

    tied = scaling_table([2, 3], [0.3], ["linear"])
    causal = scaling_table([2, 3], [0.3], ["linear"], mask="causal")
    drawn = []
    monkeypatch.setattr(figure, "save", lambda fig, path: drawn.append(fig))
    figure.scaling_figure(pd.concat([tied, causal]), tmp_path / "f.png")
    figure.scaling_figure(tied.drop(columns=["mask", "heads"]), tmp_path / "g.png")
    labels = [t.get_text() for t in drawn[0].legends[0].get_texts()]
    assert "linear encodings" in labels and "linear encodings, causal mask" in labels
    assert len(drawn[0].axes[0].containers) == 2 * 2  # 2 quantities x 2 models
    assert "linear encodings" in [t.get_text() for t in drawn[1].legends[0].get_texts()]
    assert len(drawn[1].axes[0].containers) == 2
    for fig in drawn:
        plt.close(fig)


@pytest.mark.parametrize(
    "status, kind",
    [
        ("below the window (the branch exists at alpha_min)", "below"),
        ("no crossing in the window (semantic lower wherever both exist)", "below"),
        ("beyond the window (the branch exists at alpha_max)", "beyond"),
        ("no crossing in the window (positional lower wherever both exist)", "beyond"),
        ("no positional branch in the window", "none"),
        ("the branches never coexist on the grid", "none"),
        ("no crossing in the window", "none"),
        ("not computed: the time limit of 60 s was reached", None),
        ("failed: ValueError", None),
    ],
)
def test_a_missing_value_is_drawn_as_what_its_status_says(status, kind):
    """The semantic branch lower wherever both exist puts the crossing alpha_c below the
    window (the positional branch loses everywhere on it), the positional one lower above it."""
    from attnphase.scaling.status import status_kind

    assert status_kind(status) == kind


def test_interrupt_keeps_finished_lengths_and_resumes(fake, tmp_path, monkeypatch):
    from attnphase._core.interrupt import Interrupted

    def interrupted_at_three(kind, params):
        if params["L"] == 3:
            raise KeyboardInterrupt
        return fake_point(kind, params)

    monkeypatch.setattr(scaling_module, "evaluate_point", interrupted_at_three)
    store = tmp_path / "s.sqlite"
    with pytest.raises(Interrupted, match="L = 2 finished before"):
        scaling_table([2, 3], [0.3], store=store)
    monkeypatch.setattr(scaling_module, "evaluate_point", fake_point)
    CALLS.clear()
    df = scaling_table([2, 3], [0.3], store=store)
    assert CALLS == [(3, 0.3, "linear")] and (df["status"] == "computed").all()
