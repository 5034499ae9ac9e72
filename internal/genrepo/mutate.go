package genrepo

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Mutate makes one random change to a monorepo written by Write, as a
// developer's commit would: edit a value in a resource, edit a file a
// generator reads, add, remove or rename a resource file of an app base.
// It returns a description of the change.
func Mutate(rng *rand.Rand, dir string) (string, error) {
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
