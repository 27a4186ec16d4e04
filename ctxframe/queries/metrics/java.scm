; Java. lizard: if for while catch case && || and the `?` of a conditional expression (not a
; wildcard); a lambda's conditions count for its method, an anonymous class's methods keep
; their own.

[(method_declaration) (constructor_declaration) (compact_constructor_declaration)] @scope

["if" "for" "while" "catch" "case" "&&" "||"] @decision
(ternary_expression "?" @decision)

[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (switch_expression) (try_statement) (try_with_resources_statement)] @nest
(if_statement alternative: (if_statement) @flat)

(method_declaration parameters: (formal_parameters [(formal_parameter) (spread_parameter)] @param))
(constructor_declaration parameters: (formal_parameters [(formal_parameter) (spread_parameter)] @param))

(method_declaration (modifiers [(marker_annotation) (annotation)] @decorator))
(constructor_declaration (modifiers [(marker_annotation) (annotation)] @decorator))
(class_declaration (modifiers [(marker_annotation) (annotation)] @decorator))
