; JavaScript and TypeScript. lizard: if for while catch case && || ?? (and &&= ||= ??=), the
; `?` of a conditional expression (not an optional chain or an optional name), and each
; default value of a parameter or a destructuring binding, not what a template literal holds;
; every function, arrow function and method keeps its own.

[(function_declaration) (generator_function_declaration) (function_expression)
 (generator_function) (method_definition)] @scope
; an arrow function with an expression body ends at its first line break (lizard): what the
; lines after it hold counts for the enclosing function
(arrow_function) @scope.line
; an arrow function returned by an arrow function is part of it (lizard: `a => b => {…}`)
(arrow_function body: (arrow_function) @merge)

["if" "for" "while" "catch" "case" "&&" "||" "??" "&&=" "||=" "??="] @decision
(ternary_expression "?" @decision)
[(assignment_pattern) (object_assignment_pattern)] @decision
(template_substitution) @mute
; lizard reads a parenthesis that opens a property's value (or a spread) in an object literal
; as the parameters of a method, and counts nothing of that value
(pair value: (_) @mute.paren)
(spread_element (_) @mute.paren)
; lizard reads tokens: a keyword used as a property name counts too (`promise.catch(…)`)
((property_identifier) @decision (#any-of? @decision "if" "for" "while" "catch" "case"))

[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (switch_statement) (try_statement)] @nest
(else_clause (if_statement) @flat)

(arrow_function parameter: (identifier) @param)

(statement_block [(return_statement) (throw_statement) (break_statement) (continue_statement)]
  @terminator)
