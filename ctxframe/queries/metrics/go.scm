; Go. lizard: if for case && ||; a function literal keeps its own.

[(function_declaration) (method_declaration) (func_literal)] @scope

["if" "for" "case" "&&" "||"] @decision

[(if_statement) (for_statement) (expression_switch_statement) (type_switch_statement)
 (select_statement)] @nest
(if_statement alternative: (if_statement) @flat)

(function_declaration parameters: (parameter_list
  [(parameter_declaration name: (identifier) @param)
   (variadic_parameter_declaration name: (identifier) @param)]))
(method_declaration parameters: (parameter_list
  [(parameter_declaration name: (identifier) @param)
   (variadic_parameter_declaration name: (identifier) @param)]))

(statement_list [(return_statement) (break_statement) (continue_statement) (goto_statement)]
  @terminator)
