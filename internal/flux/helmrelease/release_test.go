package helmrelease

import (
	"testing"
)

func TestReleaseNameAndNamespace(t *testing.T) {
	long := "a-target-namespace-that-is-quite-long"
	for _, c := range []struct {
		releaseName, target, storage string
		name, ns                     string
		wantName, wantNS, wantStore  string
	}{
		{name: "podinfo", ns: "apps", wantName: "podinfo", wantNS: "apps", wantStore: "apps"},
		{releaseName: "rel", target: "prod", name: "podinfo", ns: "apps", wantName: "rel", wantNS: "prod", wantStore: "apps"},
		{target: "prod", storage: "kept", name: "podinfo", ns: "apps", wantName: "prod-podinfo", wantNS: "prod", wantStore: "kept"},
		// 37 + 1 + 22 = 60 characters: the first 40, "-", 12 hex digits of
		// sha256("a-target-namespace-that-is-quite-long-an-application-name-xx")
		// (computed with Python's hashlib, as the corpus's hr_collect.py does).
		{target: long, name: "an-application-name-xx", ns: "apps",
			wantName: "a-target-namespace-that-is-quite-long-an-8ae96f891e99", wantNS: long, wantStore: "apps"},
		{releaseName: "exactly-fifty-three-characters-long-release-name-xxxx", name: "n", ns: "apps",
			wantName: "exactly-fifty-three-characters-long-release-name-xxxx", wantNS: "apps", wantStore: "apps"},
	} {
		hr := &HelmRelease{}
		hr.Name, hr.Namespace = c.name, c.ns
		hr.Spec.ReleaseName, hr.Spec.TargetNamespace, hr.Spec.StorageNamespace = c.releaseName, c.target, c.storage
		if got := hr.ReleaseName(); got != c.wantName {
			t.Errorf("%+v: release name %q, want %q", c, got, c.wantName)
		}
		if got := hr.ReleaseNamespace(); got != c.wantNS {
			t.Errorf("%+v: release namespace %q, want %q", c, got, c.wantNS)
		}
		if got := hr.StorageNamespace(); got != c.wantStore {
			t.Errorf("%+v: storage namespace %q, want %q", c, got, c.wantStore)
		}
	}
	if n := ShortenName("a-target-namespace-that-is-quite-long-an-application-name-xx"); len(n) != 53 {
		t.Errorf("%q is %d long", n, len(n))
	}
}

func TestCRDPolicy(t *testing.T) {
	hr := &HelmRelease{}
	for _, upgrade := range []bool{false, true} {
		if p, err := hr.CRDPolicy(upgrade); p != "Create" || err != nil {
			t.Errorf("default policy (upgrade %v): %s %v", upgrade, p, err)
		}
	}
	hr.Spec.Install = &Install{CRDs: "Skip"}
	hr.Spec.Upgrade = &Upgrade{CRDs: "CreateReplace"}
	if p, _ := hr.CRDPolicy(false); p != "Skip" {
		t.Error(p)
	}
	if p, _ := hr.CRDPolicy(true); p != "CreateReplace" {
		t.Error(p)
	}
	hr.Spec.Upgrade.CRDs = "Always"
	if _, err := hr.CRDPolicy(true); err == nil || err.Error() != "invalid CRD upgrade policy 'Always', valid values are 'Skip', 'Create' or 'CreateReplace'" {
		t.Error(err)
	}
}
