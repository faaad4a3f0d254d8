"""One pane per file; each shows what the app hands it and posts messages for what it wants."""
