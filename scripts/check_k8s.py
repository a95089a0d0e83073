#!/usr/bin/env python3
"""Checks the Kubernetes manifests in a folder (deploy/kubernetes): `make deploy-check`.

Three checks, and a fourth that checks them:
1. Every manifest is validated against the JSON schemas of one Kubernetes
   version, in strict mode (an unknown field is an error, so a misspelled one
   is caught), with the schemas the pinned kubernetes-validate ships: nothing
   is fetched. A kind the schemas do not know is an error too (the validator's
   own command line only warns).
2. What no schema sees, across the files: every $(NAME) a container's command
   uses is defined in its environment, every ConfigMap and claim it names is
   among the manifests, an Indexed Job starts all its pods at once, and
   --threads is no more than the CPU limit.
3. kustomization.yaml lists every manifest, and its image names one that a
   container uses (else the image it sets would be ignored).
4. Every file in testdata/ must be rejected, for the reason its `# expect:`
   lines name: a check that passed everything would fail here.

Prints one line when all holds; otherwise each problem on a line of its own,
and exits 1 (2 when it could not run at all).
"""

import argparse
import pathlib
import re
import sys

try:
    import yaml
    import kubernetes_validate
    from kubernetes_validate import SchemaNotFoundError, ValidationError
    from kubernetes_validate.utils import VersionNotSupportedError
except ImportError as e:
    sys.exit(f"check_k8s.py: {e}: run it through `make deploy-check`, which installs "
             "kubernetes-validate (deploy/requirements.txt) into target/deploy-venv")

KUSTOMIZATION = "kustomization.yaml"
TESTDATA = "testdata"

# Kinds that live in no namespace, so need none in their metadata.
CLUSTER_SCOPED = {"Namespace", "PersistentVolume", "StorageClass", "ClusterRole",
                  "ClusterRoleBinding", "PriorityClass", "CustomResourceDefinition"}

# $(NAME) as Kubernetes expands it in command and args ($$(NAME) is escaped).
K8S_VAR = re.compile(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
# $NAME and ${NAME} in a `sh -c` script, and the names the script sets itself.
SHELL_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
SHELL_SET = re.compile(r"(?:^|[\s;])([A-Za-z_][A-Za-z0-9_]*)=")


def load(path):
    """The YAML documents of one file (empty ones dropped), or a problem."""
    try:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d], []
    except (OSError, yaml.YAMLError) as e:
        return [], [f"{path}: cannot be read as YAML: {e}"]


def name_of(doc):
    meta = doc.get("metadata") or {}
    return f"{doc.get('kind', '?')}/{meta.get('name', '?')}"


def schema_problems(path, doc, version):
    """Strict validation of one object against the version's schemas."""
    if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
        return [f"{path}: a document without apiVersion and kind"]
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except ValidationError as e:
        where = ".".join(str(p) for p in e.path) or "(top level)"
        return [f"{path}: {name_of(doc)}: {where}: {e.message}"]
    except SchemaNotFoundError:
        return [f"{path}: {name_of(doc)}: no schema for kind {doc['kind']} in "
                f"{doc['apiVersion']} in Kubernetes {version} (a misspelled kind or apiVersion?)"]
    return []


def pod_spec(doc):
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Pod":
        return spec
    return ((spec.get("template") or {}).get("spec")) or None


def cpu_cores(quantity):
    """A CPU quantity ("2", 2, "1500m") in cores, or None when unreadable."""
    s = str(quantity)
    try:
        return int(s[:-1]) / 1000 if s.endswith("m") else float(s)
    except ValueError:
        return None


def container_problems(path, doc, container, config_maps):
    where = f"{path}: {name_of(doc)}: container {container.get('name', '?')}"
    problems = []
    env = {}  # name -> value, or None when set but not known here
    for e in container.get("env") or []:
        env[e.get("name")] = e.get("value")
    if doc.get("kind") == "Job" and (doc.get("spec") or {}).get("completionMode") == "Indexed":
        env["JOB_COMPLETION_INDEX"] = None
    unknown_keys = False
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        if "configMapRef" in source:
            ref = source["configMapRef"]
            data = config_maps.get(ref.get("name"))
            if data is None:
                if not ref.get("optional"):
                    problems.append(f"{where}: envFrom names ConfigMap {ref.get('name')}, "
                                    "which none of the manifests defines")
                unknown_keys = True
            else:
                env.update({prefix + k: v for k, v in data.items()})
        else:
            unknown_keys = True  # a Secret's keys are not in the manifests
    command = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    used = {m for a in command for m in K8S_VAR.findall(a)}
    if command[:2] == ["sh", "-c"] and len(command) > 2:
        script = command[2]
        used |= set(SHELL_VAR.findall(script)) - set(SHELL_SET.findall(script))
    if not unknown_keys:
        for name in sorted(used - env.keys()):
            problems.append(f"{where}: uses ${name} but its environment does not define {name}")
    for i, arg in enumerate(command):
        threads = None
        if arg in ("--threads", "-t") and i + 1 < len(command):
            threads = command[i + 1]
        elif arg.startswith("--threads="):
            threads = arg.split("=", 1)[1]
        if threads is None:
            continue
        threads = K8S_VAR.sub(lambda m: str(env.get(m.group(1))), threads)
        limit = ((container.get("resources") or {}).get("limits") or {}).get("cpu")
        cores = cpu_cores(limit) if limit is not None else None
        if threads.isdigit() and cores is not None and int(threads) > cores:
            problems.append(f"{where}: --threads {threads} is more than its CPU limit of "
                            f"{limit}: the quota would throttle the threads")
    return problems


def cross_problems(path, doc, config_maps, claims, namespace):
    """What the schema cannot see in one object, given the other manifests."""
    problems = []
    meta = doc.get("metadata") or {}
    if namespace and doc.get("kind") not in CLUSTER_SCOPED and meta.get("namespace") != namespace:
        problems.append(f"{path}: {name_of(doc)}: namespace {meta.get('namespace')}, "
                        f"not the kustomization's {namespace}")
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Job" and spec.get("completionMode") == "Indexed":
        if spec.get("parallelism", 1) != spec.get("completions"):
            problems.append(f"{path}: {name_of(doc)}: parallelism {spec.get('parallelism', 1)} "
                            f"but completions {spec.get('completions')}: the pods past the "
                            "parallelism would start late, after START_AT")
    pod = pod_spec(doc)
    if not pod:
        return problems
    for volume in pod.get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim is not None and claim not in claims:
            problems.append(f"{path}: {name_of(doc)}: volume {volume.get('name')} claims "
                            f"{claim}, which none of the manifests defines")
    for container in (pod.get("initContainers") or []) + (pod.get("containers") or []):
        problems += container_problems(path, doc, container, config_maps)
    return problems


def images_of(docs):
    images = set()
    for _, doc in docs:
        pod = pod_spec(doc) or {}
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            image = str(c.get("image", "")).split("@")[0]
            name, _, tag = image.rpartition(":")
            images.add(name if name and "/" not in tag else image)  # a port is no tag
    return images


def kustomization_problems(folder, manifests, docs):
    path = folder / KUSTOMIZATION
    loaded, problems = load(path)
    if problems or not loaded:
        return problems or [f"{path}: empty"], None
    k = loaded[0]
    listed = [str(r) for r in k.get("resources") or []]
    on_disk = sorted(p.name for p in manifests)
    for name in sorted(set(on_disk) - set(listed)):
        problems.append(f"{path}: does not list {name} under resources")
    for name in sorted(set(listed) - set(on_disk)):
        problems.append(f"{path}: lists {name}, which is not a manifest in {folder}")
    used = images_of(docs)
    for image in k.get("images") or []:
        if image.get("name") not in used:
            problems.append(f"{path}: images: {image.get('name')} is no container's image "
                            f"(they use {', '.join(sorted(used))}), so it would set nothing")
    return problems, k.get("namespace")


def check(docs, version, config_maps, claims, namespace):
    problems = []
    for path, doc in docs:
        found = schema_problems(path, doc, version)
        problems += found or cross_problems(path, doc, config_maps, claims, namespace)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubernetes-version", required=True, help="e.g. 1.32")
    parser.add_argument("folder", type=pathlib.Path)
    args = parser.parse_args()
    folder, version = args.folder, args.kubernetes_version

    manifests = sorted(p for p in folder.glob("*.yaml") if p.name != KUSTOMIZATION)
    problems, docs = [], []
    for p in manifests:
        loaded, found = load(p)
        problems += found
        docs += [(p, d) for d in loaded]
    if not docs:
        print(f"check_k8s.py: no manifest (*.yaml) in {folder}", file=sys.stderr)
        return 2
    config_maps = {d["metadata"]["name"]: d.get("data") or {}
                   for _, d in docs if d.get("kind") == "ConfigMap" and d.get("metadata")}
    claims = {d["metadata"]["name"]
              for _, d in docs if d.get("kind") == "PersistentVolumeClaim" and d.get("metadata")}
    namespace = None
    if (folder / KUSTOMIZATION).exists():
        found, namespace = kustomization_problems(folder, manifests, docs)
        problems += found
    try:
        problems += check(docs, version, config_maps, claims, namespace)
        broken = sorted((folder / TESTDATA).glob("*.yaml"))
        for p in broken:
            expected = [line.split(":", 1)[1].strip() for line in p.read_text().splitlines()
                        if line.startswith("# expect:")]
            loaded, found = load(p)
            found += check([(p, d) for d in loaded], version, config_maps, claims, namespace)
            if not expected:
                problems.append(f"{p}: names no reason it must be rejected (a `# expect:` line)")
            elif not found:
                problems.append(f"{p}: passed, but it is broken ({'; '.join(expected)}): "
                                "the check accepts what it must reject")
            else:
                for e in expected:
                    if not any(e in f for f in found):
                        problems.append(f"{p}: rejected, but not for {e!r}; for: "
                                        + " | ".join(found))
    except VersionNotSupportedError:
        print(f"check_k8s.py: kubernetes-validate {kubernetes_validate.__version__} has no "
              f"schemas for Kubernetes {version}", file=sys.stderr)
        return 2

    if problems:
        print(f"{folder}: {len(problems)} problem(s) against Kubernetes {version} "
              f"(kubernetes-validate {kubernetes_validate.__version__}, strict):", file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{folder}: {len(docs)} objects in {len(manifests)} manifests valid for Kubernetes "
          f"{version} (strict); {len(broken)} broken ones in {TESTDATA}/ rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
