"""The system's outer surface: what a repository consumes and provides beyond its own code.

Each module reads one kind of source into boundary rows: dependency manifests, Kubernetes
manifests, env files, OpenAPI documents (file level, from text) and code (from references).
Secrets are recognised by name; their values never enter a row.
"""
