package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MarkdownLimit is the size a markdown report is kept under: code hosts
// refuse a pull-request comment of 65,536 characters or more.
const MarkdownLimit = 65000

// WriteJSON writes the result as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	if r.Roots == nil {
		r.Roots = []RootDiff{}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteNameOnly writes one line per changed root ("<status> <path>") and
// one per changed resource under it ("  <+|-|~> <resource>").
func WriteNameOnly(w io.Writer, r *Result) error {
	var b strings.Builder
	for _, rd := range r.Roots {
		fmt.Fprintf(&b, "%s %s\n", rd.Status, rd.Path)
		for _, c := range rd.Changes {
			fmt.Fprintf(&b, "  %s %s%s\n", sign(c.Change), c.ID, renamed(c))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sign is the one-character mark of a resource change.
func sign(change string) string {
	switch change {
	case ResourceAdded:
		return "+"
	case ResourceRemoved:
		return "-"
	}
	return "~"
}

func renamed(c ResourceChange) string {
	if c.OldName == "" {
		return ""
	}
	return " (was " + c.OldName + ")"
}

// ANSI colours of the terminal form.
const (
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

// WriteText writes the terminal form: per root a heading, then each
// changed resource and its unified diff; color adds ANSI colours.
func WriteText(w io.Writer, r *Result, color bool) error {
	paint := func(c, s string) string {
		if !color || s == "" {
			return s
		}
		return c + s + reset
	}
	var b strings.Builder
	for _, rd := range r.Roots {
		a, rm, ch := Counts(rd.Changes)
		fmt.Fprintf(&b, "%s\n", paint(bold, fmt.Sprintf("%s %s (%d added, %d removed, %d changed)", rd.Status, rd.Path, a, rm, ch)))
		if rd.OldError != "" {
			fmt.Fprintf(&b, "  old side failed: %s\n", rd.OldError)
		}
		switch {
		case rd.Status == RootFailing:
			fmt.Fprintf(&b, "  fails on both sides: %s\n", rd.NewError)
		case rd.NewError != "":
			fmt.Fprintf(&b, "  new side failed: %s\n", rd.NewError)
		}
		if rd.Reordered {
			fmt.Fprintf(&b, "  the order of the resources changed\n")
		}
		for _, c := range rd.Changes {
			col := yellow
			switch c.Change {
			case ResourceAdded:
				col = green
			case ResourceRemoved:
				col = red
			}
			fmt.Fprintf(&b, "%s\n", paint(col, fmt.Sprintf("  %s %s%s", sign(c.Change), c.ID, renamed(c))))
			for _, line := range strings.SplitAfter(c.Diff, "\n") {
				if line == "" {
					continue
				}
				switch {
				case strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---"):
					line = paint(bold, strings.TrimSuffix(line, "\n")) + "\n"
				case strings.HasPrefix(line, "@@"):
					line = paint(cyan, strings.TrimSuffix(line, "\n")) + "\n"
				case strings.HasPrefix(line, "+"):
					line = paint(green, strings.TrimSuffix(line, "\n")) + "\n"
				case strings.HasPrefix(line, "-"):
					line = paint(red, strings.TrimSuffix(line, "\n")) + "\n"
				}
				b.WriteString("    " + line)
			}
		}
	}
	fmt.Fprintf(&b, "%s\n", summary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is the one-line total.
func summary(r *Result) string {
	var a, rm, ch int
	for _, rd := range r.Roots {
		x, y, z := Counts(rd.Changes)
		a, rm, ch = a+x, rm+y, ch+z
	}
	failing := r.Failing()
	s := fmt.Sprintf("%d of %d compared %ss differ", len(r.Roots)-failing, r.Compared, r.noun())
	if failing > 0 {
		s += fmt.Sprintf(", %d fail on both sides", failing)
	}
	return s + fmt.Sprintf(" (%s..%s): %d resources added, %d removed, %d changed", r.Base, r.Head, a, rm, ch)
}

// WriteMarkdown writes the pull-request comment form: a summary table of
// the roots first, then a collapsible section per root with its diffs. The
// whole stays under limit characters (MarkdownLimit when limit <= 0): the
// sections that do not fit are left out, and a note says how many.
func WriteMarkdown(w io.Writer, r *Result, limit int) error {
	if limit <= 0 {
		limit = MarkdownLimit
	}
	var head strings.Builder
	fmt.Fprintf(&head, "### kpipe diff: %s\n\n", mdEscape(summary(r)))
	if len(r.Roots) > 0 {
		head.WriteString("| " + r.noun() + " | status | + | - | ~ |\n|---|---|---:|---:|---:|\n")
	}
	// The table itself may be too long: cut it too, with a note.
	var rows []string
	for _, rd := range r.Roots {
		a, rm, ch := Counts(rd.Changes)
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %d | %d | %d |\n", mdCode(rd.Path), rd.Status, a, rm, ch))
	}
	var sections []string
	for _, rd := range r.Roots {
		var s strings.Builder
		fmt.Fprintf(&s, "<details><summary><code>%s</code> (%s)</summary>\n\n", htmlEscape(rd.Path), rd.Status)
		if rd.OldError != "" {
			fmt.Fprintf(&s, "Old side failed:\n\n%s\n", fence("text", rd.OldError))
		}
		switch {
		case rd.Status == RootFailing:
			fmt.Fprintf(&s, "Fails on both sides:\n\n%s\n", fence("text", rd.NewError))
		case rd.NewError != "":
			fmt.Fprintf(&s, "New side failed:\n\n%s\n", fence("text", rd.NewError))
		}
		for _, c := range rd.Changes {
			fmt.Fprintf(&s, "**%s** `%s`%s\n\n%s\n", c.Change, mdCode(c.ID.String()), mdEscape(renamed(c)), fence("diff", c.Diff))
		}
		s.WriteString("</details>\n\n")
		sections = append(sections, s.String())
	}
	const noteRoom = 200 // for the closing note
	var out strings.Builder
	out.WriteString(head.String())
	shownRows := 0
	for _, row := range rows {
		if out.Len()+len(row)+noteRoom > limit {
			break
		}
		out.WriteString(row)
		shownRows++
	}
	if shownRows < len(rows) {
		fmt.Fprintf(&out, "\n%d more %ss differ; the table and the diffs are cut to stay under the comment size limit.\n", len(rows)-shownRows, r.noun())
		_, err := io.WriteString(w, out.String())
		return err
	}
	out.WriteString("\n")
	shown := 0
	for _, s := range sections {
		if out.Len()+len(s)+noteRoom > limit {
			break
		}
		out.WriteString(s)
		shown++
	}
	if shown < len(sections) {
		fmt.Fprintf(&out, "The diffs of %d more %ss are left out to stay under the comment size limit; run `kpipe diff` locally to see them.\n", len(sections)-shown, r.noun())
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// fence wraps text in a code fence longer than any backtick run inside it.
func fence(lang, text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return ticks + lang + "\n" + text + ticks + "\n"
}

// mdCode makes s safe inside a single-backtick code span.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// mdEscape escapes the characters markdown would read as markup in plain
// text.
func mdEscape(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "*", "\\*", "_", "\\_", "|", "\\|", "<", "&lt;", ">", "&gt;", "[", "\\[", "]", "\\]", "`", "\\`")
	return r.Replace(s)
}

// htmlEscape escapes text placed inside HTML tags.
func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
