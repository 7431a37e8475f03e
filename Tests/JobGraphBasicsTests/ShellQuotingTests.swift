import JobGraphBasics
import Testing

struct ShellQuotingTests {
    /// Plain words stay as they are; anything a shell would read otherwise goes in single quotes.
    @Test func onlyPlainWordsGoUnquoted() {
        #expect(ShellQuoting.quoted("data/S0001.fq") == "data/S0001.fq")
        #expect(ShellQuoting.quoted("a-b_c.d/e:f+g@h%i,j") == "a-b_c.d/e:f+g@h%i,j")
        #expect(ShellQuoting.quoted("") == "''")
        #expect(ShellQuoting.quoted("two words") == "'two words'")
        #expect(ShellQuoting.quoted("it's") == "'it'\\''s'")
        #expect(ShellQuoting.quoted("$HOME") == "'$HOME'")
        #expect(ShellQuoting.quoted("*.txt") == "'*.txt'")
        // Letters outside ASCII are quoted: a shell's idea of a word depends on its locale.
        #expect(ShellQuoting.quoted("café") == "'café'")
    }
}
