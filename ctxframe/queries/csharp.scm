; C#: namespaces, classes, structs, interfaces, enums, records, methods, constructors, calls,
; `using`, base lists (an `I`-prefixed base is an interface, the rest extend).

(namespace_declaration
  name: [(identifier) (qualified_name)] @name) @definition.namespace

(file_scoped_namespace_declaration
  name: [(identifier) (qualified_name)] @name) @definition.namespace

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function

(invocation_expression
  function: (identifier) @name) @reference.call

(invocation_expression
  function: (generic_name (identifier) @name)) @reference.call

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: [(identifier) (generic_name (identifier))] @name)) @reference.call

(object_creation_expression
  type: [(identifier) @name (generic_name (identifier) @name)
         (qualified_name name: (identifier) @name)]) @reference.call

(base_list
  [(identifier) (qualified_name) (generic_name)] @name) @reference.extends

(using_directive
  !name
  [(identifier) (qualified_name)] @import.module) @reference.import

(using_directive
  name: (identifier) @import.alias
  (qualified_name) @import.module) @reference.import

; Declared types of locals, fields, properties and parameters (a call on one resolves in its
; type); `var x = new T()` takes T.
(variable_declaration
  type: (_) @typed.type
  (variable_declarator name: (identifier) @typed.name)) @typed.decl

(variable_declaration
  (variable_declarator
    name: (identifier) @typed.name
    (object_creation_expression type: (_) @typed.new))) @typed.decl

(property_declaration
  type: (_) @typed.type
  name: (identifier) @typed.name) @typed.decl

(parameter
  type: (_) @typed.type
  name: (identifier) @typed.name) @typed.decl
