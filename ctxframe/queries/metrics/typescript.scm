; TypeScript and TSX: what metrics/ecmascript.scm has, plus typed parameters (a default value
; counts as a decision, as in JavaScript).
; inherits: metrics/ecmascript

[(required_parameter value: (_)) (optional_parameter value: (_))] @decision

(formal_parameters [(required_parameter) (optional_parameter)] @param)

(class_declaration decorator: (decorator) @decorator)
(abstract_class_declaration decorator: (decorator) @decorator)
(class_body (decorator) @decorator.next)
