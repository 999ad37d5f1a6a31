"""The live notebook session: definitions by cell, magics, display, diagrams, widgets and editor help."""
