"""Front end: grammar, parser, AST, the expression renderer and the state-machine model built from the AST."""
