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
