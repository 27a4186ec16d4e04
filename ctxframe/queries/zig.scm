; Zig: functions, containers bound to a const (struct, enum, union, opaque), methods (functions
; inside a container), calls, `@import`.

(Decl
  (FnProto
    function: (IDENTIFIER) @name)) @definition.function

(Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr
        (ContainerDecl
          (ContainerDeclType) @_kind)))
    (#match? @_kind "^(struct|packed struct|extern struct|opaque)"))) @definition.struct

(Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr
        (ContainerDecl
          (ContainerDeclType) @_kind)))
    (#match? @_kind "^(enum|union)"))) @definition.enum

(SuffixExpr
  .
  variable_type_function: (IDENTIFIER) @name
  .
  (FnCallArguments)) @reference.call

(SuffixExpr
  .
  variable_type_function: (IDENTIFIER) @receiver
  (FieldOrFnCall
    function_call: (IDENTIFIER) @name)) @reference.call

(VarDecl
  variable_type_function: (IDENTIFIER) @import.alias
  (ErrorUnionExpr
    (SuffixExpr
      (BUILTINIDENTIFIER) @_builtin
      (FnCallArguments
        (ErrorUnionExpr
          (SuffixExpr
            (STRINGLITERALSINGLE) @import.module)))))
  (#eq? @_builtin "@import")) @reference.import
