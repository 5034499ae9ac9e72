package engine

import (
	"errors"
	"strings"

	"github.com/kpipe/kpipe/plugins"
)

// Reworded is an error kpipe words with more than kustomize does (the file
// and the entry it concerns, what to do about it): Kustomize is what
// kustomize says in its place. A caller that must print kustomize's own
// words (kpipe flux, whose errors are flux's, which prints kustomize's)
// reads the message through KustomizeMessage.
type Reworded struct {
	Err       error
	Kustomize string
}

func (e *Reworded) Error() string { return e.Err.Error() }
func (e *Reworded) Unwrap() error { return e.Err }

// KustomizeMessage is err's message with every Reworded part of it in
// kustomize's words.
func KustomizeMessage(err error) string {
	msg := err.Error()
	var walk func(e error)
	walk = func(e error) {
		for e != nil {
			if r, ok := e.(*Reworded); ok {
				msg = strings.Replace(msg, r.Error(), r.Kustomize, 1)
				return
			}
			if j, ok := e.(interface{ Unwrap() []error }); ok {
				for _, inner := range j.Unwrap() {
					walk(inner)
				}
				return
			}
			e = errors.Unwrap(e)
		}
	}
	walk(err)
	return msg
}

// rewordDisabled returns wrapped (kpipe's words for err) as a Reworded
// when err refuses an external plugin: kustomize says prefix and its own
// refusal there.
func rewordDisabled(wrapped, err error, prefix string) error {
	var d *plugins.DisabledError
	if errors.As(err, &d) {
		return &Reworded{Err: wrapped, Kustomize: prefix + d.KustomizeText()}
	}
	return wrapped
}
