package proposal

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// Names that deceive. A name a proposal adds is read by a person before it is applied, so it
// must read as what it is:
//   - refused (nameRefusal): a character that reorders or hides what follows (bidi controls,
//     zero-width and other format characters, C1 controls, line separators, variation
//     selectors, Hangul fillers and the other default-ignorable code points), and a
//     component that starts or ends with whitespace ("report.txt ");
//   - held like a control file (lookAlikeName, holds.go): a word that mixes look-alike scripts
//     (Latin with Cyrillic or Greek), a Cyrillic or Greek word made only of letters that look
//     Latin in a name that is otherwise Latin ("сі.yml"), a space that is not U+0020, letters
//     that NFKC changes (fullwidth "ｅｖｉｌ", the ligature "ﬁ"), and a name that collides with
//     another once normalised (NFC; letter case where the file system ignores it; look-alike
//     letters).
// Ordinary non-ASCII names (café.md, 設計.md, Ünïcödé) pass untouched.

// nameRefusal says why a name cannot be proposed at all, or "".
func nameRefusal(p string) string {
	for _, c := range strings.Split(p, "/") {
		if c != strings.TrimFunc(c, isNameSpace) {
			return fmt.Sprintf("a component of the name, %s, starts or ends with whitespace", quoteShown(c))
		}
	}
	for _, r := range p {
		if why := invisible(r); why != "" {
			return fmt.Sprintf("the name holds %s (U+%04X), which hides or reorders what a person reads", why, r)
		}
	}
	return ""
}

// refuseNewNames refuses, at create, a name work/ has that input/ has not when nameRefusal
// refuses it: the error shows the name escaped.
func refuseNewNames(names []string, in map[string]node) error {
	for _, p := range names {
		if _, ok := in[p]; ok {
			continue
		}
		if why := nameRefusal(p); why != "" {
			return fmt.Errorf("%s: cannot be proposed: %s", ShowName("work/"+p), why)
		}
	}
	return nil
}

// isNameSpace: whitespace of any kind, and the blank fillers that look like it.
func isNameSpace(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) || r == 0x3164 || r == 0xffa0 || r == 0x115f || r == 0x1160
}

// invisible is termsafe.Invisible: a name may hold nothing the printers would escape.
func invisible(r rune) string { return termsafe.Invisible(r) }

// lookAlikeLatin maps Cyrillic and Greek letters that look like Latin ones to those (a part of
// Unicode's confusables: the letters a name is faked with).
var lookAlikeLatin = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	'ɡ': 'g', 'ү': 'y', 'ѵ': 'v', 'ь': 'b',
	'А': 'a', 'В': 'b', 'Е': 'e', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o', 'Р': 'p', 'С': 'c', 'Т': 't',
	'У': 'y', 'Х': 'x', 'Ѕ': 's', 'І': 'i', 'Ј': 'j', 'Һ': 'h', 'Ԁ': 'd', 'Ԛ': 'q', 'Ԝ': 'w', 'Ӏ': 'l',
	'Ү': 'y',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'τ': 't', 'ε': 'e',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o',
	'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x',
}

// lookAlikeScripts are the scripts whose letters pass for each other.
var lookAlikeScripts = []struct {
	name  string
	table *unicode.RangeTable
}{{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}}

// scriptOf is the look-alike script of a letter, or "" (any other script, digits, marks).
func scriptOf(r rune) string {
	for _, s := range lookAlikeScripts {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	return ""
}

// lookAlikeName says why a name is held for the letters and spaces it is written in, or "".
func lookAlikeName(p string) string {
	hasLatin := strings.IndexFunc(p, func(r rune) bool { return scriptOf(r) == "Latin" }) >= 0
	for _, w := range nameWords(p) {
		scripts := map[string]bool{}
		allLookAlike := true
		for _, r := range w {
			if s := scriptOf(r); s != "" {
				scripts[s] = true
			}
			if _, ok := lookAlikeLatin[r]; !ok {
				allLookAlike = false
			}
		}
		if len(scripts) > 1 {
			return fmt.Sprintf("the word %s mixes %s letters in one word; it reads as %q", quoteShown(w), joinScripts(scripts), skeleton(w))
		}
		if hasLatin && allLookAlike && !scripts["Latin"] && len(scripts) == 1 {
			return fmt.Sprintf("the word %s is written in %s letters that look Latin, in a name that is otherwise Latin; it reads as %q", quoteShown(w), joinScripts(scripts), skeleton(w))
		}
	}
	for _, r := range p {
		if r != ' ' && isNameSpace(r) {
			return fmt.Sprintf("the name holds a space that is not an ordinary space (U+%04X)", r)
		}
	}
	if k := norm.NFKC.String(p); k != norm.NFC.String(p) {
		return fmt.Sprintf("the name is written in compatibility characters (fullwidth letters, ligatures, superscripts…) that read as %q", k)
	}
	return ""
}

// nameWords splits a name into its words: runs of letters, marks and digits.
func nameWords(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r) })
}

func joinScripts(s map[string]bool) string {
	var out []string
	for _, x := range lookAlikeScripts {
		if s[x.name] {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, " and ")
}

// skeleton is how a name reads: NFC, look-alike letters as the Latin ones they pass for,
// lower case.
func skeleton(s string) string {
	s = norm.NFC.String(s)
	return strings.Map(func(r rune) rune {
		if l, ok := lookAlikeLatin[r]; ok {
			return l
		}
		return unicode.ToLower(r)
	}, s)
}

// ShowName is a name as a person must see it before confirming it: termsafe's escapes, and
// also every letter that passes for a Latin one, every compatibility character (fullwidth
// letters, ligatures), every combining mark and every space that is not U+0020 written as \u
// escapes, in quotes when it has whitespace at either end. Names made
// only of ordinary characters (café.md, 設計.md) are shown as they are.
func ShowName(p string) string {
	var b strings.Builder
	for _, r := range termsafe.Line(p) {
		_, lookAlike := lookAlikeLatin[r]
		compat := r >= utf8.RuneSelf && norm.NFKC.String(string(r)) != string(r) // fullwidth, ligatures
		if lookAlike || compat || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r != ' ' && isNameSpace(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if s != strings.TrimFunc(s, isNameSpace) {
		return `"` + s + `"`
	}
	return s
}

// quoteShown is ShowName in quotes, for a sentence.
func quoteShown(s string) string {
	if v := ShowName(s); strings.HasPrefix(v, `"`) {
		return v
	} else {
		return `"` + v + `"`
	}
}

// nameFold is the form two names collide in: NFC and look-alike letters always (a person
// cannot tell them apart), letter case when the folder ignores it.
func nameFold(name string, foldCase bool) string {
	n := norm.NFC.String(name)
	n = strings.Map(func(r rune) rune {
		if l, ok := lookAlikeLatin[r]; ok {
			if unicode.IsUpper(r) {
				return unicode.ToUpper(l)
			}
			return l
		}
		return r
	}, n)
	if foldCase {
		n = strings.ToLower(n)
	}
	return n
}

// shortNameForm is a component written as a Windows 8.3 short name: up to eight characters
// ending in ~ and digits, and an extension of up to three (VSCODE~1, GITHUB~1, GI7EBA~1.YML).
var shortNameForm = regexp.MustCompile(`^[^.~]{1,7}~[0-9]{1,7}(\.[^.]{0,3})?$`)

// shortName says why a path is held for a component in the form of a Windows short name, or
// "": where the file system keeps short names, VSCODE~1 is another name of .vscode and
// AGENTC~1 of .agentcanvas, and no list of names can say which (the digits and a hashed
// form depend on what else the folder holds).
func shortName(p string) string {
	for _, c := range strings.Split(p, "/") {
		base, _, _ := strings.Cut(c, ".")
		if len(base) <= 8 && shortNameForm.MatchString(c) {
			return fmt.Sprintf("the component %s has the form of a Windows short name (8.3), which on Windows can be another name of a file or folder such as .vscode (VSCODE~1)", quoteShown(c))
		}
	}
	return ""
}
