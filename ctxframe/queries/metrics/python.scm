; Python. lizard: if elif for while except finally and or, and `case` of a match; a lambda's
; conditions count for the function it is written in; a nested def keeps its own.

(function_definition) @scope

["if" "elif" "for" "while" "except" "finally" "and" "or" "case"] @decision

[(if_statement) (for_statement) (while_statement) (try_statement) (with_statement)
 (match_statement)] @nest

(function_definition
  parameters: (parameters
    [(identifier) (typed_parameter) (default_parameter) (typed_default_parameter)
     (list_splat_pattern) (dictionary_splat_pattern)] @param))

(lambda
  parameters: (lambda_parameters
    [(identifier) (typed_parameter) (default_parameter) (typed_default_parameter)
     (list_splat_pattern) (dictionary_splat_pattern)] @param))

(decorated_definition (decorator) @decorator.next)

; the statement after one of these in the same block runs on no path (vulture: unreachable code)
(block [(return_statement) (raise_statement) (continue_statement) (break_statement)] @terminator)
