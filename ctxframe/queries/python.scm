; Python: definitions, calls, imports, bases. Capture names follow tree-sitter tags conventions.

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

(call
  function: (identifier) @name) @reference.call

(call
  function: (attribute
    object: (_) @receiver
    attribute: (identifier) @name)) @reference.call

(class_definition
  superclasses: (argument_list
    [(identifier) (attribute)] @name) @reference.extends)

(import_statement
  name: (dotted_name) @import.module) @reference.import

(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @reference.import

(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (dotted_name) @import.name) @reference.import

(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @reference.import

(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  (wildcard_import)) @reference.import

; environ["NAME"], os.environ["NAME"], self._environ["NAME"] and `"NAME" in environ`: a mapping
; named environ (as `from os import environ` binds it, or a copy kept on an object) read by a
; literal key. Reads through .get / os.getenv are calls with a literal argument (boundaries/calls.py).
(subscript
  value: [
    (identifier) @_environ
    (attribute attribute: (identifier) @_environ)
  ] @receiver
  subscript: (string) @name
  (#match? @_environ "^_?environ$")) @reference.env

(comparison_operator
  (string) @name
  .
  [
    (identifier) @_environ
    (attribute attribute: (identifier) @_environ)
  ] @receiver
  (#match? @_environ "^_?environ$")) @reference.env

; Lambdas are definitions of their own (`path::outer.<lambda1>`, numbered per enclosing scope).
(lambda) @definition.lambda

; Value flow (ctxframe/_ingest/lang/python_facts.py): statements that bind names, move values
; or call something, one capture each.
(assignment) @flow.assign
(augmented_assignment) @flow.augassign
(return_statement) @flow.return
(yield) @flow.yield
(for_statement) @flow.for
(for_in_clause) @flow.for
(with_item) @flow.with
(raise_statement) @flow.raise
(global_statement) @flow.global
(nonlocal_statement) @flow.nonlocal
(except_clause) @flow.except
(named_expression) @flow.walrus
(import_statement) @flow.import
(import_from_statement) @flow.import
; what runs a member implicitly: attribute reads, stores and deletes (properties, descriptors),
; subscripts, operators, comparisons, truth tests, f-string fields and `await`
(attribute) @flow.attr
(subscript) @flow.subscript
(binary_operator) @flow.binop
(unary_operator) @flow.unop
(comparison_operator) @flow.compare
(not_operator) @flow.truth
(boolean_operator) @flow.truth
(if_statement condition: (_) @flow.truth)
(elif_clause condition: (_) @flow.truth)
(while_statement condition: (_) @flow.truth)
(conditional_expression) @flow.ternary
(interpolation) @flow.interp
(await) @flow.await
(delete_statement) @flow.delete
; calls of what is neither a name nor an attribute (`f()()`, `d["k"]()`, `(lambda: 0)()`)
(call
  function: [(call) (subscript) (parenthesized_expression) (await) (lambda)]) @flow.call
