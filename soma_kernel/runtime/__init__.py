"""Runtime: values, the interpreter, memory, state machines, the agent and its providers, hordes, builtins, the store."""
