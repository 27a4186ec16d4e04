; SQL: tables, views, functions (procedures, which the grammar does not parse, are found by a
; line scan in ctxframe/_extract.py), and function calls.

(create_table
  (object_reference
    name: (identifier) @name)) @definition.table

(create_view
  (object_reference
    name: (identifier) @name)) @definition.view

(create_materialized_view
  (object_reference
    name: (identifier) @name)) @definition.view

(create_function
  (object_reference
    name: (identifier) @name)) @definition.function

(invocation
  (object_reference
    name: (identifier) @name)) @reference.call
