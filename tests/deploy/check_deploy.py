#!/usr/bin/env python3
"""Checks the deployment files in deploy/ against the binaries they run.

    check_deploy.py --tuned BIN --worker BIN --deploy DIR

- Kubernetes manifests: every container runs `tuned` or `tuned-worker` with flags the binary
  has (read from its --help); each Service selects a pod template and its target port is a
  container port, the one `tuned serve --listen` binds and the gRPC probes check; workers'
  --server names that Service and port; every file a flag points into is on a mounted volume,
  and a token file is a key of the Secret mounted there.
- systemd units: `systemd-analyze verify` accepts them (with the binaries' paths swapped for
  the build's), their ExecStart flags exist, and every ${CREDENTIALS_DIRECTORY}/NAME they use
  is loaded by a LoadCredential=NAME line.
- The Slurm script: `bash -n` parses it and the tuned-worker flags it passes exist.

Prints one line per problem and exits 1 if there is any; 77 (skip) without PyYAML.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("check_deploy: PyYAML is not installed (Debian: python3-yaml)")
    sys.exit(77)

problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


def help_flags(binary, subcommand=None):
    """The long flags a binary (or one of its subcommands) accepts, from its --help."""
    argv = [binary] + ([subcommand] if subcommand else []) + ["--help"]
    text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


class Binaries:
    def __init__(self, tuned, worker):
        self.paths = {"tuned": tuned, "tuned-worker": worker}
        self.cache = {}

    def flags(self, name, subcommand=None):
        key = (name, subcommand)
        if key not in self.cache:
            flags = help_flags(self.paths[name], subcommand)
            if subcommand:  # a subcommand also takes the program's own flags
                flags |= help_flags(self.paths[name])
            self.cache[key] = flags
        return self.cache[key]

    def check_argv(self, where, argv):
        """argv[0] is the program; returns {flag: value} of the long flags it passes."""
        name = os.path.basename(argv[0])
        if name not in self.paths:
            problem(where, f"runs '{argv[0]}', not tuned or tuned-worker")
            return {}
        rest = argv[1:]
        subcommand = None
        if name == "tuned":
            if not rest or rest[0].startswith("-"):
                problem(where, "runs tuned without a subcommand")
                return {}
            subcommand, rest = rest[0], rest[1:]
        known = self.flags(name, subcommand)
        values = {}
        i = 0
        while i < len(rest):
            arg = rest[i]
            if arg.startswith("--"):
                flag, eq, value = arg.partition("=")
                if flag not in known:
                    problem(where, f"{name} {subcommand or ''} has no flag {flag}".replace("  ", " "))
                if not eq and i + 1 < len(rest) and not rest[i + 1].startswith("--"):
                    value = rest[i + 1]
                    i += 1
                values[flag] = value
            i += 1
        return values


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def check_k8s(directory, binaries):
    documents = []
    for file in sorted(os.listdir(directory)):
        if file.endswith(".yaml"):
            with open(os.path.join(directory, file)) as stream:
                for document in yaml.safe_load_all(stream):
                    if document:
                        documents.append((file, document))
    if not documents:
        problem(directory, "no manifests")
    secrets = {d["metadata"]["name"]: d for _, d in documents if d["kind"] == "Secret"}
    claims = {d["metadata"]["name"] for _, d in documents if d["kind"] == "PersistentVolumeClaim"}
    workloads = [(f, d) for f, d in documents if d["kind"] in ("Deployment", "DaemonSet")]
    services = [(f, d) for f, d in documents if d["kind"] == "Service"]

    servers = []  # (service name, port) a worker may connect to
    for file, service in services:
        where = f"{file}: Service {service['metadata']['name']}"
        selector = service["spec"]["selector"]
        selected = [w for _, w in workloads
                    if selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()]
        if len(selected) != 1:
            problem(where, f"selects {len(selected)} pod templates, not one")
            continue
        containers = selected[0]["spec"]["template"]["spec"]["containers"]
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            matches = [p for c in containers for p in c.get("ports", [])
                       if target in (p.get("name"), p["containerPort"])]
            if not matches:
                problem(where, f"targetPort {target} is no container port")
                continue
            servers.append((service["metadata"]["name"], port["port"], matches[0]["containerPort"]))

    for file, workload in workloads:
        spec = workload["spec"]
        where = f"{file}: {workload['kind']} {workload['metadata']['name']}"
        if not spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items():
            problem(where, "selector does not match its pod template's labels")
        pod = spec["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            cwhere = f"{where} container {container['name']}"
            values = binaries.check_argv(cwhere, container["command"] + container.get("args", []))
            mounts = container.get("volumeMounts", [])
            for mount in mounts:
                volume = volumes.get(mount["name"])
                if volume is None:
                    problem(cwhere, f"mounts undeclared volume {mount['name']}")
                elif "persistentVolumeClaim" in volume and \
                        volume["persistentVolumeClaim"]["claimName"] not in claims:
                    problem(cwhere, f"claim {volume['persistentVolumeClaim']['claimName']} not defined")
            for flag, value in values.items():
                if not value.startswith("/"):
                    continue
                mount = next((m for m in mounts
                              if value.startswith(m["mountPath"].rstrip("/") + "/")), None)
                if mount is None:
                    problem(cwhere, f"{flag}={value} is on no mounted volume")
                    continue
                volume = volumes.get(mount["name"], {})
                if "secret" in volume:
                    key = value[len(mount["mountPath"].rstrip("/")) + 1:]
                    items = volume["secret"].get("items")
                    keys = [i["path"] for i in items] if items else None
                    secret = secrets.get(volume["secret"]["secretName"])
                    if secret is None:
                        problem(cwhere, f"secret {volume['secret']['secretName']} not defined")
                    elif key not in secret.get("stringData", secret.get("data", {})):
                        problem(cwhere, f"{flag}: secret has no key {key}")
                    if keys is not None and key not in keys:
                        problem(cwhere, f"{flag}: {key} is not among the mounted items")
                    if volume["secret"].get("defaultMode", 0o644) & 0o007:
                        problem(cwhere, f"{flag}: the secret is mounted readable by every user")
            ports = [p["containerPort"] for p in container.get("ports", [])]
            if "--listen" in values:
                if port_of(values["--listen"]) not in ports:
                    problem(cwhere, f"--listen {values['--listen']} is no container port")
                for probe in ("readinessProbe", "livenessProbe"):
                    grpc = container.get(probe, {}).get("grpc")
                    if grpc is None:
                        problem(cwhere, f"{probe} is not a gRPC health check")
                    elif grpc["port"] != port_of(values["--listen"]):
                        problem(cwhere, f"{probe} checks port {grpc['port']}, not the listening one")
            if "--server" in values:
                host, port = values["--server"].rsplit(":", 1)
                if (host, int(port)) not in {(name, p) for name, p, _ in servers}:
                    problem(cwhere, f"--server {values['--server']} is no Service port")


def check_systemd(directory, binaries, tuned, worker):
    units = sorted(f for f in os.listdir(directory) if f.endswith(".service"))
    if not units:
        problem(directory, "no units")
    with tempfile.TemporaryDirectory() as scratch:
        verify = []
        for unit in units:
            with open(os.path.join(directory, unit)) as stream:
                text = stream.read()
            credentials = set(re.findall(r"^LoadCredential=([^:\n]+):", text, re.M))
            for used in re.findall(r"\$\{CREDENTIALS_DIRECTORY\}/([\w.-]+)", text):
                if used not in credentials:
                    problem(unit, f"uses credential {used} without a LoadCredential line")
            for line in re.findall(r"^ExecStart=(.*)$", text, re.M):
                # Environment references stand for one (braced) or several words; either way
                # they are values, never flags.
                argv = shlex.split(re.sub(r"\$\{?\w+\}?", "VALUE", line))
                binaries.check_argv(f"{unit} ExecStart", argv)
            local = text.replace("/usr/bin/tuned-worker", worker).replace("/usr/bin/tuned ", tuned + " ")
            name = unit.replace("@.service", "@check.service")
            with open(os.path.join(scratch, name), "w") as stream:
                stream.write(local)
            verify.append(os.path.join(scratch, name))
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            problem(directory, "systemd-analyze is not installed (Debian: systemd)")
            return
        result = subprocess.run([analyze, "verify", "--man=no"] + verify,
                                capture_output=True, text=True)
        output = (result.stdout + result.stderr).strip()
        if result.returncode != 0 or output:
            problem(directory, "systemd-analyze verify: " + " | ".join(output.splitlines()))


def check_slurm(directory, binaries):
    for script in sorted(os.listdir(directory)):
        path = os.path.join(directory, script)
        parsed = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        if parsed.returncode != 0:
            problem(script, "bash -n: " + parsed.stderr.strip())
        with open(path) as stream:
            text = stream.read()
        known = binaries.flags("tuned-worker")
        for flag in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))):
            # sbatch's own flags appear in comments and #SBATCH lines; only the worker's count.
            uses = [l for l in text.splitlines() if flag in l and not l.lstrip().startswith("#")]
            if uses and flag not in known:
                problem(script, f"tuned-worker has no flag {flag}")


def check_all(deploy, tuned, worker):
    binaries = Binaries(tuned, worker)
    check_k8s(os.path.join(deploy, "k8s"), binaries)
    check_systemd(os.path.join(deploy, "systemd"), binaries, tuned, worker)
    check_slurm(os.path.join(deploy, "slurm"), binaries)


# (file, text, replacement, the problem it must cause)
PLANTED = [
    ("k8s/workers-cpu.yaml", "--drain-timeout-ms=", "--drain-timeout=", "has no flag --drain-timeout"),
    ("k8s/head.yaml", "targetPort: grpc", "targetPort: 7412", "targetPort 7412 is no container port"),
    ("k8s/head.yaml", "--listen=0.0.0.0:7411", "--listen=0.0.0.0:7499", "is no container port"),
    ("k8s/workers-gpu.yaml", "--server=tuned-head:7411", "--server=tuned-hed:7411", "is no Service port"),
    ("k8s/workers-cpu.yaml", "path: worker.token", "path: w.token", "is not among the mounted items"),
    ("k8s/head.yaml", "defaultMode: 0440", "defaultMode: 0444", "readable by every user"),
    ("systemd/tuned-serve.service", "--client-token-file ${CREDENTIALS_DIRECTORY}/client.token",
     "--client-token-file ${CREDENTIALS_DIRECTORY}/clients.token", "uses credential clients.token"),
    ("systemd/tuned-worker@.service", "Restart=always", "Restart=sometimes", "systemd-analyze verify"),
    ("slurm/tuned-workers.sbatch", 'args+=(--slots', 'args+=(--gpus', "tuned-worker has no flag --gpus"),
]


def self_test(deploy, tuned, worker):
    """Each planted mistake, alone in a fresh copy, must be reported; the clean copy must pass."""
    failures = 0
    for planted in [None] + PLANTED:
        problems.clear()
        with tempfile.TemporaryDirectory() as scratch:
            copy = os.path.join(scratch, "deploy")
            shutil.copytree(deploy, copy)
            if planted:
                file, text, replacement, _ = planted
                path = os.path.join(copy, file)
                with open(path) as stream:
                    content = stream.read()
                assert text in content, f"self-test: '{text}' not in {file}"
                with open(path, "w") as stream:
                    stream.write(content.replace(text, replacement, 1))
            check_all(copy, tuned, worker)
        if planted is None:
            if problems:
                print("self-test: the clean copy has problems: " + "; ".join(problems))
                failures += 1
        elif not any(planted[3] in p for p in problems):
            print(f"self-test: planting '{planted[2]}' in {planted[0]} was not reported "
                  f"(got: {problems})")
            failures += 1
    print(f"check_deploy self-test: {len(PLANTED)} planted mistakes, {failures} missed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuned", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--deploy", required=True)
    parser.add_argument("--self-test", action="store_true",
                        help="check a copy of DIR with planted mistakes: each must be reported")
    args = parser.parse_args()
    tuned, worker = os.path.abspath(args.tuned), os.path.abspath(args.worker)
    if args.self_test:
        sys.exit(self_test(args.deploy, tuned, worker))
    check_all(args.deploy, tuned, worker)
    for line in problems:
        print(line)
    print(f"check_deploy: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
