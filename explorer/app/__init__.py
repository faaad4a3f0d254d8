"""The Textual app. It only presents: every number comes from the engine (db.reads, db.lookup)."""
