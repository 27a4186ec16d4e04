; JavaScript: what ecmascript.scm has, plus classes and extends (TypeScript names these with
; other node types).
; inherits: ecmascript

(class_declaration
  name: (identifier) @name) @definition.class

(class_heritage
  [(identifier) (member_expression)] @name) @reference.extends
