"""Planted secrets and personal data never reach anything lowtide writes.

A corpus of planted values of every built-in kind goes through two real paths into one Redis of
the test's own, then through a real burst worker into a real Label Studio, reviews, and a real
`lowtide export`:
- in prompts: a real `lowtide train` run (the tiny model, the quickstart config, a threshold that
  routes every rollout, `logger.redact: true`), whose sampler hook routes each step's rollouts;
- in prompts and responses: samples routed through the real routing core and Producer (the
  tiny model's responses are random, so planted responses cannot come from it), first while
  Redis is down (to the spool), then replayed from the spool once it is up.
Afterwards every value of every key in that Redis (RQ's compressed job data decompressed), the
spool, the Label Studio tasks read through the API, the export files, the run's logs and
files, the worker's and every command's output are searched: no planted value is anywhere.

The passwords of the services are planted too: Redis wants one, given in `REDIS_URL` as the
URL's userinfo to some commands and as `?password=` to others, and `LABEL_STUDIO_URL` carries
one in either form. Neither reaches an output, a file or a Redis key.
"""

from __future__ import annotations

import contextlib
import json
import zlib
from pathlib import Path

import pytest
import redis

from lowtide.services.process import free_port
from sampling.config import QueueConfig, SamplingConfig
from sampling.routing import BatchInfo, PlainSample
from sampling.transport.producer import Producer
from sampling.wiring import build_router
from tests.conftest import REPO, run_cli
from tests.helpers.labelstudio import LabelStudioServer, sdk_client
from tests.helpers.pipeline import Setup
from tests.helpers.redis_server import OwnRedis
from tests.test_annotation_export import review

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(900)]

PRIVATE_KEY_BODY = (
    "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gBYY2vtvlbxvp84D2vR6yH0Vmz3"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyNDI0MiIsIm5hbWUiOiJNYXJpYSJ9"
    ".dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk0"
)
# kind -> (a sentence with the value in place of {}, the value)
PLANTED: dict[str, tuple[str, str]] = {
    "EMAIL": ("Write to {} about it.", "maria.lopez@example.org"),
    "PHONE": ("Call me on {} tonight.", "+44 20 7946 0958"),
    "PHONE_US": ("My cell is {} if needed.", "415-555-0134"),
    "CARD": ("Charge the card {} please.", "4111 1111 1111 1111"),
    "CARD_2": ("Or use {} instead.", "5500-0000-0000-0004"),
    "IBAN": ("Send it to {} today.", "GB82 WEST 1234 5698 7654 32"),
    "IBAN_2": ("My account is {} at the bank.", "DE89370400440532013000"),
    "IP_ADDRESS": ("The server at {} is down.", "203.0.113.42"),
    "IPV6": ("Ping {} again.", "2001:db8::8a2e:370:7334"),
    "US_SSN": ("My SSN is {} by the way.", "219-09-9999"),
    "UK_NINO": ("NI number {} is mine.", "AB 12 34 56 C"),
    "JWT": ("Use the header Authorization: Bearer {} now.", JWT),
    "PRIVATE_KEY": (
        "Here is my key:\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
        PRIVATE_KEY_BODY,
    ),
    "PASSWORD": ("Connect with postgres://admin:{}@db.internal:5432/app please.", "Tr0ub4dor&3"),
    "API_KEY": ("My AWS key id is {} ok.", "AKIAIOSFODNN7EXAMPLE"),
    "API_KEY_2": ("The token {} works.", "ghp_R8sT0kEnAbCdEfGhIjKlMnOpQrStUvWx1234"),
    "API_KEY_3": ("Stripe uses {} here.", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    "SECRET": ("In the config: password = '{}' for now.", "hunter2hunter2"),
    # Formats LLM prompts carry today, and personal data inside Chinese text.
    "API_KEY_OPENAI": (
        "我的OpenAI密钥是{}，帮我看看。",
        "sk-proj-" + "Xk3vP9qLm2Rt7Ws4Yz8Ab1Cd5Ef6" * 2,
    ),
    "API_KEY_ANTHROPIC": (
        "Use {} for Claude.",
        "sk-ant-api03-" + "Qw3rTy7uIo9pAs1dFg5hJk2l" * 4 + "AA",
    ),
    "API_KEY_HF": ("HF token {} please", "hf_QmLrKpWnVtZbHcJfGeUdXyAbCdEfGhIjKl"),
    "API_KEY_GITHUB_PAT": ("令牌{}已过期", "github_pat_11ABCDEFG0123456789_" + "aBcDeF1234" * 6),
    "API_KEY_GOOGLE": (
        "Call it with key={} in the URL.",
        "AIzaSyD4x9Qm2Lr7Kp3Wn8Vt1Zb6Hc5Jf0Ge4Ud",
    ),
    "AWS_SECRET_IN_PROSE": (
        "my key is AKIAI44QH8DHBEXAMPLE and secret {} thanks",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    "PASSWORD_IN_PROSE": ("my password is {}.", "Xy7!kk99Qz"),
    "PASSWORD_IN_GERMAN": ("Das Passwort für das WLAN ist {}, danke.", "Wq4#rr82Lp"),
    # A code grouped as people write it: a bare 4-digit PIN turns up by chance in ids and times.
    "ONE_TIME_CODE": ("Your verification code is {}, it expires soon.", "904-217"),
    "PASSWORD_ON_A_COMMAND_LINE": ("Run `mysql -u app -p{} prod` first.", "Zm9!tt41Kx"),
    "NATIONAL_ID": ("My SIN is {}, please update it.", "130 692 544"),
    "SHORT_NAMED_KEY": ("the signing secret is {} now", "Qv8mW2xR5tLp9z"),
    "BIRTH_DATE": ("Patient DOB: {}, allergic to penicillin.", "03/14/1985"),
    "STREET_ADDRESS": ("Ship it to {} by Friday.", "742 Evergreen Terrace, Springfield, IL 62704"),
    "ACCOUNT_NUMBER": ("My account number is {}, thanks.", "0012 3456 7891"),
    "PHONE_CN": ("我的手机号是{}，请联系我", "13912345678"),
    "PHONE_CN_INTL": ("请拨打{}联系", "+86 139 8765 4321"),
    "CN_ID": ("身份证号{}。", "11010519491231002X"),
    "IN_AADHAAR": ("Aadhaar {} is linked.", "2345 6789 0124"),
    "BR_CPF": ("CPF {} do cliente", "123.456.789-09"),
    "PASSPORT": ("我的护照号码是{}，明天到期", "E12345678"),
    "HIGH_ENTROPY": (
        'Set {{"blob": "{}"}} in the file.',
        "q8Zr2vN6xK4mT1pW9bY3cF7hJ5dL0sAe",
    ),
    # As people's keyboards, chat apps and tools write them: full-width forms, invisible and
    # no-break characters, encoded inside a URL or a JSON string, on the line after its name.
    "EMAIL_FULLWIDTH": ("请发到{}，谢谢", "ｌｉ．ｗｅｉ＠ｅｘａｍｐｌｅ．ｃｎ"),
    "EMAIL_ZERO_WIDTH": ("Write to {} about it.", "jane\u200b.doe@example.org"),
    "EMAIL_URL_ENCODED": (
        "Open https://example.com/unsubscribe?u={}&t=1 to stop.",
        "sam.roe%40example.org",
    ),
    "EMAIL_JSON_ESCAPED": ('The tool said {{"to": "{}"}} ok.', "kim.lee\\u0040example.org"),
    "PHONE_NBSP": ("Ring me on {} tonight.", "+44\u00a020\u00a07946\u00a00123"),
    "PHONE_CN_FULLWIDTH": ("手机：{}", "１３８－００１３－８０００"),
    "CN_ID_FULLWIDTH": ("身份证号{}。", "１１０１０５１９４９１２３１００２Ｘ"),
    "PASSWORD_WRAPPED": ("The root password is:\n{}\nKeep it safe.", "Kp8#zz31Wq"),
}


# The services' passwords, planted in the URLs the commands are given (see the docstring).
REDIS_PASSWORD = "rEdis-pw-6k2Qv9"
LS_PASSWORDS = ("lS-userinfo-pw-3mT8", "lS-query-pw-7Rb1")


def planted_texts() -> list[str]:
    return [template.format(value) for template, value in PLANTED.values()]


def needles() -> dict[str, bytes]:
    """What must not be found: each value, and for long ones a distinctive middle part (a value
    cut in two by a careless redactor leaves one)."""
    found = {}
    for name, value in [("REDIS_PASSWORD", REDIS_PASSWORD), ("LS_PASSWORD", LS_PASSWORDS[0]),
                        ("LS_PASSWORD_2", LS_PASSWORDS[1])]:  # fmt: skip
        found[name] = value.encode()
    for name, (_, value) in PLANTED.items():
        found[name] = value.encode()
        escaped = json.dumps(value)[1:-1]
        if escaped != value:  # as a JSON file that escapes non-ASCII text or backslashes has it
            found[f"{name} (json)"] = escaped.encode()
        if len(value) >= 24:
            middle = len(value) // 2
            found[f"{name} (middle)"] = value[middle - 6 : middle + 6].encode()
    return found


def leaks(where: str, data: bytes) -> list[str]:
    return [f"{name} in {where}" for name, needle in needles().items() if needle in data]


def redis_leaks(url: str) -> tuple[list[str], int]:
    """Every value of every key (RQ's zlib-compressed job data decompressed), searched."""
    client = redis.Redis.from_url(url)
    found, keys = [], 0
    for key in client.scan_iter(count=1000):
        keys += 1
        kind = client.type(key).decode()
        if kind == "string":
            values = [client.get(key) or b""]
        elif kind == "hash":
            values = [v for pair in client.hgetall(key).items() for v in pair]
        elif kind == "list":
            values = client.lrange(key, 0, -1)
        elif kind == "set":
            values = list(client.smembers(key))
        elif kind == "zset":
            values = client.zrange(key, 0, -1)
        elif kind == "stream":
            values = [json.dumps(str(client.xrange(key))).encode()]
        else:
            values = []
        for value in [key, *values]:
            texts = [value]
            with contextlib.suppress(zlib.error):
                texts.append(zlib.decompress(value))
            for text in texts:
                found += leaks(f"redis key {key!r}", text)
    return found, keys


def file_leaks(root: Path, skip: set[Path]) -> tuple[list[str], int]:
    found, files = [], 0
    for path in sorted(root.rglob("*")):
        if path.is_file() and path not in skip:
            files += 1
            found += leaks(str(path.relative_to(root)), path.read_bytes())
    return found, files


def route_planted_samples(url: str, queue: str, spool: Path) -> None:
    """Planted prompts and responses through the routing core and a real Producer: first with
    Redis unreachable (records go to the spool), then replayed into `url`."""
    texts = planted_texts()
    samples = [
        PlainSample(prompt=texts[i], response=texts[-1 - i], reward=0.0, index=i)
        for i in range(len(texts))
    ]
    config = SamplingConfig(threshold=0.5, max_per_step=1000, max_per_minute=10**6)  # no cap
    down = QueueConfig(redis_url=f"redis://127.0.0.1:{free_port()}/0", name=queue,
                       spool_dir=str(spool), max_latency_ms=20)  # fmt: skip
    router = build_router(config, Producer(down))
    router.route(samples[: len(samples) // 2], BatchInfo("planted", 0))
    router.close(10.0)
    assert router.producer.stats.spooled == len(samples) // 2
    spooled, _ = file_leaks(spool, set())
    assert spooled == []
    assert b"<EMAIL_1>" in b"".join(p.read_bytes() for p in spool.rglob("*") if p.is_file())
    up = QueueConfig(redis_url=url, name=queue, spool_dir=str(spool), max_latency_ms=20)
    router = build_router(config, Producer(up))
    router.route(samples[len(samples) // 2 :], BatchInfo("planted", 1))
    router.close(10.0)
    assert router.producer.stats.replayed == len(samples) // 2
    assert router.producer.stats.enqueued == len(samples)
    metrics = router.metrics(router.route([], BatchInfo("planted", 2)))
    assert metrics["sampling/redacted/EMAIL"][0] >= 1


def test_the_search_finds_every_planted_value_in_the_corpus() -> None:
    """The search itself can fail: run over the corpus, it finds each value."""
    corpus = "\n".join(planted_texts()).encode() + json.dumps(planted_texts()).encode()
    corpus += f"{REDIS_PASSWORD} {LS_PASSWORDS}".encode()
    names = {name.removesuffix(" (middle)").removesuffix(" (json)") for name in needles()}
    assert names == set(PLANTED) | {
        "REDIS_PASSWORD", "LS_PASSWORD", "LS_PASSWORD_2"
    }  # fmt: skip
    assert len(leaks("corpus", corpus)) == len(needles())


def with_password(url: str, form: str) -> str:
    """`url` (no password of its own) with the planted one, as userinfo or as a query."""
    if "127.0.0.1" in url and url.startswith("redis"):
        if form == "userinfo":
            return url.replace("redis://", f"redis://:{REDIS_PASSWORD}@")
        return f"{url}?password={REDIS_PASSWORD}"
    if form == "userinfo":
        return url.replace("http://", f"http://reviewer:{LS_PASSWORDS[0]}@")
    return f"{url}/?token={LS_PASSWORDS[1]}"


@pytest.fixture
def own_redis(tmp_path: Path):
    """A redis-server of the test's own that wants the planted password."""
    (tmp_path / "redis").mkdir()
    server = OwnRedis(tmp_path / "redis", password=REDIS_PASSWORD)
    server.start()
    yield server
    server.kill()


def test_planted_values_are_nowhere(
    label_studio: LabelStudioServer, workdir: Path, tmp_path: Path, tiny_models, own_redis
) -> None:
    bare_redis = own_redis.url.replace(f":{REDIS_PASSWORD}@", "")
    setup = Setup(label_studio, workdir)
    forms = iter(["userinfo", "query"] * 4)  # each command gets the other form than the last

    def env() -> dict[str, str]:
        form = next(forms)
        return {**label_studio.env(), "REDIS_URL": with_password(bare_redis, form),
                "LABEL_STUDIO_URL": with_password(label_studio.url, form)}  # fmt: skip

    setup.env = env  # type: ignore[method-assign]
    prompts = tmp_path / "planted_prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": t}) + "\n" for t in planted_texts()))
    out = workdir / "run"

    # 1. A real training run routes every rollout of the planted prompts.
    train = run_cli(
        "train", "--config", str(REPO / "configs" / "quickstart.yaml"),
        f"--model.actor.model_name_or_path={tiny_models.policy}", f"--data.path={prompts}",
        f"--trainer.output_dir={out}", "--trainer.max_steps=2", "--trainer.rollout_batch_size=10",
        "--trainer.samples_per_prompt=2", "--trainer.max_new_tokens=8", "--trainer.save_every=0",
        "--run_id=planted", "--logger.name=console", f"--logger.save_dir={out / 'logs'}",
        "--logger.log_interval.tables=1", "--logger.redact=true",
        "--sampling.threshold=100", "--sampling.max_per_step=1000",
        "--sampling.max_per_minute=1000000",  # every rollout: the default cap keeps 20 a minute
        f"--queue.name={setup.queue_name}", f"--queue.spool_dir={out / 'spool'}",
        f"--annotation.labeling_config={REPO / 'configs' / 'label_studio' / 'review.xml'}",
        cwd=workdir, env=setup.env(),
    )  # fmt: skip
    (workdir / "train.log").write_text(train.stdout + train.stderr)
    assert train.returncode == 0, train.stderr[-3000:]

    # 2. Planted prompts and responses through the routing core, the spool, then Redis.
    route_planted_samples(own_redis.url, setup.queue_name, workdir / "spool")

    found, keys = redis_leaks(own_redis.url)
    assert keys > 0 and found == []

    # 3. A real burst worker imports everything into Label Studio; reviews; a real export.
    worker = setup.cli("worker", "--burst")
    assert worker.returncode == 0, worker.stderr[-3000:]
    tasks = setup.tasks()
    assert len(tasks) >= 2 * 10 * 2 + len(PLANTED)  # both steps of the run, and the planted
    shown = json.dumps(tasks)
    for placeholder in ("<EMAIL_1>", "<CARD_1>", "<PRIVATE_KEY_1>", "<API_KEY_1>", "<JWT_1>"):
        assert placeholder in shown
    sdk = sdk_client(label_studio.url, label_studio.api_key)
    for task in tasks:
        sdk.annotations.create(id=task["id"], result=review(2, "other", better="A calm blue."))
    export_dir = workdir / "export"
    export = setup.cli("export", "--out", str(export_dir / "annotations.jsonl"))
    assert export.returncode == 0, export.stderr[-3000:]

    # 4. Nothing anywhere: Label Studio (through its API), Redis, every file written.
    api = label_studio.get("/api/tasks", project=setup.project_id(), page_size=1000).content
    assert leaks("Label Studio tasks", api) == []
    found, keys = redis_leaks(own_redis.url)
    assert keys > 0 and found == [], found
    # The working directory (the test's tmp_path) holds the run, its logs and spool, the
    # export, the command logs and Redis's append-only file; only the planted input is skipped.
    found, files = file_leaks(workdir, {prompts})
    assert files > 5 and found == [], found
    assert (export_dir / "annotations.jsonl").stat().st_size > 0
    quickstart = str(REPO / "configs" / "quickstart.yaml")
    shows = [setup.cli("config", "show", "-c", quickstart), setup.cli("queue", "status"),
             run_cli("queue", "failed", f"--queue.name={setup.queue_name}", cwd=workdir,
                     env=setup.env())]  # fmt: skip
    assert all(shown.returncode == 0 for shown in shows), [s.stderr for s in shows]
    for output in [train, worker, export, *shows]:
        output = output.stdout + output.stderr
        assert leaks("command output", output.encode()) == []
