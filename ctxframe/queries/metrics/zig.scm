; Zig. lizard: if for while try catch and or orelse, and each `=>` of a switch.

(Decl (FnProto) (Block)) @scope

["if" "for" "while" "try" "catch" "and" "or" "orelse" "=>"] @decision

[(IfStatement) (ForStatement) (WhileStatement) (SwitchExpr)] @nest

(FnProto (ParamDeclList (ParamDecl) @param))
