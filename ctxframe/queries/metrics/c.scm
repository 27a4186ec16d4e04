; C: what metrics/c_common.scm has, plus parameters.
; inherits: metrics/c_common

(function_definition declarator: (_ parameters: (parameter_list
  [(parameter_declaration declarator: (_)) (variadic_parameter)] @param)))
(function_definition declarator: (_ declarator: (_ parameters: (parameter_list
  [(parameter_declaration declarator: (_)) (variadic_parameter)] @param))))
