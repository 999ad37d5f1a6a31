"""Runtime: values, the interpreter, memory, state machines, agent builtins."""
