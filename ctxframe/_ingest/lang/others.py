"""Java, C/C++, C# and Zig: imports and includes as written to candidate files.

A candidate starting with "/" is a path suffix: any indexed file whose path ends with it (the
shortest such path wins), for languages whose import roots are not known up front."""

from __future__ import annotations

import posixpath


def candidates(fam: str, raw: str, path: str, node) -> tuple[str, tuple, tuple]:
    """(module, candidates, sub-candidates) of a Java/C/C++/C#/Zig import as written."""
    here = posixpath.dirname(path)
    if fam == "java":
        module = raw.strip()
        if node.text is not None and node.text.rstrip(b"; \n").endswith(b"*"):
            module += ".*"
            return module, (), ()
        parts = module.split(".")
        cands = ["/" + "/".join(parts) + ".java"]
        if len(parts) > 1:  # `import static a.B.member;` or a nested class `a.B.Inner`
            cands.append("/" + "/".join(parts[:-1]) + ".java")
        return module, tuple(cands), ()
    if fam == "c" and node.type == "using_declaration":  # C++ `using namespace a::b;`
        return raw.strip(), (), ()
    if fam == "c":
        spec = raw.strip()
        quoted = spec.startswith('"')
        spec = spec.strip('"<>').strip()
        cands = [posixpath.normpath(posixpath.join(here, spec))] if quoted else []
        cands += [posixpath.normpath(spec), f"include/{spec}"]
        if "/" in spec:
            cands.append("/" + posixpath.normpath(spec).lstrip("./"))
        return spec, tuple(c for c in dict.fromkeys(cands) if not c.startswith("..")), ()
    if fam == "zig":
        spec = raw.strip('"')
        if spec.endswith(".zig"):
            return (
                posixpath.normpath(posixpath.join(here, spec)),
                (posixpath.normpath(posixpath.join(here, spec)),),
                (),
            )
        return spec, (), ()
    return raw.strip(), (), ()  # C#: a namespace, resolved against namespace nodes
