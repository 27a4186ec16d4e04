; C#. lizard: if for while catch case && || ?? and the `?` of a conditional expression
; (`foreach` and switch-expression arms are not counted by lizard's C# reader); lambdas count
; for their method, local functions keep their own.

[(method_declaration) (constructor_declaration) (destructor_declaration)
 (operator_declaration) (local_function_statement)] @scope

["if" "for" "while" "catch" "case" "&&" "||" "??"] @decision
(conditional_expression "?" @decision)

[(if_statement) (for_statement) (foreach_statement) (while_statement) (do_statement)
 (switch_statement) (try_statement)] @nest
(if_statement alternative: (if_statement) @flat)

(method_declaration parameters: (parameter_list (parameter) @param))
(constructor_declaration parameters: (parameter_list (parameter) @param))
(local_function_statement parameters: (parameter_list (parameter) @param))

(method_declaration (attribute_list (attribute) @decorator))
(class_declaration (attribute_list (attribute) @decorator))
