"""Kubernetes manifests (multi-document YAML) → workload, Service, Ingress, ConfigMap, Secret and
image nodes with the edges between them. Secret nodes keep names and key names only."""

from __future__ import annotations

import posixpath

from ctxframe._ingest.boundaries._rows import edge, env_node, is_secret_name, line_of, node

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet", "Pod"}
KINDS = WORKLOADS | {"Service", "Ingress", "ConfigMap", "Secret"}


def is_candidate(path: str, text: str) -> bool:
    """Cheap test before parsing: a YAML file that declares apiVersion and kind."""
    return (
        posixpath.splitext(path)[1] in (".yaml", ".yml")
        and "apiVersion" in text
        and ("kind:" in text)
    )


def _id(kind: str, name: str) -> str:
    return f"k8s:{kind}/{name}"


def _pod_spec(doc: dict) -> dict:
    spec = doc.get("spec") or {}
    if doc.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    if doc.get("kind") != "Pod":
        spec = (spec.get("template") or {}).get("spec") or {}
    return spec if isinstance(spec, dict) else {}


def read(path: str, text: str) -> tuple[list[dict], list[dict]]:
    """Nodes and edges of every Kubernetes object in the file (others are ignored)."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return [], []
    nodes: list[dict] = []
    edges: list[dict] = []
    labels_of: dict[str, dict] = {}
    services: list[tuple[str, dict, int | None]] = []
    for doc in docs:
        kind, meta = doc.get("kind"), doc.get("metadata") or {}
        name = meta.get("name")
        if kind not in KINDS or not isinstance(name, str):
            continue
        oid = _id(kind, name)
        line = line_of(text, f"name: {name}")
        provides = kind in ("Service", "Ingress")
        n = node(
            oid,
            kind.lower() if kind not in WORKLOADS else "workload",
            name,
            qualname=f"{kind}/{name}",
            path=path,
            line=line,
            signature=f"kind: {kind}",
            transport="network.http" if provides else "k8s",
            direction="provides" if provides else None,
        )
        if kind == "Secret":
            keys = sorted({*(doc.get("data") or {}), *(doc.get("stringData") or {})})
            n["doc"] = "keys: " + ", ".join(keys) if keys else None  # names only, never values
            n["secret"] = True
            n["transport"] = "config.secret"
        elif kind == "ConfigMap":
            keys = sorted(doc.get("data") or {})
            n["doc"] = "keys: " + ", ".join(keys) if keys else None
            n["transport"] = "config.k8s"
            for key in keys:
                nodes.append(env_node(key, path, line_of(text, f"{key}:")))
                edges.append(edge(oid, f"env:{key}", "declares", path, line_of(text, f"{key}:")))
        nodes.append(n)
        edges.append(edge(path, oid, "declares", path, line, name=name))
        if kind in WORKLOADS:
            pod = _pod_spec(doc)
            labels_of[oid] = (
                (((doc.get("spec") or {}).get("template") or {}).get("metadata") or {}).get(
                    "labels"
                )
                or meta.get("labels")
                or {}
            )
            _workload_edges(oid, pod, path, text, nodes, edges)
        elif kind == "Service":
            services.append((oid, (doc.get("spec") or {}).get("selector") or {}, line))
        elif kind == "Ingress":
            _ingress_edges(oid, doc, path, text, nodes, edges)
    for sid, selector, line in services:
        for wid, labels in labels_of.items():
            if selector and all(labels.get(k) == v for k, v in selector.items()):
                edges.append(edge(sid, wid, "selects", path, line))
    return nodes, edges


def _workload_edges(oid, pod, path, text, nodes, edges) -> None:
    containers = (pod.get("containers") or []) + (pod.get("initContainers") or [])
    for c in containers:
        if not isinstance(c, dict):
            continue
        if image := c.get("image"):
            iid = f"image:{image}"
            line = line_of(text, f"image: {image}")
            nodes.append(
                node(
                    iid,
                    "image",
                    image,
                    path=path,
                    line=line,
                    transport="container",
                    direction="consumes",
                )
            )
            edges.append(edge(oid, iid, "runs", path, line, name=image))
        for e in c.get("env") or []:
            if not isinstance(e, dict) or not e.get("name"):
                continue
            name, line = e["name"], line_of(text, f"name: {e['name']}")
            nodes.append(env_node(name, path, line))
            edges.append(edge(oid, f"env:{name}", "sets", path, line, name=name))
            ref = e.get("valueFrom") or {}
            for key, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                if isinstance(ref.get(key), dict) and ref[key].get("name"):
                    edges.append(edge(oid, _id(kind, ref[key]["name"]), "reads", path, line))
        for e in c.get("envFrom") or []:
            for key, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                if isinstance((e or {}).get(key), dict) and e[key].get("name"):
                    line = line_of(text, f"name: {e[key]['name']}")
                    edges.append(edge(oid, _id(kind, e[key]["name"]), "reads", path, line))
    for v in pod.get("volumes") or []:
        for key, kind, field in (
            ("secret", "Secret", "secretName"),
            ("configMap", "ConfigMap", "name"),
        ):
            ref = (v or {}).get(key)
            if isinstance(ref, dict) and ref.get(field):
                line = line_of(text, ref[field])
                edges.append(edge(oid, _id(kind, ref[field]), "reads", path, line))


def _ingress_edges(oid, doc, path, text, nodes, edges) -> None:
    for rule in (doc.get("spec") or {}).get("rules") or []:
        host = (rule or {}).get("host") or "*"
        for p in ((rule or {}).get("http") or {}).get("paths") or []:
            backend = (p or {}).get("backend") or {}
            svc = (backend.get("service") or {}).get("name") or backend.get("serviceName")
            route_path = (p or {}).get("path") or "/"
            rid = f"route:ANY {host}{route_path}"
            line = line_of(text, f"path: {route_path}")
            nodes.append(
                node(
                    rid,
                    "route",
                    f"{host}{route_path}",
                    qualname=f"ANY {host}{route_path}",
                    path=path,
                    line=line,
                    transport="network.http",
                    direction="provides",
                    signature=f"Ingress {host}{route_path}",
                )
            )
            edges.append(edge(oid, rid, "declares", path, line))
            if svc:
                edges.append(edge(rid, _id("Service", svc), "routes", path, line, name=svc))


__all__ = ["is_candidate", "is_secret_name", "read"]
