"""The value-flow vocabulary shared by extraction and resolution (internal, not the contract).

Extractors describe how values move through a file as *facts*, stored as rows of the internal
refs table (kind `v.*`). Resolution (ctxframe._resolve.flow) solves them over the whole
repository to a fixpoint: points-to sets of *nodes* over *values*.

Nodes are strings:
* a variable or slot: ``SCOPE|NAME`` — SCOPE is a definition id (function, class, lambda) or a
  file path (module level); a class's slots hold its attributes (methods, class-body names,
  ``self.x = …`` stores), a module's its globals. ``F|()`` is the return value of function F,
  ``F|*`` what it yields; a container display's element is ``c:SCOPE#N|KEY``.
* an expression: a node followed by steps, each led by STEP: ``.name`` (attribute), ``(TAG)``
  (call; TAG tells textually different calls apart), ``[KEY]`` (subscript: ``s:text``,
  ``n:int``, ``?``, or ``@NODE`` for a key held by a variable), ``*`` (an element when
  iterated), ``!`` (an instance of, for annotations).
* a constant: ``=VALUE``, whose one value is VALUE.
* a union: ``u:SCOPE#N`` (conditional and boolean expressions; N counts within the scope).

Values are strings: a definition id (function, method, class, lambda), a module (a file path,
``pkg/__init__.py`` also for a package without one), ``i:CLASS`` (an instance), ``s:CLASS`` (the
``super()`` proxy in CLASS), ``m:F`` (F bound to an instance), ``g:F`` (a generator of F),
``c:SCOPE#N`` (a list/tuple/dict/set display), ``k:s:TEXT`` / ``k:n:INT`` (a short literal),
``b:TYPE`` (an instance of a builtin type), ``B:NAME`` (a builtin callable), ``x:`` (anything
from outside the repository).
"""

from __future__ import annotations

STEP = "\x1f"  # starts each step of an expression node: its parent is the key before the last
FLOW = "v.f"  # name ⊇ receiver
FLOW_INFERRED = "v.fi"  # the same, from a type annotation (solved after the rest: INFERRED)
ARGS, ARGSEP = "\x1d", "\x1e"  # a call row's `candidates`: its arguments, `POS<ARGSEP>NODE`
# or `=KEYWORD<ARGSEP>NODE`, and what it passes, `~<ARGSEP>L` (a literal first argument: a
# string or number), `~<ARGSEP>P` (another positional argument or a splat) or
# `~<ARGSEP>,KW,...` (only keywords), joined by ARGS
SHAPE = "~"  # the head of that last entry
# A call's node is `<callee><STEP>(<tag>)`: the tag is a hash of its non-literal arguments
# (8 hex digits, none without) and `l` or `p` when the entry above is `L` or `P`
SHAPE_MARK = f"({STEP}\\((?:[0-9a-f]{{8}})?)[lp]\\)"  # in a regex; group 1: what precedes it
PARAM = "v.p"  # src: function, name: its parameters, NAME<ARGSEP>KIND<ARGSEP>POS joined by
# ARGS; KIND is pos, kw, *, ** or self/cls (a method's bound first parameter: an instance of
# its class, the class), POS -1 for keyword-only and starred ones
REBOUND = "v.rb"  # name: a decorated definition, whose name's binding is in the flows (an
# undecorated definition's name holds the definition itself: the resolver adds that flow)
# A function's return node is `<id>|()`; a return its conditions leave out of some calls
# (ctxframe._ingest.lang.python_guards) goes to `<id>|()` + the calls it is dead in, in this
# order: applied as a decorator (d), called without a first argument (a), called with a literal
# first argument (l).
GUARDED = ("d", "a", "l", "da", "dl", "al", "dal")
GUARDED_RETURN = r"\|\(\)(?:dal|da|dl|al|d|a|l)$"  # such a node, in a regex
RETPARAM = "v.rp"  # name: return node, receiver: parameter node (`return param`), scope: name
STORE = "v.s"  # name: base node, scope: attribute, receiver: value node (`base.attr = value`)
STORE_ITEM = "v.ss"  # name: base node, scope: key, receiver: value node (`base[key] = value`)
SITE = "v.call"  # src: caller, name: the name as written, module: call node, line, alias:
# None for a call written as such, else "implicit", "raise" or "decorator"; candidates: its
# arguments (ARGS). A call the language query captures is a `call` reference with the same
# `module` and `candidates`.
DECORATED = "v.d"  # name: decorator call node, receiver: the decorated value's node
BASE = "v.b"  # src: class id, name: base expression node, line: position
ALL = "v.all"  # src: module path, name: a name listed in `__all__`
IMPORT = "v.im"  # src: binding scope, name: local node, receiver: absolute module,
# scope: imported name (None: the module itself, "*": every public name), alias: "root" when
# `import a.b` binds `a`

ACCESS = "v.a"  # src: the scope, name: a member's name, receiver: the node it is read on, line,
# alias: how the member runs — `get`, `set`, `del` (an attribute read, stored or deleted: a
# property's getter, setter or deleter, a descriptor's `__get__`/`__set__`), `op` (a dunder an
# operator, a protocol or a builtin calls: `__len__`, `__getitem__`, `__eq__`, `__str__`, …) or
# `prefix` (`getattr(x, "visit_" + name)`: every member whose name starts so)
PROPERTY = "v.pr"  # src: a property's function, name: the property's name, alias: `get`, `set`
# or `del`
FIXTURE = "v.fx"  # src: a pytest fixture's function, name: the fixture's name, alias: `yield`
# when its value is what it yields, else `return`

KINDS = (FLOW, FLOW_INFERRED, PARAM, REBOUND, RETPARAM, STORE, STORE_ITEM, SITE, DECORATED,
         BASE, ALL, IMPORT, ACCESS, PROPERTY, FIXTURE)  # fmt: skip

SITE_KINDS = ("implicit", "raise", "decorator")
