/// The tables of `state.db` and how to bring an older file up to date, versioned by `PRAGMA user_version`.
enum StateSchema {
    /// The version this program writes.
    static let currentVersion = 12
    /// The first version whose up-to-date records are keyed by pipeline and task (`StateStore.taskNamespace`).
    static let namespacedVersion = 9

    /// One script per version step: `migrations[n]` takes a database from version `n` to `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            pipeline TEXT NOT NULL,        -- the pipeline file's name: pipelines beside each other share .jobgraph/
            started_at REAL NOT NULL,      -- seconds since 1970
            ended_at REAL,
            outcome TEXT,                  -- NULL while running, or forever when the run was killed
            task_count INTEGER NOT NULL
        );
        CREATE INDEX runs_by_pipeline ON runs (pipeline, id);
        CREATE TABLE task_runs (
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            task TEXT NOT NULL,
            state TEXT NOT NULL,           -- a TaskState raw value; 'executing' when the run died during it
            attempts INTEGER NOT NULL,
            duration REAL,                 -- seconds the last attempt executed
            exit_code INTEGER,
            definition TEXT,               -- the task's definition fingerprint in that run
            PRIMARY KEY (run_id, task)
        ) WITHOUT ROWID;
        CREATE INDEX task_runs_by_task ON task_runs (task, run_id);
        CREATE TABLE task_fingerprints (   -- one row per task that ever succeeded
            task TEXT PRIMARY KEY,
            definition TEXT NOT NULL,
            succeeded INTEGER NOT NULL     -- 0 once it starts executing again, until it succeeds
        ) WITHOUT ROWID;
        CREATE TABLE task_inputs (         -- the input files of that success, with their content hashes
            task TEXT NOT NULL REFERENCES task_fingerprints (task) ON DELETE CASCADE,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            PRIMARY KEY (task, path)
        ) WITHOUT ROWID;
        CREATE TABLE files (               -- content hash cache: trusted while size, mtime and inode match
            path TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            sha256 TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
        attemptsMigration,
        // The definition itself beside its fingerprint, so a rerun can say what changed: the command, a
        // variable, a parameter (`TaskDefinition.canonicalEncoding`; NULL in rows written before).
        """
        ALTER TABLE task_fingerprints ADD COLUMN definition_text TEXT;
        """,
        // Versions 4 to 7 held the no-op replay, which version 8 removes; their steps are reduced to the
        // two columns version 8 reads to keep the history of the runs it made. (A file of version 4 to 7
        // holds the rest: its tables, triggers and columns, all dropped below.)
        """
        ALTER TABLE runs ADD COLUMN replayed_run INTEGER;
        """,
        """
        ALTER TABLE runs ADD COLUMN task_rows_of INTEGER;
        """,
        "",
        "",
        withoutReplayMigration,
        namespaceMigration,
        slurmJobsMigration,
        resourcesMigration,
        slurmJobKindsMigration,
    ]

    /// Checks that a database opened read-only can be read: an older version lacks columns that reads then
    /// do without, a newer one may mean something else by its tables.
    static func checkReadable(_ database: SQLiteDatabase) throws {
        let found = try database.userVersion()
        if found > currentVersion { throw StateStoreError.newerSchema(path: database.location.filename, found: found, supported: currentVersion) }
    }

    /// Creates or upgrades the schema inside one transaction, so two processes opening a new file at once
    /// cannot both create it, and a kill halfway leaves the old version intact.
    static func migrate(_ database: SQLiteDatabase) throws {
        let found = try database.transaction { () throws(SQLiteError) -> Int in
            let version = try database.userVersion()
            guard version <= currentVersion else { return version }
            for step in version..<currentVersion {
                try database.execute(migrations[step])
            }
            if version != currentVersion { try database.setUserVersion(currentVersion) }
            return version
        }
        if found > currentVersion { throw StateStoreError.newerSchema(path: database.location.filename, found: found, supported: currentVersion) }
    }
}

extension StateSchema {
    /// Version 7 to 8: the no-op replay's tables, triggers and columns go, and its runs keep their history;
    /// and `task_runs_by_task` goes (see below).
    ///
    /// A run that shared another run's task rows (`runs.task_rows_of`: a replayed run, or a checked rerun
    /// that found every task up to date as the run before it had) gets rows of its own first, copied from
    /// that run's: a replayed run's as its history showed them, every task up to date without an attempt.
    /// The attempts stay the source run's own: a run that shared rows started nothing.
    ///
    /// `task_runs_by_task`, an index of every run's rows by task, had every run that wrote a row per task
    /// rewrite nearly all of its pages (each holds a few tasks' rows of every kept run), and again when it
    /// dropped the oldest run: with 50 runs kept, a checked no-op rerun of 10,000 tasks wrote 12,155 pages and
    /// read 9,473 with it, 1,912 and 2,287 without (strace -c, release build). Its one lookup, whether a task
    /// ever ran, reads the tasks once instead (`StateStore.hasRecordedRun`); the history's other queries
    /// scan the table faster without it.
    static let withoutReplayMigration: String = {
        var script = """
            INSERT OR IGNORE INTO task_runs (run_id, task, state, attempts, duration, exit_code, definition)
            SELECT r.id, t.task,
                   CASE WHEN r.replayed_run IS NULL THEN t.state ELSE 'up-to-date' END,
                   CASE WHEN r.replayed_run IS NULL THEN t.attempts ELSE 0 END,
                   CASE WHEN r.replayed_run IS NULL THEN t.duration END,
                   CASE WHEN r.replayed_run IS NULL THEN t.exit_code END,
                   t.definition
            FROM runs r JOIN task_runs t ON t.run_id = r.task_rows_of
            WHERE r.task_rows_of IS NOT NULL AND r.task_rows_of != r.id;
            DROP TABLE IF EXISTS noop_replays;

            """
        for table in ["task_fingerprints", "task_inputs", "files"] {
            for change in ["insert", "update", "delete"] {
                script += "DROP TRIGGER IF EXISTS \(table)_\(change)_generation;\n"
            }
        }
        script += """
            DROP TABLE IF EXISTS state_generation;
            ALTER TABLE runs DROP COLUMN task_rows_of;
            ALTER TABLE runs DROP COLUMN replayed_run;
            DROP INDEX IF EXISTS task_runs_by_task;
            """
        return script
    }()
}

extension StateSchema {
    /// Version 8 to 9: `runs.nested_in`, the run whose task started a nested run; and each up-to-date record is keyed by its pipeline file's name, U+001F and the task id,
    /// so that two pipelines in one folder with a task of one id no longer share it. A record goes to the
    /// pipeline of the latest run that recorded its task; one no kept run names is dropped (its task runs
    /// once more). Its inputs follow it; the old rows go with the old keys (ON DELETE CASCADE).
    static let namespaceMigration = """
        CREATE TEMP TABLE fingerprint_owners AS
            SELECT f.task AS task, (SELECT r.pipeline FROM task_runs t JOIN runs r ON r.id = t.run_id
                                    WHERE t.task = f.task ORDER BY t.run_id DESC LIMIT 1) AS pipeline
            FROM task_fingerprints f;
        INSERT INTO task_fingerprints (task, definition, succeeded, definition_text)
            SELECT o.pipeline || char(31) || f.task, f.definition, f.succeeded, f.definition_text
            FROM task_fingerprints f JOIN fingerprint_owners o ON o.task = f.task WHERE o.pipeline IS NOT NULL;
        INSERT INTO task_inputs (task, path, sha256)
            SELECT o.pipeline || char(31) || i.task, i.path, i.sha256
            FROM task_inputs i JOIN fingerprint_owners o ON o.task = i.task WHERE o.pipeline IS NOT NULL;
        DELETE FROM task_fingerprints WHERE task IN (SELECT task FROM fingerprint_owners);
        DROP TABLE fingerprint_owners;
        ALTER TABLE runs ADD COLUMN nested_in INTEGER;
        """
}

extension StateStore {
    /// The `state.db` schema version this jobgraph writes; a file from a later one is refused.
    public static var schemaVersion: Int { StateSchema.currentVersion }
}
