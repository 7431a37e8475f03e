extension StateSchema {
    /// Version 9 to 10: the jobs each Slurm run submitted, written before its next submission, so that the
    /// run after a killed one finds them, reattaches to them or cancels them (docs/pipeline.md, "Reattach").
    static let slurmJobsMigration = """
        CREATE TABLE slurm_runs (
            token TEXT PRIMARY KEY,        -- the run's jobs are named jobgraph-TOKEN; its attempt files carry TOKEN
            pipeline TEXT NOT NULL,
            run_id INTEGER REFERENCES runs (id) ON DELETE CASCADE,
            released INTEGER NOT NULL DEFAULT 0  -- 1 once nothing of it is left to find: it ended, or a later run took its jobs over
        ) WITHOUT ROWID;
        CREATE TABLE slurm_jobs (
            token TEXT NOT NULL REFERENCES slurm_runs (token) ON DELETE CASCADE,
            job TEXT NOT NULL,             -- Slurm's id: 1234, an array item's 1234_7, or the run's allocation
            task TEXT,                     -- NULL for the allocation
            attempt INTEGER,
            status_file TEXT,              -- where the job writes how its commands ended
            submitted REAL NOT NULL,       -- seconds since 1970
            slurm_state TEXT,              -- once the run saw it end: Slurm's state (COMPLETED, OUT_OF_MEMORY), if known
            exit_code INTEGER,
            outcome TEXT,                  -- once the run saw it end: the TaskState it ended in
            PRIMARY KEY (token, job)
        ) WITHOUT ROWID;
        """
}
