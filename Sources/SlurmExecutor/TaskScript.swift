import Execution
import JobGraphSystem

/// The small shell program that runs a task's commands on a node, in a job step or a batch job, and
/// writes how they ended to a status file beside the task's log.
///
/// The commands keep their local meaning: a `run` list goes one after another and stops at the first
/// failure; a `parallel` group starts them all and, at the first failure, stops the others. The program
/// itself exits 0 whenever it could record an end, so `srun` never adds its own "task 0: Exited with exit
/// code" lines to the task's output; the status file carries the real outcome instead.
enum TaskScript {
    /// Arguments: the status file, then each command. The first line of the status file is the step's
    /// Slurm id (`1234.5`; allocation mode reports it), the second `INDEX CODE` of the first failing
    /// command or `- 0`.
    static func program(concurrently: Bool) -> String {
        let id = #"echo "$SLURM_JOB_ID.$SLURM_STEP_ID" >"$f""#
        if !concurrently {
            return #"f=$1; shift; "# + id + #"; i=0; for c in "$@"; do /bin/sh -c "$c"; s=$?; if [ $s -ne 0 ]; then echo "$i $s" >>"$f"; exit 0; fi; i=$((i+1)); done; echo "- 0" >>"$f""#
        }
        return #"f=$1; shift; "# + id + #"; i=0; p=""; for c in "$@"; do /bin/sh -c "$c" & p="$p $!"; done; "#
            + #"r="- 0"; for q in $p; do wait $q; s=$?; if [ $s -ne 0 ] && [ "$r" = "- 0" ]; then r="$i $s"; kill $p 2>/dev/null; fi; i=$((i+1)); done; echo "$r" >>"$f""#
    }

    /// The long-lived program of a worker step (`StepWorker`); argument: the run's marker.
    ///
    /// It reads one request a line from standard input: `run KEY FILE` starts the task file `FILE` in a
    /// session of its own (its process group, as a local task has), stdin from `/dev/null`, stderr into
    /// stdout; when it ends (dash's "Terminated" note about it silenced: a local task has none), what is
    /// left in its group is killed, as locally, and `MARKER end KEY STATUS`
    /// follows its last output line. `sig GROUP SIGNAL` signals a task's process group (timeouts, Ctrl-C,
    /// Ctrl-Z). At end of input it waits for its tasks and exits, which ends the step. Its first line,
    /// `MARKER step JOB.STEP`, names its step, for the run to write down (docs/pipeline.md, "Reattach").
    static let workerProgram = #"n=$1; echo "$n step $SLURM_JOB_ID.$SLURM_STEP_ID"; while IFS= read -r l; do v=${l%% *}; r=${l#* }; a=${r%% *}; b=${r#* }; case $v in "#
        + #"run) { setsid /bin/sh "$b" </dev/null 2>&1 & p=$!; wait $p 2>/dev/null; s=$?; kill -KILL -- -$p 2>/dev/null; echo "$n end $a $s"; } & ;; "#
        + #"sig) kill -s "$b" -- "-$a" 2>/dev/null ;; esac; done; wait"#

    /// The SLURM_ variables a task in a worker step sees, as in a step of its own (its step id is the worker's).
    static let workerSlurmVariables = ["SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_JOB_NODELIST",
                                       "SLURM_NODELIST", "SLURMD_NODENAME", "SLURM_CPUS_ON_NODE", "SLURM_CLUSTER_NAME"]

    /// The file a worker step runs for one attempt: it names its process group (`MARKER pid KEY PID`, once
    /// it leads it), then runs `program` with the task's folder, environment and niceness.
    ///
    /// The worker has the environment jobgraph has (`srun` passes it on); the file sets what the task's
    /// differs by and runs `program` in its own shell, one `exec` less per task than `env -i … /bin/sh -c`.
    /// A niceness, or a variable name the shell cannot `export`, takes that longer way.
    static func workerTaskFile(marker: String, key: String, work: TaskWork, workerEnvironment: [String: String],
                               program: String, arguments: [String]) -> String {
        let head = """
            printf '%s pid %s %s\\n' \(quoted(marker)) \(quoted(key)) "$$"
            cd \(quoted(work.workingDirectory)) || exit 1

            """
        // The task's mark for `DescendantSweep`, as the local executor sets it (the worker has its own).
        var own = work.environment.filter { !$0.key.hasPrefix("SLURM") }
        own[DescendantSweep.taskVariable] = work.id.rawValue
        let names = Set(own.keys).union(workerEnvironment.keys.filter { !$0.hasPrefix("SLURM") })
        if work.niceness == 0, names.allSatisfy(isShellName) {
            let unset = Set(workerEnvironment.keys).union(["OLDPWD"]).filter { !$0.hasPrefix("SLURM") && own[$0] == nil }.sorted()
            // `cd` set OLDPWD: give it back the task's value.
            let changed = own.filter { workerEnvironment[$0.key] != $0.value || $0.key == "OLDPWD" }.sorted { $0.key < $1.key }
            return head
                + (unset.isEmpty ? "" : "unset \(unset.joined(separator: " "))\n")
                + changed.map { "export \($0.key)=\(quoted($0.value))\n" }.joined()
                + "set -- \(arguments.map(quoted).joined(separator: " "))\n"
                + program + "\n"
        }
        let environment = own.sorted { $0.key < $1.key }.map { quoted("\($0.key)=\($0.value)") }
            + workerSlurmVariables.map { "\($0)=\"$\($0)\"" }
        let nice = work.niceness > 0 ? ["/usr/bin/nice", "-n", String(work.niceness)] : []
        return head + "exec env -i "
            + (environment + nice + ["/bin/sh", "-c", quoted(program), "jobgraph-task"] + arguments.map(quoted)).joined(separator: " ") + "\n"
    }

    /// A name `export` takes: letters, digits and `_`, not starting with a digit.
    private static func isShellName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// What a status file says: the Slurm id, and the outcome if the program got to record one.
    /// - Parameter job: the Slurm job that must have written it (the allocation, or the batch job); an
    ///   outcome written by another job (an orphan of an earlier run) counts as none.
    static func read(_ text: String, commands: [String], job: String?) -> (slurmID: String?, result: TaskResult?) {
        let lines = text.split(separator: "\n").map(String.init)
        let id = lines.first.flatMap { $0.isEmpty ? nil : $0 }
        guard lines.count >= 2 else { return (id, nil) }
        if let job, id?.prefix(while: { $0 != "." }) != Substring(job) { return (id, nil) }
        let fields = lines[1].split(separator: " ")
        guard fields.count == 2, let code = Int32(fields[1]) else { return (id, nil) }
        guard let index = Int(fields[0]), commands.indices.contains(index) else { return (id, .succeeded) }
        return (id, .failed(exitCode: code, reason: "`\(abbreviated(commands[index]))` exited with code \(code)"))
    }

    /// `word` quoted for `/bin/sh`.
    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// The command as a user recognises it in one line (as the local executor's messages show it).
    static func abbreviated(_ command: String) -> String {
        let firstLine = command.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? command
        return firstLine.count > 60 ? String(firstLine.prefix(57)) + "..." : firstLine
    }
}
