; JavaScript: what metrics/ecmascript.scm has, plus untyped parameters and decorators.
; inherits: metrics/ecmascript

(formal_parameters
  [(identifier) (assignment_pattern) (object_pattern) (array_pattern) (rest_pattern)] @param)

(class_declaration (decorator) @decorator)
(method_definition (decorator) @decorator)
