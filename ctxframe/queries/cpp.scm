; C++: what c_common.scm has, plus classes, namespaces, functions and methods (in-class and
; out-of-class `Foo::bar`, qualified by their type through @receiver.type), in-class method
; declarations, typedefs and aliases, member and `new` calls, bases, `using`.
; inherits: c_common

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace

(class_specifier
  name: (type_identifier) @name
  body: (_)) @definition.class

(type_definition
  declarator: (type_identifier) @name) @definition.type

(alias_declaration
  name: (type_identifier) @name) @definition.type

; free functions and methods defined inside a class body
(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name)))
  ]) @definition.function

; out-of-class definitions: Type::name
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) (template_type) (qualified_identifier)] @receiver.type
      name: [(identifier) (destructor_name) (operator_name)] @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) (template_type) (qualified_identifier)] @receiver.type
      name: [(identifier) (destructor_name) (operator_name)] @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) (template_type) (qualified_identifier)] @receiver.type
      name: [(identifier) (destructor_name) (operator_name)] @name)))
  ]) @definition.method

; declarations without a body: prototypes and in-class method declarations
(declaration
  declarator: [
    (function_declarator declarator: [(identifier) (destructor_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (reference_declarator (function_declarator declarator: (identifier) @name))
  ]) @definition.declaration

(field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name))
    (reference_declarator (function_declarator declarator: (field_identifier) @name))
  ]) @definition.declaration

(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: (identifier) @name)) @reference.call

(call_expression
  function: (template_function
    name: (identifier) @name)) @reference.call

(new_expression
  type: (type_identifier) @name) @reference.call

(base_class_clause
  [(type_identifier) (qualified_identifier) (template_type)] @name) @reference.extends

(using_declaration
  "namespace"
  [(identifier) (qualified_identifier)] @import.module) @reference.import
