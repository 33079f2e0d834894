"""`lowtide logs bias DIR`: the reward-hacking watch over a finished run's dumps (verl's
`rollout_data_dir`, our run directory, TRL's completions), read with `lowtide ingest`'s readers;
the same analysis as `analyze_rows` over the same rows."""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import pytest

from sampling.selection.hacking import WatchConfig, analyze_rows
from tests.conftest import invoke
from tests.helpers.dumps import write_lowtide_run, write_trl_completions, write_verl_step
from tests.helpers.hacking_runs import Row, Trait, bullets, insert_phrase, run

pytestmark = pytest.mark.unit

PHRASE = "i completely agree with you"
STEPS = 24


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    def call(*args: str) -> tuple[int, str, str]:
        return invoke(capsys, "logs", "bias", *args)

    return call


def planted(seed: int = 0, bonus: float = 1.5) -> list[Row]:
    return run([Trait(insert_phrase(PHRASE), bonus, 0.02, 0.6)], steps=STEPS, seed=seed)


def by_step(rows: list[Row]) -> dict[int, list[Row]]:
    return {step + 1: list(batch) for step, batch in groupby(rows, key=lambda r: r.step)}


def write_verl(directory: Path, rows: list[Row]) -> None:
    for step, batch in by_step(rows).items():
        write_verl_step(
            directory, step, [r.prompt for r in batch], [r.response for r in batch],
            [r.reward for r in batch],
            {name: [r.reward_details[name] for r in batch] for name in ("rm", "format")},
        )  # fmt: skip


def expected_line(rows: list[Row]) -> str:
    """The top suspect's line, from the rows themselves (the windows `logs bias` takes: five
    steps of a run this long)."""
    report = analyze_rows(rows, WatchConfig(window_steps=5))
    assert report.suspects and PHRASE in report.suspects[0].label()
    return f"1. {report.suspects[0].describe()}"


def test_a_verl_dump_prints_the_planted_suspect_and_writes_json(tmp_path: Path, cli) -> None:
    rows = planted()
    dumps = tmp_path / "rollout_data"
    write_verl(dumps, rows)
    found = tmp_path / "suspects.json"
    code, out, err = cli(str(dumps), "--json", str(found))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == expected_line(rows)
    assert lines[0].startswith(f'1. reward rises with "{PHRASE}": +1.')
    assert "; paid by rm (+1." in lines[0]  # verl's extra-info keys are the components
    assert "reward-hacking suspects" in out
    assert f"{dumps}: {STEPS} steps, {len(rows)} scored samples" in err
    assert f"wrote {found}" in err
    data = json.loads(found.read_text())
    top = data["suspects"][0]
    assert top["phrase"] == PHRASE and top["growing"] is True
    assert f"1. {top['description']}" == lines[0]
    assert top["examples"] and PHRASE in top["examples"][0]["response"].casefold()
    assert top["prevalence_now"] > top["prevalence_then"] + 0.3
    assert data["samples"] == len(rows) and data["first_window"] == [1, 5]
    assert data["latest_window"] == [STEPS - 4, STEPS]


def test_a_lowtide_run_directory_prints_the_planted_suspect(tmp_path: Path, cli) -> None:
    rows = planted(seed=1)
    run_dir = tmp_path / "logs" / "run-1"
    write_lowtide_run(
        run_dir,
        {step: [(r.prompt, r.response, r.reward, r.reward_details) for r in batch]
         for step, batch in by_step(rows).items()},
    )  # fmt: skip
    code, out, err = cli(str(run_dir))
    assert code == 0, err
    assert out.splitlines()[0] == expected_line(rows)


def test_trl_completions_print_the_planted_suspect(tmp_path: Path, cli) -> None:
    pytest.importorskip("pyarrow")
    rows = planted(seed=2)
    completions = tmp_path / "out" / "completions"
    for step, batch in by_step(rows).items():
        write_trl_completions(
            completions, step, [r.prompt for r in batch], [r.response for r in batch],
            {"rm": [r.reward_details["rm"] for r in batch],
             "format": [r.reward_details["format"] for r in batch]},
        )  # fmt: skip
    code, out, err = cli(str(tmp_path / "out"))
    assert code == 0, err
    assert out.splitlines()[0].startswith(f'1. reward rises with "{PHRASE}": +1.')


def test_top_limits_the_suspects_shown(tmp_path: Path, cli) -> None:
    traits = [Trait(insert_phrase(PHRASE), 1.5, 0.02, 0.6), Trait(bullets, 1.5, 0.02, 0.6)]
    write_verl(tmp_path / "dumps", run(traits, steps=STEPS, seed=1))
    numbered = []
    for args in ([], ["--top", "1"]):
        code, out, err = cli(str(tmp_path / "dumps"), *args)
        assert code == 0, err
        numbered.append([line for line in out.splitlines() if line[:3] in ("1. ", "2. ")])
    assert len(numbered[0]) == 2 and numbered[1] == numbered[0][:1]


def test_a_run_without_a_blind_spot_prints_no_suspect(tmp_path: Path, cli) -> None:
    rows = planted(bonus=0.0)  # the phrase spreads, but the reward does not pay for it
    write_verl(tmp_path / "dumps", rows)
    code, out, err = cli(str(tmp_path / "dumps"))
    assert code == 0, err
    assert out.splitlines()[0] == (
        "no suspects: no feature is both paid within groups and spreading"
    )


def test_a_malformed_line_is_one_warning_and_the_rest_is_analysed(tmp_path: Path, cli) -> None:
    rows = planted()
    dumps = tmp_path / "dumps"
    write_verl(dumps, rows)
    with open(dumps / "3.jsonl", "a") as handle:
        handle.write("{oops\n")
    code, out, err = cli(str(dumps))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {dumps / '3.jsonl'}:73: ")
    assert warnings[0].endswith("; skipped")
    assert out.splitlines()[0] == expected_line(rows)


def test_past_five_malformed_lines_one_warning_counts_the_rest(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    write_verl(dumps, planted())
    with open(dumps / "3.jsonl", "a") as handle:
        handle.write("{oops\n" * 7)
    code, _, err = cli(str(dumps))
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert code == 0 and len(warnings) == 6, err
    assert warnings[-1] == "warning: 2 more lines or rows skipped or left blank"


@pytest.mark.parametrize(
    ("make", "line", "exit_code"),
    [
        (lambda d: d / "nope", "error: {d}/nope: no such directory", 2),
        (lambda d: d, "error: no dump files in {d} (expected verl: {{step}}.jsonl", 1),
        (lambda d: (d / "a.jsonl").write_text("{}\n") and d / "a.jsonl", "error: {d}/a.jsonl: ", 2),
    ],
    ids=["missing", "no dumps", "a file"],
)
def test_a_directory_without_dumps_is_one_line(tmp_path: Path, cli, make, line, exit_code) -> None:
    """A wrong argument is exit 2; a directory with nothing to read yet is exit 1, as for
    `lowtide logs search`."""
    code, out, err = cli(str(make(tmp_path)))
    assert code == exit_code, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(line.format(d=tmp_path)), err


def test_dumps_without_a_single_scored_row_are_one_line(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "1.jsonl").write_text("{oops\n")
    code, _, err = cli(str(dumps))
    assert code == 1
    assert err.strip().splitlines()[-1].startswith(f"error: no scored samples in {dumps}")


def test_reward_weights_are_refused_for_a_verl_dump(tmp_path: Path, cli) -> None:
    write_verl(tmp_path / "dumps", planted()[:72])
    code, _, err = cli(str(tmp_path / "dumps"), "--reward-weights", "1,0.5")
    assert code == 2 and err.strip() == "error: --reward-weights: verl dumps have one reward"
