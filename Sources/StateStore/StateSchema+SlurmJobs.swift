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

extension StateSchema {
    /// Version 11 to 12: what each Slurm job is (`kind`: a worker step of the allocation has a row of its own,
    /// `1234.0`, written as it starts), and a digest of what it runs (`definition`), so that a later run
    /// reuses a killed run's allocation and steps, and takes over its jobs, only when they do what it would
    /// (docs/pipeline.md, "Reattach"). Rows written before have neither: their kind follows from `task` and
    /// `job`.
    static let slurmJobKindsMigration = """
        ALTER TABLE slurm_jobs ADD COLUMN kind TEXT;        -- 'allocation', 'worker-step' or 'batch-job'
        ALTER TABLE slurm_jobs ADD COLUMN definition TEXT;  -- a batch job's task definition, the allocation's request, as a digest
        """
}
