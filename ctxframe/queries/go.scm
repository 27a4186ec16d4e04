; Go: types, functions, methods (qualified by receiver type), calls, imports, embedding.

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type))) @definition.struct

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type))) @definition.interface

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [(type_identifier) (qualified_type) (map_type) (slice_type) (function_type) (pointer_type) (array_type) (channel_type) (generic_type)])) @definition.type

(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @receiver.var
      type: [(type_identifier) @receiver.type
             (pointer_type (type_identifier) @receiver.type)
             (generic_type (type_identifier) @receiver.type)
             (pointer_type (generic_type (type_identifier) @receiver.type))]))
  name: (field_identifier) @name) @definition.method

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @name)) @reference.call

(import_spec
  name: (package_identifier)? @import.alias
  path: (interpreted_string_literal) @import.module) @reference.import

(struct_type
  (field_declaration_list
    (field_declaration
      .
      type: [(type_identifier) (qualified_type)] @name
      .))) @reference.extends

(interface_type
  (type_elem
    [(type_identifier) (qualified_type)] @name)) @reference.extends

; Declared types of variables, parameters and struct fields (a call on one resolves in its type):
; `@typed.type` a declared type, `@typed.new` a composite literal's, `@typed.call` the function
; whose result it is (its declared result type).
(var_spec
  name: (identifier) @typed.name
  type: (_) @typed.type) @typed.decl

(parameter_declaration
  name: (identifier) @typed.name
  type: (_) @typed.type) @typed.decl

(field_declaration
  name: (field_identifier) @typed.name
  type: (_) @typed.type) @typed.decl

(short_var_declaration
  left: (expression_list . (identifier) @typed.name)
  right: (expression_list . [(composite_literal type: (_) @typed.new)
                             (unary_expression operand: (composite_literal type: (_) @typed.new))])) @typed.decl

(short_var_declaration
  left: (expression_list . (identifier) @typed.name)
  right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @typed.call))) @typed.decl
