/// A `run:` command line, classified as GNU make does: exec the program directly when the text has no
/// shell syntax, else hand it to `/bin/sh -c`.
///
/// Direct exec saves starting a shell per task, which matters when a pipeline runs thousands of small
/// commands. It is only chosen when the shell would do nothing but split the text at blanks: every byte is
/// a letter, digit, one of `-_./,:+@%=`, or non-ASCII, words are separated by spaces or tabs, the first
/// word assigns no variable (`X=1 make`), and it is no shell keyword or built-in. Anything else — quotes,
/// `$`, backslashes, globs, `~`, operators, `#`, braces, newlines — runs through the shell unchanged, so
/// the user always gets the shell's meaning.
public enum ShellCommand: Hashable, Sendable {
    /// Exec these words: the program (to look up in `PATH` unless it holds a `/`) and its arguments.
    case direct([String])
    /// Run the text with `/bin/sh -c`.
    case shell(String)

    /// Classifies `command`.
    public init(_ command: String) {
        var words: [String] = []
        var wordStart: String.UTF8View.Index? = nil
        let utf8 = command.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if let start = wordStart {
                    words.append(String(command[start..<index]))
                    wordStart = nil
                }
            } else if Self.isPlain(byte) {
                if wordStart == nil { wordStart = index }
            } else {
                self = .shell(command)
                return
            }
            index = utf8.index(after: index)
        }
        if let start = wordStart { words.append(String(command[start...])) }

        guard let program = words.first,
              !program.utf8.contains(UInt8(ascii: "=")),
              !Self.shellWords.contains(program)
        else {
            self = .shell(command)
            return
        }
        self = .direct(words)
    }

    /// The argument vector that runs the command: the words, or `[shell, "-c", text]`.
    public func arguments(shell: String = ProcessSpawner.defaultShell) -> [String] {
        switch self {
        case .direct(let words): words
        case .shell(let text): [shell, "-c", text]
        }
    }

    /// Bytes the shell passes through unchanged inside a word. Non-ASCII bytes (UTF-8 file names) are
    /// ordinary word characters to every POSIX shell.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ","),
             UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "@"), UInt8(ascii: "%"), UInt8(ascii: "="):
            return true
        default:
            return byte >= 0x80
        }
    }

    /// First words that mean something only to a shell: POSIX reserved words and special built-ins, the
    /// built-ins that act on the shell itself, the common bash/ksh extensions, and GNU make's `sh_cmds` list.
    /// `echo` and `printf` are here too because dash's built-ins treat `-e` and escapes differently from
    /// coreutils, and the contract promises `/bin/sh` semantics.
    static let shellWords: Set<String> = [
        // Reserved words.
        "!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until",
        "while", "[[", "]]", "function", "select", "time",
        // POSIX special built-ins.
        "break", ":", "continue", ".", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift",
        "times", "trap", "unset",
        // Built-ins that change or read the shell's own state, or differ from the program of the same name.
        "alias", "bg", "cd", "command", "fc", "fg", "getopts", "hash", "jobs", "kill", "newgrp", "pwd", "read",
        "type", "ulimit", "umask", "unalias", "wait", "source", "local", "declare", "typeset", "let",
        "builtin", "enable", "shopt", "login", "logout", "test", "[", "echo", "printf",
    ]
}
