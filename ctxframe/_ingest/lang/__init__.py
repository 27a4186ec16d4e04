"""What a language's `.scm` query cannot say: per language family, the few steps in Python
(import specifiers to candidate files, decorators, statements a grammar misses)."""
