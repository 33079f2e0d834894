"""The failure probe and the reviewed features on their own: fitted on feature rows, scored,
saved and loaded; and the failure categories the reward-model data loader keeps for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.reward_model.data import Pair, Rated, RMData, RMDataError, load_rm_data
from annotation.reward_model.extras import probe_rows
from annotation.reward_model.probe import fit_failure_probe, qualifying_categories
from rl.rewards.failure_probe import PROBE_FILE, FailureProbe, load_probe
from rl.rewards.novelty import REVIEWED_FILE, ReviewedFeatures, load_reviewed

pytestmark = pytest.mark.unit

HIDDEN = 16


def clustered(count: int, direction: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Rows around a large common offset (as a decoder's pooled features have), shifted by
    `direction`."""
    offset = torch.full((HIDDEN,), 40.0)
    return offset + direction + torch.randn(count, HIDDEN, generator=generator)


def test_a_probe_scores_rows_like_the_ticked_ones_higher() -> None:
    generator = torch.Generator().manual_seed(0)
    verbose = torch.zeros(HIDDEN)
    verbose[3] = 4.0
    # 6 of 60 reviews ticked "verbose": a rare category must still be found.
    rows = torch.cat(
        [clustered(54, torch.zeros(HIDDEN), generator), clustered(6, verbose, generator)]
    )
    categories = [()] * 54 + [("verbose",)] * 6
    probe = fit_failure_probe(rows, categories)
    assert probe is not None and probe.categories == ("verbose",)
    new_plain = clustered(20, torch.zeros(HIDDEN), generator)
    new_verbose = clustered(20, verbose, generator)
    plain, flagged = probe.scores(new_plain), probe.scores(new_verbose)
    assert ((plain >= 0) & (plain <= 1)).all() and ((flagged >= 0) & (flagged <= 1)).all()
    # A new verbose-like row outscores a new plain one nearly always (AUC), and on average
    # the probe calls the first a failure and the second not.
    auc = (flagged[:, None] > plain[None, :]).float().mean().item()
    assert auc > 0.9, (flagged, plain)
    assert flagged.mean() > 0.5 > plain.mean()


def test_the_score_is_the_most_likely_category_of_several() -> None:
    generator = torch.Generator().manual_seed(1)
    up, side = torch.zeros(HIDDEN), torch.zeros(HIDDEN)
    up[0], side[1] = 5.0, 5.0
    rows = torch.cat([clustered(30, torch.zeros(HIDDEN), generator),
                      clustered(10, up, generator), clustered(10, side, generator)])  # fmt: skip
    categories = [()] * 30 + [("sycophancy",)] * 10 + [("off-topic", " ")] * 10
    probe = fit_failure_probe(rows, categories)
    assert probe is not None and probe.categories == ("off-topic", "sycophancy")
    either = torch.cat([clustered(5, up, generator), clustered(5, side, generator)])
    probabilities = probe.probabilities(either)
    assert probabilities.shape == (10, 2)
    assert torch.equal(probe.scores(either), probabilities.max(dim=1).values)
    assert (probabilities[:5, 1] > probabilities[:5, 0]).all()  # the sycophantic ones
    assert (probabilities[5:, 0] > probabilities[5:, 1]).all()


def test_the_fit_reads_raw_features_as_it_was_fitted_on_standardized_ones() -> None:
    # The centring and per-dimension scaling are folded into the weights: scoring raw features
    # must give what the standardized fit says. Shifting and stretching every row (the same
    # affine change to train and test) leaves the scores of the same rows unchanged.
    generator = torch.Generator().manual_seed(2)
    rows = torch.randn(40, HIDDEN, generator=generator)
    categories = [("x",) if row[0] > 0 else () for row in rows]
    test = torch.randn(10, HIDDEN, generator=generator)
    stretch = torch.linspace(0.5, 50.0, HIDDEN)
    probe = fit_failure_probe(rows, categories)
    moved = fit_failure_probe(rows * stretch + 7.0, categories)
    assert probe is not None and moved is not None
    assert torch.allclose(probe.scores(test), moved.scores(test * stretch + 7.0), atol=1e-4)


def test_no_probe_when_no_category_separates_anything() -> None:
    rows = torch.randn(6, HIDDEN)
    assert fit_failure_probe(rows, [()] * 6) is None
    assert fit_failure_probe(rows, [("verbose",)] * 6) is None  # every row: no negative
    assert qualifying_categories([("a", "b"), ("a",), ("a", " ")]) == ("b",)
    with pytest.raises(ValueError, match="6 feature rows but 5"):
        fit_failure_probe(rows, [()] * 5)


def test_a_probe_saves_and_loads_with_its_categories(tmp_path: Path) -> None:
    probe = FailureProbe(torch.randn(2, HIDDEN), torch.randn(2), ("off-topic", "verbose"))
    assert load_probe(tmp_path) is None
    assert probe.save(tmp_path) == tmp_path / PROBE_FILE
    again = load_probe(tmp_path)
    assert again is not None and again.categories == probe.categories
    rows = torch.randn(5, HIDDEN)
    assert torch.allclose(again.scores(rows), probe.scores(rows))
    with pytest.raises(ValueError, match="do not make one head each"):
        FailureProbe(torch.randn(2, HIDDEN), torch.randn(2), ("one",))


def test_novelty_is_distance_to_the_nearest_reviewed_row_in_units_of_their_spacing() -> None:
    # Reviewed rows on a line, 2 apart: the median nearest-neighbour distance is 2.
    rows = torch.zeros(5, HIDDEN)
    rows[:, 0] = torch.arange(5) * 2.0
    reviewed = ReviewedFeatures.of(rows + 100.0)
    assert reviewed.scale == pytest.approx(2.0)
    query = torch.zeros(3, HIDDEN) + 100.0
    query[1, 0] += 4.0 + 1.0 / 2**10  # beside a reviewed row
    query[2, 1] += 6.0  # 6 off the line, nearest to the first row
    assert reviewed.novelty(query).tolist() == pytest.approx([0.0, 1 / 2**11, 3.0], abs=1e-4)


def test_reviewed_features_keep_a_seeded_subsample_of_real_rows(tmp_path: Path) -> None:
    rows = torch.randn(50, HIDDEN)
    kept = ReviewedFeatures.of(rows, limit=8, seed=3)
    assert kept.rows.shape == (8, HIDDEN)
    assert all((rows == row).all(dim=1).any() for row in kept.rows)  # rows, not centres
    assert torch.equal(ReviewedFeatures.of(rows, limit=8, seed=3).rows, kept.rows)
    assert not torch.equal(ReviewedFeatures.of(rows, limit=8, seed=4).rows, kept.rows)
    assert load_reviewed(tmp_path) is None
    assert kept.save(tmp_path) == tmp_path / REVIEWED_FILE
    again = load_reviewed(tmp_path)
    assert again is not None and again.scale == kept.scale
    assert torch.equal(again.rows, kept.rows)
    # One row (or all alike) has no spacing to read: the scale falls back to the rows' norm.
    assert ReviewedFeatures.of(torch.full((3, HIDDEN), 0.5)).scale == pytest.approx(2.0)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_loader_keeps_rated_categories_and_the_worst_of_a_comparison(tmp_path: Path) -> None:
    ratings = write_jsonl(tmp_path / "annotations.jsonl", [
        {"prompt": "p", "response": "Sure! You are so smart.", "rating": 2,
         "categories": ["sycophancy", " ", "sycophancy"], "sample_id": "s1", "meta": {}},
        {"prompt": "p", "response": "Fine.", "rating": 4, "categories": [], "sample_id": "s2",
         "meta": {}},
    ])  # fmt: skip
    texts = (("A", "Good."), ("B", "Rambling on."), ("C", "Okay."))
    shown = [{"label": label, "sample_id": f"c-{label}", "response": text, "reward": 0.1}
             for label, text in texts]  # fmt: skip
    reviews = [{"best": "A", "worst": "B", "categories": ["verbose", "off-topic"]},
               {"best": "A", "worst": "B", "categories": ["verbose"]},
               {"best": "C", "worst": "B", "categories": []},
               {"best": "C", "worst": "A", "categories": ["terse"]}]  # fmt: skip
    compared = {"prompt": "q", "responses": shown, "sample_id": "cmp", "meta": {"reviews": reviews}}
    write_jsonl(tmp_path / "annotations.comparisons.jsonl", [compared])
    write_jsonl(tmp_path / "annotations.preferences.jsonl", [
        {"prompt": "q", "chosen": "Good.", "rejected": "Rambling on.", "chosen_written": False,
         "sample_id": "cmp", "meta": {}},
        {"prompt": "q", "chosen": "Okay.", "rejected": "Rambling on.", "chosen_written": False,
         "sample_id": "cmp", "meta": {}},
        {"prompt": "q", "chosen": "Good.", "rejected": "Okay.", "chosen_written": False,
         "sample_id": "cmp", "meta": {}},
    ])  # fmt: skip
    data = load_rm_data(ratings)
    assert [r.categories for r in data.ratings] == [("sycophancy",), ()]
    by_rejected = {(p.chosen, p.rejected): p.rejected_categories for p in data.pairs}
    # Three of four reviewers named "Rambling on." the worst; two of them ticked verbose, one
    # off-topic: a category counts when most of them ticked it, as one reviewer alone does.
    # "Okay." was never named the worst.
    assert by_rejected == {("Good.", "Rambling on."): ("verbose",),
                           ("Okay.", "Rambling on."): ("verbose",),
                           ("Good.", "Okay."): ()}  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    categories=st.one_of(
        st.none(), st.integers(), st.text(max_size=5),
        st.lists(st.one_of(st.text(max_size=8), st.integers(), st.none()), max_size=4),
    ),
    worst=st.one_of(st.none(), st.sampled_from("AB"), st.text(max_size=2), st.integers(),
                    st.lists(st.text(), max_size=1)),
    ticked=st.one_of(st.none(), st.text(max_size=4),
                     st.lists(st.one_of(st.text(max_size=6), st.integers()), max_size=3)),
)  # fmt: skip
def test_any_categories_a_file_holds_load_or_fail_with_the_line(
    tmp_path_factory: pytest.TempPathFactory, categories, worst, ticked
) -> None:
    # Hand-edited or older files: whatever the categories fields hold, the loader gives clean
    # names (stripped, none empty, each once) or says which line is wrong.
    folder = tmp_path_factory.mktemp("categories")
    ratings = write_jsonl(folder / "annotations.jsonl", [
        {"prompt": "p", "response": "r", "rating": 3, "categories": categories, "sample_id": "s"}
    ])  # fmt: skip
    shown = [{"label": "A", "response": "r"}, {"label": "B", "response": "x"}]
    review = {"worst": worst, "categories": ticked}
    compared = {"prompt": "p", "responses": shown, "sample_id": "s", "meta": {"reviews": [review]}}
    write_jsonl(folder / "annotations.comparisons.jsonl", [compared])
    write_jsonl(folder / "annotations.preferences.jsonl",
                [{"prompt": "p", "chosen": "x", "rejected": "r", "sample_id": "s"}])  # fmt: skip
    try:
        data = load_rm_data(ratings)
    except RMDataError as error:
        assert "annotations.jsonl:1: categories" in str(error)
        return
    for names in (data.ratings[0].categories, data.pairs[0].rejected_categories):
        assert all(isinstance(n, str) and n == n.strip() and n for n in names)
        assert len(set(names)) == len(names)


def test_the_probe_learns_from_policy_texts_each_with_every_category_ticked_on_it() -> None:
    data = RMData(
        pairs=[
            Pair("q", "Fine.", "Rambling.", "c", rejected_categories=("verbose",)),
            Pair("q", "A reviewer's own answer.", "Rambling.", "w", written=True),
        ],
        ratings=[Rated("q", "Rambling.", 2, "r", categories=("off-topic",))],
    )
    rows, categories = probe_rows(data)
    # The reviewer's own text is left out (the probe would learn who wrote it); the policy's
    # chosen side is a negative; a text ticked in two reviews carries both.
    assert dict(zip(rows, categories, strict=True)) == {
        ("q", "Fine."): (),
        ("q", "Rambling."): ("off-topic", "verbose"),
    }
    # Nothing ticked anywhere: no rows, nothing to fit.
    assert probe_rows(RMData(ratings=[Rated("q", "Fine.", 4, "r")])) == ([], [])
