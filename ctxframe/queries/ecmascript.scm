; JavaScript and TypeScript alike (both inherit this file): functions (declared and bound to
; names), methods, calls, env reads, imports.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)])) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @name)) @reference.call

(new_expression
  constructor: (identifier) @name) @reference.call

(import_statement
  source: (string (string_fragment) @import.module)) @reference.import

(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (identifier) @import.name
        alias: (identifier)? @import.alias)))
  source: (string (string_fragment) @import.module)) @reference.import

(import_statement
  (import_clause
    (identifier) @import.default)
  source: (string (string_fragment) @import.module)) @reference.import

(import_statement
  (import_clause
    (namespace_import (identifier) @import.alias))
  source: (string (string_fragment) @import.module)) @reference.import

(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments (string (string_fragment) @import.module)))
  (#eq? @_require "require")) @reference.import

(variable_declarator
  name: (object_pattern
    (shorthand_property_identifier_pattern) @import.name)
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments (string (string_fragment) @import.module)))
  (#eq? @_require "require")) @reference.import

; process.env.NAME and process.env["NAME"]
(member_expression
  object: (member_expression
    object: (identifier) @_process
    property: (property_identifier) @_env)
  property: (property_identifier) @name
  (#eq? @_process "process")
  (#eq? @_env "env")) @reference.env

(subscript_expression
  object: (member_expression
    object: (identifier) @_process
    property: (property_identifier) @_env)
  index: (string) @name
  (#eq? @_process "process")
  (#eq? @_env "env")) @reference.env

; const { NAME, OTHER: alias, THIRD = "default" } = process.env
(variable_declarator
  name: (object_pattern
    [
      (shorthand_property_identifier_pattern) @name
      (pair_pattern key: (property_identifier) @name)
      (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)
    ])
  value: (member_expression
    object: (identifier) @_process
    property: (property_identifier) @_env)
  (#eq? @_process "process")
  (#eq? @_env "env")) @reference.env

; `const x = new T()`: a call on x resolves in T.
(variable_declarator
  name: (identifier) @typed.name
  value: (new_expression constructor: [(identifier) (member_expression)] @typed.new)) @typed.decl

; Re-exports: `export * from "./m"`, `export { a, b as c } from "./m"`.
(export_statement
  !declaration
  source: (string (string_fragment) @import.module)) @reference.reexport
