"""The live notebook session: definitions by cell, magics, display, diagrams, reports and editor help."""
