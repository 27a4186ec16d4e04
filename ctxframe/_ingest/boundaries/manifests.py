"""Dependency manifests → `dep:<ecosystem>:<name>` nodes declared by the manifest file.

package.json, go.mod, pom.xml, *.csproj, pyproject.toml, requirements*.txt, Cargo.toml; parsed
with kept libraries (json, tomllib, defusedxml), never by evaluating anything.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib

from ctxframe._ingest.boundaries._rows import edge, line_of, node

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*?)\s*(#.*)?$")


def is_manifest(path: str) -> bool:
    """True for the file names this module reads."""
    name = posixpath.basename(path)
    return (
        name in ("package.json", "go.mod", "pom.xml", "pyproject.toml", "Cargo.toml")
        or name.endswith(".csproj")
        or (name.startswith("requirements") and name.endswith(".txt"))
    )


def dep_line(text: str, name: str) -> int | None:
    """1-based line where a manifest names the dependency `name` (normalised, as `_pep508`
    gives it: `pystemmer` finds `"PyStemmer>=3"`; Maven's `group:artifact` its artifact): the
    first mention after the manifest's first dependency section, else the first anywhere."""
    last = name.rsplit(":", 1)[-1]
    pattern = "[-_.]".join(re.escape(p) for p in re.split(r"[-_.]", last))
    # at a line's start (requirements, go.mod, Cargo) or just inside quotes or a tag
    found = re.compile(rf"(?:^[ \t]*|[\"'>]){pattern}(?![\w])", re.IGNORECASE | re.MULTILINE)
    start = min((i for i in (text.find(w) for w in _SECTIONS) if i >= 0), default=0)
    m = found.search(text, start) or found.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


# where a manifest's dependencies start: the names before them (a project's own name) are not
# its dependencies
_SECTIONS = ("dependencies", "require", "[dependencies]", "<dependencies", "PackageReference")


def _dep(eco: str, name: str, spec: str | None, path: str, text: str) -> tuple[dict, dict]:
    dep_id = f"dep:{eco}:{name}"
    line = dep_line(text, name)
    n = node(
        dep_id,
        "dep",
        name,
        qualname=f"{eco}:{name}",
        signature=f"{name} {spec}".strip() if spec else name,
        path=path,
        line=line,
        transport="package",
        direction="consumes",
        doc=eco,
    )
    return n, edge(path, dep_id, "declares", path, line, name=name)


def _pep508(req: str) -> tuple[str, str] | None:
    m = _REQ.match(req)
    if not m or req.lstrip().startswith(("-", "#")):
        return None
    return re.sub(r"[-_.]+", "-", m.group(1)).lower(), (m.group(3) or "").split(";")[0].strip()


def read(path: str, text: str) -> tuple[list[dict], list[dict]]:
    """Nodes and edges for one manifest; ([], []) when it is not one or does not parse."""
    name = posixpath.basename(path)
    deps: list[tuple[str, str, str | None]] = []
    commands: list[tuple[str, str | None]] = []  # (command, function name) from console scripts
    try:
        if name == "package.json":
            data = json.loads(text)
            bins = data.get("bin") or {}
            if isinstance(bins, str):
                bins = {data.get("name", "bin"): bins}
            commands += [(cmd, None) for cmd in bins if isinstance(cmd, str)]
            for section in (
                "dependencies",
                "devDependencies",
                "peerDependencies",
                "optionalDependencies",
            ):
                for pkg, spec in (data.get(section) or {}).items():
                    deps.append(("npm", pkg, str(spec)))
        elif name == "go.mod":
            block = False
            for raw in text.splitlines():
                line = raw.split("//")[0].strip()
                if line.startswith("require ("):
                    block = True
                    continue
                if block and line == ")":
                    block = False
                    continue
                parts = (
                    line.removeprefix("require ").split()
                    if (block or line.startswith("require "))
                    else []
                )
                if len(parts) >= 2:
                    deps.append(("go", parts[0], parts[1]))
        elif name == "pyproject.toml":
            data = tomllib.loads(text)
            project = data.get("project", {})
            for cmd, target in (project.get("scripts") or {}).items():
                if isinstance(target, str):  # "package.module:function"
                    commands.append((cmd, target.rpartition(":")[2].split(".")[-1] or None))
            reqs = list(project.get("dependencies", []))
            for extra in (project.get("optional-dependencies") or {}).values():
                reqs += extra
            for pkg, spec in (
                data.get("tool", {}).get("poetry", {}).get("dependencies") or {}
            ).items():
                if pkg.lower() != "python":
                    deps.append(("pypi", pkg.lower(), spec if isinstance(spec, str) else None))
            for r in reqs:
                if parsed := _pep508(r):
                    deps.append(("pypi", *parsed))
        elif name.startswith("requirements") and name.endswith(".txt"):
            for r in text.splitlines():
                if parsed := _pep508(r):
                    deps.append(("pypi", *parsed))
        elif name == "Cargo.toml":
            data = tomllib.loads(text)
            for section in ("dependencies", "dev-dependencies", "build-dependencies"):
                for pkg, spec in (data.get(section) or {}).items():
                    version = spec if isinstance(spec, str) else (spec or {}).get("version")
                    deps.append(("cargo", pkg, version))
        elif name == "pom.xml" or name.endswith(".csproj"):
            from defusedxml import ElementTree

            root = ElementTree.fromstring(text)
            for el in root.iter():
                tag = el.tag.rsplit("}", 1)[-1]
                if tag == "dependency":
                    kids = {c.tag.rsplit("}", 1)[-1]: (c.text or "").strip() for c in el}
                    if kids.get("artifactId"):
                        deps.append(
                            (
                                "maven",
                                f"{kids.get('groupId', '')}:{kids['artifactId']}",
                                kids.get("version"),
                            )
                        )
                elif tag == "PackageReference" and el.get("Include"):
                    deps.append(("nuget", el.get("Include"), el.get("Version")))
    except (ValueError, tomllib.TOMLDecodeError, SyntaxError, AttributeError, TypeError):
        return [], []
    nodes, edges = [], []
    for eco, pkg, spec in deps:
        n, e = _dep(eco, pkg, spec, path, text)
        nodes.append(n)
        edges.append(e)
    for cmd, func in commands:  # console scripts: entry points that `hubs` lists
        cid, line = f"command:{cmd}", line_of(text, cmd)
        nodes.append(
            node(
                cid,
                "command",
                cmd,
                path=path,
                line=line,
                transport="cli",
                direction="provides",
                signature=func,
            )
        )
        edges.append(edge(path, cid, "declares", path, line, name=cmd))
        if func:  # dst "name:X" is resolved to a function named X after extraction
            edges.append(
                edge(cid, f"name:{func}", "handles", path, line, confidence="INFERRED", name=func)
            )
    return nodes, edges
