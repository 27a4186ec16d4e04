; TypeScript / TSX: as JavaScript, plus interfaces, enums, type aliases, abstract classes, implements.

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

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

; tree-sitter-typescript parses `await f<T>(x)` with the await inside the callee (grammar #282).
(call_expression
  function: (await_expression (identifier) @name)) @reference.call

(call_expression
  function: (await_expression
    (member_expression
      object: (_) @receiver
      property: [(property_identifier) (private_property_identifier)] @name))) @reference.call

(new_expression
  constructor: (identifier) @name) @reference.call

(class_heritage
  (extends_clause
    value: [(identifier) (member_expression)] @name)) @reference.extends

(class_heritage
  (implements_clause
    [(type_identifier) (nested_type_identifier) (generic_type)] @name)) @reference.implements

(interface_declaration
  (extends_type_clause
    type: [(type_identifier) (nested_type_identifier) (generic_type)] @name)) @reference.extends

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
