"""The Textual app. It only presents: every number comes from the engine (db.queries, db.lookup)."""
