; C++: what metrics/c_common.scm has, plus catch and range for; a lambda's conditions count
; for the function it is written in (as lizard counts them).
; inherits: metrics/c_common

"catch" @decision

[(for_range_loop) (try_statement)] @nest

(function_definition declarator: (_ parameters: (parameter_list
  [(parameter_declaration declarator: (_)) (optional_parameter_declaration)
   (variadic_parameter_declaration)] @param)))
(function_definition declarator: (_ declarator: (_ parameters: (parameter_list
  [(parameter_declaration declarator: (_)) (optional_parameter_declaration)
   (variadic_parameter_declaration)] @param))))
