; Rust: structs, enums, unions, traits, type aliases, modules, functions, methods in `impl`
; blocks (qualified by their type through @receiver.type), calls, `use`, `mod x;`,
; `impl Trait for Type` (implements), supertraits (extends).

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(type_item
  name: (type_identifier) @name) @definition.type

(mod_item
  name: (identifier) @name
  body: (_)) @definition.namespace

(function_item
  name: (identifier) @name) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(impl_item
  type: [(type_identifier) @receiver.type
         (generic_type type: (type_identifier) @receiver.type)
         (scoped_type_identifier name: (type_identifier) @receiver.type)
         (generic_type type: (scoped_type_identifier name: (type_identifier) @receiver.type))]
  body: (declaration_list
    (function_item
      name: (identifier) @name) @definition.method))

(impl_item
  trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @name
  type: [(type_identifier) @receiver.type
         (generic_type type: (type_identifier) @receiver.type)
         (scoped_type_identifier name: (type_identifier) @receiver.type)
         (generic_type type: (scoped_type_identifier name: (type_identifier) @receiver.type))]) @reference.implements

(trait_item
  bounds: (trait_bounds
    [(type_identifier) (scoped_type_identifier) (generic_type)] @name)) @reference.extends

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (field_identifier) @name)) @reference.call

(call_expression
  function: (scoped_identifier
    path: (_) @receiver
    name: (identifier) @name)) @reference.call

(call_expression
  function: (generic_function
    function: [(identifier) @name
               (field_expression value: (_) @receiver field: (field_identifier) @name)
               (scoped_identifier path: (_) @receiver name: (identifier) @name)])) @reference.call

(use_declaration
  argument: (_) @import.module) @reference.import

(mod_item
  !body
  name: (identifier) @import.module) @reference.import

; Declared types of bindings, parameters and struct fields (a call on one resolves in its type);
; `let x = T { .. }` takes T, `let x = T::new(..)` (an associated function: usually `Self`) a hint.
(let_declaration
  pattern: (identifier) @typed.name
  type: (_) @typed.type) @typed.decl

(let_declaration
  pattern: (identifier) @typed.name
  value: (struct_expression name: (_) @typed.new)) @typed.decl

(let_declaration
  pattern: (identifier) @typed.name
  value: (call_expression
    function: (scoped_identifier path: (_) @typed.hint name: (identifier)))) @typed.decl

(parameter
  pattern: (identifier) @typed.name
  type: (_) @typed.type) @typed.decl

(field_declaration
  name: (field_identifier) @typed.name
  type: (_) @typed.type) @typed.decl
