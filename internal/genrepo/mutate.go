package genrepo

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Mutate makes one random change to a monorepo written by Write, as a
// developer's commit would: edit a value in a resource, edit a file a
// generator reads, add, remove or rename a resource file of an app base;
// in a tree with regions or clusters (Spec), half the time, edit one of
// the files that share their name with others' (a region's patch.yaml or
// region.properties, a tuning component's patch.yaml, a cluster's
// patch.yaml or credentials.env). It returns a description of the change.
func Mutate(rng *rand.Rand, dir string) (string, error) {
	var alike []string
	for _, g := range []string{"apps/*/regions/*/patch.yaml", "apps/*/regions/*/region.properties", "platform/tuning/*/patch.yaml",
		"platform/clusters/*/patch.yaml", "platform/clusters/*/credentials.env"} {
		m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(g)))
		alike = append(alike, m...)
	}
	if len(alike) > 0 && rng.Intn(2) == 0 {
		sort.Strings(alike)
		return editAlike(rng, alike[rng.Intn(len(alike))])
	}
	apps, _ := filepath.Glob(filepath.Join(dir, "apps", "*", "base"))
	if len(apps) == 0 {
		return "", fmt.Errorf("no app bases under %s", dir)
	}
	sort.Strings(apps)
	base := apps[rng.Intn(len(apps))]
	kfile := filepath.Join(base, "kustomization.yaml")
	kb, err := os.ReadFile(kfile)
	if err != nil {
		return "", err
	}
	k := string(kb)
	extras, _ := filepath.Glob(filepath.Join(base, "extra-*.yaml"))
	sort.Strings(extras)
	switch op := rng.Intn(5); {
	case op == 4: // edit a file a stage reads (a generator's file)
		f := filepath.Join(base, "application.properties")
		return "edit " + f, appendTo(f, fmt.Sprintf("extra.%d=x\n", rng.Intn(1e6)))
	case op == 0 || len(extras) == 0: // edit a value
		f := filepath.Join(base, "deployment.yaml")
		d, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		return "edit " + f, os.WriteFile(f, []byte(strings.Replace(string(d), "cpu: ", fmt.Sprintf("cpu: %d", rng.Intn(9)+1), 1)), 0o644)
	case op == 1: // add a resource
		name := fmt.Sprintf("extra-new%d.yaml", rng.Intn(1e6))
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n", strings.TrimSuffix(name, ".yaml"))
		if err := os.WriteFile(filepath.Join(base, name), []byte(cm), 0o644); err != nil {
			return "", err
		}
		return "add " + name, os.WriteFile(kfile, []byte(strings.Replace(k, "- deployment.yaml\n", "- deployment.yaml\n- "+name+"\n", 1)), 0o644)
	case op == 2: // remove a resource
		victim := filepath.Base(extras[rng.Intn(len(extras))])
		if err := os.WriteFile(kfile, []byte(strings.Replace(k, "- "+victim+"\n", "", 1)), 0o644); err != nil {
			return "", err
		}
		return "remove " + victim, os.Remove(filepath.Join(base, victim))
	default: // rename a file
		old := filepath.Base(extras[rng.Intn(len(extras))])
		renamed := strings.TrimSuffix(old, ".yaml") + "-r.yaml"
		if err := os.Rename(filepath.Join(base, old), filepath.Join(base, renamed)); err != nil {
			return "", err
		}
		return "rename " + old, os.WriteFile(kfile, []byte(strings.Replace(k, "- "+old+"\n", "- "+renamed+"\n", 1)), 0o644)
	}
}

// lastNumber is the last run of digits in a file.
var lastNumber = regexp.MustCompile(`[0-9]+([^0-9]*)$`)

// editAlike changes one of the files that share their name with others':
// a line added to a properties or env file, the last number of a patch
// replaced (a replica count, a memory size, a cluster's annotation).
func editAlike(rng *rand.Rand, f string) (string, error) {
	if strings.HasSuffix(f, ".properties") || strings.HasSuffix(f, ".env") {
		return "edit " + f, appendTo(f, fmt.Sprintf("X%d=%d\n", rng.Intn(1e6), rng.Intn(1e6)))
	}
	d, err := os.ReadFile(f)
	if err != nil {
		return "", err
	}
	n := fmt.Sprint(1000 + rng.Intn(1e6))
	return "edit " + f, os.WriteFile(f, lastNumber.ReplaceAll(d, []byte(n+"$1")), 0o644)
}

func appendTo(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
