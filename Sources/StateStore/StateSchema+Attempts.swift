extension StateSchema {
    /// Version 1 to 2: what `jobgraph report` draws. Each run's `--jobs` and the critical path it took; each
    /// attempt's times (seconds since its run started), lane, outcome, and for a failure its log's last lines.
    static let attemptsMigration = """
        ALTER TABLE runs ADD COLUMN jobs INTEGER;
        ALTER TABLE runs ADD COLUMN critical_path TEXT;   -- task ids, one per line, first to last
        CREATE TABLE task_attempts (
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            task TEXT NOT NULL,
            attempt INTEGER NOT NULL,      -- 1 for the first
            queue TEXT NOT NULL,
            slot INTEGER NOT NULL,         -- 0-based lane: the lowest free when it started
            started REAL NOT NULL,         -- seconds since the run started
            ended REAL,                    -- NULL when the run died during it
            outcome TEXT NOT NULL,         -- the TaskState it ended in; 'executing' when it never ended
            exit_code INTEGER,
            error TEXT,
            log_tail TEXT,                 -- a failure's last log lines, joined by newlines
            PRIMARY KEY (run_id, task, attempt)
        ) WITHOUT ROWID;
        """
}

extension StateSchema {
    /// Version 10 to 11: what `jobgraph report` shows of resources (docs/pipeline.md, "Resources"), for a
    /// run whose pipeline declares them: its totals with where each comes from, and what each attempt held.
    static let resourcesMigration = """
        CREATE TABLE run_resources (
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            position INTEGER NOT NULL,     -- 0 for cpus, then in the order of the totals
            name TEXT NOT NULL,
            total INTEGER NOT NULL,        -- bytes for mem
            source TEXT,                   -- where the total comes from: jobs, option (--resources), file, machine
            PRIMARY KEY (run_id, position)
        ) WITHOUT ROWID;
        ALTER TABLE task_attempts ADD COLUMN resources TEXT;  -- what it held: 'cpus=2,mem=2147483648' (mem in bytes)
        """
}
