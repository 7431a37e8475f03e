/// The released version, printed by `--version` and named in the event stream's `run-started`.
public enum JobGraphVersion {
    public static let current = "0.1.0"
}
