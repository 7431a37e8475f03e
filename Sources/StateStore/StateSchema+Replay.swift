extension StateSchema {
    /// Version 3 to 4: what a no-op rerun needs to replay the previous verdict (`NoOpReplayRecord`).
    ///
    /// `state_generation` counts every change to the tables up-to-date checks read. Triggers bump it, so
    /// every writer of those tables, today's and tomorrow's, invalidates a replay without knowing of it.
    /// `noop_replays` holds one record per pipeline file name (pipelines beside each other share
    /// `.jobgraph/`); `runs.replayed_run` names the run a replayed run repeated, for `jobgraph history`.
    static let replayMigration: String = {
        var script = """
            CREATE TABLE state_generation (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                generation INTEGER NOT NULL
            );
            INSERT INTO state_generation (id, generation) VALUES (1, 0);
            ALTER TABLE runs ADD COLUMN replayed_run INTEGER;   -- the run a replayed no-op rerun repeated
            CREATE TABLE noop_replays (
                pipeline TEXT PRIMARY KEY,     -- the pipeline file's name, as runs.pipeline
                key BLOB NOT NULL,             -- version, arguments, working folder and environment
                pipeline_bytes BLOB NOT NULL,  -- the pipeline file as the recorded run read it
                generation INTEGER NOT NULL,   -- state_generation when the recorded run checked its tasks
                source_run INTEGER NOT NULL,   -- the run whose verdict and history rows a replay repeats
                task_count INTEGER NOT NULL,
                body BLOB NOT NULL             -- examined paths, tasks, critical path (NoOpReplayRecord)
            ) WITHOUT ROWID;

            """
        for table in ["task_fingerprints", "task_inputs", "files"] {
            for change in ["INSERT", "UPDATE", "DELETE"] {
                script += """
                    CREATE TRIGGER \(table)_\(change.lowercased())_generation AFTER \(change) ON \(table)
                    BEGIN UPDATE state_generation SET generation = generation + 1; END;

                    """
            }
        }
        return script
    }()

    /// Version 5 to 6: a replay record keeps the pipeline file's length and XXH64 instead of its bytes
    /// (`PipelineFileDigest`), and its small columns before the body, so that a record that does not match
    /// is told from them without reading the body. The records are dropped: the next run checks its tasks.
    static let replayDigestMigration = """
        DROP TABLE noop_replays;
        CREATE TABLE noop_replays (
            pipeline TEXT PRIMARY KEY,         -- the pipeline file's name, as runs.pipeline
            key BLOB NOT NULL,                 -- version, arguments and working folder
            pipeline_length INTEGER NOT NULL,  -- the pipeline file as the recorded run read it: its length
            pipeline_hash INTEGER NOT NULL,    -- and the XXH64 of its bytes (as a signed integer)
            generation INTEGER NOT NULL,       -- state_generation when the recorded run checked its tasks
            source_run INTEGER NOT NULL,       -- the run whose verdict and history rows a replay repeats
            task_count INTEGER NOT NULL,
            body BLOB NOT NULL                 -- examined paths, tasks, critical path (NoOpReplayRecord)
        ) WITHOUT ROWID;
        """
}
