"""The Textual app. It only presents: every number comes from the engine (cuda_l2_explorer.engine)."""
