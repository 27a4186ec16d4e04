; TypeScript / TSX: what ecmascript.scm has, plus classes, interfaces, enums, type aliases,
; abstract classes, extends, implements.
; inherits: ecmascript

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

; Members declared without a body: an interface's methods, a `.d.ts` class's, abstract ones.
(method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; tree-sitter-typescript parses `await f<T>(x)` with the await inside the callee (grammar #282).
(call_expression
  function: (await_expression (identifier) @name)) @reference.call

(call_expression
  function: (await_expression
    (member_expression
      object: (_) @receiver
      property: [(property_identifier) (private_property_identifier)] @name))) @reference.call

(class_heritage
  (extends_clause
    value: [(identifier) (member_expression)] @name)) @reference.extends

(class_heritage
  (implements_clause
    [(type_identifier) (nested_type_identifier) (generic_type)] @name)) @reference.implements

(interface_declaration
  (extends_type_clause
    type: [(type_identifier) (nested_type_identifier) (generic_type)] @name)) @reference.extends

; Type annotations of variables, parameters and fields: hints (TypeScript does not check them
; at run time), a call on one resolves in the type when it is in the repository.
(variable_declarator
  name: (identifier) @typed.name
  type: (type_annotation (_) @typed.hint)) @typed.decl

(required_parameter
  pattern: (identifier) @typed.name
  type: (type_annotation (_) @typed.hint)) @typed.decl

(optional_parameter
  pattern: (identifier) @typed.name
  type: (type_annotation (_) @typed.hint)) @typed.decl

(public_field_definition
  name: (property_identifier) @typed.name
  type: (type_annotation (_) @typed.hint)) @typed.decl
