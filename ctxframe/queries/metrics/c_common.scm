; C and C++. lizard: if for while case && || ?, and the preprocessor's #if #ifdef #elif, each
; a whole line (what the condition of one holds is not counted again).

; a function does not nest in another: one inside is a macro the grammar read as a definition
(function_definition) @scope.top

["if" "for" "while" "case" "&&" "||"] @decision
(conditional_expression "?" @decision)
; a keyword the grammar read as a name (a macro without its semicolon before it) is still one
((identifier) @decision (#any-of? @decision "if" "for" "while" "case"))
(preproc_if "#if" @decision)
(preproc_ifdef "#ifdef" @decision)
(preproc_elif "#elif" @decision)
[(preproc_if condition: (_) @mute) (preproc_elif condition: (_) @mute)]

[(if_statement) (for_statement) (while_statement) (do_statement) (switch_statement)] @nest
(else_clause (if_statement) @flat)

(compound_statement [(return_statement) (break_statement) (continue_statement) (goto_statement)]
  @terminator)
