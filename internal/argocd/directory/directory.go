// Package directory reads a Directory source as Argo CD v3.6.1's
// repo-server does (reposerver/repository.go findManifests): the app
// directory walked in lexical order (subdirectories only with recurse),
// files named *.yaml, *.yml, *.json (or anything with
// disableExtensionFilter), exclude then include matched against the path
// relative to the app directory with gobwas globs compiled without
// separators (so "*" crosses "/"), files containing
// "+argocd:skip-file-rendering" skipped, the combined size capped, then
// each file decoded: a JSON file as one value (any JSON object passes,
// kind or not: Argo CD reads it as an OCI manifest), a YAML file as a
// YAML-or-JSON stream with Kubernetes' decoder rules (a file whose first
// document fails to parse is ignored unless it looks like a manifest).
// Jsonnet files are refused with an error naming the file: kpipe does not
// evaluate jsonnet.
//
// It reads through io/fs and imports kpipe's internal/argocd/app and
// manifest, and github.com/gobwas/glob (the matcher Argo CD uses).
package directory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/gobwas/glob"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// DefaultMaxCombinedSize is the repo-server's default
// --max-combined-directory-manifests-size (10M).
const DefaultMaxCombinedSize = 10 * 1000 * 1000

// SkipMarker in a file makes Argo CD skip it.
const SkipMarker = "+argocd:skip-file-rendering"

// Error is an error Argo CD returns with gRPC code FailedPrecondition.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// ErrJsonnet is returned for a .jsonnet file.
var ErrJsonnet = errors.New("jsonnet is not rendered by kpipe")

var manifestFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`) })

// Match is Argo CD's util/glob.Match without separators: a pattern that
// does not compile matches nothing.
func Match(pattern, text string) bool {
	g, err := glob.Compile(pattern)
	if err != nil {
		return false
	}
	return g.Match(text)
}

// Files lists the files a Directory source reads, in Argo CD's order
// (slash paths relative to the checkout's root). maxSize <= 0 means no
// cap.
func Files(co app.Checkout, appDir string, d *app.ApplicationSourceDirectory, maxSize int64) ([]string, error) {
	if d == nil {
		d = &app.ApplicationSourceDirectory{}
	}
	var out []string
	var total int64
	err := fs.WalkDir(co.FS, appDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != appDir && !d.Recurse {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(p, appDir+"/")
		if appDir == "." {
			rel = p
		}
		if !d.DisableExtensionFilter && !manifestFile().MatchString(e.Name()) {
			return nil
		}
		fi, err := fs.Stat(co.FS, p) // follows a symlink
		if e.Type()&fs.ModeSymlink != 0 {
			if err := inbound(co.FS, p); err != nil {
				return fmt.Errorf("invalid manifest file %q: %w", co.Display(p), fmt.Errorf("illegal filepath in symlink at %q", rel))
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // destination missing: skipped with a warning
			}
		}
		if err != nil {
			return fmt.Errorf("invalid manifest file %q: %w", co.Display(p), err)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		if d.Exclude != "" && Match(d.Exclude, rel) {
			return nil
		}
		if d.Include != "" && !Match(d.Include, rel) {
			return nil
		}
		data, err := fs.ReadFile(co.FS, p)
		if err != nil {
			return fmt.Errorf("invalid manifest file %q: failed to read %q: %w", co.Display(p), rel, err)
		}
		if bytes.Contains(data, []byte(SkipMarker)) {
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".jsonnet") {
			total += fi.Size()
			if maxSize > 0 && total > maxSize {
				return errors.New("exceeded max combined manifest file size")
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// inbound checks that the symlink p resolves inside the tree.
func inbound(fsys fs.FS, p string) error {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return nil
	}
	for i := 0; i < 40; i++ {
		t, err := rl.ReadLink(p)
		if err != nil {
			return nil
		}
		if strings.HasPrefix(t, "/") {
			return errors.New("outside")
		}
		p = path.Join(path.Dir(p), t)
		if p == ".." || strings.HasPrefix(p, "../") {
			return errors.New("outside")
		}
	}
	return nil
}

// Objects reads a Directory source: its objects in Argo CD's order.
// Objects from JSON files may lack a kind (the controller fails on them
// later). Errors are worded as the repo-server's; decoding errors are
// *Error (FailedPrecondition).
func Objects(co app.Checkout, appDir string, d *app.ApplicationSourceDirectory, maxSize int64) ([]manifest.Object, error) {
	files, err := Files(co, appDir, d, maxSize)
	if err != nil {
		return nil, fmt.Errorf("failed to get potentially valid manifests: %w", err)
	}
	var objs []manifest.Object
	for _, f := range files {
		name := path.Base(f)
		if strings.HasSuffix(name, ".jsonnet") {
			return nil, fmt.Errorf("%s: %w", co.Display(f), ErrJsonnet)
		}
		data, err := fs.ReadFile(co.FS, f)
		if err != nil {
			return nil, &Error{fmt.Sprintf("Failed to open %q", co.Display(f))}
		}
		data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		if strings.HasSuffix(name, ".json") {
			o, err := decodeJSONFile(data, name)
			if err != nil {
				return nil, err
			}
			objs = append(objs, o)
			continue
		}
		got, err := DecodeStream(data)
		if err != nil {
			if len(got) > 0 || bytes.Contains(data, []byte("apiVersion:")) && bytes.Contains(data, []byte("kind:")) && bytes.Contains(data, []byte("metadata:")) {
				return nil, &Error{fmt.Sprintf("Failed to unmarshal %q: failed to unmarshal manifest: %v", name, err)}
			}
			continue // not a manifest: a tool's file
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// decodeJSONFile reads a .json file: one value; an object with a kind,
// or any JSON object (Argo CD accepts it as an OCI image manifest).
func decodeJSONFile(data []byte, name string) (manifest.Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	derr := dec.Decode(&raw)
	var obj manifest.Object
	if derr == nil {
		o, err := manifest.ToObject(raw)
		if err != nil {
			derr = err
		}
		obj = o
	}
	if derr != nil {
		// an OCI manifest: any JSON object (unknown fields ignored)
		var m map[string]any
		d2 := json.NewDecoder(bytes.NewReader(data))
		if err := d2.Decode(&m); err != nil {
			return nil, &Error{fmt.Sprintf("Failed to unmarshal %q: %v", name, derr)}
		}
		v, _ := manifest.DecodeJSON(raw)
		obj, _ = v.(map[string]any)
	}
	if dec.More() {
		return nil, &Error{fmt.Sprintf("Found multiple objects in %q. Only single objects are allowed in JSON files.", name)}
	}
	return obj, nil
}

// DecodeStream decodes a YAML-or-JSON stream of objects as Kubernetes'
// YAMLOrJSONDecoder does for the repo-server: JSON values while the stream
// starts with "{" (switching to YAML after a failure, once, keeping the
// JSON error if YAML fails too), else YAML documents; null documents are
// skipped. On error it returns the objects read so far.
func DecodeStream(data []byte) ([]manifest.Object, error) {
	var objs []manifest.Object
	count := 0
	pos := 0
	if bytes.HasPrefix(bytes.TrimLeftFunc(head(data), unicode.IsSpace), []byte("{")) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF {
				return objs, nil
			}
			var o manifest.Object
			if err == nil {
				if o, err = manifest.ToObject(raw); err == nil {
					count++
					pos = int(dec.InputOffset())
					if o != nil {
						objs = append(objs, o)
					}
					continue
				}
			}
			var se *json.SyntaxError
			firstErr := err
			if errors.As(err, &se) {
				firstErr = fmt.Errorf("json: offset %d: %s", se.Offset, se.Error())
			}
			if count > 1 {
				return objs, err
			}
			rest := skipSpaceLine(data[pos:])
			docs, serr := manifest.SplitDocuments(rest)
			if serr != nil || len(docs) == 0 {
				return objs, firstErr
			}
			o, yerr := decodeYAMLDoc(docs[0])
			if yerr != nil {
				return objs, firstErr
			}
			if o != nil {
				objs = append(objs, o)
			}
			more, err := decodeYAMLDocs(docs[1:])
			return append(objs, more...), err
		}
	}
	docs, err := manifest.SplitDocuments(data)
	more, derr := decodeYAMLDocs(docs)
	objs = append(objs, more...)
	if derr != nil {
		return objs, derr
	}
	return objs, err
}

func head(b []byte) []byte {
	if len(b) > 4096 {
		return b[:4096]
	}
	return b
}

// skipSpaceLine drops white space up to and including the first newline.
func skipSpaceLine(b []byte) []byte {
	for i, r := range string(b) {
		if !unicode.IsSpace(r) {
			return b[i:]
		}
		if r == '\n' {
			return b[i+1:]
		}
	}
	return nil
}

func decodeYAMLDocs(docs [][]byte) ([]manifest.Object, error) {
	var objs []manifest.Object
	for _, d := range docs {
		o, err := decodeYAMLDoc(d)
		if err != nil {
			return objs, err
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func decodeYAMLDoc(doc []byte) (manifest.Object, error) {
	j, err := manifest.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	o, err := manifest.ToObject(j)
	if err != nil {
		return nil, fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)
	}
	return o, nil
}
