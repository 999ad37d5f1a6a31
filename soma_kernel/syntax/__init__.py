"""Front end: grammar, parser, AST and the expression renderer."""
