package helmrelease

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// ReleaseName is the name helm-controller installs the release under
// (helmv2.HelmRelease.GetReleaseName, then internal/release.ShortenName):
// spec.releaseName, else <targetNamespace>-<name> when targetNamespace is
// set, else the object's name; shortened when longer than 53 characters.
func (hr *HelmRelease) ReleaseName() string {
	name := hr.Name
	switch {
	case hr.Spec.ReleaseName != "":
		name = hr.Spec.ReleaseName
	case hr.Spec.TargetNamespace != "":
		name = strings.Join([]string{hr.Spec.TargetNamespace, hr.Name}, "-")
	}
	return ShortenName(name)
}

// ShortenName is helm-controller's internal/release.ShortenName: a name
// longer than 53 characters becomes its first 40 characters, "-" and the
// first 12 hex digits of its SHA-256.
func ShortenName(name string) string {
	if len(name) <= 53 {
		return name
	}
	const maxLength = 53
	const shortHashLength = 12
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
	return name[:maxLength-(shortHashLength+1)] + "-" + sum[:shortHashLength]
}

// ReleaseNamespace is the namespace the release renders into
// (.Release.Namespace, and the namespace helm gives namespaced objects
// without one): spec.targetNamespace, else the object's namespace.
func (hr *HelmRelease) ReleaseNamespace() string {
	if hr.Spec.TargetNamespace != "" {
		return hr.Spec.TargetNamespace
	}
	return hr.Namespace
}

// StorageNamespace is where helm keeps the release's record:
// spec.storageNamespace, else the object's namespace. It changes nothing
// rendered.
func (hr *HelmRelease) StorageNamespace() string {
	if hr.Spec.StorageNamespace != "" {
		return hr.Spec.StorageNamespace
	}
	return hr.Namespace
}

// CRDPolicy is how the chart's crds/ are applied on install (or upgrade):
// spec.install.crds (spec.upgrade.crds), "Create" by default for both
// (helm-controller's crdPolicyOrDefault; the API documentation's "Skip
// on upgrade" is not what the code does). Skip applies none; Create
// creates the missing ones; CreateReplace creates or replaces them. The
// deprecated install.skipCRDs is not read by helm-controller v1.x.
func (hr *HelmRelease) CRDPolicy(upgrade bool) (string, error) {
	var p string
	if upgrade {
		if hr.Spec.Upgrade != nil {
			p = hr.Spec.Upgrade.CRDs
		}
	} else if hr.Spec.Install != nil {
		p = hr.Spec.Install.CRDs
	}
	switch p {
	case "":
		return "Create", nil
	case "Skip", "Create", "CreateReplace":
		return p, nil
	}
	return p, fmt.Errorf("invalid CRD upgrade policy '%s', valid values are 'Skip', 'Create' or 'CreateReplace'", p)
}
