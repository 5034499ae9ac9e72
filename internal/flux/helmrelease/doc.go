// Package helmrelease renders Flux HelmReleases (helm.toolkit.fluxcd.io/v2)
// as helm-controller does, without a cluster: the engine-free pieces of
// issue 52's HelmRelease rendering. The steps, in the order a caller runs
// them over a rendered tree (the objects its Flux Kustomizations build):
//
//  1. DecodeObjects (a YAML stream) or the caller's decoded objects;
//     Objects keeps their ConfigMaps, Secrets and Flux sources; IsHelmRelease
//     picks the HelmReleases and FromObject or Parse decodes them as Flux's
//     API types decode them (sigs.k8s.io/yaml, YAML 1.1), refusing the
//     versions helm-controller no longer serves and what the CRD's schema
//     refuses (Validate).
//  2. ResolveChart: the chart source (a HelmRepository over HTTP or OCI, a
//     GitRepository or Bucket path, an OCIRepository, a HelmChart, an
//     ExternalArtifact), with namespace defaulting, the source's URL, the
//     chart's name or path and version range, as helm-controller and
//     source-controller resolve it.
//  3. The chart: Repository.Pull for an HTTP repository (index.yaml, the
//     semver range resolved as source-controller resolves it, the archive
//     checked against the index's digest); LocalChart for a path source
//     (valuesFiles replacing values.yaml, revision metadata on the
//     version). OCI charts are the caller's (phase 2: its cache).
//  4. Values: spec.values and valuesFrom merged as helm-controller merges
//     them (a port of fluxcd/pkg/chartutil with helm's --set parser for
//     targetPath), with its error messages.
//  5. Template: the `helm template` command (argv and the values file)
//     that renders what helm-controller installs: release name and
//     namespace, CRDs per policy, hooks and tests, the cluster's versions.
//     Post-renderers, commonMetadata and helm-controller's origin labels
//     are applied to its output by the caller.
//
// Ported code (strvals.go, values.go) keeps its Apache-2.0 notices
// (NOTICE.md) and is fuzzed against the libraries through tools/hroracle.
//
// It imports internal/flux (the API types it shares with Flux
// Kustomizations), sigs.k8s.io/yaml and github.com/Masterminds/semver/v3
// (the version ranges source-controller resolves with).
package helmrelease
