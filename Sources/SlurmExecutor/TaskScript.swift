import Execution

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

    /// What a status file says: the Slurm id, and the outcome if the program got to record one.
    static func read(_ text: String, commands: [String]) -> (slurmID: String?, result: TaskResult?) {
        let lines = text.split(separator: "\n").map(String.init)
        let id = lines.first.flatMap { $0.isEmpty ? nil : $0 }
        guard lines.count >= 2 else { return (id, nil) }
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
