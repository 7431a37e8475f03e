import JobGraphSystem
import Testing

@Suite struct ShellCommandTests {
    @Test(arguments: [
        ("touch a b", ["touch", "a", "b"]),
        ("  touch\ta   b  ", ["touch", "a", "b"]),
        ("swift build -c release", ["swift", "build", "-c", "release"]),
        ("python3 -m http.server 8765", ["python3", "-m", "http.server", "8765"]),
        ("git commit --message=fix", ["git", "commit", "--message=fix"]),
        ("make -j4 CFLAGS=-O2", ["make", "-j4", "CFLAGS=-O2"]),
        ("./scripts/build.sh --fast", ["./scripts/build.sh", "--fast"]),
        ("/usr/bin/env", ["/usr/bin/env"]),
        ("curl -o out.json user@host:8080/a,b+c 100%", ["curl", "-o", "out.json", "user@host:8080/a,b+c", "100%"]),
        ("convert photo-é.jpg", ["convert", "photo-é.jpg"]),
        ("true", ["true"]),
    ])
    func plainCommandsAreExecutedDirectly(command: String, words: [String]) {
        #expect(ShellCommand(command) == .direct(words))
    }

    @Test(arguments: [
        "echo $HOME", "ls *.swift", "ls file?.txt", "ls [ab].txt", "ls ~", "ls ~/src",
        "a && b", "a || b", "a | b", "a ; b", "a & b", "sleep 1 &", "a > out", "a < in", "a 2>&1",
        "(cd sub)", "echo {a,b}", "a `date`", "a $(date)", "echo 'quoted'", "echo \"quoted\"", "a\\ b",
        "make # comment", "a\nb", "a^b", "!true", "X=1 make", "CC=clang make all",
        "cd build", "export X=1", "exit 3", ". ./env.sh", ": noop", "set -e", "if true", "for x", "while x",
        "exec make", "wait", "ulimit -n 10", "umask 022", "read line", "trap x INT", "eval x", "unset X",
        "test -f x", "echo hi", "printf x", "source env.sh", "kill %1", "alias x=y", "pwd", "type ls",
        "", "   ", "a\rb",
    ])
    func shellSyntaxGoesThroughTheShell(command: String) {
        #expect(ShellCommand(command) == .shell(command))
    }

    @Test func shellCommandsRunWithShDashC() {
        #expect(ShellCommand("a | b").arguments() == ["/bin/sh", "-c", "a | b"])
        #expect(ShellCommand("touch x").arguments() == ["touch", "x"])
    }
}
