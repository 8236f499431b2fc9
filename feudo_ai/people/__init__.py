"""People at the table: terminal play against bots (:mod:`.play`), hosted play (:mod:`.hosted_play`), the
real-table companion (:mod:`.companion`), and the narration of what happened (:mod:`.narrate`)."""
