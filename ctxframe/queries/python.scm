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

; os.environ["NAME"] (reads of os.environ.get / os.getenv are calls with a literal argument)
(subscript
  value: (attribute
    object: (identifier) @_os
    attribute: (identifier) @_environ)
  subscript: (string) @name
  (#eq? @_os "os")
  (#eq? @_environ "environ")) @reference.env
