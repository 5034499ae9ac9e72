// Package helmrelease renders Flux HelmReleases (helm.toolkit.fluxcd.io/v2)
// as helm-controller does, without a cluster: the engine-free pieces of
// issue 52's HelmRelease rendering.
//
//   - Parse, FromObject, DecodeObjects: HelmRelease objects from rendered
//     YAML (or decoded objects), typed as Flux's API types decode them,
//     with the CRD's checks (Validate);
//   - Objects: the ConfigMaps, Secrets and Flux sources of a rendered tree;
//   - Values: helm-controller's values (spec.values and valuesFrom, with
//     helm's --set parser for targetPath), a port of
//     fluxcd/pkg/chartutil checked against the library.
//
// It imports internal/flux (the shared API types) and sigs.k8s.io/yaml.
package helmrelease
