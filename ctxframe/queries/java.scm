; Java: classes, interfaces, enums, records, methods, constructors, calls, imports, inheritance.

(class_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(record_declaration
  name: (identifier) @name) @definition.class

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(method_invocation
  !object
  name: (identifier) @name) @reference.call

(method_invocation
  object: (_) @receiver
  name: (identifier) @name) @reference.call

(object_creation_expression
  type: [(type_identifier) @name
         (generic_type (type_identifier) @name)
         (scoped_type_identifier (type_identifier) @name .)]) @reference.call

(superclass
  [(type_identifier) (scoped_type_identifier) (generic_type)] @name) @reference.extends

(super_interfaces
  (type_list
    [(type_identifier) (scoped_type_identifier) (generic_type)] @name)) @reference.implements

(extends_interfaces
  (type_list
    [(type_identifier) (scoped_type_identifier) (generic_type)] @name)) @reference.extends

(import_declaration
  [(scoped_identifier) (identifier)] @import.module) @reference.import

; Declared types of locals, parameters and fields (a call on one resolves in its type);
; `var x = new T()` takes T.
(local_variable_declaration
  type: (_) @typed.type
  declarator: (variable_declarator name: (identifier) @typed.name)) @typed.decl

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @typed.name
    value: (object_creation_expression type: (_) @typed.new))) @typed.decl

(formal_parameter
  type: (_) @typed.type
  name: (identifier) @typed.name) @typed.decl

(field_declaration
  type: (_) @typed.type
  declarator: (variable_declarator name: (identifier) @typed.name)) @typed.decl
