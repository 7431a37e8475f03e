// the state store: fingerprints, run history and the run lock in SQLite
