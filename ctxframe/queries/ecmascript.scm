; JavaScript and TypeScript alike (both inherit this file): functions (declared, bound to
; names and stored in properties), methods, calls, env reads, imports.

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

; `var proto = module.exports = function () {}`: the declared name.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (assignment_expression
      right: [(arrow_function) (function_expression)]))) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (assignment_expression
      right: [(arrow_function) (function_expression)]))) @definition.function

; Functions stored in a property: `X.prototype.m = function` is the method `X.m`, and
; `obj.m = function` at module level (`res.send`) the method `obj.m`, both in X or obj when
; the file defines it (the `@receiver.type` rule of Go methods); `exports.f =`,
; `module.exports.f =` and `module.exports = function f` define the module's function `f`.
; A chain names the function by its first target: `res.set = res.header = function` is
; `res.set`.
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression
        object: (identifier) @receiver.type
        property: (property_identifier) @_prototype)
      property: (property_identifier) @name)
    right: [
      (arrow_function) (function_expression)
      (assignment_expression right: [(arrow_function) (function_expression)])
    ])
  (#eq? @_prototype "prototype")) @definition.method

(program
  (expression_statement
    (assignment_expression
      left: (member_expression
        object: (identifier) @receiver.type
        property: (property_identifier) @name)
      right: [
        (arrow_function) (function_expression)
        (assignment_expression right: [(arrow_function) (function_expression)])
      ])
    (#not-match? @receiver.type "^(exports|module)$")) @definition.method)

(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_exports
      property: (property_identifier) @name)
    right: [
      (arrow_function) (function_expression)
      (assignment_expression right: [(arrow_function) (function_expression)])
    ])
  (#eq? @_exports "exports")) @definition.function

(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression
        object: (identifier) @_module
        property: (property_identifier) @_exports)
      property: (property_identifier) @name)
    right: [
      (arrow_function) (function_expression)
      (assignment_expression right: [(arrow_function) (function_expression)])
    ])
  (#eq? @_module "module")
  (#eq? @_exports "exports")) @definition.function

(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    right: (function_expression name: (identifier) @name))
  (#eq? @_module "module")
  (#eq? @_exports "exports")) @definition.function

; The members of an object literal bound to a name at module level (`get() {}` or
; `get: function () {}`): methods of that name (`const api = {…}` -> `api.get`); anywhere,
; `X.prototype = {…}` (-> `X.get`) and `module.exports = {…}` (the module's). Other objects'
; `key: function` pairs are not definitions (like a function passed as an argument).
(program
  [
    (lexical_declaration
      (variable_declarator
        name: (identifier) @receiver.type
        value: (object
          [
            (pair key: (property_identifier) @name value: [(arrow_function) (function_expression)])
            (method_definition name: (property_identifier) @name)
          ] @definition.method)))
    (variable_declaration
      (variable_declarator
        name: (identifier) @receiver.type
        value: (object
          [
            (pair key: (property_identifier) @name value: [(arrow_function) (function_expression)])
            (method_definition name: (property_identifier) @name)
          ] @definition.method)))
    (export_statement
      declaration: (lexical_declaration
        (variable_declarator
          name: (identifier) @receiver.type
          value: (object
            [
              (pair
                key: (property_identifier) @name
                value: [(arrow_function) (function_expression)])
              (method_definition name: (property_identifier) @name)
            ] @definition.method))))
    (expression_statement
      (assignment_expression
        left: (identifier) @receiver.type
        right: (object
          [
            (pair key: (property_identifier) @name value: [(arrow_function) (function_expression)])
            (method_definition name: (property_identifier) @name)
          ] @definition.method)))
  ])

(assignment_expression
  left: (member_expression
    object: (identifier) @receiver.type
    property: (property_identifier) @_prototype)
  right: (object
    [
      (pair key: (property_identifier) @name value: [(arrow_function) (function_expression)])
      (method_definition name: (property_identifier) @name)
    ] @definition.method)
  (#eq? @_prototype "prototype"))

(assignment_expression
  left: (member_expression
    object: (identifier) @_module
    property: (property_identifier) @_exports)
  right: (object
    (pair
      key: (property_identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.method)
  (#eq? @_module "module")
  (#eq? @_exports "exports"))

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
