"""ctxframe adapter: feature flags.

Reads ops/feature-flags.json and prints one Batch (docs/adapters.md in ctxframe): a `flag:NAME`
node per flag, declared by the JSON file, and a `reads` edge from every Python function under
services/ whose code holds the flag's name as a string literal (INFERRED: matched by name).
Run from the repository root, as ctxframe does: `python3 .ctxframe/adapters/flags.py`.
"""

import ast
import json
import os

FLAGS = "ops/feature-flags.json"
SCAN = ["services"]  # only code ctxframe indexes: an edge to an unknown node rejects the batch


def line_of(text, needle):
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else None


def literals(tree):
    """(string value, line, qualified name of the enclosing def or None) for every literal."""
    out = []

    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
            else:
                if isinstance(child, ast.Constant) and isinstance(child.value, str):
                    out.append((child.value, child.lineno, ".".join(scope) or None))
                visit(child, scope)

    visit(tree, [])
    return out


def main():
    with open(FLAGS, encoding="utf-8") as fh:
        text = fh.read()
    flags = json.loads(text)["flags"]
    nodes, edges = [], []
    for name in sorted(flags):
        spec = flags[name]
        line = line_of(text, json.dumps(name) + ":")
        nodes.append(
            {
                "id": f"flag:{name}",
                "kind": "flag",
                "label": name,
                "path": FLAGS,
                "line_start": line,
                "signature": f"{name} = {json.dumps(bool(spec.get('enabled')))}",
                "doc": spec.get("description"),
                "transport": "config.flag",
                "direction": "consumes",
            }
        )
        edges.append(
            {
                "src": FLAGS,
                "dst": f"flag:{name}",
                "kind": "declares",
                "confidence": "EXTRACTED",
                "path": FLAGS,
                "line": line,
            }
        )
    for top in SCAN:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for fname in sorted(filenames):
                if not fname.endswith(".py"):
                    continue
                path = os.path.join(dirpath, fname).replace(os.sep, "/")
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read(), path)
                for value, line, qual in literals(tree):
                    if value in flags:
                        edges.append(
                            {
                                "src": f"{path}::{qual}" if qual else path,
                                "dst": f"flag:{value}",
                                "kind": "reads",
                                "confidence": "INFERRED",
                                "name": value,
                                "path": path,
                                "line": line,
                            }
                        )
    print(json.dumps({"producer": "shop.flags", "nodes": nodes, "edges": edges}, indent=1))


if __name__ == "__main__":
    main()
