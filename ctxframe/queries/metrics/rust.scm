; Rust. lizard: if for while && || where, the `?` operator, each match arm after the first and
; `let … else`; a closure's conditions count for its function.

(function_item) @scope

["if" "for" "while" "&&" "||" "where"] @decision
(try_expression "?" @decision)
(match_block (match_arm) . (match_arm) @decision)
(let_declaration alternative: (_) @decision)

[(if_expression) (for_expression) (while_expression) (loop_expression)
 (match_expression)] @nest
(else_clause (if_expression) @flat)

(function_item parameters: (parameters [(self_parameter) (parameter) (variadic_parameter)] @param))

(attribute_item) @decorator.next
