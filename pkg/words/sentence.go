package words

import (
	"html/template"
	"strings"
	"unicode/utf8"
)

// Part is a piece of a Sentence: the host's own words, or a Value someone else wrote (an
// argument, a title, a requester's name), which every medium isolates from the words around it.
type Part struct {
	Text  string
	Value bool
}

// Sentence is a line the host writes with values others wrote inserted in it. It is rendered
// by the medium that shows it (Plain for a mail's text and Slack, HTML for a page), and this
// file is the one place that knows how a value is isolated: without it, a value's
// right-to-left override (U+202E) or a right-to-left word reorders the host's own words after
// it ("... memo ‮, amount 1,240.00 EUR" read backwards), and the sentence an approver approves
// says something else than the call.
type Sentence []Part

// Said is text of the host's own words.
func Said(text string) Part { return Part{Text: text} }

// Value is text someone else wrote, inserted into a sentence.
func Value(text string) Part { return Part{Text: text, Value: true} }

// Unicode's directional isolates, around each value of a plain-text sentence.
const (
	fsi = "\u2068" // FIRST STRONG ISOLATE
	pdi = "\u2069" // POP DIRECTIONAL ISOLATE
)

// neutral is a value as a sentence inserts it, in every medium: each explicit directional
// formatting character of its own (the embeddings and overrides U+202A-U+202E, the isolates
// U+2066-U+2069) shown as U+FFFD, and each paragraph separator as a space. Isolation alone
// does not contain them: the bidirectional algorithm pairs a PDI with the nearest isolate
// open before it (UAX #9, BD9), so a value's own PDI would close the isolate put around it and
// its next characters (an override) would reach the host's words; a browser isolates a <bdi>
// the same way, as if the element's text were between FSI and PDI; and a paragraph separator
// ends every isolate. Shown, not dropped, so a reader sees that the value holds something
// it does not show; a value's letters and marks (U+200E, U+200F) stay, and move only within
// the value.
func neutral(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			return utf8.RuneError
		case r == '\n', r == '\r', r >= '\x1c' && r <= '\x1e', r == '\u0085', r == '\u2029':
			return ' '
		}
		return r
	}, s)
}

// Plain is s as plain text (a mail's text and HTML, a Slack text): each value neutralised and
// between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE, so that it takes its direction from
// its own first letter and moves nothing around it.
func (s Sentence) Plain() string {
	var b strings.Builder
	for _, p := range s {
		b.WriteString(plain(p.Value, p.Text))
	}
	return b.String()
}

// plain is a part's text as Plain writes it, text neutralised already where it is a value.
func plain(value bool, text string) string {
	if value {
		return fsi + neutral(text) + pdi
	}
	return text
}

// PlainCut is Plain cut to at most n characters, the last of them "…", every isolate it opened
// closed: what a medium with a bound on its text (Slack's) shows of a sentence too long for it.
func (s Sentence) PlainCut(n int) string {
	var b strings.Builder
	left := n - 1 // the ellipsis's
	for _, p := range s {
		text, wrap := []rune(p.Text), 0
		if p.Value {
			text, wrap = []rune(neutral(p.Text)), 2
		}
		if len(text)+wrap <= left {
			b.WriteString(plain(p.Value, string(text)))
			left -= len(text) + wrap
			continue
		}
		if cut := left - wrap; cut > 0 {
			b.WriteString(plain(p.Value, string(text[:cut])))
		}
		break
	}
	return b.String() + "…"
}

// HTML is s for a page: every part escaped, each value neutralised and in a <bdi> element,
// which isolates it as FSI and PDI do plain text.
func (s Sentence) HTML() template.HTML {
	var b strings.Builder
	for _, p := range s {
		if p.Value {
			b.WriteString("<bdi>" + template.HTMLEscapeString(neutral(p.Text)) + "</bdi>")
			continue
		}
		b.WriteString(template.HTMLEscapeString(p.Text))
	}
	return template.HTML(b.String())
}

// Isolated is a value alone as plain text inserts it (Sentence.Plain): where a medium puts a
// title or a name into a line of its own words.
func Isolated(value string) string { return Sentence{Value(value)}.Plain() }
