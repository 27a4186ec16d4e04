; Ruby tags (after tree-sitter-ruby's queries/tags.scm): classes, modules, methods, calls,
; superclasses.

(class
  name: [(constant) (scope_resolution name: (_))] @name) @definition.class

(module
  name: [(constant) (scope_resolution name: (_))] @name) @definition.module

(method
  name: (_) @name) @definition.method

(singleton_method
  name: (_) @name) @definition.method

(call
  !receiver
  method: (identifier) @name) @reference.call

(call
  receiver: (_) @receiver
  method: (identifier) @name) @reference.call

(class
  superclass: (superclass
    [(constant) (scope_resolution)] @name)) @reference.extends
