"""No command takes a misspelled option or config key in silence: each ends in one line with the
nearest valid name and exit code 2, before it touches Redis, Label Studio or a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowtide.services.process import free_port
from tests.conftest import invoke

pytestmark = pytest.mark.unit

MODEL = "--model.actor.model_name_or_path=m"  # the one key a run config needs
# (command words, a misspelled option, its fix, a misspelled dotted key, its fix)
COMMANDS = [
    (["worker"], ["--concurency", "4"], "--concurrency", "--annotaton.project=x",
     "--annotation.project"),
    (["queue", "status"], ["--confg=c.yaml"], "--config", "--queu.name=x", "--queue.name"),
    (["queue", "failed"], ["--limt=5"], "--limit", "--qeue.name=x", "--queue.name"),
    (["queue", "quarantined"], ["--jsn"], "--json", "--queues.name=x", "--queue.name"),
    (["queue", "requeue", "job-1"], ["--alll"], "--all", "--queu.name=x", "--queue.name"),
    (["queue", "replay"], ["--confi=c.yaml"], "--config", "--queu.spool_dir=x",
     "--queue.spool_dir"),
    (["queue", "purge", "--yes"], ["--yess"], "--yes", "--qeueu.name=x", "--queue.name"),
    (["export"], ["--sinse=all"], "--since", "--exprot.out=x", "--export.out"),
    (["annotation", "init"], ["--wiat=1"], "--wait", "--anotation.project=x",
     "--annotation.project"),
    (["rm", "train", "--base", "b", "--out", "o"], ["--epoch=2"], "--epochs", "--logger.nme=x",
     "name"),
    (["rm", "train", "--base", "b", "--out", "o"], ["--weight-by-agrement"],
     "--weight-by-agreement", "--export.agreement.preferenses=all", "preferences"),
    (["export"], ["--sinse=all"], "--since", "--export.agreement.max_rating_sprad=2",
     "max_rating_spread"),
    (["rm", "eval", "m"], ["--dat=x"], "--data", "--export.otu=x", "out"),
    (["rm", "compare", "a", "b"], ["--exmples=2"], "--examples", "--exprt.out=x", "--export.out"),
    (["logs", "show", "run-1"], ["--save-dri=x"], "--save-dir", "--logger.save_dri=x",
     "--save-dir"),
    (["logs", "export", "run-1"], ["--formt=csv"], "--format", "--logger.save_dir=x",
     "--save-dir"),
    (["demo"], ["--simulate-reveiw"], "--simulate-review", "--trainer.max_steps=3", "--steps"),
    (["train", MODEL], ["--devce=cpu"], "--device", "--trainr.num_epochs=1",
     "--trainer.num_epochs"),
    (["config", "show", MODEL], ["--confg=c.yaml"], "--config", "--loger.name=x",
     "--logger.name"),
    (["config", "check"], ["--cnfig=c.yaml"], "--config", "--trainr.seed=1", "--trainer.seed"),
    (["openrlhf", "proxy", "--upstream", "http://127.0.0.1:9/get_reward"], ["--prot=5002"],
     "--port", "--samplng.threshold=0.1", "--sampling.threshold"),
    (["openrlhf", "reward-file", "--func", "m:f"], ["--forse"], "--force", "--queu.name=x",
     "--queue.name"),
    (["ingest", "dumps"], ["--onse"], "--once", "--samplng.threshold=0.5",
     "--sampling.threshold"),
    (["loop", "--config", "c.yaml"], ["--round=2"], "--rounds", "--trainr.seed=1",
     "--trainer.seed"),
]  # fmt: skip
IDS = [" ".join(word for word in words[:2] if not word.startswith("-")) for words, *_ in COMMANDS]


@pytest.fixture
def nothing_listens(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Services that are not there: a check that came too late fails with another message, and
    a command run by mistake touches nothing shared."""
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    return workdir


def one_hint(capsys: pytest.CaptureFixture[str], argv: list[str], fix: str) -> str:
    code, out, err = invoke(capsys, *argv)
    lines = err.strip().splitlines()
    assert (code, out) == (2, ""), f"{argv}: {code} {out}{err}"
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ") and "did you mean" in lines[0], lines[0]
    assert f"did you mean {fix}?" in lines[0], lines[0]
    return lines[0]


OPTIONS = [(words, option, fix) for words, option, fix, _, _ in COMMANDS]
KEYS = [(words, key, fix) for words, _, _, key, fix in COMMANDS]


@pytest.mark.parametrize("words, option, fix", OPTIONS, ids=IDS)
def test_a_misspelled_option_is_one_line_with_the_nearest_option(
    nothing_listens: Path, capsys: pytest.CaptureFixture[str], words: list[str],
    option: list[str], fix: str,
) -> None:  # fmt: skip
    line = one_hint(capsys, [*words, *option], fix)
    assert option[0].split("=")[0] in line
    # --help comes after everything is parsed: the mistake before it still counts.
    one_hint(capsys, [*words, *option, "--help"], fix)


@pytest.mark.parametrize("words, key, fix", KEYS, ids=IDS)
def test_a_misspelled_dotted_key_is_one_line_with_the_nearest_key(
    nothing_listens: Path, capsys: pytest.CaptureFixture[str], words: list[str], key: str,
    fix: str,
) -> None:  # fmt: skip
    line = one_hint(capsys, [*words, key], fix)
    assert key.split("=")[0] in line


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["queue", "status", "--annotation.projcet=x"], "did you mean project"),
        (["annotation", "init", "--queue.nmae=x"], "did you mean name"),
        (["export", "--trainer.sed=1"], "did you mean seed"),
    ],
)
def test_overrides_of_other_sections_are_checked_like_the_file(
    nothing_listens: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    """One set of flags may serve every command (as one file does): a section the command does
    not read is accepted, and a misspelled key in it is still an error."""
    code, _, err = invoke(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], lines
    fixed = [word.replace("projcet", "project").replace("nmae", "name").replace("sed=", "seed=")
             for word in argv]  # fmt: skip
    code, _, err = invoke(capsys, *fixed, "--help")
    assert code == 0, err


@pytest.mark.parametrize(
    "argv, expected",
    [
        # Nothing near: the sections it takes are named.
        (["ingest", "--zz.misspelled=1"], "did you mean one of --sampling.misspelled, --queue"),
        (["ingest", "dumps", "--zz.misspelled=1"], "did you mean one of --sampling.misspelled"),
        # An option in the place of a missing argument is not taken for the argument.
        (["ingest", "--queue.name=x"], "missing argument DIRECTORY (before --queue.name=x)"),
        (["rm", "eval", "--export.out=x"], "missing argument"),
    ],
)
def test_an_option_never_stands_for_a_missing_argument(
    nothing_listens: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    code, _, err = invoke(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], lines


@pytest.mark.integration
def test_a_run_config_file_is_checked_whole_by_the_service_commands(
    nothing_listens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same file for `train` and the workers: a typo anywhere in it stops every command,
    and a valid one works with all of them (the model section may be left out)."""
    config = nothing_listens / "run.yaml"
    config.write_text("queue:\n  name: q\ntrainer:\n  num_epochz: 1\n")
    for argv in (["queue", "status"], ["worker"], ["export"], ["annotation", "init"]):
        code, _, err = invoke(capsys, *argv, "--config", str(config))
        assert code == 2, argv
        assert err.strip().splitlines() == [
            f"error: {config}:4: trainer.num_epochz: unknown key (did you mean num_epochs?)"
        ], argv
    config.write_text("queue:\n  name: q\ntrainer:\n  num_epochs: 1\n")
    code, _, err = invoke(capsys, "queue", "status", "--config", str(config))
    assert code == 1 and "Redis at" in err  # it got as far as Redis


@pytest.mark.integration
def test_requeue_tells_job_ids_from_overrides_in_either_form(
    own_redis, workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rq.serializers import JSONSerializer

    from annotation.rq_internals import PromptSimpleWorker
    from sampling.config import QueueConfig
    from sampling.transport.producer import annotation_queue, batch_job_id, enqueue_batch
    from tests.test_producer import records

    monkeypatch.setenv("REDIS_URL", own_redis.url)
    queue = annotation_queue(QueueConfig(redis_url=own_redis.url, name="other"))
    batches = [records(i, 1) for i in range(3)]
    for batch in batches:
        enqueue_batch(queue, batch)
    # A plain JSON worker (not `lowtide worker`): the jobs find no worker context and fail.
    PromptSimpleWorker([queue], connection=queue.connection, serializer=JSONSerializer).work(
        burst=True
    )
    ids = [batch_job_id(batch, queue.name) for batch in batches]
    code, _, said = invoke(capsys, "queue", "requeue", ids[0], "--queue.name", "other", ids[1])
    assert (code, said.strip()) == (0, "requeued 2 job(s)")
    code, _, said = invoke(capsys, "queue", "requeue", "--queue.name=other", ids[2])
    assert (code, said.strip()) == (0, "requeued 1 job(s)")
    assert queue.count == 3
    # A mistyped id is one line, and nothing is moved.
    code, _, said = invoke(capsys, "queue", "requeue", "--queue.name=other", "no-such-job")
    assert (code, said.strip()) == (1, "error: not among the failed jobs of other: no-such-job "
                                       "(see `lowtide queue failed`)")  # fmt: skip
